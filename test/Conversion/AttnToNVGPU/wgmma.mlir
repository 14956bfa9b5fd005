// The matrix unit of the CTA body's products (chooseMatrixUnit): wgmma on
// an sm_90a target where the tiles are whole warpgroups of 16-row warps,
// mma.sync elsewhere; matrix-unit overrides the choice.
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu=matrix-unit=mma-sync | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu=matrix-unit=wgmma --verify-diagnostics | FileCheck %s --check-prefix=FORCED
// RUN: not attn-opt %s --split-input-file --attn-to-nvgpu=matrix-unit=tensor-core 2>&1 | FileCheck %s --check-prefix=BAD

// 64 x 64 tiles with 4 warps: one warpgroup, 16 rows a warp.
// CHECK-LABEL: gpu.func @decode_attention0(
// Q's descriptor: the shared window's address of the warpgroup's rows,
// leading offset 16 bytes, stride 1024 (an 8-row atom), 128-byte swizzle.
// CHECK: %[[BASE:.+]] = memref.extract_aligned_pointer_as_index
// CHECK: arith.constant 4611686293305360384 : i64
// The stages' mbarriers (tensor-copies.mlir and warp-roles.mlir have the
// copies) are made visible to the async proxy, then Q's copies before the
// consumers' barrier.
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.barrier id = %{{.+}} number_of_threads = %{{.+}}
// The first step's S = Q K^T: four k steps of D = 64, both operands by
// descriptor, scale-d 0 then 1 (immediates: a register for it, defined
// after the fence, made ptxas serialise the products).
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, $32, $33, p, 1, 1, 0, 0;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The overlapped loop (softmaxOverlapUnfit: 64 x 64 fits): each step issues
// S of block r and O += P V of block r - 1 after one fence (V's descriptor:
// the next 64 columns block_n x 128 bytes on), waits for S alone
// (wait_group 1), and after the softmax for P V, whose A registers (P) are
// used once more after the wait so that nothing is allocated over them.
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, $32, $33, p, 1, 1, 0, 0;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: arith.constant 4611686293338849280 : i64
// CHECK-NOT: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r"
// CHECK: scf.yield
// The last step: P V of the last block.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects
// CHECK-NOT: nvgpu.mma.sync
// CHECK: gpu.return
// MMA-LABEL: gpu.func @decode_attention0(
// MMA-NOT: wgmma
// MMA: nvgpu.mma.sync
// FORCED-LABEL: gpu.func @decode_attention0(
// FORCED: wgmma.mma_async
// BAD: attn-to-nvgpu: matrix-unit must be auto, mma-sync or wgmma; got 'tensor-core'
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @decode(%q: tensor<1x8x64x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x64x64xf16>) -> tensor<1x8x64x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x64x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x64x64xf16>
    return %r : tensor<1x8x64x64xf16>
  }
}

// -----

// Two m16 tiles a warp (128 rows, 4 warps): mma.sync, and wgmma refused.
// CHECK-LABEL: gpu.func @two_tiles_attention0(
// CHECK-NOT: wgmma
// CHECK: nvgpu.mma.sync
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @two_tiles(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    // expected-error @+1 {{attn-to-nvgpu: matrix-unit=wgmma: wgmma needs warps in warpgroups of 4, each warp owning 16 rows (block_m = 16 x warps); the tiles are 128 x 64 with 4 warps: use matrix-unit=auto or pin tiles that fit (the op's tiles attribute)}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x128x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x128x64xf16>)
        {tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x128x64xf16>
    return %r : tensor<1x8x128x64xf16>
  }
}

// -----

// sm_80 has no wgmma.
// CHECK-LABEL: gpu.func @ampere_attention0(
// CHECK-NOT: wgmma
// CHECK: nvgpu.mma.sync
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @ampere(%q: tensor<1x8x64x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x64x64xf16>) -> tensor<1x8x64x64xf16> {
    // expected-error @+1 {{attn-to-nvgpu: matrix-unit=wgmma: wgmma needs sm_90a; the chip is sm_80}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x64x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x64x64xf16>
    return %r : tensor<1x8x64x64xf16>
  }
}

// -----

// Unpinned tiles follow the unit (chooseTiles' matrix-unit): warpgroup tiles
// for wgmma (128 x 128, 8 warps at D = 64), FlashAttention-2's for mma.sync
// (128 x 64, 4 warps), as attn-select-schedule's option of the same name.
// CHECK-LABEL: gpu.func @unpinned_attention0(
// CHECK-SAME: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
// MMA-LABEL: gpu.func @unpinned_attention0(
// MMA-SAME: tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>
// FORCED-LABEL: gpu.func @unpinned_attention0(
// FORCED-SAME: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @unpinned(%q: tensor<1x4x1000x64xbf16>, %o: tensor<1x4x1000x64xbf16>) -> tensor<1x4x1000x64xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1000x64xbf16>, tensor<1x4x1000x64xbf16>, tensor<1x4x1000x64xbf16>)
        outs(%o : tensor<1x4x1000x64xbf16>) {causal} -> tensor<1x4x1000x64xbf16>
    return %r : tensor<1x4x1000x64xbf16>
  }
}

