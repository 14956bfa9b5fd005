// RUN: attn-opt %s --split-input-file --attn-attach-target="chip=sm_90a" --verify-diagnostics | FileCheck %s --check-prefix=H100
// RUN: attn-opt %s --split-input-file --attn-attach-target="chip=sm_86" --attn-select-schedule --verify-diagnostics | FileCheck %s --check-prefix=A10
// RUN: attn-opt %s --split-input-file --attn-attach-target --attn-select-schedule --verify-diagnostics | FileCheck %s --check-prefix=A100
// RUN: not attn-opt %s --split-input-file --attn-attach-target="chip=sm_88" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// A module without a target gets its chip's reference device, under the
// chip's own name: sm_90a an H100 SXM, sm_86 an A10, sm_80 (the default) an
// A100 SXM. The tiles then fit the device: an A10's 99 KiB of shared memory
// per block holds one stage of D = 128's 128 x 128 tiles, an A100's 163 KiB
// two.
// H100-LABEL: module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>}
// A10-LABEL: module attributes {attn.target = #attn.target<chip = "sm_86", sms = 72, smem_per_block = 101376, smem_per_sm = 102400, regs_per_sm = 65536, regs_per_thread = 255>}
// A10: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 1>
// A100-LABEL: module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>}
// A100: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
// A chip without a reference device is an error that names the table.
// UNKNOWN: error: attn-attach-target: the module has no #attn.target, and chip sm_88 has no reference device to stand for it (the table has sm_80 (A100 SXM), sm_86 (A10), sm_87 (Jetson AGX Orin), sm_89 (L40S), sm_90 (H100 SXM), sm_100 (B200), sm_120 (RTX 5090)): give the module an #attn.target
func.func @prefill(%q: tensor<1x8x1024x128xbf16>, %k: tensor<1x8x1024x128xbf16>,
                   %v: tensor<1x8x1024x128xbf16>) -> tensor<1x8x1024x128xbf16> {
  %o0 = tensor.empty() : tensor<1x8x1024x128xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>,
                                       tensor<1x8x1024x128xbf16>)
      outs(%o0 : tensor<1x8x1024x128xbf16>) {causal} -> tensor<1x8x1024x128xbf16>
  return %o : tensor<1x8x1024x128xbf16>
}

// -----

// A module's own target stays: it describes the GPU more precisely than the
// chip does (an H100 PCIe has 114 SMs).
// H100-LABEL: module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 114,
// A10-LABEL: module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 114,
// A100-LABEL: module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 114,
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 114, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @f(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>,
               %v: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
    %o0 = tensor.empty() : tensor<1x1x64x64xf16>
    %o = attn.attention ins(%q, %k, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>,
                                         tensor<1x1x64x64xf16>)
        outs(%o0 : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
    return %o : tensor<1x1x64x64xf16>
  }
}

// -----

// Without an attention there is nothing to schedule: no target, and no
// error for a chip outside the table.
// H100: module {
// H100-NEXT: func.func @nothing
// A10: module {
// A10-NEXT: func.func @nothing
// A100: module {
// A100-NEXT: func.func @nothing
// UNKNOWN-NOT: error
func.func @nothing() {
  return
}
