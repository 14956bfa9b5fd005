// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// A block mask that is not a constant is the kernel's block_mask parameter
// (i8, after O and the mask operand): each key/value block reads its status
// from it (batch from the grid, the size-1 head dimension broadcast, query
// block row0 / Bq, key block key0 / Bk), skips the block when it is empty
// (0) and reads no mask operand when it is full (2). The manifest's
// attention names the blocks, and not `block_mask` (a constant's values).
// CHECK-LABEL: gpu.func @sparse_attention0
// CHECK-SAME: %[[MASK:arg4]]: memref<2x1x64x64xi1>
// CHECK-SAME: %[[BLOCKS:arg5]]: memref<2x1x1x2xi8>
// CHECK-SAME: attention = {block_mask_blocks = array<i64: 64, 32>, causal = false
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "mask", "block_mask"]
// CHECK: scf.for
// CHECK: %[[KEY_BLOCK:.+]] = arith.divui %{{.+}}, %c32 : index
// CHECK: %[[STATUS:.+]] = memref.load %[[BLOCKS]][%block_id_y, %c0, %{{.+}}, %[[KEY_BLOCK]]] : memref<2x1x1x2xi8>
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %[[STATUS]], %c0_i8 : i8
// CHECK: scf.if %[[EMPTY]]
// CHECK: %[[FULL:.+]] = arith.cmpi eq, %[[STATUS]], %c2_i8 : i8
// CHECK: scf.if %[[FULL]]
// CHECK-NOT: memref.load %[[MASK]]
// CHECK: } else {
// CHECK: memref.load %[[MASK]]
func.func @sparse(%q: tensor<2x2x64x64xf16>, %m: tensor<2x1x64x64xi1>, %bm: tensor<2x1x1x2xi8>, %o: tensor<2x2x64x64xf16>) -> tensor<2x2x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<2x2x64x64xf16>, tensor<2x2x64x64xf16>, tensor<2x2x64x64xf16>)
      mask(%m : tensor<2x1x64x64xi1>) block_mask(%bm : tensor<2x1x1x2xi8> blocks [64, 32])
      outs(%o : tensor<2x2x64x64xf16>) {tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>} -> tensor<2x2x64x64xf16>
  return %r : tensor<2x2x64x64xf16>
}

// -----

// With run-time lengths the block mask's counts of blocks are run-time
// sizes too, passed as scalars like the lengths; the block mask comes before
// the key lengths. Both of its broadcast dimensions read index 0.
// CHECK-LABEL: gpu.func @sparse_run_time_attention0
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "block_mask", "key_lengths"]
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %arg4 {{.+}} to memref<1x1x?x?xi8, strided<[?, ?, ?, 1]>>
// CHECK: scf.for
// CHECK: memref.load %[[VIEW]][%c0, %c0, %{{.+}}, %{{.+}}] : memref<1x1x?x?xi8, strided<[?, ?, ?, 1]>>
func.func @sparse_run_time(%q: tensor<?x2x?x64xbf16>, %k: tensor<?x2x?x64xbf16>, %bm: tensor<1x1x?x?xi8>, %lengths: tensor<?xi32>, %o: tensor<?x2x?x64xbf16>) -> tensor<?x2x?x64xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>)
      block_mask(%bm : tensor<1x1x?x?xi8> blocks [128, 128]) key_lengths(%lengths : tensor<?xi32>)
      outs(%o : tensor<?x2x?x64xbf16>) {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<?x2x?x64xbf16>
  return %r : tensor<?x2x?x64xbf16>
}
