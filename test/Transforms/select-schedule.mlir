// RUN: attn-opt %s --split-input-file --attn-select-schedule | FileCheck %s --check-prefixes=CHECK,NOSPLIT
// RUN: attn-opt %s --split-input-file --attn-select-schedule="split-kv=true" | FileCheck %s --check-prefixes=CHECK,SPLIT
// RUN: attn-opt %s --split-input-file --attn-select-schedule="lean=true" | FileCheck %s --check-prefixes=CHECK,LEAN
// RUN: attn-opt %s --split-input-file --attn-select-schedule="matrix-unit=mma-sync" | FileCheck %s --check-prefix=MMASYNC
// RUN: not attn-opt %s --split-input-file --attn-select-schedule="matrix-unit=tensor-core" 2>&1 | FileCheck %s --check-prefix=BADUNIT
// BADUNIT: attn-select-schedule: matrix-unit must be auto, mma-sync or wgmma; got 'tensor-core'
// The plan report agrees with the tiles this pass pins.
// RUN: attn-opt %s --split-input-file --attn-print-plan --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN
// Idempotent: a second run over the output changes nothing, with either option.
// RUN: attn-opt %s --split-input-file --attn-select-schedule="split-kv=true" -o %t.once
// RUN: attn-opt %t.once --split-input-file --attn-select-schedule="split-kv=true" -o %t.twice
// RUN: diff %t.once %t.twice
// RUN: attn-opt %s --split-input-file --attn-select-schedule -o %t.once.nosplit
// RUN: attn-opt %t.once.nosplit --split-input-file --attn-select-schedule -o %t.twice.nosplit
// RUN: diff %t.once.nosplit %t.twice.nosplit

// Registers per thread are estimated as the thread's share of the f32
// accumulators of O (block_m x Dv) and S (block_m x block_n), plus 64; at most
// 255. Shared memory per block is Q (block_m x D) plus `stages` K and V tiles
// (block_n x (D + Dv)), 2 bytes an element in f16 and bf16.
//
// The prefills below have B x H x ceil(Sq / block_m) = 2 x 16 x 8 = 256 CTAs
// (2 x 16 x 16 with block_m = 64), at least 0.8 x 2 x SMs on every target
// here, so even with split-kv they get no partition.

