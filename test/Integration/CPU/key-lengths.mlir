// Per-sequence key lengths (key_lengths, FlashAttention's cache_seqlens) on
// the CPU: sequence b attends to its first L_b keys, its causal and window
// masks aligned by L_b, checked against the float64 reference, which
// computes each sequence as if its K and V ended there. A full cache, an
// empty one (O = 0, LSE = -inf), lengths that end inside a key block and on
// its edge; decode, speculative decoding with a causal mask (Sq = 4) and a
// window; FlashAttention-2's grid, split-KV (a split may hold no visible
// block of a short sequence) and GQA packing; f32, bf16 and f16.
// RUN: attn-run --batch=4 --heads=4 --seq-q=1 --seq-k=300 --key-lengths=300,0,17,128 --lse | FileCheck %s --check-prefixes=CHECK,DECODE
// RUN: attn-run --batch=3 --heads=8 --kv-heads=2 --seq-q=4 --seq-k=200 --key-lengths=3,200,65 --causal --lse --block-m=16 --block-n=32 | FileCheck %s
// RUN: attn-run --batch=3 --heads=4 --seq-q=4 --seq-k=256 --key-lengths=256,1,100 --window=30,2 --splits=4 --lse --block-m=16 --block-n=32 --dtype=bf16 | FileCheck %s
// RUN: attn-run --batch=2 --heads=8 --kv-heads=2 --seq-q=2 --seq-k=500 --key-lengths=70,499 --packed-heads=4 --causal --splits=3 --alibi --lse --dtype=f16 | FileCheck %s
// RUN: attn-run %s | FileCheck %s --check-prefixes=CHECK,MODULE
// RUN: not attn-run --batch=3 --seq-q=1 --seq-k=64 --key-lengths=5,6 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not attn-run --batch=2 --seq-q=1 --seq-k=64 --key-lengths=5,65 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not attn-run --batch=2 --seq-q=1 --seq-k=64 --key-lengths=5,-1 2>&1 | FileCheck %s --check-prefix=RANGE-NEG
// RUN: not attn-run --batch=2 --seq-q=1 --seq-k=640 --key-lengths=5,6 --lean=4 2>&1 | FileCheck %s --check-prefix=LEAN
// RUN: %python -c "import numpy; numpy.save('%t.npy', numpy.array([64, 9], dtype=numpy.int32))"
// RUN: attn-run --batch=2 --seq-q=3 --seq-k=64 --causal --key-lengths-npy=%t.npy --lse | FileCheck %s --check-prefixes=CHECK,NPY
// RUN: not attn-run --batch=2 --seq-q=1 --seq-k=64 --key-lengths-npy=%t.npy --key-lengths=1,2 2>&1 | FileCheck %s --check-prefix=TWICE

// DECODE: Sq=1 Sk=300 D=64 Dv=64 f32 key-lengths +lse
// DECODE: key lengths: 300 0 17 128
// NPY: key lengths: 64 9
// MODULE: @decode_step: B=3 Hq=8 Hkv=2 (GQA 4:1) Sq=1 Sk=192 D=64 Dv=64 bf16 key-lengths +lse
// The module's lengths are attn-run's random ones: the first full, the
// second empty.
// MODULE: key lengths: 192 0 {{[0-9]+}}
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
// COUNT: --key-lengths gives 2 lengths for a batch of 3
// RANGE: key length 65 of sequence 1 is outside [0, 64]
// RANGE-NEG: key length -1 of sequence 1 is outside [0, 64]
// LEAN: #attn.lean cannot take key lengths
// TWICE: give the key lengths once: --key-lengths or --key-lengths-npy

// A Llama-style decode step over a batch of caches of one capacity.
func.func @decode_step(%q: tensor<3x8x1x64xbf16>, %k: tensor<3x2x192x64xbf16>,
                       %v: tensor<3x2x192x64xbf16>, %lengths: tensor<3xi32>)
    -> (tensor<3x8x1x64xbf16>, tensor<3x8x1xf32>) {
  %o0 = tensor.empty() : tensor<3x8x1x64xbf16>
  %l0 = tensor.empty() : tensor<3x8x1xf32>
  %o, %l = attn.attention ins(%q, %k, %v : tensor<3x8x1x64xbf16>,
      tensor<3x2x192x64xbf16>, tensor<3x2x192x64xbf16>)
      key_lengths(%lengths : tensor<3xi32>)
      outs(%o0, %l0 : tensor<3x8x1x64xbf16>, tensor<3x8x1xf32>)
      -> tensor<3x8x1x64xbf16>, tensor<3x8x1xf32>
  return %o, %l : tensor<3x8x1x64xbf16>, tensor<3x8x1xf32>
}
