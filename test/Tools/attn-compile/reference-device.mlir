// attn-compile --chip of a module without an #attn.target schedules for the
// chip's reference device and says so: sm_90a gives the Hopper kernel
// (wgmma, tensor copies, a producer warpgroup and two consumer ones; with
// FlashAttention-2's grid, as split-KV would cut this one for 132 SMs), sm_80
// the mma.sync one.
// RUN: rm -rf %t && attn-compile %s -o %t/h100 --chip=sm_90a --split-kv=false | FileCheck %s --check-prefix=H100
// RUN: FileCheck %s --input-file=%t/h100/manifest.json --check-prefix=H100-MANIFEST
// RUN: FileCheck %s --input-file=%t/h100/kernels.ptx --check-prefix=H100-PTX
// RUN: attn-compile %s -o %t/a100 | FileCheck %s --check-prefix=A100
// RUN: FileCheck %s --input-file=%t/a100/kernels.ptx --check-prefix=A100-PTX
// RUN: not attn-compile %s -o %t/none --chip=sm_88 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// H100: 1 kernel(s) for sm_90a (no #attn.target: the limits of an H100 SXM, 132 SMs) in
// H100-MANIFEST: "block": [
// H100-MANIFEST-NEXT: 384,
// H100-MANIFEST: "target": "sm_90a"
// H100-PTX: .target sm_90a
// H100-PTX: cp.async.bulk.tensor
// H100-PTX: wgmma.mma_async
// A100: 1 kernel(s) for sm_80 (no #attn.target: the limits of an A100 SXM, 108 SMs) in
// A100-PTX: .target sm_80
// A100-PTX-NOT: wgmma
// A100-PTX: mma.sync
// UNKNOWN: error: attn-attach-target: the module has no #attn.target, and chip sm_88 has no reference device
func.func @prefill(%q: tensor<1x8x1024x128xbf16>, %k: tensor<1x8x1024x128xbf16>,
                   %v: tensor<1x8x1024x128xbf16>) -> tensor<1x8x1024x128xbf16> {
  %o0 = tensor.empty() : tensor<1x8x1024x128xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>,
                                       tensor<1x8x1024x128xbf16>)
      outs(%o0 : tensor<1x8x1024x128xbf16>) {causal} -> tensor<1x8x1024x128xbf16>
  return %o : tensor<1x8x1024x128xbf16>
}
