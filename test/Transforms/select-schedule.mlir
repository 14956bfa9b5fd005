// RUN: attn-opt %s --split-input-file --attn-select-schedule | FileCheck %s
// Idempotent: a second run changes nothing.
// RUN: attn-opt %s --split-input-file --attn-select-schedule --attn-select-schedule | FileCheck %s

// sm_90a (227 KiB per block, 255 registers): two stages everywhere. D = 64:
// 128 x 128 would need (128 * 64 + 128 * 128) / 128 + 64 = 256 registers, so
// 128 x 64 (192; 16 + 2 x 16 KiB = 48 KiB); D = 128: 128 x 64 needs 256, so
// 128 x 128 with 8 warps (192; 160 KiB); D = 256: 128 x 64 with 8 warps
// (224; 192 KiB).
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @d64
  // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>
  func.func @d64(%q: tensor<1x8x512x64xf16>, %o: tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>)
        outs(%o : tensor<1x8x512x64xf16>) {causal} -> tensor<1x8x512x64xf16>
    return %r : tensor<1x8x512x64xf16>
  }
  // CHECK-LABEL: func.func @d128
  // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
  func.func @d128(%q: tensor<1x8x512x128xbf16>, %o: tensor<1x8x512x128xbf16>) -> tensor<1x8x512x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>, tensor<1x8x512x128xbf16>)
        outs(%o : tensor<1x8x512x128xbf16>) -> tensor<1x8x512x128xbf16>
    return %r : tensor<1x8x512x128xbf16>
  }
  // CHECK-LABEL: func.func @d256
  // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 2>
  func.func @d256(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
  // A pinned schedule that fits is kept.
  // CHECK-LABEL: func.func @pinned
  // CHECK: tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 2, stages = 1>
  func.func @pinned(%q: tensor<1x8x512x64xf16>, %o: tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>)
        outs(%o : tensor<1x8x512x64xf16>) {tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 2, stages = 1>} -> tensor<1x8x512x64xf16>
    return %r : tensor<1x8x512x64xf16>
  }
}

// -----

// sm_80 (A100, 163 KiB per block): D = 256 no longer fits 128 x 64 with two
// stages (192 KiB) but does with one (128 KiB).
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @d256_a100
  // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 1>
  func.func @d256_a100(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
}

// -----

// sm_86 (99 KiB per block): D = 256 falls back to 64 x 64, 4 warps, one
// stage (96 KiB); f32 operands count 4 bytes: D = 128 in f32 gets 128 x 32
// with one stage (Q 64 KiB + 32 KiB).
module attributes {attn.target = #attn.target<chip = "sm_86", sms = 84,
    smem_per_block = 101376, smem_per_sm = 102400, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK-LABEL: func.func @d256_small
  // CHECK: tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>
  func.func @d256_small(%q: tensor<1x8x512x256xbf16>, %o: tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>, tensor<1x8x512x256xbf16>)
        outs(%o : tensor<1x8x512x256xbf16>) -> tensor<1x8x512x256xbf16>
    return %r : tensor<1x8x512x256xbf16>
  }
  // CHECK-LABEL: func.func @d128_f32
  // CHECK: tiles = #attn.fa2<block_m = 128, block_n = 32, warps = 4, stages = 1>
  func.func @d128_f32(%q: tensor<1x8x512x128xf32>, %o: tensor<1x8x512x128xf32>) -> tensor<1x8x512x128xf32> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x128xf32>, tensor<1x8x512x128xf32>, tensor<1x8x512x128xf32>)
        outs(%o : tensor<1x8x512x128xf32>) -> tensor<1x8x512x128xf32>
    return %r : tensor<1x8x512x128xf32>
  }
}

// -----

// Without a target nothing is attached (the lowerings use the default).
// CHECK-LABEL: func.func @no_target
// CHECK-NOT: tiles
func.func @no_target(%q: tensor<1x8x512x64xf16>, %o: tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>, tensor<1x8x512x64xf16>)
      outs(%o : tensor<1x8x512x64xf16>) -> tensor<1x8x512x64xf16>
  return %r : tensor<1x8x512x64xf16>
}
