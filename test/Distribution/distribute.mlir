// RUN: attn-opt %s --attn-distribute --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-distribute --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=CANON

// ATTENTION2D on a 2x2 grid, S = 10 (shards of 3 tokens, the last padded):
// the function takes and returns one rank's shards; Q is gathered over the
// grid row (axis 1), K and V over the column (axis 0); the local attention
// is framed at its chunks' positions (row i: query 6i, column j: key 6j, of
// 10 x 10); the f32 partials go through an all-to-all over the row and
// attn.merge into the rank's O and LSE shards.

// CHECK: shard.grid @attn_grid_2_2(shape = 2x2) {sym_visibility = "private"}
// CHECK-LABEL: func.func @prefill(
// CHECK-SAME: %[[Q:.*]]: tensor<1x2x3x8xf32>, %[[K:.*]]: tensor<1x1x3x8xf32>, %[[V:.*]]: tensor<1x1x3x8xf32>)
// CHECK-SAME: -> (tensor<1x2x3x8xf32>, tensor<1x2x3xf32>)
// CHECK-DAG: %[[O:.*]] = tensor.empty() : tensor<1x2x3x8xf32>
// CHECK-DAG: %[[L:.*]] = tensor.empty() : tensor<1x2x3xf32>
// CHECK: %[[IDX:.*]]:2 = shard.process_multi_index on @attn_grid_2_2 : index, index
// CHECK: %[[QC:.*]] = shard.all_gather %[[Q]] on @attn_grid_2_2 grid_axes = [1] gather_axis = 2 : tensor<1x2x3x8xf32> -> tensor<1x2x6x8xf32>
// CHECK: %[[KC:.*]] = shard.all_gather %[[K]] on @attn_grid_2_2 grid_axes = [0] gather_axis = 2 : tensor<1x1x3x8xf32> -> tensor<1x1x6x8xf32>
// CHECK: %[[VC:.*]] = shard.all_gather %[[V]] on @attn_grid_2_2 grid_axes = [0] gather_axis = 2
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: %[[QOFF:.*]] = arith.muli %[[IDX]]#0, %[[C6]]
// CHECK: %[[KOFF:.*]] = arith.muli %[[IDX]]#1,
// CHECK: %[[PART:.*]]:2 = attn.attention ins(%[[QC]], %[[KC]], %[[VC]] : {{.*}}) frame(%[[QOFF]], %[[KOFF]] of %{{.*}}, %{{.*}}) outs({{.*}} : tensor<1x2x6x8xf32>, tensor<1x2x6xf32>) {causal}
// CHECK: %[[PO:.*]] = tensor.expand_shape %[[PART]]#0
// CHECK: %[[SO:.*]] = shard.all_to_all %[[PO]] on @attn_grid_2_2 grid_axes = [1] split_axis = 3 concat_axis = 0 : tensor<1x1x2x6x8xf32> -> tensor<2x1x2x3x8xf32>
// CHECK: %[[PL:.*]] = tensor.expand_shape %[[PART]]#1
// CHECK: %[[SL:.*]] = shard.all_to_all %[[PL]] on @attn_grid_2_2 grid_axes = [1] split_axis = 3 concat_axis = 0 : tensor<1x1x2x6xf32> -> tensor<2x1x2x3xf32>
// CHECK: %[[M:.*]]:2 = attn.merge ins(%[[SO]], %[[SL]] : {{.*}}) outs(%[[O]], %[[L]] : {{.*}}) dim = 0
// CHECK: return %[[M]]#0, %[[M]]#1
func.func @prefill(%q: tensor<1x2x10x8xf32>, %k: tensor<1x1x10x8xf32>, %v: tensor<1x1x10x8xf32>) -> (tensor<1x2x10x8xf32>, tensor<1x2x10xf32>) {
  %o = tensor.empty() : tensor<1x2x10x8xf32>
  %l = tensor.empty() : tensor<1x2x10xf32>
  %r:2 = attn.attention ins(%q, %k, %v : tensor<1x2x10x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>)
      outs(%o, %l : tensor<1x2x10x8xf32>, tensor<1x2x10xf32>)
      {causal, partition = #attn.attention2d<q_parts = 2, kv_parts = 2>} -> tensor<1x2x10x8xf32>, tensor<1x2x10xf32>
  return %r#0, %r#1 : tensor<1x2x10x8xf32>, tensor<1x2x10xf32>
}

// -----

// A ring of 4 over S = 10: P steps of a framed attention against the shard
// held, (rank - step) mod 4, merged into an f32 running result; K and V
// shifted by one rank except after the last step; the score region and
// scale travel with the local attention; O (an argument) is the rank's
// bf16 shard.

// CHECK: shard.grid @attn_grid_4(shape = 4)
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[Q:.*]]: tensor<1x2x3x8xf32>, %[[K:.*]]: tensor<1x1x3x8xf32>, %[[V:.*]]: tensor<1x1x3x8xf32>, %[[O:.*]]: tensor<1x2x3x8xbf16>) -> tensor<1x2x3x8xbf16>
// CHECK: %[[R:.*]] = shard.process_multi_index on @attn_grid_4 : index
// CHECK: %[[QOFF:.*]] = arith.muli %[[R]], %{{.*}} : index
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[STEP:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[ACCL:.*]] = %{{.*}}, %[[KCUR:.*]] = %[[K]], %[[VCUR:.*]] = %[[V]])
// CHECK: %[[SRC:.*]] = arith.remui
// CHECK: %[[KOFF:.*]] = arith.muli %[[SRC]]
// CHECK: %[[P:.*]]:2 = attn.attention ins(%[[Q]], %[[KCUR]], %[[VCUR]] : {{.*}}) frame(%[[QOFF]], %[[KOFF]] of {{.*}}) outs({{.*}}) {scale = 5.000000e-01 : f32}
// CHECK: attn.yield
// CHECK: %[[NEW:.*]]:2 = attn.merge ins({{.*}} : tensor<2x1x2x3x8xf32>, tensor<2x1x2x3xf32>)
// CHECK: scf.if
// CHECK: shard.shift %[[KCUR]] on @attn_grid_4 grid_axes = [0] shift_axis = 0 offset = 1 rotate
// CHECK: shard.shift %[[VCUR]] on @attn_grid_4 grid_axes = [0] shift_axis = 0 offset = 1 rotate
// CHECK: } else {
// CHECK: scf.yield %[[KCUR]], %[[VCUR]]
// CHECK: attn.merge ins({{.*}} : tensor<1x1x2x3x8xf32>, tensor<1x1x2x3xf32>) outs(%[[O]] : tensor<1x2x3x8xbf16>) dim = 0
func.func @ring(%q: tensor<1x2x10x8xf32>, %k: tensor<1x1x10x8xf32>, %v: tensor<1x1x10x8xf32>, %o: tensor<1x2x10x8xbf16>) -> tensor<1x2x10x8xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x10x8xf32>, tensor<1x1x10x8xf32>, tensor<1x1x10x8xf32>)
      outs(%o : tensor<1x2x10x8xbf16>)
      {scale = 0.5 : f32, partition = #attn.ring<devices = 4>} -> tensor<1x2x10x8xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return %r : tensor<1x2x10x8xbf16>
}

