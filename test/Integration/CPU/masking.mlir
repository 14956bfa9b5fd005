// Masked-block skipping and element masks.
//
// Causal with Sq > Sk: the first Sq - Sk rows see no key at all (O = 0,
// LSE = -inf, no NaN), and whole query blocks skip every KV block.
// RUN: attn-run --heads=2 --seq-q=1000 --seq-k=128 --head-dim=64 --causal --lse | FileCheck %s --check-prefixes=CHECK,EMPTY
// Causal with Sq < Sk, tiles that do not divide the lengths.
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=32 --causal --block-m=48 --block-n=80 --lse | FileCheck %s
// Sliding windows: left only, both sides, and with causal.
// RUN: attn-run --heads=2 --seq-q=300 --seq-k=300 --head-dim=64 --window=100,0 --lse | FileCheck %s --check-prefixes=CHECK,SKIP
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --window=64,32 --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=1000 --seq-k=128 --head-dim=64 --window=16,16 --causal --lse | FileCheck %s
// Boolean and additive masks, each hiding every key of one row.
// RUN: attn-run --batch=2 --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --mask=bool --lse | FileCheck %s
// RUN: attn-run --batch=2 --heads=2 --seq-q=17 --seq-k=17 --head-dim=64 --mask=additive --causal --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=1 --seq-k=4096 --head-dim=64 --mask=bool --splits=3 --lse | FileCheck %s

// SKIP: 3 query blocks, 9 of 15 key blocks visited
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}

// EMPTY-NOT: NaN
