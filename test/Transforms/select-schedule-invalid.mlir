// RUN: attn-opt %s --split-input-file --attn-select-schedule --verify-diagnostics

// Pinned tiles are checked against the target: shared memory...
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @too_much_shared_memory(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    // expected-error @+1 {{pinned tiles #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2> need 327680 bytes of shared memory per block; sm_80 allows 166912}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
}

// -----

// ... and registers: 256 x 128 tiles with 4 warps give each thread 256 + 256
// f32 accumulators, plus 64.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @too_many_registers(%q: tensor<1x8x512x128xf16>, %o: tensor<1x8x512x128xf16>) -> tensor<1x8x512x128xf16> {
    // expected-error @+1 {{pinned tiles #attn.fa2<block_m = 256, block_n = 128, warps = 4, stages = 1> need at least 576 registers per thread; sm_90a allows 255}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>)
        outs(%o : tensor<1x8x512x128xf16>) {tiles = #attn.fa2<block_m = 256, block_n = 128, warps = 4, stages = 1>} -> tensor<1x8x512x128xf16>
    return %r : tensor<1x8x512x128xf16>
  }
}

// -----

// A target too small for every FlashAttention-2 tiling.
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 49152, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @nothing_fits(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    // expected-error @+1 {{no FlashAttention-2 tiling fits sm_80: the smallest would need 98304 bytes of shared memory per block; sm_80 allows 49152}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
}
