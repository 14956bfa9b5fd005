// GQA packing: CTA (m, b, t) of the grid (ceil(p Sq / block_m), B, Hq / p)
// runs tiled rows [64 m, 64 m + 64) of tiled head t, the rows of query heads
// 4t .. 4t + 3 one after the other (12 rows here); it reads key/value head
// 4t / 4, copies tiled row r of Q from head 4t + r / 3, query r mod 3
// (rows from 12 on zero-filled), and stores O and LSE the same way.
// RUN: attn-opt %s --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// CHECK-LABEL: gpu.func @spec_attention0(
// CHECK-SAME: %[[Q:[^:]+]]: memref<2x8x3x64xf16>, %{{[^:]+}}: memref<2x2x1000x64xf16>, %{{[^:]+}}: memref<2x2x1000x64xf16>, %[[O:[^:]+]]: memref<2x8x3x64xf16>, %[[LSE:[^:]+]]: memref<2x8x3xf32>)
// CHECK-SAME: grid = array<i64: 1, 2, 2>
// CHECK-SAME: tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>
// CHECK: %[[B:.+]] = gpu.block_id  y
// CHECK: %[[T:.+]] = gpu.block_id  z
// CHECK: %[[HEAD0:.+]] = arith.muli %[[T]], %c4 : index
// CHECK: %[[KVHEAD:.+]] = arith.divui %[[HEAD0]], %c4 : index
// CHECK: %{{.+}} = arith.cmpi ult, %[[ROW:.+]], %c12 : index
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[ROW]], %c11 : index
// CHECK: %[[INHEAD:.+]] = arith.divui %[[CLAMPED]], %c3 : index
// CHECK: %[[HEAD:.+]] = arith.addi %[[HEAD0]], %[[INHEAD]] : index
// CHECK: %[[QROW:.+]] = arith.remui %[[CLAMPED]], %c3 : index
// CHECK: nvgpu.device_async_copy %[[Q]][%[[B]], %[[HEAD]], %[[QROW]], %{{.+}}]
// CHECK: memref.store %{{.+}}, %[[LSE]][%[[B]], %{{.+}}, %{{.+}}] : memref<2x8x3xf32>
// CHECK: vector.store %{{.+}}, %[[O]][%[[B]], %{{.+}}, %{{.+}}, %{{.+}}]
func.func @spec(%q: tensor<2x8x3x64xf16>, %k: tensor<2x2x1000x64xf16>, %v: tensor<2x2x1000x64xf16>, %o: tensor<2x8x3x64xf16>, %l: tensor<2x8x3xf32>) -> (tensor<2x8x3x64xf16>, tensor<2x8x3xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x3x64xf16>, tensor<2x2x1000x64xf16>, tensor<2x2x1000x64xf16>)
      outs(%o, %l : tensor<2x8x3x64xf16>, tensor<2x8x3xf32>) {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>}
      -> tensor<2x8x3x64xf16>, tensor<2x8x3xf32>
  return %r#0, %r#1 : tensor<2x8x3x64xf16>, tensor<2x8x3xf32>
}