// -----

// A block mask keeps the sequential loop on wgmma (softmaxOverlapUnfit):
// each product waited for at once, never one left running.
// CHECK-LABEL: gpu.func @blocks_attention0(
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @blocks(%q: tensor<1x2x128x64xbf16>, %bm: tensor<1x2x2x2xi8>, %o: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>)
        block_mask(%bm : tensor<1x2x2x2xi8> blocks [64, 64])
        outs(%o : tensor<1x2x128x64xbf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x2x128x64xbf16>
    return %r : tensor<1x2x128x64xbf16>
  }
}

// -----

// The backward kernel on wgmma: a CTA's four warps are one warpgroup, its
// 64 rows one m64 product. Its tiles come by tensor copies (tensor maps of
// Q, K, V and dO, after the views; 64-column boxes of 64 rows): thread 0
// initialises an mbarrier for each of the two stages of streamed tiles and
// one for the own rows, then a key/value CTA copies its K and V rows (16384
// bytes on the own rows' mbarrier) and Q and dO of the first query block it
// visits; every thread waits for the own rows. For each query block: a
// barrier, thread 0 copies the next block's Q and dO into the stage the
// previous block left, every thread waits for this block's stage (the
// phase's parity computed), and after the statistics' barrier S^T = K Q^T
// and dP^T = V dO^T are issued together (four k steps of D = 64 each, both
// operands by descriptor) and waited for once; then dK += dS^T Q and dV +=
// P^T dO, A from registers (four k16 slices of 64 queries), each waited for
// with its A registers used once more after the wait. No cp.async: no
// proxy fence but after the mbarriers' initialisation.
// CHECK-LABEL: gpu.func @grad_attention_grad0(
// CHECK-SAME: %arg9: !llvm.ptr, %arg10: !llvm.ptr, %arg11: !llvm.ptr, %arg12: !llvm.ptr)
// CHECK-SAME: tensor_maps = [{box = array<i64: 64, 64, 1, 1>, name = "q_map", param = 0 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "k_map", param = 1 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "v_map", param = 2 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "do_map", param = 5 : i64, swizzle = 128 : i64}]
// CHECK-SAME: stages = 2
// CHECK-COUNT-3: nvvm.mbarrier.init
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx {{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg10,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg11,
// CHECK: nvvm.mbarrier.arrive.expect_tx {{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg9,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg12,
// CHECK: nvvm.mbarrier.try_wait.parity {{.*}}, %c0_i32,
// CHECK: scf.for
// CHECK-NOT: nvvm.cp.async.bulk
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx {{.*}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg9,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %arg12,
// CHECK: nvvm.mbarrier.try_wait.parity {{.*}}, %{{[0-9]+}},
// CHECK-NOT: wgmma
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, $32, $33, p, 1, 1, 0, 0;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, $32, $33, p, 1, 1, 0, 0;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}}, {$32, $33, $34, $35}, $36, p, 1, 1, 1;
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "r,r,r,r,r,r,r,r,r,r,r,r,r,r,r,r"
// CHECK-NOT: nvgpu.mma.sync
// CHECK-NOT: nvgpu.device_async_copy
// CHECK-NOT: nvvm.fence.proxy
// CHECK: gpu.return
// MMA-LABEL: gpu.func @grad_attention_grad0(
// MMA-NOT: wgmma
// MMA: nvgpu.mma.sync
// FORCED-LABEL: gpu.func @grad_attention_grad0(
// FORCED: wgmma.mma_async
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @grad(%q: tensor<1x2x128x64xf16>, %o: tensor<1x2x128x64xf16>, %lse: tensor<1x2x128xf32>) -> (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>)
        out(%o, %lse : tensor<1x2x128x64xf16>, tensor<1x2x128xf32>) grad(%o : tensor<1x2x128x64xf16>)
        outs(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {causal} -> tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  }
}

// -----

// Rows wider than 192 keep the backward on mma.sync (gradWgmmaUnfit), and
// wgmma is refused.
// CHECK-LABEL: gpu.func @grad_d256_attention_grad0(
// CHECK-NOT: wgmma
// CHECK: nvvm.mma.sync
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @grad_d256(%q: tensor<1x1x64x256xbf16>, %lse: tensor<1x1x64xf32>) -> (tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>) {
    // expected-error @+1 {{attn-to-nvgpu: matrix-unit=wgmma: the backward kernel's rows (max(D, Dv) = 256) are wider than wgmma's 192: its dK or dV accumulators leave too few registers (ptxas spilled): use matrix-unit=auto}}
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>)
        out(%q, %lse : tensor<1x1x64x256xbf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x256xbf16>)
        outs(%q, %q, %q : tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>) -> tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>
    return %r#0, %r#1, %r#2 : tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>, tensor<1x1x64x256xbf16>
  }
}
