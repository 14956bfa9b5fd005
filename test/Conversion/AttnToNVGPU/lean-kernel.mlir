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
// CHECK: #[[LICM:.+]] = #llvm.loop_licm<disable = true>
// CHECK: #[[KEEP:.+]] = #llvm.loop_annotation<licm = #[[LICM]]>
// CHECK: gpu.func @decode_attention0(%[[Q:[^:]+]]: memref<1x4x1x64xf16>, %[[K:[^:]+]]: memref<1x4x1000x64xf16>, %[[V:[^:]+]]: memref<1x4x1000x64xf16>, %[[O:[^:]+]]: memref<1x4x1x64xf16>, %[[LSE:[^:]+]]: memref<1x4x1xf32>, %[[PO:[^:]+]]: memref<5x64x64xf32>, %[[PL:[^:]+]]: memref<5x64xf32>, %[[FLAGS:[^:]+]]: memref<5xi32>) kernel
// CHECK-SAME: grid = array<i64: 5, 1, 1>, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, param_names = ["Q", "K", "V", "O", "LSE"], params = [memref<1x4x1x64xf16>, memref<1x4x1000x64xf16>, memref<1x4x1000x64xf16>, memref<1x4x1x64xf16>, memref<1x4x1xf32>], persistent, scalars = []
// CHECK-SAME: workspaces = [{bytes = 81920 : i64, name = "partial_o", zero_init = false}, {bytes = 1280 : i64, name = "partial_lse", zero_init = false}, {bytes = 20 : i64, name = "flags", zero_init = true}]
// CHECK: %[[CTA:.+]] = gpu.block_id  x
// The even split: CTAs from hi = 4 on start at 4 x 13 + (c - 4) x 12.
// CHECK: %[[SHORT:.+]] = arith.subi %[[CTA]], %c4 : index
// CHECK: arith.muli %[[SHORT]], %c12 : index
// The walk over the CTA's LeanTiles, one piece per iteration. Without a
// causal or window mask every query block sees the same 16 blocks, so a
// LeanTile's query block is a division, not a scan, and the walk carries
// only its next LeanTile.
// CHECK: scf.while (%[[G:.+]] = %{{.+}}) : (index) -> index {
// CHECK:   arith.cmpi slt, %[[G]], %{{.+}} : index
// CHECK: } do {
// CHECK:   %[[BH:.+]] = arith.divui %[[G]], %c16 : index
// CHECK:   %[[HEAD_FIRST:.+]] = arith.muli %[[BH]], %c16 : index
// CHECK:   %[[OFFSET:.+]] = arith.subi %[[G]], %[[HEAD_FIRST]] : index
// CHECK:   %[[QB:.+]] = arith.divui %[[OFFSET]], %c16 : index
// CHECK:   arith.minsi %[[QB]], %c1 : index
// CHECK-NOT: scf.while ({{.+}}) : (index, index) -> (index, index, index)
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
// LLVM's loop-invariant code motion stays out of the walk (loops in it are
// still optimised): the per-lane addresses of a piece's query load, output
// store and merge, hoisted above the walk, would stay live through the CTA
// body's loop and spill.
// CHECK: } attributes {loop_annotation = #[[KEEP]]}
// CHECK: gpu.return

// -----

// Causal with Sq - Sk = 200 >= block_m: query blocks 0-2 see no key and have
// no LeanTile; after the walk the CTAs share the 2 x 5 output tiles out
// (tile = cta, cta + 5, ...) and write O = 0 and LSE = -inf into those
// without a visible block.
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
// CHECK: scf.for %[[TILE:.+]] = %[[CTA]] to %c10 step %c5 {
// CHECK:   %[[BH:.+]] = arith.divui %[[TILE]], %c5 : index
// CHECK:   %[[EMPTY:.+]] = arith.cmpi eq, %{{.+}}, %c0 : index
// CHECK:   scf.if %[[EMPTY]] {
// CHECK:     gpu.barrier
// CHECK:     memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x264xf32>
// CHECK:     vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {{.*}}: memref<1x2x264x64xf16>, vector<8xf16>
// CHECK: gpu.return

// -----