// sm_80 (A100: 108 SMs, 163 KiB per block).
// D = 64: 128 x 128 needs (128 * 64 + 128 * 128) / 128 + 64 = 256 registers;
//   128 x 64 needs 192 and 16 + 2 x 16 = 48 KiB.
// D = 128: 128 x 64 with 4 warps needs (128 * 128 + 128 * 64) / 128 + 64 = 256
//   registers; 128 x 128 with 8 warps needs 192 and 32 + 2 x 64 = 160 KiB.
// D = 256: 128 x 64 with 8 warps needs 224 registers and 64 + 2 x 64 = 192 KiB
//   with two stages, 128 KiB with one.
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @d64_sm80
  // CHECK-NOT: partition
  // CHECK: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>}
  func.func @d64_sm80(%q: tensor<2x16x1024x64xf16>, %o: tensor<2x16x1024x64xf16>) -> tensor<2x16x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x64xf16>, tensor<2x16x1024x64xf16>, tensor<2x16x1024x64xf16>)
        outs(%o : tensor<2x16x1024x64xf16>) {causal} -> tensor<2x16x1024x64xf16>
    return %r : tensor<2x16x1024x64xf16>
  }
  // CHECK-LABEL: func.func @d128_sm80
  // CHECK-NOT: partition
  // CHECK: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>}
  func.func @d128_sm80(%q: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>)
        outs(%o : tensor<2x16x1024x128xbf16>) {causal} -> tensor<2x16x1024x128xbf16>
    return %r : tensor<2x16x1024x128xbf16>
  }
  // CHECK-LABEL: func.func @d256_sm80
  // CHECK-NOT: partition
  // CHECK: {kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 1>}
  func.func @d256_sm80(%q: tensor<2x16x1024x256xf16>, %o: tensor<2x16x1024x256xf16>) -> tensor<2x16x1024x256xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x256xf16>, tensor<2x16x1024x256xf16>, tensor<2x16x1024x256xf16>)
        outs(%o : tensor<2x16x1024x256xf16>) -> tensor<2x16x1024x256xf16>
    return %r : tensor<2x16x1024x256xf16>
  }

  // Decoding: B = 2, H = 8, Sq = 1, Sk = 4096, D = 128 -> 128 x 128 tiles,
  // n = 2 x 8 x 1 = 16 CTAs for 2 x 108 = 216 slots (16 < 0.8 x 216 = 172.8:
  // split), 4096 / 128 = 32 key/value blocks (causal hides none from the last
  // query). The S that do not leave a split empty (ceil(32 / S) differs from
  // ceil(32 / (S - 1))) are 1-8, 11, 16 and 32; wave efficiency 16 S / 216
  // over whole waves: S = 8: 59%, S = 11: 176 / 216 = 81% (the best),
  // S = 16: 256 / 432 = 59%, S = 32: 512 / 648 = 79%. The smallest S at or
  // above 0.85 x 81% = 69% would be 11 over these tiles (but split-KV takes
  // its own, below). Lean takes split-KV's tiles too: 2 x 8 x 64 = 1024
  // LeanTiles, more than 4 per SM, over every resident CTA (two 80 KiB CTAs
  // per SM).
  // CHECK-LABEL: func.func @decode_sm80
  // NOSPLIT: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>}
  // Split-KV takes its own 64 x 64 tiles (16 CTAs, 64 blocks of 64 keys):
  // S = 13 fills 208 of 216 slots (96%, the best); no S below reaches 85%
  // of it (S = 11: 81%).
  // SPLIT: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, partition = #attn.split_kv<splits = 13>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
  // LEAN: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, partition = #attn.lean<ctas = 216>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
  func.func @decode_sm80(%q: tensor<2x8x1x128xf16>, %kv: tensor<2x8x4096x128xf16>, %o: tensor<2x8x1x128xf16>) -> tensor<2x8x1x128xf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<2x8x1x128xf16>, tensor<2x8x4096x128xf16>, tensor<2x8x4096x128xf16>)
        outs(%o : tensor<2x8x1x128xf16>) {causal} -> tensor<2x8x1x128xf16>
    return %r : tensor<2x8x1x128xf16>
  }

  // Pinned tiles without a partition pin FlashAttention-2's grid: neither
  // split-KV nor Lean is added (pin a partition too for either).
  // CHECK-LABEL: func.func @decode_pinned_tiles_sm80
  // CHECK: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>}
  func.func @decode_pinned_tiles_sm80(%q: tensor<2x8x1x128xf16>, %kv: tensor<2x8x4096x128xf16>, %o: tensor<2x8x1x128xf16>) -> tensor<2x8x1x128xf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<2x8x1x128xf16>, tensor<2x8x4096x128xf16>, tensor<2x8x4096x128xf16>)
        outs(%o : tensor<2x8x1x128xf16>) {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>} -> tensor<2x8x1x128xf16>
    return %r : tensor<2x8x1x128xf16>
  }

  // A sliding window bounds the splits by the blocks a query block visits:
  // the one query sees keys [8191 - 256, 8192), blocks 123 to 127 of 64, so
  // S <= 5; of S = 1, 2, 3, 5 (4 would leave a split empty), 5 has the best
  // efficiency (40 / 216) and S = 3 (24 / 216) is below 85% of it; split-KV's
  // own 64 x 64 tiles see the same blocks. With lean (the same tiles):
  // 8 x 5 = 40 LeanTiles, few, so about two a CTA: 20 CTAs.
  // CHECK-LABEL: func.func @decode_window_sm80
  // SPLIT: partition = #attn.split_kv<splits = 5>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  // LEAN: partition = #attn.lean<ctas = 20>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  func.func @decode_window_sm80(%q: tensor<1x8x1x64xbf16>, %kv: tensor<1x8x8192x64xbf16>, %o: tensor<1x8x1x64xbf16>) -> tensor<1x8x1x64xbf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<1x8x1x64xbf16>, tensor<1x8x8192x64xbf16>, tensor<1x8x8192x64xbf16>)
        outs(%o : tensor<1x8x1x64xbf16>) {window = array<i64: 256, 0>} -> tensor<1x8x1x64xbf16>
    return %r : tensor<1x8x1x64xbf16>
  }

  // FlashAttention-2's rule counts CTAs, not query lengths: a short prefill
  // on few heads (1 x 8 x 512 / 128 = 32 CTAs, 8 key/value blocks) is split
  // too. Over split-KV's 64 x 64 tiles: 64 CTAs, 8 blocks; of the S that
  // leave no split empty (1, 2, 3, 4, 8), S = 3 fills 192 of 216 slots
  // (89%, the best). With lean: 8 x 8 x 8 = 512 LeanTiles over every
  // resident CTA, 3 per SM (registers: 128 threads x 152).
  // CHECK-LABEL: func.func @short_prefill_sm80
  // SPLIT: partition = #attn.split_kv<splits = 3>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  // LEAN: partition = #attn.lean<ctas = 324>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  func.func @short_prefill_sm80(%q: tensor<1x8x512x64xf16>, %o: tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>)
        outs(%o : tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16>
    return %r : tensor<1x8x512x64xf16>
  }

  // A decode kernel for every cache length (Sk at run time): the rule with
  // no bound from the key/value blocks. B = 2 x 8 heads = 16 CTAs for 216
  // slots: S = 27 fills whole waves (100%), S = 12 is the first within 85%
  // of it (192 / 216, 89%; S = 11: 81%). Splits past a call's blocks are
  // empty pieces. With lean: every resident CTA (3 per SM).
  // CHECK-LABEL: func.func @decode_run_time_sm80
  // NOSPLIT: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>}
  // SPLIT: partition = #attn.split_kv<splits = 12>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  // LEAN: partition = #attn.lean<ctas = 324>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  func.func @decode_run_time_sm80(%q: tensor<2x8x1x64xbf16>, %kv: tensor<2x8x?x64xbf16>, %o: tensor<2x8x1x64xbf16>) -> tensor<2x8x1x64xbf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<2x8x1x64xbf16>, tensor<2x8x?x64xbf16>, tensor<2x8x?x64xbf16>)
        outs(%o : tensor<2x8x1x64xbf16>) {causal} -> tensor<2x8x1x64xbf16>
    return %r : tensor<2x8x1x64xbf16>
  }

  // The same for 4 queries (speculative decoding): the causal mask now hides
  // keys from the first three, and a Lean kernel that masks needs
  // kMaskedLeanRegisters more (152 + 24 registers x 128 threads): 2 CTAs per
  // SM, 216. Split-KV's choice is that of one query (one 64-row block).
  // CHECK-LABEL: func.func @speculative_decode_run_time_sm80
  // SPLIT: partition = #attn.split_kv<splits = 12>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  // LEAN: partition = #attn.lean<ctas = 216>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>
  func.func @speculative_decode_run_time_sm80(%q: tensor<2x8x4x64xbf16>, %kv: tensor<2x8x?x64xbf16>, %o: tensor<2x8x4x64xbf16>) -> tensor<2x8x4x64xbf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<2x8x4x64xbf16>, tensor<2x8x?x64xbf16>, tensor<2x8x?x64xbf16>)
        outs(%o : tensor<2x8x4x64xbf16>) {causal} -> tensor<2x8x4x64xbf16>
    return %r : tensor<2x8x4x64xbf16>
  }

  // A run-time Sq: tiles from the head dimension, no split (decode or
  // prefill, the grid over query blocks is unknown).
  // CHECK-LABEL: func.func @dynamic_sm80
  // CHECK-NOT: partition
  // CHECK: {kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>}
  func.func @dynamic_sm80(%q: tensor<?x8x?x128xf16>, %kv: tensor<?x8x?x128xf16>, %o: tensor<?x8x?x128xf16>) -> tensor<?x8x?x128xf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>)
        outs(%o : tensor<?x8x?x128xf16>) -> tensor<?x8x?x128xf16>
    return %r : tensor<?x8x?x128xf16>
  }
}

