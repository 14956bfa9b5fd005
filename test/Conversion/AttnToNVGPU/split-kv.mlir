// Split-KV (flash-decoding) in one launch: CTA (m, b, h * S + s) of the grid
// (ceil(Sq / block_m), B, Hq * S) computes piece s of its tile's key/value
// blocks (splitKVPiece, the CPU's pieces) into its partial slot; the CTA
// that raises the tile's counter to S merges the S slots in slot order,
// writes O and LSE, and leaves the counter zero. Workspaces have a slot per
// CTA: pointers bound with as many slots as the grid has CTAs.
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// CHECK-LABEL: gpu.func @decode_attention0(
// CHECK-SAME: %{{[^:]+}}: memref<2x8x1x64xf16>, %{{[^:]+}}: memref<2x2x1000x64xf16>, %{{[^:]+}}: memref<2x2x1000x64xf16>, %{{[^:]+}}: memref<2x8x1x64xf16>, %{{[^:]+}}: memref<2x8x1xf32>,
// CHECK-SAME: %[[PO:[^:]+]]: memref<f32>, %[[PL:[^:]+]]: memref<f32>, %[[CNT:[^:]+]]: memref<i32>)
// 8 heads x 4 splits in z.
// CHECK-SAME: grid = array<i64: 1, 2, 32>
// CHECK-SAME: workspaces = [{bytes = 16384 : i64, name = "partial_o", per_cta, zero_init = false}, {bytes = 256 : i64, name = "partial_lse", per_cta, zero_init = false}, {bytes = 4 : i64, kernel_resets, name = "counters", per_cta, zero_init = true}]
// CHECK: %[[XY:.+]] = arith.muli %grid_dim_x, %grid_dim_y
// CHECK: %[[CTAS:.+]] = arith.muli %[[XY]], %grid_dim_z
// CHECK: %[[SLOTS:.+]] = memref.reinterpret_cast %[[PO]] to offset: [0], sizes: [%[[CTAS]], 64, 64], strides: [4096, 64, 1] : memref<f32> to memref<?x64x64xf32>
// CHECK: %[[LSES:.+]] = memref.reinterpret_cast %[[PL]] to offset: [0], sizes: [%[[CTAS]], 64], strides: [64, 1]
// CHECK: %[[COUNTERS:.+]] = memref.reinterpret_cast %[[CNT]] to offset: [0], sizes: [%[[CTAS]]], strides: [1]
// CHECK: %[[Z:.+]] = gpu.block_id z
// The head and the split of z.
// CHECK: %[[HEAD:.+]] = arith.divui %[[Z]], %c4
// The piece's blocks (16 blocks in runs of 4), then the FlashAttention-2
// loop over them.
// CHECK: %[[SPLIT:.+]] = arith.subi %[[Z]]
// CHECK: %[[FIRST:.+]] = arith.muli %[[SPLIT]], %c4
// CHECK: %[[BEGIN:.+]] = arith.minsi %[[FIRST]], %c16
// CHECK: scf.for %{{.+}} = %[[BEGIN]] to
// The partial holds the query rows only (Sq = 1: row 0 of each tile).
// CHECK: %[[REAL:.+]] = arith.cmpi ult, %{{.+}}, %c1 : index
// CHECK: scf.if %[[REAL]] {
// CHECK: vector.store %{{.+}}, %[[SLOTS]]
// CHECK: memref.store %{{.+}}, %[[LSES]]
// Release, count, and every thread learns whether the tile is complete.
// CHECK: gpu.barrier
// CHECK: %[[LAST:.+]] = scf.if %{{.+}} -> (i1) {
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK-NEXT: memref.atomic_rmw addi %c1_i32, %[[COUNTERS]]
// CHECK-NEXT: arith.cmpi eq, %{{.+}}, %c3_i32
// CHECK: %[[VOTE:.+]] = arith.extui %[[LAST]] : i1 to i32
// CHECK-NEXT: nvvm.barrier #nvvm.reduction<or> %[[VOTE]] -> i32
// CHECK: scf.if
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: gpu.barrier
// The merge reads the S slots in order, the query rows only.
// CHECK: scf.for
// CHECK-NEXT: scf.if %[[REAL]] -> (vector<2x2xf32>
// CHECK-NEXT: memref.load %[[LSES]]
// CHECK: vector.load %[[SLOTS]]
// CHECK: memref.store %c0_i32, %[[COUNTERS]]
// CHECK: gpu.return
func.func @decode(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x1000x64xf16>, %o: tensor<2x8x1x64xf16>, %l: tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %r, %lse = attn.attention ins(%q, %k, %k : tensor<2x8x1x64xf16>, tensor<2x2x1000x64xf16>, tensor<2x2x1000x64xf16>)
      outs(%o, %l : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {partition = #attn.split_kv<splits = 4>,
        tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %r, %lse : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}

// -----

// One split is FlashAttention-2's grid: no workspaces.
// CHECK-LABEL: gpu.func @one_split_attention0(
// CHECK-SAME: grid = array<i64: 1, 2, 8>
// CHECK-NOT: workspaces
// CHECK-SAME: {
func.func @one_split(%q: tensor<2x8x1x64xf16>, %k: tensor<2x2x1000x64xf16>, %o: tensor<2x8x1x64xf16>) -> tensor<2x8x1x64xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<2x8x1x64xf16>, tensor<2x2x1000x64xf16>, tensor<2x2x1000x64xf16>)
      outs(%o : tensor<2x8x1x64xf16>) {partition = #attn.split_kv<splits = 1>,
        tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<2x8x1x64xf16>
  return %r : tensor<2x8x1x64xf16>
}
