// Lean attention (stream-K) on the CPU: the LeanTiles of all output tiles
// divided evenly over G CTAs, each output tile's pieces merged with
// attn.merge in CTA order, against the float64 reference. The cases cover
// the stream-K assignment: hosts that do their whole tile alone (one CTA),
// one contributor (48 LeanTiles over 5 CTAs), many contributors (more CTAs
// than LeanTiles), a CTA spanning four output tiles (96 over 7), causal rows
// that see no key (Sq > Sk: LSE = -inf, O = 0), causal prefill with tiles of
// different lengths, GQA 8:1 and MQA, speculative decoding (Sq = 4), Sk not
// a multiple of the block, f16/bf16/f32, and the score features.
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=1000 --head-dim=64 --block-m=16 --block-n=64 --lean=1 --lse | FileCheck %s --check-prefixes=CHECK,ALONE
// RUN: attn-run --heads=3 --seq-q=1 --seq-k=1000 --head-dim=64 --block-m=16 --block-n=64 --lean=5 --lse | FileCheck %s --check-prefixes=CHECK,ONE
// RUN: attn-run --heads=3 --seq-q=1 --seq-k=1000 --head-dim=64 --block-m=16 --block-n=64 --lean=64 --dtype=bf16 --lse | FileCheck %s --check-prefixes=CHECK,MANY
// RUN: attn-run --heads=24 --seq-q=1 --seq-k=256 --head-dim=32 --block-m=16 --block-n=64 --lean=7 --dtype=f16 --lse | FileCheck %s --check-prefixes=CHECK,SPAN
// RUN: attn-run --heads=2 --seq-q=40 --seq-k=17 --head-dim=64 --block-m=16 --block-n=16 --lean=3 --causal --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=300 --seq-k=300 --head-dim=64 --block-m=64 --block-n=64 --lean=7 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --batch=2 --heads=16 --kv-heads=2 --seq-q=1 --seq-k=777 --head-dim=128 --block-m=16 --block-n=64 --lean=13 --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=8 --kv-heads=1 --seq-q=4 --seq-k=1000 --head-dim=64 --block-m=16 --block-n=32 --lean=11 --causal --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=600 --head-dim=64 --block-m=16 --block-n=64 --lean=6 --window=256,0 --alibi --softcap=20 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=8 --seq-k=500 --head-dim=32 --block-m=16 --block-n=32 --lean=9 --mask=bool --lse | FileCheck %s

// ALONE: Lean over 1 CTAs: 64 LeanTiles, 64 per CTA, 1 partial slots per output tile
// ONE: Lean over 5 CTAs: 48 LeanTiles, 9-10 per CTA, 3 partial slots per output tile
// MANY: Lean over 64 CTAs: 48 LeanTiles, 0-1 per CTA, 16 partial slots per output tile
// SPAN: Lean over 7 CTAs: 96 LeanTiles, 13-14 per CTA, 2 partial slots per output tile
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