// -----

// Zig-zag ATTENTION2D on 2x2, S = 16 (blocks of 4 tokens, shards of 2 + 2):
// gathered chunks are reordered from [member][block][piece] to
// [block][member][piece]; query run 0 is block i (at 4i), run 1 block 3 - i
// (at 12 - 4i), the same for keys with j; one framed attention per pair of
// runs, merged over the key runs; the partial goes back to
// [member][block][piece] before the all-to-all.

// CANON-LABEL: func.func @zigzag(
// CANON-SAME: tensor<1x1x4x8xf32>
// CANON-DAG: %[[C4:.*]] = arith.constant 4 : index
// CANON-DAG: %[[CM4:.*]] = arith.constant -4 : index
// CANON-DAG: %[[C12:.*]] = arith.constant 12 : index
// CANON: %[[IDX:.*]]:2 = shard.process_multi_index
// CANON: %[[QG:.*]] = shard.all_gather %arg0 {{.*}} grid_axes = [1] gather_axis = 2 : tensor<1x1x4x8xf32> -> tensor<1x1x8x8xf32>
// CANON: %[[QE:.*]] = tensor.expand_shape %[[QG]] {{\[\[}}0], [1], [2, 3, 4], [5]] output_shape [1, 1, 2, 2, 2, 8]
// CANON: linalg.transpose ins(%[[QE]] : tensor<1x1x2x2x2x8xf32>) {{.*}} permutation = [0, 1, 3, 2, 4, 5]
// CANON: shard.all_gather %arg1 {{.*}} grid_axes = [0]
// CANON: shard.all_gather %arg2 {{.*}} grid_axes = [0]
// CANON-DAG: %[[K0:.*]] = arith.muli %[[IDX]]#1, %[[C4]]
// CANON-DAG: %[[K1M:.*]] = arith.muli %[[IDX]]#1, %[[CM4]]
// CANON-DAG: %[[K1:.*]] = arith.addi %[[K1M]], %[[C12]]
// CANON-DAG: %[[Q0:.*]] = arith.muli %[[IDX]]#0, %[[C4]]
// CANON-DAG: %[[Q1M:.*]] = arith.muli %[[IDX]]#0, %[[CM4]]
// CANON-DAG: %[[Q1:.*]] = arith.addi %[[Q1M]], %[[C12]]
// CANON: attn.attention {{.*}} frame(%[[Q0]], %[[K0]] of
// CANON: attn.attention {{.*}} frame(%[[Q0]], %[[K1]] of
// CANON: attn.merge {{.*}} : tensor<2x1x1x4x8xf32>, tensor<2x1x1x4xf32>
// CANON: attn.attention {{.*}} frame(%[[Q1]], %[[K0]] of
// CANON: attn.attention {{.*}} frame(%[[Q1]], %[[K1]] of
// CANON: attn.merge
// CANON: linalg.transpose {{.*}} permutation = [0, 1, 3, 2, 4, 5]
// CANON: shard.all_to_all {{.*}} : tensor<1x1x1x8x8xf32> -> tensor<2x1x1x4x8xf32>
// CANON: linalg.transpose {{.*}} permutation = [0, 1, 3, 2, 4]
// CANON: shard.all_to_all {{.*}} : tensor<1x1x1x8xf32> -> tensor<2x1x1x4xf32>
// CANON: attn.merge
func.func @zigzag(%q: tensor<1x1x16x8xf32>, %k: tensor<1x1x16x8xf32>, %v: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  %o = tensor.empty() : tensor<1x1x16x8xf32>
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>)
      outs(%o : tensor<1x1x16x8xf32>)
      {causal, partition = #attn.attention2d<q_parts = 2, kv_parts = 2, zigzag = true>} -> tensor<1x1x16x8xf32>
  return %r : tensor<1x1x16x8xf32>
}
