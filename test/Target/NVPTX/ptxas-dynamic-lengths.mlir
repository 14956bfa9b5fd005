// Kernels compiled for run-time lengths (batch, Sq and Sk dynamic; head
// counts and head dimensions static) assemble with ptxas for sm_80 and
// sm_90a without spilling: a GQA decode step with LSE, a causal prefill, a
// sliding window, a softcapped D = 256 and a causal D = 96. Each tensor is
// a pointer plus its run-time sizes and batch/head strides (i64 scalars
// after the pointers, named in the manifest), so one bundle serves every
// length and views of a larger KV cache. attn-select-schedule does not yet
// choose tiles for run-time lengths: the kernels pin the tiles it picks for
// static lengths by the register estimate (the defaults spill).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/sm90a/manifest.json
// RUN: attn-launch --validate %t/sm90a | FileCheck %s --check-prefix=VALID

// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized

// COMPILE: 5 kernel(s)
// CHECK-DAG: Compiling entry function 'decode_gqa_d128_attention0'
// CHECK-DAG: Compiling entry function 'prefill_causal_d64_attention0'
// CHECK-DAG: Compiling entry function 'window_d128_attention0'
// CHECK-DAG: Compiling entry function 'softcap_d256_attention0'
// CHECK-DAG: Compiling entry function 'd96_causal_attention0'

// The decode kernel: the grid follows Sq and the batch at launch; Q's
// sizes are dynamic where the lengths are, its batch and head strides too;
// the scalars name, in parameter order, each dynamic size then stride.
// MANIFEST: "grid": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "ceil_div": 128,
// MANIFEST-NEXT: "dim": 2,
// MANIFEST-NEXT: "param": "Q"
// MANIFEST: "name": "decode_gqa_d128_attention0"
// MANIFEST: "name": "Q",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: null,
// MANIFEST-NEXT: 32,
// MANIFEST-NEXT: null,
// MANIFEST-NEXT: 128
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "strides": [
// MANIFEST-NEXT: null,
// MANIFEST-NEXT: null,
// MANIFEST-NEXT: 128,
// MANIFEST-NEXT: 1
// MANIFEST: "name": "LSE",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: null,
// MANIFEST-NEXT: 32,
// MANIFEST-NEXT: null
// MANIFEST: "scalars": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "param": "Q",
// MANIFEST-NEXT: "size": 0
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "param": "Q",
// MANIFEST-NEXT: "size": 2
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "param": "Q",
// MANIFEST-NEXT: "stride": 0
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "param": "Q",
// MANIFEST-NEXT: "stride": 1
// The sm_90a kernels have producer warps (manifest version 11).
// MANIFEST: "version": 11

// VALID: 5 kernel(s), manifest valid

func.func @decode_gqa_d128(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %o: tensor<?x32x?x128xbf16>, %l: tensor<?x32x?xf32>) -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      outs(%o, %l : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
  return %r#0, %r#1 : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
}

func.func @prefill_causal_d64(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>, %o: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>)
      outs(%o : tensor<?x8x?x64xf16>) {causal, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>} -> tensor<?x8x?x64xf16>
  return %r : tensor<?x8x?x64xf16>
}

func.func @window_d128(%q: tensor<?x16x?x128xbf16>, %k: tensor<?x4x?x128xbf16>, %v: tensor<?x4x?x128xbf16>, %o: tensor<?x16x?x128xbf16>, %l: tensor<?x16x?xf32>) -> (tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<?x16x?x128xbf16>, tensor<?x4x?x128xbf16>, tensor<?x4x?x128xbf16>)
      outs(%o, %l : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>) {window = array<i64: 256, 0>, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
  return %r#0, %r#1 : tensor<?x16x?x128xbf16>, tensor<?x16x?xf32>
}

func.func @softcap_d256(%q: tensor<?x8x?x256xbf16>, %k: tensor<?x8x?x256xbf16>, %v: tensor<?x8x?x256xbf16>, %o: tensor<?x8x?x256xbf16>) -> tensor<?x8x?x256xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>, tensor<?x8x?x256xbf16>)
      outs(%o : tensor<?x8x?x256xbf16>) {causal, softcap = 30.0 : f32} -> tensor<?x8x?x256xbf16>
  return %r : tensor<?x8x?x256xbf16>
}

func.func @d96_causal(%q: tensor<?x8x?x96xbf16>, %k: tensor<?x8x?x96xbf16>, %v: tensor<?x8x?x96xbf16>, %o: tensor<?x8x?x96xbf16>) -> tensor<?x8x?x96xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<?x8x?x96xbf16>, tensor<?x8x?x96xbf16>, tensor<?x8x?x96xbf16>)
      outs(%o : tensor<?x8x?x96xbf16>) {causal, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<?x8x?x96xbf16>
  return %r : tensor<?x8x?x96xbf16>
}
