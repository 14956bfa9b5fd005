// RUN: attn-opt %s --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// D = 40 and Dv = 88, neither a multiple of 64: shared-memory rows are
// padded to 64 and 128 elements, the k steps of S = Q K^T to 48 columns
// (the chunk past D zero-filled), O takes Dv / 8 = 11 n8 tiles.
func.func @narrow(%q: tensor<1x2x100x40xf16>, %k: tensor<1x2x100x40xf16>,
                  %v: tensor<1x2x100x88xf16>, %o: tensor<1x2x100x88xf16>) -> tensor<1x2x100x88xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x100x40xf16>, tensor<1x2x100x40xf16>, tensor<1x2x100x88xf16>)
      outs(%o : tensor<1x2x100x88xf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 2, stages = 1>} -> tensor<1x2x100x88xf16>
  return %r : tensor<1x2x100x88xf16>
}

// Q block 64 x 128 (as wide as O's rows), K tile 32 x 64, V tile 32 x 128.
// CHECK-LABEL: gpu.func @narrow_attention0
// CHECK-SAME: dynamic_shared_memory = 28672
// CHECK: %[[Q:.+]] = memref.view %{{.+}}[%c0][] : {{.+}} to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[OSTAGE:.+]] = memref.view %{{.+}}[%c0][] : {{.+}} to memref<64x128xf16, #gpu.address_space<workgroup>>
// A chunk at column 40 or past reads nothing (its address clamped to the
// last chunk of the row) and is filled with zeros.
// CHECK: %[[REAL:.+]] = arith.cmpi ult, %[[COL:.+]], %c40 : index
// CHECK: %[[BOTH:.+]] = arith.andi %{{.+}}, %[[REAL]] : i1
// CHECK: %[[CLAMPED:.+]] = arith.minui %[[COL]], %c32 : index
// CHECK: %[[ELEMENTS:.+]] = arith.select %[[BOTH]], %c8, %c0 : index
// CHECK: nvgpu.device_async_copy %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %[[CLAMPED]]], %[[Q]][%{{.+}}, %{{.+}}], 8, %[[ELEMENTS]] {bypassL1}
// CHECK: memref.view %{{.+}}[%c16384][] : {{.+}} to memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view %{{.+}}[%c20480][] : {{.+}} to memref<32x128xf16, #gpu.address_space<workgroup>>
// Two m16 tiles a warp: S takes 4 n8 tiles x 3 k steps, O 11 n8 tiles x 2
// k16 slices of P.
// CHECK-COUNT-68: nvgpu.mma.sync
// CHECK-NOT: nvgpu.mma.sync
// O's rows are wider than Q's: the warps wait for each other before
// staging O over the Q block.
// CHECK: gpu.barrier
// CHECK-NOT: vector.load
// CHECK: vector.store %{{.+}}, %[[OSTAGE]]