// -----

// sm_86 (84 SMs, 99 KiB per block). D = 64 as on sm_80; D = 128: 128 x 128
// with 8 warps needs 160 KiB with two stages, 32 + 64 = 96 KiB with one;
// D = 256: 128 x 64 needs 192 / 128 KiB, 64 x 64 with 4 warps needs 32 + 128 =
// 160 KiB with two stages and 96 KiB with one (registers: (64 * 256 + 64 *
// 64) / 128 + 64 * 64 / 2 / 128 + 64 + 8 = 248). f32 operands count 4
// bytes: D = 128 in f32 would fit 128 x 32 with one stage (Q 64 KiB + 32
// KiB), but its 4 warps of two row tiles need 256 registers a thread; it
// gets 64 x 64 with one stage (32 + 64 KiB).
module attributes {attn.target = #attn.target<chip = "sm_86", sms = 84,
    smem_per_block = 101376, smem_per_sm = 102400, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @d64_sm86
  // CHECK-NOT: partition
  // CHECK: {kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>}
  func.func @d64_sm86(%q: tensor<2x16x1024x64xbf16>, %o: tensor<2x16x1024x64xbf16>) -> tensor<2x16x1024x64xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>, tensor<2x16x1024x64xbf16>)
        outs(%o : tensor<2x16x1024x64xbf16>) -> tensor<2x16x1024x64xbf16>
    return %r : tensor<2x16x1024x64xbf16>
  }
  // CHECK-LABEL: func.func @d128_sm86
  // CHECK-NOT: partition
  // CHECK: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 1>}
  func.func @d128_sm86(%q: tensor<2x16x1024x128xf16>, %o: tensor<2x16x1024x128xf16>) -> tensor<2x16x1024x128xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x128xf16>, tensor<2x16x1024x128xf16>, tensor<2x16x1024x128xf16>)
        outs(%o : tensor<2x16x1024x128xf16>) {causal} -> tensor<2x16x1024x128xf16>
    return %r : tensor<2x16x1024x128xf16>
  }
  // CHECK-LABEL: func.func @d256_sm86
  // CHECK-NOT: partition
  // CHECK: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>}
  func.func @d256_sm86(%q: tensor<2x16x1024x256xbf16>, %o: tensor<2x16x1024x256xbf16>) -> tensor<2x16x1024x256xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x256xbf16>, tensor<2x16x1024x256xbf16>, tensor<2x16x1024x256xbf16>)
        outs(%o : tensor<2x16x1024x256xbf16>) {causal} -> tensor<2x16x1024x256xbf16>
    return %r : tensor<2x16x1024x256xbf16>
  }
  // CHECK-LABEL: func.func @d128_f32_sm86
  // CHECK-NOT: partition
  // CHECK: {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>}
  func.func @d128_f32_sm86(%q: tensor<2x16x1024x128xf32>, %o: tensor<2x16x1024x128xf32>) -> tensor<2x16x1024x128xf32> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x128xf32>, tensor<2x16x1024x128xf32>, tensor<2x16x1024x128xf32>)
        outs(%o : tensor<2x16x1024x128xf32>) -> tensor<2x16x1024x128xf32>
    return %r : tensor<2x16x1024x128xf32>
  }
}

