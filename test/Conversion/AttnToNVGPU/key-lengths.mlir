// Per-sequence key lengths (key_lengths): the kernel takes them as an i32
// tensor after O (and LSE), named in the launch attribute; each CTA reads
// its sequence's entry (blockIdx.y), clamps it to [0, Sk], and computes
// with it as its Sk: the key blocks it visits end at ceil(L_b / block_n),
// and the copies zero-fill (and the element mask hides) keys from L_b on.
// Split-KV cuts each sequence's own blocks into its pieces.
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// CHECK-LABEL: gpu.func @decode_attention0(
// CHECK-SAME: %[[Q:[^:]+]]: memref<3x8x1x64xf16>, %{{[^:]+}}: memref<3x2x1000x64xf16>, %{{[^:]+}}: memref<3x2x1000x64xf16>, %{{[^:]+}}: memref<3x8x1x64xf16>, %[[LENGTHS:[^:]+]]: memref<3xi32>)
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "key_lengths"]
// CHECK-SAME: params = [memref<3x8x1x64xf16>, memref<3x2x1000x64xf16>, memref<3x2x1000x64xf16>, memref<3x8x1x64xf16>, memref<3xi32>]
// CHECK: %[[BATCH:.+]] = gpu.block_id y
// CHECK: %[[L32:.+]] = memref.load %[[LENGTHS]][%[[BATCH]]] : memref<3xi32>
// CHECK: %[[L:.+]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[NONNEG:.+]] = arith.maxsi %[[L]], %c0 : index
// CHECK: %[[SK:.+]] = arith.minsi %[[NONNEG]], %c1000 : index
// The last key row a copy may address: 0 for an empty sequence.
// CHECK: %[[LAST:.+]] = arith.subi %[[SK]], %c1
// CHECK: arith.maxsi %[[LAST]], %c0
// The blocks of the query block: up to ceil(L_b / 64).
// CHECK: %[[KEYEND:.+]] = arith.maxsi %[[SK]], %c0
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[KEYEND]], %c64
// CHECK: %[[END:.+]] = arith.select %{{.+}}, %[[BLOCKS]], %c0
// CHECK: scf.for %{{.+}} = %c0 to %[[END]]
// Keys at or past L_b are hidden in the block that straddles it.
// CHECK: arith.cmpi ult, %{{.+}}, %[[SK]]
// CHECK: gpu.return
func.func @decode(%q: tensor<3x8x1x64xf16>, %k: tensor<3x2x1000x64xf16>, %lengths: tensor<3xi32>,
                  %o: tensor<3x8x1x64xf16>) -> tensor<3x8x1x64xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<3x8x1x64xf16>, tensor<3x2x1000x64xf16>, tensor<3x2x1000x64xf16>)
      key_lengths(%lengths : tensor<3xi32>)
      outs(%o : tensor<3x8x1x64xf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<3x8x1x64xf16>
  return %r : tensor<3x8x1x64xf16>
}

// -----

// Run-time batch and capacity, GQA packing, split-KV and LSE: the lengths
// are a pointer with a run-time size and stride (the manifest's scalars),
// read by every split of a sequence.
// CHECK-LABEL: gpu.func @decode_split_attention0(
// CHECK-SAME: %{{[^:]+}}: memref<f32>, %[[LENGTHS:[^:]+]]: memref<i32>, %{{[^:]+}}: memref<f32>, %{{[^:]+}}: memref<f32>, %{{[^:]+}}: memref<i32>,
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "LSE", "key_lengths"]
// CHECK-SAME: memref<?xi32, strided<[?]>>]
// CHECK-SAME: {param = 5 : i64, size = 0 : i64}, {param = 5 : i64, stride = 0 : i64}
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %[[LENGTHS]]
// CHECK: %[[BATCH:.+]] = gpu.block_id y
// CHECK: memref.load %[[VIEW]][%[[BATCH]]]
// CHECK: gpu.return
func.func @decode_split(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, %lengths: tensor<?xi32>,
                        %o: tensor<?x32x1x128xbf16>, %l: tensor<?x32x1xf32>)
    -> (tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %k : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      key_lengths(%lengths : tensor<?xi32>)
      outs(%o, %l : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>,
       partition = #attn.split_kv<splits = 8>}
      -> tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
  return %r#0, %r#1 : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
}
