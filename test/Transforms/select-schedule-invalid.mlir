// RUN: attn-opt %s --split-input-file --attn-select-schedule="require-target=true" --verify-diagnostics
// RUN: attn-opt %s --split-input-file --attn-select-schedule="require-target=true split-kv=true" --verify-diagnostics

// Pinned tiles are checked against the target: shared memory per block
// (Q 128 x 256 plus two stages of K and V tiles 128 x 512, 2 bytes each)...
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

// ... with the sm_86-class limit of 99 KiB: D = 64, 128 x 128 with four
// stages needs (128 * 64 + 4 * 128 * 128) * 2 bytes.
module attributes {attn.target = #attn.target<chip = "sm_86", sms = 84,
    smem_per_block = 101376, smem_per_sm = 102400, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @four_stages(%q: tensor<1x8x512x64xf16>, %o: tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16> {
    // expected-error @+1 {{pinned tiles #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4> need 147456 bytes of shared memory per block; sm_86 allows 101376}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>)
        outs(%o : tensor<1x8x512x64xf16>) {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4>} -> tensor<1x8x512x64xf16>
    return %r : tensor<1x8x512x64xf16>
  }
}

// -----

// ... and registers: 256 x 128 tiles with 4 warps give each thread
// (256 * 128 + 256 * 128) / 128 = 512 f32 accumulators and
// 256 * 128 / 2 / 128 = 128 registers of P, plus 64 and 8 for each of a
// warp's four m16 row tiles.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @too_many_registers(%q: tensor<1x8x512x128xf16>, %o: tensor<1x8x512x128xf16>) -> tensor<1x8x512x128xf16> {
    // expected-error @+1 {{pinned tiles #attn.fa2<block_m = 256, block_n = 128, warps = 4, stages = 1> need at least 736 registers per thread; sm_90a allows 255}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>, tensor<1x8x512x128xf16>)
        outs(%o : tensor<1x8x512x128xf16>) {tiles = #attn.fa2<block_m = 256, block_n = 128, warps = 4, stages = 1>} -> tensor<1x8x512x128xf16>
    return %r : tensor<1x8x512x128xf16>
  }
}

// -----

// ... including the SM's register file: 16 warps of 512 threads may have
// 65536 / 512 = 128 registers each, and D = 256 with 256 x 64 tiles needs
// (256 * 256 + 256 * 64) / 512 + 256 * 64 / 2 / 512 + 64 + 8 = 248.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @register_file(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    // expected-error @+1 {{pinned tiles #attn.fa2<block_m = 256, block_n = 64, warps = 16, stages = 1> need at least 248 registers per thread; sm_90a allows 128}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) {tiles = #attn.fa2<block_m = 256, block_n = 64, warps = 16, stages = 1>} -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
}

// -----

// A target too small for every FlashAttention-2 tiling: the last one tried,
// 64 x 64 with one stage, needs (64 * 256 + 64 * 512) * 2 bytes.
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 49152, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @nothing_fits(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    // expected-error @+1 {{no FlashAttention-2 tiling fits sm_80: the smallest would need 65536 bytes of shared memory per block; sm_80 allows 49152}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
}

// -----

// A head dimension beyond FlashAttention-2's table.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @wide_head(%q: tensor<1x8x512x512xbf16>, %o: tensor<1x8x512x512xbf16>) -> tensor<1x8x512x512xbf16> {
    // expected-error @+1 {{no default tiling for this head dimension (above 256 or dynamic)}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x512xbf16>, tensor<1x8x512x512xbf16>, tensor<1x8x512x512xbf16>)
        outs(%o : tensor<1x8x512x512xbf16>) -> tensor<1x8x512x512xbf16>
    return %r : tensor<1x8x512x512xbf16>
  }
}

// -----

// With require-target, an attention without a target is rejected (without
// the option it is left alone: select-schedule.mlir).
func.func @missing_target(%q: tensor<1x8x512x64xf16>, %o: tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16> {
  // expected-error @+1 {{attn-select-schedule needs an `attn.target` attribute (#attn.target<...>) on an enclosing module}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>)
      outs(%o : tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16>
  return %r : tensor<1x8x512x64xf16>
}

// -----

// RUN: not attn-opt %s --attn-select-schedule="split-kv=true lean=true" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: attn-select-schedule: choose split-kv or lean, not both

// -----

// No #attn.fa2 tiling nests in blocks whose sides are not multiples of 16.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @odd_blocks(%q: tensor<1x8x500x64xbf16>, %bm: tensor<1x1x5x5xi8>, %o: tensor<1x8x500x64xbf16>) -> tensor<1x8x500x64xbf16> {
    // expected-error @+1 {{no FlashAttention-2 tiling nests in the block mask's 100x100 blocks: the sides of tiles are multiples of 16, so a block's must be too (the CPU takes any)}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x500x64xbf16>, tensor<1x8x500x64xbf16>, tensor<1x8x500x64xbf16>)
        block_mask(%bm : tensor<1x1x5x5xi8> blocks [100, 100])
        outs(%o : tensor<1x8x500x64xbf16>) -> tensor<1x8x500x64xbf16>
    return %r : tensor<1x8x500x64xbf16>
  }
}
