// A pinned #attn.kernel is built as it says: each edit of the plan
// attn-select-schedule prints for a 128 x 128 prefill on an H100 changes the
// kernel accordingly, and an edit that cannot be built is refused with the
// field and the reason (checkKernelPlan, KernelPlan.h).
// RUN: attn-opt %s --split-input-file --attn-select-schedule --attn-to-nvgpu --verify-diagnostics | FileCheck %s
// The plan report describes the pinned kernel, and why it lacks what the
// planner would have given it.
// RUN: attn-opt %s --split-input-file --attn-print-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages, issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 240 a consumer's, 1 CTA(s) an SM), its two consumer warpgroups taking turns at the products, Q by a tensor copy, O by tensor stores
// PLAN-NEXT: per (batch, head)
// PLAN: CTA body: FlashAttention-2's loop on mma.sync (pinned by the op's #attn.kernel)
// PLAN: issued by thread 0 (no warp roles: pinned by the op's #attn.kernel), Q by a tensor copy, O by tensor stores (no ping-pong: pinned by the op's #attn.kernel)
// PLAN: CTA body: FlashAttention-2's loop on wgmma, K and V by cp.async (pinned by the op's #attn.kernel), O by every lane's 16-byte stores (pinned by the op's #attn.kernel) (softmax not overlapped: pinned by the op's #attn.kernel)
// attn-select-schedule writes the plan of an op without one, keeps a pinned
// one.
// RUN: attn-opt %s --split-input-file --attn-select-schedule --verify-diagnostics | FileCheck %s --check-prefix=SCHEDULE
// attn-to-nvgpu checks a pinned plan too, without attn-select-schedule.
// RUN: not attn-opt %s --split-input-file --attn-to-nvgpu 2>&1 | FileCheck %s --check-prefix=DIRECT

