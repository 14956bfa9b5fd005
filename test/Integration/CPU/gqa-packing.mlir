// GQA packing on the CPU (#attn.fa2's packed_heads): the tiles run over the
// rows of the query heads that share a key/value head, head after head, so
// the masks by position, the score region's head and query indices, the
// block skipping, and split-KV's and Lean's pieces are all computed on
// tiled rows; each case is checked against the float64 reference, which
// knows nothing of packing. Decode (Sq = 1), speculative decoding (Sq = 3,
// 4, 5: tiles that wrap from one head's rows into the next), causal prefill
// with Sq > Sk (rows that see no key at the start of each head), a window,
// softcap and ALiBi (a per-head slope), GQA 4:1, 2 of 4 heads packed, MQA
// with 8 heads packed, f32, bf16 and f16.
// RUN: attn-run --heads=8 --kv-heads=2 --seq-q=1 --seq-k=300 --packed-heads=4 --lse | FileCheck %s --check-prefixes=CHECK,DECODE
// RUN: attn-run --heads=8 --kv-heads=2 --seq-q=3 --seq-k=300 --packed-heads=4 --causal --alibi --lse --block-m=16 --block-n=32 | FileCheck %s --check-prefixes=CHECK,WRAP
// RUN: attn-run --heads=8 --kv-heads=2 --seq-q=5 --seq-k=100 --packed-heads=2 --window=20,0 --softcap=30 --alibi --splits=3 --lse --block-m=16 --block-n=16 --dtype=bf16 | FileCheck %s
// RUN: attn-run --batch=2 --heads=8 --kv-heads=1 --seq-q=4 --seq-k=400 --packed-heads=8 --causal --lean=7 --alibi --lse --block-m=16 --block-n=32 --dtype=f16 | FileCheck %s --check-prefixes=CHECK,LEAN
// RUN: attn-run --heads=4 --kv-heads=2 --seq-q=40 --seq-k=17 --packed-heads=2 --causal --lse --block-m=16 --block-n=16 | FileCheck %s --check-prefixes=CHECK,BLIND
// RUN: attn-run %s | FileCheck %s --check-prefixes=CHECK,MODULE
// RUN: not attn-run --heads=6 --kv-heads=2 --seq-q=1 --packed-heads=2 2>&1 | FileCheck %s --check-prefix=NOT-DIVIDING
// RUN: not attn-run --heads=4 --kv-heads=1 --seq-q=1 --packed-heads=4 --mask=bool 2>&1 | FileCheck %s --check-prefix=MASK

// DECODE: per (batch, 4 packed heads) 1 query blocks, 5 of 5 key blocks visited
// WRAP: per (batch, 4 packed heads) 1 query blocks, 10 of 10 key blocks visited, 1 with an element mask
// LEAN: per (batch, 8 packed heads) 2 query blocks, 26 of 26 key blocks visited, 2 with an element mask; Lean over 7 CTAs: 52 LeanTiles
// Rows 0-22 of each head see no key; the tile of rows 32-47 (head 0's rows
// 32-39, head 1's rows 0-7) visits only the keys of head 0's rows.
// BLIND: per (batch, 2 packed heads) 5 query blocks, 6 of 10 key blocks visited, 6 with an element mask
// MODULE: @sliding_bias: B=1 Hq=6 Hkv=2 (GQA 3:1) Sq=4 Sk=90 D=32 Dv=32 f32 window=[30, 0] score-mod +lse
// MODULE: per (batch, 3 packed heads) 1 query blocks, 3 of 6 key blocks visited, 2 with an element mask
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
// NOT-DIVIDING: packed_heads = 2 must divide the query heads per key/value head (Hq / Hkv = 3)
// MASK: packed_heads = 4 cannot pack a mask operand

// A bias of every (head, query, key) triple with a window: each packed row
// must see its own head and query.
func.func @sliding_bias(%q: tensor<1x6x4x32xf32>, %k: tensor<1x2x90x32xf32>,
                        %v: tensor<1x2x90x32xf32>)
    -> (tensor<1x6x4x32xf32>, tensor<1x6x4xf32>) {
  %o0 = tensor.empty() : tensor<1x6x4x32xf32>
  %l0 = tensor.empty() : tensor<1x6x4xf32>
  %o, %l = attn.attention ins(%q, %k, %v : tensor<1x6x4x32xf32>,
      tensor<1x2x90x32xf32>, tensor<1x2x90x32xf32>)
      outs(%o0, %l0 : tensor<1x6x4x32xf32>, tensor<1x6x4xf32>)
      {window = array<i64: 30, 0>,
       tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1, packed_heads = 3>}
      -> tensor<1x6x4x32xf32>, tensor<1x6x4xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %seven = arith.constant 7 : index
    %hi = arith.muli %h, %seven : index
    %x = arith.addi %hi, %i : index
    %y = arith.subi %x, %j : index
    %yi = arith.index_cast %y : index to i64
    %yf = arith.sitofp %yi : i64 to f32
    %c = arith.constant 0.03 : f32
    %bias = arith.mulf %yf, %c : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %o, %l : tensor<1x6x4x32xf32>, tensor<1x6x4xf32>
}
