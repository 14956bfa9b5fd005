// Without an #attn.target, attn-compile schedules for the chip's reference
// device (attn-attach-target): on sm_80 an A100's mma.sync kernels take
// FlashAttention-2's table with the register estimate (defaultFa2Tiling),
// on sm_90a an H100's wgmma kernels take their own 128 x 128 tiles in two
// consumer warpgroups with a producer one; every kernel assembles without
// spilling. FlashAttention-2's own first choices (128 x 128 with 4 warps for
// D = 64, 128 x 64 with 4 warps for D = 128) spilled 48-124 bytes here
// (ptxas 13.0).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: FileCheck %s --check-prefix=SM80 --input-file=%t/sm80/manifest.json
// RUN: FileCheck %s --check-prefix=SM90A --input-file=%t/sm90a/manifest.json
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log

// COMPILE: 2 kernel(s)
// NOSPILL: Compiling entry function
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// SM80: "name": "d64_attention0"
// SM80-NOT: producer_warps
// SM80: "block_m": 128,
// SM80-NEXT: "block_n": 64,
// SM80: "warps": 4
// SM80: "name": "d128_attention0"
// SM80: "block_m": 128,
// SM80-NEXT: "block_n": 128,
// SM80: "warps": 8
// SM90A: "name": "d64_attention0"
// SM90A: "producer_warps": 4,
// SM90A: "block_m": 128,
// SM90A-NEXT: "block_n": 128,
// SM90A: "warps": 8
// SM90A: "name": "d128_attention0"
// SM90A: "producer_warps": 4,
// SM90A: "block_m": 128,
// SM90A-NEXT: "block_n": 128,
// SM90A: "warps": 8

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
