// Every shipped configuration assembles with ptxas for sm_80 and sm_90
// without spilling: D in {64, 128, 256} x {causal, not} x {f16, bf16}, plus
// grouped-query heads and lengths that are not multiples of the tiles, with
// the tiles attn-select-schedule chooses for an sm_80-class target (163 KiB
// of shared memory per block, 255 registers a thread): 128 x 64 for D = 64,
// 128 x 128 with 8 warps for D = 128 (two stages), 128 x 64 with 8 warps
// for D = 256 (one stage). ptxas -v reports each kernel's registers, spills and shared
// memory; docs/performance.md has the table.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90 --chip=sm_90 | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90 -v %t/sm90/kernels.ptx -o %t/sm90.cubin > %t/sm90.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90.log

// COMPILE: 14 kernel(s)

// Each kernel is compiled, and no kernel uses local memory: a line that
// reports spills or a stack frame other than 0 fails the test.
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90.log
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// CHECK-DAG: Compiling entry function 'd64_full_f16_attention0'
// CHECK-DAG: Compiling entry function 'd64_full_bf16_attention0'
// CHECK-DAG: Compiling entry function 'd64_causal_f16_attention0'
// CHECK-DAG: Compiling entry function 'd64_causal_bf16_attention0'
// CHECK-DAG: Compiling entry function 'd128_full_f16_attention0'
// CHECK-DAG: Compiling entry function 'd128_full_bf16_attention0'
// CHECK-DAG: Compiling entry function 'd128_causal_f16_attention0'
// CHECK-DAG: Compiling entry function 'd128_causal_bf16_attention0'
// CHECK-DAG: Compiling entry function 'd256_full_f16_attention0'
// CHECK-DAG: Compiling entry function 'd256_full_bf16_attention0'
// CHECK-DAG: Compiling entry function 'd256_causal_f16_attention0'
// CHECK-DAG: Compiling entry function 'd256_causal_bf16_attention0'
// CHECK-DAG: Compiling entry function 'gqa_bf16_attention0'
// CHECK-DAG: Compiling entry function 'tail_f16_attention0'

