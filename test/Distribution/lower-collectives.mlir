// RUN: attn-opt %s --attn-lower-collectives --split-input-file --verify-diagnostics | FileCheck %s

// The collectives become libattnmpi calls on contiguous buffers, with the grid
// padded to three axes and the group as a bit mask of grid axes; the module
// gets MPICH as its MPI implementation.

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}
// CHECK-DAG: func.func private @attnmpi_all_gather(i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @attnmpi_shift(i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @attnmpi_all_to_all(i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @collectives(

// All-gather over axis 1 (3 ranks) along tensor dim 1: [3, piece] received,
// the rank dimension moved next to dim 1 and collapsed into it.
// CHECK-DAG: %[[G0:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[G1:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[G2:.*]] = arith.constant 1 : i64
// CHECK: %[[XB:.*]] = bufferization.to_buffer %arg0 read_only : tensor<2x4x5xf16> to memref<2x4x5xf16>
// CHECK: %[[XP:.*]] = memref.extract_aligned_pointer_as_index %[[XB]]
// CHECK: %[[XI:.*]] = arith.index_cast %[[XP]] : index to i64
// CHECK: %[[R:.*]] = memref.alloc() : memref<3x2x4x5xf16>
// CHECK: %[[RP:.*]] = memref.extract_aligned_pointer_as_index %[[R]]
// CHECK: %[[RI:.*]] = arith.index_cast %[[RP]] : index to i64
// CHECK: %[[MASK:.*]] = arith.constant 2 : i64
// CHECK: %[[BYTES:.*]] = arith.constant 80 : i64
// CHECK: call @attnmpi_all_gather(%[[G0]], %[[G1]], %[[G2]], %[[MASK]], %[[XI]], %[[RI]], %[[BYTES]])
// CHECK: %[[RT:.*]] = bufferization.to_tensor %[[R]] restrict writable
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[RT]] : tensor<3x2x4x5xf16>) outs(%{{.*}} : tensor<2x3x4x5xf16>) permutation = [1, 0, 2, 3]
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0], [1, 2], [3]] : tensor<2x3x4x5xf16> into tensor<2x12x5xf16>

// Shift along axis 0 by one: 72 bytes each way.
// CHECK: call @attnmpi_shift(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[B:.*]] = bufferization.to_tensor %{{.*}} restrict writable : memref<6x3xf32> to tensor<6x3xf32>

// All-to-all over axis 0 (2 ranks): dim 1 cut in two pieces laid out
// contiguously in front, 40 bytes per piece, concatenated along dim 0.
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [2, 2, 2, 5]
// CHECK: %[[S:.*]] = linalg.transpose ins(%[[E]] : tensor<2x2x2x5xf16>) outs(%{{.*}} : tensor<2x2x2x5xf16>) permutation = [1, 0, 2, 3]
// CHECK: bufferization.to_buffer %[[S]] read_only
// CHECK: call @attnmpi_all_to_all({{.*}})
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x2x2x5xf16> into tensor<4x2x5xf16>
// CHECK: return %[[A]], %[[B]], %[[C]]
shard.grid @g(shape = 2x3) {sym_visibility = "private"}
func.func @collectives(%x: tensor<2x4x5xf16>, %y: tensor<6x3xf32>) -> (tensor<2x12x5xf16>, tensor<6x3xf32>, tensor<4x2x5xf16>) {
  %a = shard.all_gather %x on @g grid_axes = [1] gather_axis = 1 : tensor<2x4x5xf16> -> tensor<2x12x5xf16>
  %b = shard.shift %y on @g grid_axes = [0] shift_axis = 0 offset = 1 rotate : tensor<6x3xf32> -> tensor<6x3xf32>
  %c = shard.all_to_all %x on @g grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x4x5xf16> -> tensor<4x2x5xf16>
  return %a, %b, %c : tensor<2x12x5xf16>, tensor<6x3xf32>, tensor<4x2x5xf16>
}

// -----

shard.grid @g(shape = 4) {sym_visibility = "private"}
func.func @edge(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attn-lower-collectives lowers rotating shifts only}}
  %r = shard.shift %x on @g grid_axes = [0] shift_axis = 0 offset = 1 : tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2x2x2x2) {sym_visibility = "private"}
func.func @four_axes(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{attn-lower-collectives needs a static grid of at most 3 axes}}
  %r = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}
