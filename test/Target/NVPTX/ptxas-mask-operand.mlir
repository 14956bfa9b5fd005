// Kernels with a mask operand (boolean i1, additive bf16 and f32, size-1
// batch or head dimensions broadcast) assemble with ptxas for sm_80 and
// sm_90a without spilling, D in {64, 96, 128, 256}, causal (the additive
// ones softcapped too), with the tiles attn-select-schedule chooses when the
// register estimate counts a mask element per score: the calibration of
// that term. Lengths of 1000 leave tails of rows and keys (clamped reads).
// Also a split-KV and a Lean decode step with a mask over a GQA cache.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log

// COMPILE: 10 kernel(s)
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// CHECK-DAG: Compiling entry function 'd64_boolean_attention0'
// CHECK-DAG: Compiling entry function 'd64_additive_attention0'
// CHECK-DAG: Compiling entry function 'd96_boolean_attention0'
// CHECK-DAG: Compiling entry function 'd96_additive_attention0'
// CHECK-DAG: Compiling entry function 'd128_boolean_attention0'
// CHECK-DAG: Compiling entry function 'd128_additive_attention0'
// CHECK-DAG: Compiling entry function 'd256_boolean_attention0'
// CHECK-DAG: Compiling entry function 'd256_additive_attention0'
// CHECK-DAG: Compiling entry function 'decode_split_attention0'
// CHECK-DAG: Compiling entry function 'decode_lean_attention0'

module {
  func.func @d64_boolean(%q: tensor<2x8x1000x64xbf16>, %k: tensor<2x8x1000x64xbf16>, %v: tensor<2x8x1000x64xbf16>, %m: tensor<2x1x1000x1000xi1>, %o: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) outs(%o : tensor<2x8x1000x64xbf16>) {causal} -> tensor<2x8x1000x64xbf16>
    return %r : tensor<2x8x1000x64xbf16>
  }
  func.func @d64_additive(%q: tensor<2x8x1000x64xbf16>, %k: tensor<2x8x1000x64xbf16>, %v: tensor<2x8x1000x64xbf16>, %m: tensor<1x8x1000x1000xbf16>, %o: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>) mask(%m : tensor<1x8x1000x1000xbf16>) outs(%o : tensor<2x8x1000x64xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x64xbf16>
    return %r : tensor<2x8x1000x64xbf16>
  }
  func.func @d96_boolean(%q: tensor<2x8x1000x96xbf16>, %k: tensor<2x8x1000x96xbf16>, %v: tensor<2x8x1000x96xbf16>, %m: tensor<2x1x1000x1000xi1>, %o: tensor<2x8x1000x96xbf16>) -> tensor<2x8x1000x96xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x96xbf16>, tensor<2x8x1000x96xbf16>, tensor<2x8x1000x96xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) outs(%o : tensor<2x8x1000x96xbf16>) {causal} -> tensor<2x8x1000x96xbf16>
    return %r : tensor<2x8x1000x96xbf16>
  }
  func.func @d96_additive(%q: tensor<2x8x1000x96xbf16>, %k: tensor<2x8x1000x96xbf16>, %v: tensor<2x8x1000x96xbf16>, %m: tensor<1x8x1000x1000xbf16>, %o: tensor<2x8x1000x96xbf16>) -> tensor<2x8x1000x96xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x96xbf16>, tensor<2x8x1000x96xbf16>, tensor<2x8x1000x96xbf16>) mask(%m : tensor<1x8x1000x1000xbf16>) outs(%o : tensor<2x8x1000x96xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x96xbf16>
    return %r : tensor<2x8x1000x96xbf16>
  }
  func.func @d128_boolean(%q: tensor<2x8x1000x128xbf16>, %k: tensor<2x8x1000x128xbf16>, %v: tensor<2x8x1000x128xbf16>, %m: tensor<2x1x1000x1000xi1>, %o: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) outs(%o : tensor<2x8x1000x128xbf16>) {causal} -> tensor<2x8x1000x128xbf16>
    return %r : tensor<2x8x1000x128xbf16>
  }
  func.func @d128_additive(%q: tensor<2x8x1000x128xbf16>, %k: tensor<2x8x1000x128xbf16>, %v: tensor<2x8x1000x128xbf16>, %m: tensor<1x8x1000x1000xbf16>, %o: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>) mask(%m : tensor<1x8x1000x1000xbf16>) outs(%o : tensor<2x8x1000x128xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x128xbf16>
    return %r : tensor<2x8x1000x128xbf16>
  }
  func.func @d256_boolean(%q: tensor<2x8x1000x256xbf16>, %k: tensor<2x8x1000x256xbf16>, %v: tensor<2x8x1000x256xbf16>, %m: tensor<2x1x1000x1000xi1>, %o: tensor<2x8x1000x256xbf16>) -> tensor<2x8x1000x256xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x256xbf16>, tensor<2x8x1000x256xbf16>, tensor<2x8x1000x256xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) outs(%o : tensor<2x8x1000x256xbf16>) {causal} -> tensor<2x8x1000x256xbf16>
    return %r : tensor<2x8x1000x256xbf16>
  }
  func.func @d256_additive(%q: tensor<2x8x1000x256xbf16>, %k: tensor<2x8x1000x256xbf16>, %v: tensor<2x8x1000x256xbf16>, %m: tensor<1x8x1000x1000xbf16>, %o: tensor<2x8x1000x256xbf16>) -> tensor<2x8x1000x256xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x256xbf16>, tensor<2x8x1000x256xbf16>, tensor<2x8x1000x256xbf16>) mask(%m : tensor<1x8x1000x1000xbf16>) outs(%o : tensor<2x8x1000x256xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x256xbf16>
    return %r : tensor<2x8x1000x256xbf16>
  }
  func.func @decode_split(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>, %m: tensor<1x1x1x4096xi1>, %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>) mask(%m : tensor<1x1x1x4096xi1>) outs(%o : tensor<1x32x1x128xbf16>) {partition = #attn.split_kv<splits = 8>} -> tensor<1x32x1x128xbf16>
    return %r : tensor<1x32x1x128xbf16>
  }
  func.func @decode_lean(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>, %m: tensor<1x32x1x4096xf32>, %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>) mask(%m : tensor<1x32x1x4096xf32>) outs(%o : tensor<1x32x1x128xbf16>) {partition = #attn.lean<ctas = 108>} -> tensor<1x32x1x128xbf16>
    return %r : tensor<1x32x1x128xbf16>
  }
}