module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @d64_full_f16(%q: tensor<2x8x1024x64xf16>, %k: tensor<2x8x1024x64xf16>, %v: tensor<2x8x1024x64xf16>, %o: tensor<2x8x1024x64xf16>) -> tensor<2x8x1024x64xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16>) outs(%o : tensor<2x8x1024x64xf16>) -> tensor<2x8x1024x64xf16>
    return %r : tensor<2x8x1024x64xf16>
  }

  func.func @d64_full_bf16(%q: tensor<2x8x1024x64xbf16>, %k: tensor<2x8x1024x64xbf16>, %v: tensor<2x8x1024x64xbf16>, %o: tensor<2x8x1024x64xbf16>) -> tensor<2x8x1024x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x64xbf16>, tensor<2x8x1024x64xbf16>, tensor<2x8x1024x64xbf16>) outs(%o : tensor<2x8x1024x64xbf16>) -> tensor<2x8x1024x64xbf16>
    return %r : tensor<2x8x1024x64xbf16>
  }

  func.func @d64_causal_f16(%q: tensor<2x8x1024x64xf16>, %k: tensor<2x8x1024x64xf16>, %v: tensor<2x8x1024x64xf16>, %o: tensor<2x8x1024x64xf16>) -> tensor<2x8x1024x64xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16>) outs(%o : tensor<2x8x1024x64xf16>) {causal} -> tensor<2x8x1024x64xf16>
    return %r : tensor<2x8x1024x64xf16>
  }

  func.func @d64_causal_bf16(%q: tensor<2x8x1024x64xbf16>, %k: tensor<2x8x1024x64xbf16>, %v: tensor<2x8x1024x64xbf16>, %o: tensor<2x8x1024x64xbf16>) -> tensor<2x8x1024x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x64xbf16>, tensor<2x8x1024x64xbf16>, tensor<2x8x1024x64xbf16>) outs(%o : tensor<2x8x1024x64xbf16>) {causal} -> tensor<2x8x1024x64xbf16>
    return %r : tensor<2x8x1024x64xbf16>
  }

  func.func @d128_full_f16(%q: tensor<2x8x1024x128xf16>, %k: tensor<2x8x1024x128xf16>, %v: tensor<2x8x1024x128xf16>, %o: tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>) outs(%o : tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16>
    return %r : tensor<2x8x1024x128xf16>
  }

  func.func @d128_full_bf16(%q: tensor<2x8x1024x128xbf16>, %k: tensor<2x8x1024x128xbf16>, %v: tensor<2x8x1024x128xbf16>, %o: tensor<2x8x1024x128xbf16>) -> tensor<2x8x1024x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>) outs(%o : tensor<2x8x1024x128xbf16>) -> tensor<2x8x1024x128xbf16>
    return %r : tensor<2x8x1024x128xbf16>
  }

  func.func @d128_causal_f16(%q: tensor<2x8x1024x128xf16>, %k: tensor<2x8x1024x128xf16>, %v: tensor<2x8x1024x128xf16>, %o: tensor<2x8x1024x128xf16>) -> tensor<2x8x1024x128xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>, tensor<2x8x1024x128xf16>) outs(%o : tensor<2x8x1024x128xf16>) {causal} -> tensor<2x8x1024x128xf16>
    return %r : tensor<2x8x1024x128xf16>
  }

  func.func @d128_causal_bf16(%q: tensor<2x8x1024x128xbf16>, %k: tensor<2x8x1024x128xbf16>, %v: tensor<2x8x1024x128xbf16>, %o: tensor<2x8x1024x128xbf16>) -> tensor<2x8x1024x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>, tensor<2x8x1024x128xbf16>) outs(%o : tensor<2x8x1024x128xbf16>) {causal} -> tensor<2x8x1024x128xbf16>
    return %r : tensor<2x8x1024x128xbf16>
  }

  func.func @d256_full_f16(%q: tensor<2x8x1024x256xf16>, %k: tensor<2x8x1024x256xf16>, %v: tensor<2x8x1024x256xf16>, %o: tensor<2x8x1024x256xf16>) -> tensor<2x8x1024x256xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x256xf16>, tensor<2x8x1024x256xf16>, tensor<2x8x1024x256xf16>) outs(%o : tensor<2x8x1024x256xf16>) -> tensor<2x8x1024x256xf16>
    return %r : tensor<2x8x1024x256xf16>
  }

  func.func @d256_full_bf16(%q: tensor<2x8x1024x256xbf16>, %k: tensor<2x8x1024x256xbf16>, %v: tensor<2x8x1024x256xbf16>, %o: tensor<2x8x1024x256xbf16>) -> tensor<2x8x1024x256xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x256xbf16>, tensor<2x8x1024x256xbf16>, tensor<2x8x1024x256xbf16>) outs(%o : tensor<2x8x1024x256xbf16>) -> tensor<2x8x1024x256xbf16>
    return %r : tensor<2x8x1024x256xbf16>
  }

  func.func @d256_causal_f16(%q: tensor<2x8x1024x256xf16>, %k: tensor<2x8x1024x256xf16>, %v: tensor<2x8x1024x256xf16>, %o: tensor<2x8x1024x256xf16>) -> tensor<2x8x1024x256xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x256xf16>, tensor<2x8x1024x256xf16>, tensor<2x8x1024x256xf16>) outs(%o : tensor<2x8x1024x256xf16>) {causal} -> tensor<2x8x1024x256xf16>
    return %r : tensor<2x8x1024x256xf16>
  }

  func.func @d256_causal_bf16(%q: tensor<2x8x1024x256xbf16>, %k: tensor<2x8x1024x256xbf16>, %v: tensor<2x8x1024x256xbf16>, %o: tensor<2x8x1024x256xbf16>) -> tensor<2x8x1024x256xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1024x256xbf16>, tensor<2x8x1024x256xbf16>, tensor<2x8x1024x256xbf16>) outs(%o : tensor<2x8x1024x256xbf16>) {causal} -> tensor<2x8x1024x256xbf16>
    return %r : tensor<2x8x1024x256xbf16>
  }

  func.func @gqa_bf16(%q: tensor<2x32x512x128xbf16>, %k: tensor<2x4x512x128xbf16>, %v: tensor<2x4x512x128xbf16>, %o: tensor<2x32x512x128xbf16>) -> tensor<2x32x512x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x32x512x128xbf16>, tensor<2x4x512x128xbf16>, tensor<2x4x512x128xbf16>) outs(%o : tensor<2x32x512x128xbf16>) {causal} -> tensor<2x32x512x128xbf16>
    return %r : tensor<2x32x512x128xbf16>
  }

  func.func @tail_f16(%q: tensor<1x4x1000x128xf16>, %k: tensor<1x4x777x128xf16>, %v: tensor<1x4x777x128xf16>, %o: tensor<1x4x1000x128xf16>) -> tensor<1x4x1000x128xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<1x4x1000x128xf16>, tensor<1x4x777x128xf16>, tensor<1x4x777x128xf16>) outs(%o : tensor<1x4x1000x128xf16>) -> tensor<1x4x1000x128xf16>
    return %r : tensor<1x4x1000x128xf16>
  }
}