// -----

// sm_90a (H100: 132 SMs, 227 KiB per block): the warpgroup tilings
// (warpgroupCandidates): 128 x 128 in two warpgroups up to D = 128, D = 256:
// 64 x 64 in one, one stage. With matrix-unit=mma-sync, FlashAttention-2's
// table as on sm_80: 128 x 64 with 4 warps at D = 64, 128 x 64 with 8 at
// D = 256.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @d64_sm90
  // CHECK-NOT: partition
  // CHECK: {causal, kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>}
  // MMASYNC-LABEL: func.func @d64_sm90
  // MMASYNC: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>}
  func.func @d64_sm90(%q: tensor<2x16x1024x64xf16>, %o: tensor<2x16x1024x64xf16>) -> tensor<2x16x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x64xf16>, tensor<2x16x1024x64xf16>, tensor<2x16x1024x64xf16>)
        outs(%o : tensor<2x16x1024x64xf16>) {causal} -> tensor<2x16x1024x64xf16>
    return %r : tensor<2x16x1024x64xf16>
  }
  // CHECK-LABEL: func.func @d128_sm90
  // CHECK-NOT: partition
  // CHECK: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>}
  func.func @d128_sm90(%q: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>)
        outs(%o : tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16>
    return %r : tensor<2x16x1024x128xbf16>
  }
  // CHECK-LABEL: func.func @d256_sm90
  // CHECK-NOT: partition
  // CHECK: {causal, kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = overlapped, o = tensor>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>}
  // MMASYNC-LABEL: func.func @d256_sm90
  // MMASYNC: {causal, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 1>}
  func.func @d256_sm90(%q: tensor<2x16x1024x256xbf16>, %o: tensor<2x16x1024x256xbf16>) -> tensor<2x16x1024x256xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x256xbf16>, tensor<2x16x1024x256xbf16>, tensor<2x16x1024x256xbf16>)
        outs(%o : tensor<2x16x1024x256xbf16>) {causal} -> tensor<2x16x1024x256xbf16>
    return %r : tensor<2x16x1024x256xbf16>
  }

  // Decoding with grouped-query heads: B = 1, Hq = 32, Hkv = 8, Sk = 8192,
  // D = 128. GQA packing puts the 4 query heads of a key/value head into
  // one query block (4 real rows instead of 1): 8 CTAs for 264 slots, 64
  // key/value blocks of 128 (128 of split-KV's 64). S = 32 fills 256 of 264
  // slots (97%). With lean: 8 x 128 = 1024 LeanTiles over every resident
  // CTA, 2 per SM.
  // CHECK-LABEL: func.func @decode_gqa_sm90
  // NOSPLIT: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = producer, loop = ping_pong, o = lanes, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2, packed_heads = 4>}
  // SPLIT: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = producer, loop = overlapped, o = lanes, producer_registers = 24, consumer_registers = 232, entry_registers = 128>, partition = #attn.split_kv<splits = 32>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>}
  // LEAN: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = none, loop = overlapped, o = lanes>, partition = #attn.lean<ctas = 264>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>}
  // PLAN: per (batch, 4 packed heads): 1 query blocks, 64 of 64 key blocks visited
  // PLAN-NEXT: partition: none; attn-to-ptx splits it (FlashAttention-2's rule, split-KV by default): #attn.split_kv<splits = 32> over #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>
  func.func @decode_gqa_sm90(%q: tensor<1x32x1x128xbf16>, %kv: tensor<1x8x8192x128xbf16>, %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<1x32x1x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        outs(%o : tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16>
    return %r : tensor<1x32x1x128xbf16>
  }

  // A mask operand's rows are one head's rows: no packing. Its elements, one
  // per score, take registers: the first warpgroup tiling that leaves room
  // for them (128 x 128 with 8 warps would need 296; 128 x 64 with 8 needs
  // 216).
  // CHECK-LABEL: func.func @decode_gqa_masked_sm90
  // NOSPLIT: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 2>}
  func.func @decode_gqa_masked_sm90(%q: tensor<1x32x1x128xbf16>, %kv: tensor<1x8x8192x128xbf16>, %m: tensor<1x1x1x8192xi1>, %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<1x32x1x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        mask(%m : tensor<1x1x1x8192xi1>) outs(%o : tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16>
    return %r : tensor<1x32x1x128xbf16>
  }

  // A score region does not stop the split (the decomposition splits any
  // attention): 8 CTAs, with split-KV's 64 x 64 tiles 2048 / 64 = 32
  // blocks; S = 32 fills 256 of 264 slots (97%).
  // CHECK-LABEL: func.func @decode_score_region_sm90
  // SPLIT: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = overlapped, o = tensor, producer_registers = 24, consumer_registers = 232, entry_registers = 128>, partition = #attn.split_kv<splits = 32>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
  // LEAN: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = overlapped, o = tensor>, partition = #attn.lean<ctas = 128>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
  func.func @decode_score_region_sm90(%q: tensor<1x8x1x64xf16>, %kv: tensor<1x8x2048x64xf16>, %o: tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<1x8x1x64xf16>, tensor<1x8x2048x64xf16>, tensor<1x8x2048x64xf16>)
        outs(%o : tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16>
        score {
        ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
          %half = arith.constant 0.5 : f32
          %r = arith.mulf %s, %half : f32
          attn.yield %r : f32
        }
    return %r : tensor<1x8x1x64xf16>
  }

  // A pinned schedule that fits is kept, tiles and partition alike.
  // CHECK-LABEL: func.func @pinned
  // CHECK: {kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, partition = #attn.split_kv<splits = 3>, tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 2, stages = 1>}
  func.func @pinned(%q: tensor<1x8x1x64xf16>, %kv: tensor<1x8x2048x64xf16>, %o: tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<1x8x1x64xf16>, tensor<1x8x2048x64xf16>, tensor<1x8x2048x64xf16>)
        outs(%o : tensor<1x8x1x64xf16>) {partition = #attn.split_kv<splits = 3>, tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 2, stages = 1>} -> tensor<1x8x1x64xf16>
    return %r : tensor<1x8x1x64xf16>
  }
  // A pinned partition of another kind is kept too; the tiles are chosen,
  // split-KV's (Lean's loops start at run-time blocks too).
  // CHECK-LABEL: func.func @pinned_lean
  // CHECK: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = overlapped, o = tensor>, partition = #attn.lean<ctas = 264>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
  func.func @pinned_lean(%q: tensor<1x8x1x64xf16>, %kv: tensor<1x8x2048x64xf16>, %o: tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<1x8x1x64xf16>, tensor<1x8x2048x64xf16>, tensor<1x8x2048x64xf16>)
        outs(%o : tensor<1x8x1x64xf16>) {partition = #attn.lean<ctas = 264>} -> tensor<1x8x1x64xf16>
    return %r : tensor<1x8x1x64xf16>
  }

  // The decode of @decode_gqa_sm90 for any batch and cache length: GQA
  // packing needs only Sq; the rule counts a run-time batch as 1 and bounds
  // S by the slots and 128 alone: 8 packed tiles, S = 33 would fill every
  // slot, S = 29 is the first within 85% (232 / 264, 88%). With lean: every
  // resident CTA, 2 per SM (LeanTiles and ranges counted at launch).
  // CHECK-LABEL: func.func @decode_run_time_sm90
  // NOSPLIT: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = producer, loop = ping_pong, o = lanes, producer_registers = 24, consumer_registers = 240, entry_registers = 168>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2, packed_heads = 4>}
  // SPLIT: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = producer, loop = overlapped, o = lanes, producer_registers = 24, consumer_registers = 232, entry_registers = 128>, partition = #attn.split_kv<splits = 29>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>}
  // LEAN: {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = none, loop = overlapped, o = lanes>, partition = #attn.lean<ctas = 264>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>}
  func.func @decode_run_time_sm90(%q: tensor<?x32x1x128xbf16>, %kv: tensor<?x8x?x128xbf16>, %o: tensor<?x32x1x128xbf16>) -> tensor<?x32x1x128xbf16> {
    %r = attn.attention ins(%q, %kv, %kv : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
        outs(%o : tensor<?x32x1x128xbf16>) -> tensor<?x32x1x128xbf16>
    return %r : tensor<?x32x1x128xbf16>
  }
}

// -----

// The target is the nearest enclosing one: an inner module without a target
// uses the outer module's (sm_90a: D = 128 in 128 x 128 tiles, two
// stages), an inner module with its own uses that (sm_86, 99 KiB: one
// stage).
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  module @inherits {
    // CHECK-LABEL: func.func @outer_target
    // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
    func.func @outer_target(%q: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16> {
      %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>)
          outs(%o : tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16>
      return %r : tensor<2x16x1024x128xbf16>
    }
  }
  module @own attributes {attn.target = #attn.target<chip = "sm_86", sms = 84,
      smem_per_block = 101376, smem_per_sm = 102400, regs_per_sm = 65536, regs_per_thread = 255>} {
    // CHECK-LABEL: func.func @inner_target
    // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 1>
    func.func @inner_target(%q: tensor<2x16x1024x128xbf16>, %o: tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16> {
      %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>, tensor<2x16x1024x128xbf16>)
          outs(%o : tensor<2x16x1024x128xbf16>) -> tensor<2x16x1024x128xbf16>
      return %r : tensor<2x16x1024x128xbf16>
    }
  }
}

// -----

// Without a target nothing is attached (the lowerings use FlashAttention-2's
// default); with require-target it is an error (select-schedule-invalid.mlir).
// CHECK-LABEL: func.func @no_target
// CHECK-NOT: tiles
// CHECK-NOT: partition
func.func @no_target(%q: tensor<1x8x1x64xf16>, %kv: tensor<1x8x2048x64xf16>, %o: tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16> {
  %r = attn.attention ins(%q, %kv, %kv : tensor<1x8x1x64xf16>, tensor<1x8x2048x64xf16>, tensor<1x8x2048x64xf16>)
      outs(%o : tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16>
  return %r : tensor<1x8x1x64xf16>
}

// -----

// The plan reports exactly the tiles this pass pins (same module, same
// target): 128 x 64 with 8 warps, one stage, for D = 256 on sm_80, and the
// split-KV partition and tiles it pins with split-kv (attn-to-ptx's
// default).
// PLAN: tiles: #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 1> (FlashAttention-2's default for D=256 on sm_80)
// PLAN: partition: none; attn-to-ptx splits it (FlashAttention-2's rule, split-KV by default): #attn.split_kv<splits = 3> over #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>
// CHECK-LABEL: func.func @plan_agrees
// NOSPLIT: tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 1>
// SPLIT: partition = #attn.split_kv<splits = 3>, tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @plan_agrees(%q: tensor<1x2x4096x256xbf16>, %o: tensor<1x2x4096x256xbf16>) -> tensor<1x2x4096x256xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x2x4096x256xbf16>, tensor<1x2x4096x256xbf16>, tensor<1x2x4096x256xbf16>)
        outs(%o : tensor<1x2x4096x256xbf16>) -> tensor<1x2x4096x256xbf16>
    return %r : tensor<1x2x4096x256xbf16>
  }
}

// -----

// Tiles nest in a block mask's blocks (each tile reads one element of it):
// 32 x 48 blocks cut D = 64's 128 x 128 with 4 warps down to 32 x 48 with 2
// (16 rows a warp, no more than the 32 of 128 x 128 with 4); a decode's
// split-KV tiles nest too.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @block_mask_sm90
  // CHECK-NOT: partition
  // CHECK: tiles = #attn.fa2<block_m = 32, block_n = 48, warps = 2, stages = 2>
  // PLAN: tiles: #attn.fa2<block_m = 32, block_n = 48, warps = 2, stages = 2> (FlashAttention-2's default for D=64 on sm_90a)
  func.func @block_mask_sm90(%q: tensor<4x16x1024x64xbf16>, %bm: tensor<4x16x32x22xi8>, %o: tensor<4x16x1024x64xbf16>) -> tensor<4x16x1024x64xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<4x16x1024x64xbf16>, tensor<4x16x1024x64xbf16>, tensor<4x16x1024x64xbf16>)
        block_mask(%bm : tensor<4x16x32x22xi8> blocks [32, 48])
        outs(%o : tensor<4x16x1024x64xbf16>) -> tensor<4x16x1024x64xbf16>
    return %r : tensor<4x16x1024x64xbf16>
  }
  // CHECK-LABEL: func.func @block_mask_decode_sm90
  // SPLIT: partition = #attn.split_kv<splits = {{[0-9]+}}>, tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 2>
  // PLAN: tiles: #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 2> (FlashAttention-2's default for D=128 on sm_90a)
  // PLAN: attn-to-ptx splits it (FlashAttention-2's rule, split-KV by default): #attn.split_kv<splits = {{[0-9]+}}> over #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 2>
  func.func @block_mask_decode_sm90(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x8x8192x128xbf16>, %bm: tensor<1x8x1x256xi8>, %o: tensor<1x8x1x128xbf16>) -> tensor<1x8x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x1x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        block_mask(%bm : tensor<1x8x1x256xi8> blocks [16, 32])
        outs(%o : tensor<1x8x1x128xbf16>) -> tensor<1x8x1x128xbf16>
    return %r : tensor<1x8x1x128xbf16>
  }
}
