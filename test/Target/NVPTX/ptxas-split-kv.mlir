// Split-KV kernels (one launch: pieces, then the last CTA of each output
// tile merges) assemble with ptxas for sm_80 and sm_90a without spilling:
// the decode attention attn-select-schedule splits for an H100 with
// --split-kv (GQA 32/8, D = 128, 8000 keys), a decode with run-time lengths and LSE, a causal
// speculative decode (Sq = 4) in f16, a softcapped D = 256, a GQA
// sliding window with D = 96, and a causal D = 40 prefill with an ALiBi
// score region that the rule splits (its split tiles shrink to 64 x 64:
// with 64 x 128, ptxas spilled; fa2RegistersPerThread's split term).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 --split-kv | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a --split-kv | FileCheck %s --check-prefix=COMPILE
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

// COMPILE: 6 kernel(s)
// CHECK-DAG: Compiling entry function 'decode_selected_attention0'
// CHECK-DAG: Compiling entry function 'decode_dynamic_attention0'
// CHECK-DAG: Compiling entry function 'speculative_causal_attention0'
// CHECK-DAG: Compiling entry function 'softcap_d256_attention0'
// CHECK-DAG: Compiling entry function 'window_d96_attention0'
// CHECK-DAG: Compiling entry function 'alibi_d40_attention0'

// The selected decode: split-KV's 64 x 128 tiles with GQA packing (the 4
// query heads of a key/value head in one block), and FlashAttention-2's
// rule gives 32 splits for 8 query blocks on 132 SMs; z is Hq / 4 x splits,
// a constant; the workspaces are sized per CTA, and the counters are zeroed
// once and left zero by the kernel.
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
// MANIFEST-NEXT: 256
// MANIFEST: "name": "decode_selected_attention0"
// The overlapped loop's K and V come by tensor copies: a tensor map each,
// boxes of 64 columns by block_n keys in the 128-byte swizzle.
// MANIFEST: "tensor_maps": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "box": [
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 1,
// MANIFEST-NEXT: 1
// MANIFEST-NEXT: ],
// MANIFEST-NEXT: "name": "k_map",
// MANIFEST-NEXT: "param": "K",
// MANIFEST-NEXT: "swizzle": 128
// MANIFEST: "name": "v_map",
// MANIFEST-NEXT: "param": "V",
// MANIFEST: "workspaces": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "bytes_per_cta": 32768,
// MANIFEST-NEXT: "name": "partial_o",
// MANIFEST-NEXT: "zero_init": false
// MANIFEST: "bytes_per_cta": 256,
// MANIFEST-NEXT: "name": "partial_lse",
// MANIFEST: "bytes_per_cta": 4,
// MANIFEST-NEXT: "kernel_resets": true,
// MANIFEST-NEXT: "name": "counters",
// MANIFEST-NEXT: "zero_init": true
// MANIFEST: "name": "alibi_d40_attention0"
// MANIFEST: "tiles": {
// MANIFEST-NEXT: "block_m": 64,
// MANIFEST-NEXT: "block_n": 64,
// Version 11: the manifest has tensor maps and producer warps.
// MANIFEST: "version": 11

// VALID: 6 kernel(s), manifest valid

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {

func.func @decode_selected(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x8000x128xbf16>, %v: tensor<1x8x8000x128xbf16>, %o: tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x8000x128xbf16>, tensor<1x8x8000x128xbf16>)
      outs(%o : tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16>
  return %r : tensor<1x32x1x128xbf16>
}

func.func @decode_dynamic(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>, %o: tensor<?x32x?x128xbf16>, %l: tensor<?x32x?xf32>) -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {
  %r, %lse = attn.attention ins(%q, %k, %v : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      outs(%o, %l : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>)
      {partition = #attn.split_kv<splits = 8>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
      -> tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
  return %r, %lse : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
}

func.func @speculative_causal(%q: tensor<2x8x4x64xf16>, %k: tensor<2x8x3000x64xf16>, %v: tensor<2x8x3000x64xf16>, %o: tensor<2x8x4x64xf16>, %l: tensor<2x8x4xf32>) -> (tensor<2x8x4x64xf16>, tensor<2x8x4xf32>) {
  %r, %lse = attn.attention ins(%q, %k, %v : tensor<2x8x4x64xf16>, tensor<2x8x3000x64xf16>, tensor<2x8x3000x64xf16>)
      outs(%o, %l : tensor<2x8x4x64xf16>, tensor<2x8x4xf32>) {causal, partition = #attn.split_kv<splits = 6>}
      -> tensor<2x8x4x64xf16>, tensor<2x8x4xf32>
  return %r, %lse : tensor<2x8x4x64xf16>, tensor<2x8x4xf32>
}

func.func @softcap_d256(%q: tensor<1x8x1x256xbf16>, %k: tensor<1x8x2048x256xbf16>, %v: tensor<1x8x2048x256xbf16>, %o: tensor<1x8x1x256xbf16>) -> tensor<1x8x1x256xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x8x1x256xbf16>, tensor<1x8x2048x256xbf16>, tensor<1x8x2048x256xbf16>)
      outs(%o : tensor<1x8x1x256xbf16>) {softcap = 50.0 : f32, partition = #attn.split_kv<splits = 4>} -> tensor<1x8x1x256xbf16>
  return %r : tensor<1x8x1x256xbf16>
}

func.func @window_d96(%q: tensor<1x16x1x96xbf16>, %k: tensor<1x4x5000x96xbf16>, %v: tensor<1x4x5000x96xbf16>, %o: tensor<1x16x1x96xbf16>) -> tensor<1x16x1x96xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x16x1x96xbf16>, tensor<1x4x5000x96xbf16>, tensor<1x4x5000x96xbf16>)
      outs(%o : tensor<1x16x1x96xbf16>) {window = array<i64: 1024, 0>, partition = #attn.split_kv<splits = 3>} -> tensor<1x16x1x96xbf16>
  return %r : tensor<1x16x1x96xbf16>
}

func.func @alibi_d40(%q: tensor<1x4x200x40xbf16>, %k: tensor<1x2x3000x40xbf16>, %v: tensor<1x2x3000x40xbf16>, %o: tensor<1x4x200x40xbf16>) -> tensor<1x4x200x40xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x200x40xbf16>, tensor<1x2x3000x40xbf16>, tensor<1x2x3000x40xbf16>)
      outs(%o : tensor<1x4x200x40xbf16>) {causal} -> tensor<1x4x200x40xbf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %minus = arith.constant -1.0 : f32
    %e = arith.mulf %hf, %minus : f32
    %slope = math.exp2 %e : f32
    %bias = arith.mulf %df, %slope : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %r : tensor<1x4x200x40xbf16>
}

}
