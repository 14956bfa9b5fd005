// FlashAttention's own test matrix (its test_flash_attn.py): every length
// pair it tests, with head dimensions from 32 to 256 (59 and 111 too, which
// the CPU path runs though FlashAttention, needing multiples of 8, does
// not), causal and sliding-window masks, softcap, ALiBi and grouped-query
// heads spread over the pairs. Each run is checked against the float64
// reference. Batch and heads are small: the lengths are the point.
// RUN: attn-run --heads=2 --seq-q=113 --seq-k=203 --head-dim=32 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=217 --head-dim=40 --window=32,8 --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=113 --seq-k=211 --head-dim=59 --softcap=30 --lse | FileCheck %s
// RUN: attn-run --heads=4 --kv-heads=2 --seq-q=108 --seq-k=256 --head-dim=64 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=256 --seq-k=512 --head-dim=80 --causal --softcap=50 --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=512 --seq-k=256 --head-dim=96 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=1 --seq-q=1024 --seq-k=1024 --head-dim=111 --window=128,0 --lse | FileCheck %s
// RUN: attn-run --heads=1 --seq-q=1023 --seq-k=1024 --head-dim=128 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=1 --seq-q=1024 --seq-k=1023 --head-dim=160 --causal --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=4 --kv-heads=1 --seq-q=1 --seq-k=239 --head-dim=192 --softcap=30 --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=239 --seq-k=1 --head-dim=224 --causal --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=256 --seq-k=256 --head-dim=256 --alibi --window=64,64 --dtype=bf16 --lse | FileCheck %s

// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
