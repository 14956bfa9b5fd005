// A module's #attn.target is kept whatever --chip says: the kernels are
// scheduled for it, and attn-compile warns when the chip differs. Here the
// target names sm_90 (no wgmma), so --chip=sm_90a builds mma.sync kernels
// in sm_90a PTX; the target's own chip gives no warning.
// RUN: rm -rf %t && attn-compile %s -o %t/sm90a --chip=sm_90a 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/sm90a/kernels.ptx
// RUN: attn-compile %s -o %t/sm90 2>&1 | FileCheck %s --check-prefix=SAME
// WARN: attn-compile: warning: the kernels are scheduled for the module's #attn.target (sm_90's limits, and mma.sync: the target has no wgmma); only their PTX is for sm_90a
// WARN: 1 kernel(s) for sm_90a in
// PTX: .target sm_90a
// PTX-NOT: wgmma
// PTX: mma.sync.aligned.m16n8k16
// SAME-NOT: warning
// SAME: 1 kernel(s) for sm_90 in
module attributes {attn.target = #attn.target<chip = "sm_90", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @small(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16> {
  %o0 = tensor.empty() : tensor<1x1x128x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      outs(%o0 : tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}
}
