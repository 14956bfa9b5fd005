// RUN: attn-opt %s --attn-partition-kv --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-partition-kv="block-m=16 block-n=64" --split-input-file | FileCheck %s --check-prefix=OPTIONS

// Split-KV: S slots, the default tiles of a split kernel pinned (D = 64:
// 64 x 64, GQA packing's 4 heads of a decode step), the merge into the op's
// destinations.
// CHECK-LABEL: func.func @split_kv
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x8x1x64xbf16>, %[[K:[^:]+]]: tensor<2x2x4096x64xbf16>, %[[O:[^:]+]]: tensor<2x8x1x64xbf16>, %[[L:[^:]+]]: tensor<2x8x1xf32>
// CHECK-DAG: %[[PL:.+]] = tensor.empty() : tensor<4x2x8x1xf32>
// CHECK-DAG: %[[PO:.+]] = tensor.empty() : tensor<4x2x8x1x64xf32>
// CHECK: %[[P:.+]]:2 = attn.partial_attention ins(%[[Q]], %[[K]], %[[K]] : {{.*}}) outs(%[[PO]], %[[PL]] : tensor<4x2x8x1x64xf32>, tensor<4x2x8x1xf32>)
// CHECK-SAME: partition = #attn.split_kv<splits = 4>
// CHECK-SAME: tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>
// CHECK: %[[M:.+]]:2 = attn.merge ins(%[[P]]#0, %[[P]]#1 : {{.*}}) outs(%[[O]], %[[L]] : tensor<2x8x1x64xbf16>, tensor<2x8x1xf32>) dim = 0
// CHECK: return %[[M]]#0, %[[M]]#1
// OPTIONS-LABEL: func.func @split_kv
// OPTIONS: tiles = #attn.fa2<block_m = 16, block_n = 64, warps = 1, stages = 2, packed_heads = 4>
func.func @split_kv(%q: tensor<2x8x1x64xbf16>, %k: tensor<2x2x4096x64xbf16>,
                    %o: tensor<2x8x1x64xbf16>, %l: tensor<2x8x1xf32>)
    -> (tensor<2x8x1x64xbf16>, tensor<2x8x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %k : tensor<2x8x1x64xbf16>, tensor<2x2x4096x64xbf16>, tensor<2x2x4096x64xbf16>)
      outs(%o, %l : tensor<2x8x1x64xbf16>, tensor<2x8x1xf32>)
      {causal, partition = #attn.split_kv<splits = 4>} -> tensor<2x8x1x64xbf16>, tensor<2x8x1xf32>
  return %r#0, %r#1 : tensor<2x8x1x64xbf16>, tensor<2x8x1xf32>
}

// -----

// Lean: the slots are the most CTAs any output tile meets. With the split
// kernels' default tiles (64 x 64), or 16 x 64 by the options: 4 heads x 16
// blocks of 64 keys = 64 LeanTiles over 5 CTAs (13, 13, 13, 13, 12): a tile
// of 16 meets at most 3 CTAs.
// CHECK-LABEL: func.func @lean
// CHECK: attn.partial_attention {{.*}} outs(%{{.+}}, %{{.+}} : tensor<3x1x4x1x64xf32>, tensor<3x1x4x1xf32>)
// CHECK-SAME: partition = #attn.lean<ctas = 5>
// CHECK: attn.merge {{.*}} dim = 0
// OPTIONS-LABEL: func.func @lean
// OPTIONS: outs(%{{.+}}, %{{.+}} : tensor<3x1x4x1x64xf32>, tensor<3x1x4x1xf32>)
func.func @lean(%q: tensor<1x4x1x64xf32>, %k: tensor<1x4x1000x64xf32>, %o: tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x1x64xf32>, tensor<1x4x1000x64xf32>, tensor<1x4x1000x64xf32>)
      outs(%o : tensor<1x4x1x64xf32>) {partition = #attn.lean<ctas = 5>} -> tensor<1x4x1x64xf32>
  return %r : tensor<1x4x1x64xf32>
}

// -----

// More CTAs than LeanTiles: every piece is one block, 16 slots.
// CHECK-LABEL: func.func @lean_more_ctas_than_tiles
// CHECK: attn.partial_attention {{.*}} outs(%{{.+}}, %{{.+}} : tensor<16x1x4x1x64xf32>, tensor<16x1x4x1xf32>)
func.func @lean_more_ctas_than_tiles(%q: tensor<1x4x1x64xf32>, %k: tensor<1x4x1000x64xf32>, %o: tensor<1x4x1x64xf32>) -> tensor<1x4x1x64xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x1x64xf32>, tensor<1x4x1000x64xf32>, tensor<1x4x1000x64xf32>)
      outs(%o : tensor<1x4x1x64xf32>) {partition = #attn.lean<ctas = 132>} -> tensor<1x4x1x64xf32>
  return %r : tensor<1x4x1x64xf32>
}

// -----

// Dynamic lengths: the slot count is computed from the run-time sizes.
// CHECK-LABEL: func.func @lean_dynamic
// CHECK: scf.for
// CHECK: tensor.empty(%[[S:.+]], %{{.+}}) : tensor<?x1x4x?xf32>
// CHECK: tensor.empty(%[[S]], %{{.+}}) : tensor<?x1x4x?x64xf32>
// CHECK: attn.partial_attention {{.*}} -> tensor<?x1x4x?x64xf32>, tensor<?x1x4x?xf32>
func.func @lean_dynamic(%q: tensor<1x4x?x64xf32>, %k: tensor<1x4x?x64xf32>, %o: tensor<1x4x?x64xf32>) -> tensor<1x4x?x64xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>)
      outs(%o : tensor<1x4x?x64xf32>) {causal, partition = #attn.lean<ctas = 16>} -> tensor<1x4x?x64xf32>
  return %r : tensor<1x4x?x64xf32>
}

// -----

// The mask, the attributes and the score region move to the partial
// attention; attentions without a KV partition are left alone.
// CHECK-LABEL: func.func @carries_everything
// CHECK: attn.partial_attention {{.*}} mask(%{{.+}} : tensor<1x1x1x256xi1>)
// CHECK-SAME: causal
// CHECK-SAME: scale = 1.250000e-01 : f32
// CHECK-SAME: softcap = 3.000000e+01 : f32
// CHECK-SAME: window = array<i64: 64, 0>
// CHECK: score
// CHECK: arith.addf
// CHECK: attn.yield
// CHECK: attn.merge
// CHECK: attn.attention
// CHECK-NOT: partial_attention
func.func @carries_everything(%q: tensor<1x2x1x64xf16>, %k: tensor<1x2x256x64xf16>,
                              %mask: tensor<1x1x1x256xi1>, %o: tensor<1x2x1x64xf16>)
    -> (tensor<1x2x1x64xf16>, tensor<1x2x1x64xf16>) {
  %r = attn.attention ins(%q, %k, %k : tensor<1x2x1x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
      mask(%mask : tensor<1x1x1x256xi1>) outs(%o : tensor<1x2x1x64xf16>)
      {causal, scale = 0.125 : f32, softcap = 30.0 : f32, window = array<i64: 64, 0>,
       partition = #attn.split_kv<splits = 2>} -> tensor<1x2x1x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %one = arith.constant 1.0 : f32
        %t = arith.addf %s, %one : f32
        attn.yield %t : f32
      }
  %plain = attn.attention ins(%q, %k, %k : tensor<1x2x1x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
      outs(%o : tensor<1x2x1x64xf16>) -> tensor<1x2x1x64xf16>
  return %r, %plain : tensor<1x2x1x64xf16>, tensor<1x2x1x64xf16>
}
