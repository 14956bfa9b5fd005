// Kernels whose block mask is their block_mask parameter (values and, with
// run-time lengths, block counts known at launch) assemble with ptxas for
// sm_80 and sm_90a without spilling: a causal, softcapped ALiBi D = 96
// prefill with a boolean mask operand too, run-time lengths with per-head
// blocks and key lengths, and split-KV and Lean decode steps over a GQA
// cache, each with the tiles attn-select-schedule chooses inside the
// blocks; and blocks smaller than the table's tiles: 32 x 32 (32 x 32 tiles,
// 2 warps) at D = 128 and 48 x 80 (16 x 80, 1 warp) at D = 64, causal with a
// boolean mask.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/sm90a/manifest.json
// RUN: FileCheck %s --check-prefix=PARAMETER --input-file=%t/sm90a/manifest.json
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log

// COMPILE: 6 kernel(s)
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// CHECK-DAG: Compiling entry function 'alibi_d96_attention0'
// CHECK-DAG: Compiling entry function 'run_time_attention0'
// CHECK-DAG: Compiling entry function 'decode_split_attention0'
// CHECK-DAG: Compiling entry function 'decode_lean_attention0'
// CHECK-DAG: Compiling entry function 'blocks_32x32_attention0'
// CHECK-DAG: Compiling entry function 'blocks_48x80_attention0'

// The attention names the blocks and not `block_mask` (which says that a
// constant's values are in the module); the parameter is i8.
// MANIFEST: "block_mask_blocks": [
// MANIFEST-NEXT: 128,
// MANIFEST-NEXT: 128
// MANIFEST: "name": "block_mask",
// MANIFEST: "type": "i8"
// PARAMETER-NOT: "block_mask": true

module {
  func.func @alibi_d96(%q: tensor<2x8x1000x96xbf16>, %k: tensor<2x8x1000x96xbf16>, %v: tensor<2x8x1000x96xbf16>, %m: tensor<2x1x1000x1000xi1>, %bm: tensor<2x1x8x8xi8>, %o: tensor<2x8x1000x96xbf16>) -> tensor<2x8x1000x96xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x96xbf16>, tensor<2x8x1000x96xbf16>, tensor<2x8x1000x96xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) block_mask(%bm : tensor<2x1x8x8xi8> blocks [128, 128]) outs(%o : tensor<2x8x1000x96xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x96xbf16> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %hi = arith.index_cast %h : index to i32
      %hf = arith.sitofp %hi : i32 to f32
      %one = arith.constant 1.0 : f32
      %h1 = arith.addf %hf, %one : f32
      %eighth = arith.constant -0.125 : f32
      %slope = arith.mulf %h1, %eighth : f32
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %bias = arith.mulf %slope, %df : f32
      %biased = arith.addf %s, %bias : f32
      attn.yield %biased : f32
    }
    return %r : tensor<2x8x1000x96xbf16>
  }
  func.func @run_time(%q: tensor<?x8x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %bm: tensor<1x8x?x?xi8>, %lengths: tensor<?xi32>, %o: tensor<?x8x?x128xbf16>) -> tensor<?x8x?x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>) block_mask(%bm : tensor<1x8x?x?xi8> blocks [128, 128]) key_lengths(%lengths : tensor<?xi32>) outs(%o : tensor<?x8x?x128xbf16>) {causal} -> tensor<?x8x?x128xbf16>
    return %r : tensor<?x8x?x128xbf16>
  }
  func.func @decode_split(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x?x128xbf16>, %v: tensor<4x8x?x128xbf16>, %bm: tensor<4x1x1x?xi8>, %o: tensor<4x32x1x128xbf16>) -> tensor<4x32x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<4x32x1x128xbf16>, tensor<4x8x?x128xbf16>, tensor<4x8x?x128xbf16>) block_mask(%bm : tensor<4x1x1x?xi8> blocks [64, 256]) outs(%o : tensor<4x32x1x128xbf16>) {partition = #attn.split_kv<splits = 8>} -> tensor<4x32x1x128xbf16>
    return %r : tensor<4x32x1x128xbf16>
  }
  func.func @decode_lean(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %v: tensor<1x8x4096x128xbf16>, %bm: tensor<1x32x1x16xi8>, %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>) block_mask(%bm : tensor<1x32x1x16xi8> blocks [64, 256]) outs(%o : tensor<1x32x1x128xbf16>) {partition = #attn.lean<ctas = 108>} -> tensor<1x32x1x128xbf16>
    return %r : tensor<1x32x1x128xbf16>
  }
  func.func @blocks_32x32(%q: tensor<2x8x1000x128xbf16>, %m: tensor<2x1x1000x1000xi1>, %bm: tensor<2x8x32x32xi8>, %o: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) block_mask(%bm : tensor<2x8x32x32xi8> blocks [32, 32]) outs(%o : tensor<2x8x1000x128xbf16>) {causal} -> tensor<2x8x1000x128xbf16>
    return %r : tensor<2x8x1000x128xbf16>
  }
  func.func @blocks_48x80(%q: tensor<2x8x1000x64xbf16>, %m: tensor<2x1x1000x1000xi1>, %bm: tensor<1x1x21x13xi8>, %o: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>) mask(%m : tensor<2x1x1000x1000xi1>) block_mask(%bm : tensor<1x1x21x13xi8> blocks [48, 80]) outs(%o : tensor<2x8x1000x64xbf16>) {causal} -> tensor<2x8x1000x64xbf16>
    return %r : tensor<2x8x1000x64xbf16>
  }
}
