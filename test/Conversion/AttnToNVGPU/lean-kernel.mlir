// RUN: attn-opt %s --attn-to-nvgpu --canonicalize --cse --split-input-file | FileCheck %s

// Lean attention as one persistent kernel: 4 heads x 16 key blocks = 64
// LeanTiles over 5 CTAs (13 for CTAs 0-3, 12 for CTA 4). Each CTA walks its
// range piece by piece with the FlashAttention-2 CTA body; contributors
// publish a partial and raise their flag, hosts wait for their
// contributors' flags and merge in CTA order.
func.func @decode(%q: tensor<1x4x1x64xf16>, %k: tensor<1x4x1000x64xf16>,
                  %o: tensor<1x4x1x64xf16>, %l: tensor<1x4x1xf32>) -> (tensor<1x4x1x64xf16>, tensor<1x4x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %k : tensor<1x4x1x64xf16>, tensor<1x4x1000x64xf16>, tensor<1x4x1000x64xf16>)
      outs(%o, %l : tensor<1x4x1x64xf16>, tensor<1x4x1xf32>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, partition = #attn.lean<ctas = 5>}
      -> tensor<1x4x1x64xf16>, tensor<1x4x1xf32>
  return %r#0, %r#1 : tensor<1x4x1x64xf16>, tensor<1x4x1xf32>
}

// The attention's parameters, then the workspaces: partial O and LSE per
// CTA (f32) and one flag per CTA, zeroed before every launch.
// CHECK: gpu.func @decode_attention0(%[[Q:[^:]+]]: memref<1x4x1x64xf16>, %[[K:[^:]+]]: memref<1x4x1000x64xf16>, %[[V:[^:]+]]: memref<1x4x1000x64xf16>, %[[O:[^:]+]]: memref<1x4x1x64xf16>, %[[LSE:[^:]+]]: memref<1x4x1xf32>, %[[PO:[^:]+]]: memref<5x64x64xf32>, %[[PL:[^:]+]]: memref<5x64xf32>, %[[FLAGS:[^:]+]]: memref<5xi32>) kernel
// CHECK-SAME: grid = array<i64: 5, 1, 1>, param_names = ["Q", "K", "V", "O", "LSE"], params = [memref<1x4x1x64xf16>, memref<1x4x1000x64xf16>, memref<1x4x1000x64xf16>, memref<1x4x1x64xf16>, memref<1x4x1xf32>], persistent, scalars = []
// CHECK-SAME: workspaces = [{bytes = 81920 : i64, name = "partial_o", zero_init = false}, {bytes = 1280 : i64, name = "partial_lse", zero_init = false}, {bytes = 20 : i64, name = "flags", zero_init = true}]
// CHECK: %[[CTA:.+]] = gpu.block_id  x
// The even split: CTAs from hi = 4 on start at 4 x 13 + (c - 4) x 12.
// CHECK: %[[SHORT:.+]] = arith.subi %[[CTA]], %c4 : index
// CHECK: arith.muli %[[SHORT]], %c12 : index
// The walk over the CTA's LeanTiles, one piece per iteration.
// CHECK: scf.while (%[[G:.+]] = %{{.+}}) : (index) -> index {
// CHECK:   arith.cmpi slt, %[[G]], %{{.+}} : index
// CHECK: } do {
// The piece's blocks run through the CTA body.
// CHECK:   scf.for
// CHECK:     nvgpu.ldmatrix
// A host with contributors: thread 0 spins on each contributor's flag
// (an atomic add of 0) and fences, the CTA synchronises and merges the
// partials in CTA order.
// CHECK:   scf.while : () -> () {
// CHECK:     %[[FLAG:.+]] = memref.atomic_rmw addi %c0_i32, %[[FLAGS]][%{{.+}}] : (i32, memref<5xi32>) -> i32
// CHECK:     arith.cmpi eq, %[[FLAG]], %c0_i32 : i32
// CHECK:   nvvm.memory.barrier <gpu>
// CHECK:   gpu.barrier
// CHECK:   scf.for
// CHECK:     memref.load %[[PL]]
// CHECK:     vector.load %[[PO]]
// A contributor: its normalised partial into its slot; after a barrier,
// thread 0 fences and raises the flag.
// CHECK:   vector.store %{{.+}}, %[[PO]][%[[CTA]], %{{.+}}, %{{.+}}] : memref<5x64x64xf32>, vector<2xf32>
// CHECK:   memref.store %{{.+}}, %[[PL]][%[[CTA]], %{{.+}}] : memref<5x64xf32>
// CHECK:   gpu.barrier
// CHECK:   nvvm.memory.barrier <gpu>
// CHECK:   memref.atomic_rmw addi %c1_i32, %[[FLAGS]][%[[CTA]]] : (i32, memref<5xi32>) -> i32

// -----

// Causal with Sq - Sk = 200 >= block_m: query blocks 0-2 see no key and have
// no LeanTile; after the walk the CTAs share them out (tile = cta, cta + 5,
// ...) and write O = 0 and LSE = -inf.
func.func @rows_without_keys(%q: tensor<1x2x264x64xf16>, %k: tensor<1x2x64x64xf16>,
                             %o: tensor<1x2x264x64xf16>, %l: tensor<1x2x264xf32>) -> (tensor<1x2x264x64xf16>, tensor<1x2x264xf32>) {
  %r:2 = attn.attention ins(%q, %k, %k : tensor<1x2x264x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
      outs(%o, %l : tensor<1x2x264x64xf16>, tensor<1x2x264xf32>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>, partition = #attn.lean<ctas = 5>}
      -> tensor<1x2x264x64xf16>, tensor<1x2x264xf32>
  return %r#0, %r#1 : tensor<1x2x264x64xf16>, tensor<1x2x264xf32>
}
// CHECK-LABEL: gpu.func @rows_without_keys_attention0
// CHECK: %[[CTA:.+]] = gpu.block_id  x
// CHECK: scf.while
// CHECK: scf.for %[[TILE:.+]] = %[[CTA]] to %c6 step %c5 {
// CHECK:   gpu.barrier
// CHECK:   memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x264xf32>
// CHECK:   vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {{.*}}: memref<1x2x264x64xf16>, vector<8xf16>
// CHECK: gpu.return