// The plan as printed: FlashAttention-3's warp-specialised ping-pong.
// CHECK-LABEL: gpu.func @as_planned_attention0(
// CHECK-SAME: block = array<i64: 384, 1, 1>, dynamic_shared_memory = 81960
// CHECK-SAME: producer_warps = 4
// CHECK-SAME: name = "k_map"
// CHECK-SAME: name = "o_map"
// CHECK-SAME: name = "q_map"
// CHECK-SAME: nvvm.maxnreg = 168
// CHECK: nvvm.setmaxregister  decrease 24
// CHECK: nvvm.setmaxregister  increase 240
// CHECK: wgmma.mma_async
// The unit edited to mma_sync: FlashAttention-2's kernel, 8 warps.
// CHECK-LABEL: gpu.func @mma_sync_attention0(
// CHECK-SAME: block = array<i64: 256, 1, 1>, dynamic_shared_memory = 81920
// CHECK-NOT: tensor_maps = [{
// CHECK-NOT: wgmma
// CHECK: nvgpu.mma.sync
// CHECK-NOT: wgmma
// CHECK: gpu.return
// Without warp roles: thread 0 issues the tensor copies, no setmaxnreg.
// CHECK-LABEL: gpu.func @no_roles_attention0(
// CHECK-SAME: block = array<i64: 256, 1, 1>, dynamic_shared_memory = 81944
// CHECK-SAME: name = "k_map"
// CHECK-NOT: maxnreg
// CHECK-NOT: setmaxregister
// CHECK: wgmma.mma_async
// CHECK-NOT: setmaxregister
// CHECK: gpu.return
// K and V by cp.async: no tensor maps, no mbarriers.
// CHECK-LABEL: gpu.func @cp_async_attention0(
// CHECK-SAME: block = array<i64: 256, 1, 1>, dynamic_shared_memory = 81920
// CHECK-NOT: tensor_maps = [{
// CHECK-NOT: mbarrier
// CHECK: wgmma.mma_async
// CHECK-NOT: mbarrier
// CHECK: gpu.return
// The stages edited: one and three of K and V's 32 KiB.
// CHECK-LABEL: gpu.func @one_stage_attention0(
// CHECK-SAME: dynamic_shared_memory = 49176
// CHECK-LABEL: gpu.func @three_stages_attention0(
// CHECK-SAME: dynamic_shared_memory = 114744
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @as_planned(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {causal, kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
  func.func @mma_sync(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
  func.func @no_roles(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {causal, kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = overlapped, o = tensor>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
  func.func @cp_async(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {causal, kernel = #attn.kernel<unit = wgmma, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
  func.func @one_stage(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {causal, kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 1>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
  func.func @three_stages(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {causal, kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 3>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}

// -----

// The backward kernel's plan: as planned (wgmma, every tile by tensor
// copies), and pinned to mma.sync.
// SCHEDULE-LABEL: func.func @grad_planned
// SCHEDULE: attn.attention_grad
// SCHEDULE-SAME: kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = sequential, o = lanes>
// SCHEDULE-LABEL: func.func @grad_mma_sync
// SCHEDULE: attn.attention_grad
// SCHEDULE-SAME: kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>
// CHECK-LABEL: gpu.func @grad_planned_attention_grad0(
// CHECK-SAME: name = "q_map"
// CHECK-SAME: name = "do_map"
// CHECK: wgmma.mma_async
// CHECK-LABEL: gpu.func @grad_mma_sync_attention_grad0(
// CHECK-NOT: tensor_maps = [{
// CHECK-NOT: wgmma
// CHECK: nvgpu.mma.sync
// CHECK-NOT: wgmma
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @grad_planned(%q: tensor<1x2x128x64xf16>, %o: tensor<1x2x128x64xf16>, %lse: tensor<1x2x128xf32>) -> (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>)
        out(%o, %lse : tensor<1x2x128x64xf16>, tensor<1x2x128xf32>) grad(%o : tensor<1x2x128x64xf16>)
        outs(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {causal} -> tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  }
  func.func @grad_mma_sync(%q: tensor<1x2x128x64xf16>, %o: tensor<1x2x128x64xf16>, %lse: tensor<1x2x128xf32>) -> (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>)
        out(%o, %lse : tensor<1x2x128x64xf16>, tensor<1x2x128xf32>) grad(%o : tensor<1x2x128x64xf16>)
        outs(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>} -> tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  }
}
// -----

// wgmma on an A100.
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @wgmma_sm80(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's unit = wgmma cannot be built: wgmma needs sm_90a; the chip is sm_80; use unit = mma_sync}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {kernel = #attn.kernel<unit = wgmma, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's unit = wgmma cannot be built: wgmma needs sm_90a; the chip is sm_80; use unit = mma_sync

// -----

// The ping-pong with one consumer warpgroup.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's loop = ping_pong cannot be built: one consumer warpgroup; use loop = overlapped
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @ping_pong_one_warpgroup(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's loop = ping_pong cannot be built: one consumer warpgroup; use loop = overlapped}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}

// -----

// More registers than setmaxnreg can move.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's registers cannot be built: setmaxnreg moves the registers a block has: 128 producer threads at 24 and 256 consumer threads at 256 need more than 384 threads at 168
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @registers_beyond_the_block(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's registers cannot be built: setmaxnreg moves the registers a block has: 128 producer threads at 24 and 256 consumer threads at 256 need more than 384 threads at 168}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 256, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}

// -----

// Fewer registers at entry than ptxas needs for a 128-column product.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's entry_registers = 88 cannot be built: ptxas needs 96 at entry to compile the kernel's widest product
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @entry_below_the_product(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's entry_registers = 88 cannot be built: ptxas needs 96 at entry to compile the kernel's widest product}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 112, entry_registers = 88>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}

// -----

// Stages beyond the shared memory (3 x 64 KiB of K and V at D = 128).
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's tiles cannot be built: its 4 stage(s) need 294984 bytes of shared memory per block, and sm_90a allows 232448: pin fewer stages or smaller tiles
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @too_many_stages(%q: tensor<1x4x1024x128xf16>, %o: tensor<1x4x1024x128xf16>) -> tensor<1x4x1024x128xf16> {
    // expected-error @+1 {{pinned tiles #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4> need 294912 bytes of shared memory per block; sm_90a allows 232448}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x128xf16>, tensor<1x4x1024x128xf16>, tensor<1x4x1024x128xf16>)
        outs(%o : tensor<1x4x1024x128xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4>} -> tensor<1x4x1024x128xf16>
    return %r : tensor<1x4x1024x128xf16>
  }
}

// -----

// The overlapped loop with a block mask operand.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's loop = overlapped cannot be built: a block mask's branches around and inside a step would make ptxas serialise the products; use loop = sequential
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @overlap_block_mask(%q: tensor<1x4x1024x64xf16>, %bm: tensor<1x1x8x8xi8>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's loop = overlapped cannot be built: a block mask's branches around and inside a step would make ptxas serialise the products; use loop = sequential}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        block_mask(%bm : tensor<1x1x8x8xi8> blocks [128, 128])
        outs(%o : tensor<1x4x1024x64xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = overlapped, o = tensor>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}

// -----

// Lean's persistent CTAs on an H100 at two an SM: ptxas must be held to them.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's min_ctas_per_sm = 0 cannot be built: Lean's persistent CTAs must all be resident, 3 an SM, which ptxas must be held to: set min_ctas_per_sm = 3
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @lean_unheld(%q: tensor<1x4x1x128xf16>, %k: tensor<1x4x8192x128xf16>, %o: tensor<1x4x1x128xf16>) -> tensor<1x4x1x128xf16> {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's min_ctas_per_sm = 0 cannot be built: Lean's persistent CTAs must all be resident, 3 an SM, which ptxas must be held to: set min_ctas_per_sm = 3}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x4x1x128xf16>, tensor<1x4x8192x128xf16>, tensor<1x4x8192x128xf16>)
        outs(%o : tensor<1x4x1x128xf16>) {kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, partition = #attn.lean<ctas = 396>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x4x1x128xf16>
    return %r : tensor<1x4x1x128xf16>
  }
}

// -----

// The backward kernel has no warp roles.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's roles, loop, o or min_ctas_per_sm cannot be built for the backward kernel: every warp computes, in the sequential loop, and dQ, dK and dV leave by lanes; use roles = none, loop = sequential, o = lanes and no min_ctas_per_sm
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @grad_roles(%q: tensor<1x2x128x64xf16>, %o: tensor<1x2x128x64xf16>, %lse: tensor<1x2x128xf32>) -> (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's roles, loop, o or min_ctas_per_sm cannot be built for the backward kernel: every warp computes, in the sequential loop, and dQ, dK and dV leave by lanes; use roles = none, loop = sequential, o = lanes and no min_ctas_per_sm}}
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>)
        out(%o, %lse : tensor<1x2x128x64xf16>, tensor<1x2x128xf32>) grad(%o : tensor<1x2x128x64xf16>)
        outs(%q, %q, %q : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = sequential, o = lanes>} -> tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  }
}

// -----

// At D = 160 the backward kernel's tiles come by cp.async.
// DIRECT: error: attn-to-nvgpu: the pinned #attn.kernel's kv = tensor cannot be built for the backward kernel: dV and dK in a walk each (max(D, Dv) = 160): with the stages' addresses ptxas serialised their wgmma; use kv = cp_async and q = cp_async
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @grad_d160_tensor(%q: tensor<1x2x128x160xf16>, %o: tensor<1x2x128x160xf16>, %lse: tensor<1x2x128xf32>) -> (tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>) {
    // expected-error @+1 {{attn-select-schedule: the pinned #attn.kernel's kv = tensor cannot be built for the backward kernel: dV and dK in a walk each (max(D, Dv) = 160): with the stages' addresses ptxas serialised their wgmma; use kv = cp_async and q = cp_async}}
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>)
        out(%o, %lse : tensor<1x2x128x160xf16>, tensor<1x2x128xf32>) grad(%o : tensor<1x2x128x160xf16>)
        outs(%q, %q, %q : tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>) {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = sequential, o = lanes>} -> tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>, tensor<1x2x128x160xf16>
  }
}
