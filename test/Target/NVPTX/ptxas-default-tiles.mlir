// Without an #attn.target, attn-to-nvgpu takes FlashAttention-2's table with
// the register estimate (defaultFa2Tiling): the kernels for D = 64 and 128
// assemble for sm_80 and sm_90a without spilling. FlashAttention-2's own
// first choices (128 x 128 with 4 warps for D = 64, 128 x 64 with 4 warps
// for D = 128) spilled 48-124 bytes here (ptxas 13.0).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/sm90a/manifest.json
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log

// COMPILE: 2 kernel(s)
// NOSPILL: Compiling entry function
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// MANIFEST: "name": "d64_attention0"
// MANIFEST: "block_m": 128,
// MANIFEST-NEXT: "block_n": 64,
// MANIFEST: "warps": 4
// MANIFEST: "name": "d128_attention0"
// MANIFEST: "block_m": 128,
// MANIFEST-NEXT: "block_n": 128,
// MANIFEST: "warps": 8

module {
  func.func @d64(%q: tensor<2x8x1024x64xbf16>, %o: tensor<2x8x1024x64xbf16>) -> tensor<2x8x1024x64xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x8x1024x64xbf16>, tensor<2x8x1024x64xbf16>, tensor<2x8x1024x64xbf16>) outs(%o : tensor<2x8x1024x64xbf16>) {causal} -> tensor<2x8x1024x64xbf16>
    return %r : tensor<2x8x1024x64xbf16>
  }
  func.func @d128(%q: tensor<2x8x1024x128xbf16>, %o: tensor<2x8x1024x128xbf16>) -> tensor<2x8x1024x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>) outs(%o : tensor<2x8x1024x128xbf16>) {causal} -> tensor<2x8x1024x128xbf16>
    return %r : tensor<2x8x1024x128xbf16>
  }
}