// Run-time lengths: the batch, Sq and Sk are read off Q and K at the
// kernel's entry, the LeanTiles of a (batch, head) are summed over the query
// blocks (an scf.for to ceil(Sq / block_m)), and the even split over the
// fixed 8 CTAs is computed from them; the workspaces keep a slot per CTA.
// Any output tile may lack keys (Sk = 0 at run time): the round-robin over
// the output tiles is always there.
func.func @run_time_lengths(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>,
                            %o: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>)
      outs(%o : tensor<?x4x?x64xf16>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, partition = #attn.lean<ctas = 8>}
      -> tensor<?x4x?x64xf16>
  return %r : tensor<?x4x?x64xf16>
}
// CHECK-LABEL: gpu.func @run_time_lengths_attention0
// CHECK-SAME: %[[PO:[^:]+]]: memref<8x64x64xf32>, %[[PL:[^:]+]]: memref<8x64xf32>, %[[FLAGS:[^:]+]]: memref<8xi32>
// CHECK-SAME: grid = array<i64: 8, 1, 1>
// CHECK-SAME: persistent
// CHECK: %[[SQ:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: %[[QBLOCKS:.+]] = arith.ceildivui %{{.+}}, %c64 : index
// CHECK-DAG: %[[PERHEAD:.+]] = scf.for %{{.+}} = %c0 to %[[QBLOCKS]] step %c1 iter_args(%{{.+}} = %c0) -> (index) {
// CHECK-DAG: %[[BH:.+]] = arith.muli %{{.+}}, %c4 : index
// CHECK: %[[LEANTILES:.+]] = arith.muli %[[BH]], %[[PERHEAD]] : index
// CHECK: arith.ceildivui %[[LEANTILES]], %c8 : index
// With a causal mask the query blocks see different numbers of blocks: the
// walk carries the previous piece's query block, from which a scan finds
// the next piece's.
// CHECK: scf.while (%{{.+}} = %{{.+}}, %{{.+}} = %c-1, %{{.+}} = %c0, %{{.+}} = %c0) : (index, index, index, index) -> (index, index, index, index) {
// CHECK:   scf.while ({{.+}}) : (index, index) -> (index, index, index)
// CHECK: } attributes {loop_annotation = #[[KEEP]]}
// CHECK: %[[TILES:.+]] = arith.muli %[[BH]], %[[QBLOCKS]] : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[TILES]] step %c8 {

// -----

// One query block a head (a causal step of 4 queries for 4 packed heads:
// 16 rows in a block of 64): it sees the blocks every query block sees, so a
// LeanTile's query block is a division and the walk carries only its next
// LeanTile, as without a mask (no scan, no carried query block).
func.func @one_query_block(%q: tensor<?x8x4x64xbf16>, %k: tensor<?x2x?x64xbf16>,
                           %o: tensor<?x8x4x64xbf16>) -> tensor<?x8x4x64xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<?x8x4x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16>)
      outs(%o : tensor<?x8x4x64xbf16>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>, partition = #attn.lean<ctas = 8>}
      -> tensor<?x8x4x64xbf16>
  return %r : tensor<?x8x4x64xbf16>
}
// CHECK-LABEL: gpu.func @one_query_block_attention0
// CHECK: scf.while (%{{.+}} = %{{.+}}) : (index) -> index {
// CHECK-NOT: scf.while ({{.+}}) : (index, index) -> (index, index, index)
// CHECK: } attributes {loop_annotation = #[[KEEP]]}

// -----

// ptxas is held to the CTAs per SM that G needs (nvvm.minctasm) where that
// many CTAs at 255 registers a thread would not fit the register file:
// 396 CTAs of 128 threads on 132 SMs are 3 per SM (3 x 128 x 256 > 65536
// registers). 264 are 2 per SM, resident at any register count: no bound.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @three_per_sm(%q: tensor<?x8x1x64xbf16>, %k: tensor<?x8x?x64xbf16>, %o: tensor<?x8x1x64xbf16>) -> tensor<?x8x1x64xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x8x1x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>)
        outs(%o : tensor<?x8x1x64xbf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, partition = #attn.lean<ctas = 396>} -> tensor<?x8x1x64xbf16>
    return %r : tensor<?x8x1x64xbf16>
  }
  func.func @two_per_sm(%q: tensor<?x8x1x64xbf16>, %k: tensor<?x8x?x64xbf16>, %o: tensor<?x8x1x64xbf16>) -> tensor<?x8x1x64xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x8x1x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>)
        outs(%o : tensor<?x8x1x64xbf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, partition = #attn.lean<ctas = 264>} -> tensor<?x8x1x64xbf16>
    return %r : tensor<?x8x1x64xbf16>
  }
}
// CHECK-LABEL: gpu.func @three_per_sm_attention0
// CHECK-SAME: nvvm.minctasm = 3
// CHECK-LABEL: gpu.func @two_per_sm_attention0
// CHECK-NOT: nvvm.minctasm
// CHECK: gpu.return
