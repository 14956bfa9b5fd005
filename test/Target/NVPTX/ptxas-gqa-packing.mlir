// GQA-packed kernels (#attn.fa2's packed_heads: a CTA's rows are those of
// the query heads that share a key/value head) assemble with ptxas for
// sm_80 and sm_90a without spilling, for every schedule: a Llama-3-8B decode
// step with LSE on FlashAttention-2's grid, the same through split-KV, a
// causal speculative step (Sq = 4) with an ALiBi score region (each packed
// row sees its own head and query), split-KV with run-time lengths, and Lean
// attention (108 CTAs, which an A100, the reference device of sm_80, holds).
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
// CHECK-DAG: Compiling entry function 'decode_packed_attention0'
// CHECK-DAG: Compiling entry function 'decode_packed_split_attention0'
// CHECK-DAG: Compiling entry function 'spec_packed_alibi_attention0'
// CHECK-DAG: Compiling entry function 'decode_packed_dynamic_attention0'
// CHECK-DAG: Compiling entry function 'lean_packed_attention0'

// The decode's grid: ceil(4 Sq / 64) query blocks (Sq at run time, the
// formula multiplies first), B, and the 8 tiled heads, a constant.
// MANIFEST: "grid": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "ceil_div": 64,
// MANIFEST-NEXT: "dim": 2,
// MANIFEST-NEXT: "param": "Q",
// MANIFEST-NEXT: "times": 4
// MANIFEST-NEXT: },
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "dim": 0,
// MANIFEST-NEXT: "param": "Q"
// MANIFEST-NEXT: },
// MANIFEST-NEXT: 8
// MANIFEST: "name": "decode_packed_attention0"
// MANIFEST: "packed_heads": 4
// The sm_90a kernels have producer warps (manifest version 11).
// MANIFEST: "version": 11

// VALID: 5 kernel(s), manifest valid

func.func @decode_packed(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x8000x128xbf16>, %v: tensor<4x8x8000x128xbf16>,
                         %o: tensor<4x32x1x128xbf16>, %l: tensor<4x32x1xf32>) -> (tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<4x32x1x128xbf16>, tensor<4x8x8000x128xbf16>, tensor<4x8x8000x128xbf16>)
      outs(%o, %l : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>)
      {tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>}
      -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %r#0, %r#1 : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
}
func.func @decode_packed_split(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x8000x128xbf16>, %v: tensor<1x8x8000x128xbf16>,
                         %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x8000x128xbf16>, tensor<1x8x8000x128xbf16>)
      outs(%o : tensor<1x32x1x128xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>, partition = #attn.split_kv<splits = 16>}
      -> tensor<1x32x1x128xbf16>
  return %r : tensor<1x32x1x128xbf16>
}
func.func @spec_packed_alibi(%q: tensor<2x8x4x64xf16>, %k: tensor<2x2x1000x64xf16>, %v: tensor<2x2x1000x64xf16>,
                         %o: tensor<2x8x4x64xf16>) -> tensor<2x8x4x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x4x64xf16>, tensor<2x2x1000x64xf16>, tensor<2x2x1000x64xf16>)
      outs(%o : tensor<2x8x4x64xf16>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>}
      -> tensor<2x8x4x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1 : index
    %h1 = arith.addi %h, %one : index
    %hi = arith.index_cast %h1 : index to i64
    %hf = arith.sitofp %hi : i64 to f32
    %c = arith.constant -0.0625 : f32
    %slope = arith.mulf %hf, %c : f32
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %r : tensor<2x8x4x64xf16>
}
func.func @decode_packed_dynamic(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>,
                         %o: tensor<?x32x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      outs(%o : tensor<?x32x?x128xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>, partition = #attn.split_kv<splits = 8>}
      -> tensor<?x32x?x128xbf16>
  return %r : tensor<?x32x?x128xbf16>
}
func.func @lean_packed(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x8000x128xbf16>, %v: tensor<1x8x8000x128xbf16>,
                         %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x8000x128xbf16>, tensor<1x8x8000x128xbf16>)
      outs(%o : tensor<1x32x1x128xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>, partition = #attn.lean<ctas = 108>}
      -> tensor<1x32x1x128xbf16>
  return %r : tensor<1x32x1x128xbf16>
}
