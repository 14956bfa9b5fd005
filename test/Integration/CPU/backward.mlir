// FlashAttention's backward test matrix (its test_flash_attn.py): every
// length pair it tests, head dimensions from 32 to 256 with Dv != D in some,
// causal and sliding-window masks, softcap, grouped-query heads 2:1 and 8:1,
// f32, f16 and bf16, ALiBi (a score region), and the gradient cut into
// several pieces (each with its own dQ copy). Each run checks the forward against the float64 reference,
// then attn.attention_grad's dQ, dK and dV against the float64 reference
// gradient (f32: relative error under 1e-5; f16/bf16: at most twice a naive
// backward pass's in the same format).
// RUN: attn-run --backward --heads=2 --seq-q=113 --seq-k=203 --head-dim=32 --causal --dtype=bf16 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=128 --seq-k=217 --head-dim=40 --value-dim=24 --window=32,8 --dtype=f16 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=113 --seq-k=211 --head-dim=64 --softcap=30 | FileCheck %s
// RUN: attn-run --backward --heads=4 --kv-heads=2 --seq-q=108 --seq-k=256 --head-dim=80 --causal --dtype=bf16 --grad-splits=2 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=256 --seq-k=512 --head-dim=96 --causal --softcap=50 --dtype=f16 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=512 --seq-k=256 --head-dim=128 --value-dim=64 --causal --dtype=bf16 | FileCheck %s
// RUN: attn-run --backward --heads=1 --seq-q=1024 --seq-k=1024 --head-dim=160 --window=128,0 | FileCheck %s
// RUN: attn-run --backward --heads=1 --seq-q=1023 --seq-k=1024 --head-dim=192 --causal --dtype=bf16 --grad-splits=3 | FileCheck %s
// RUN: attn-run --backward --heads=1 --seq-q=1024 --seq-k=1023 --head-dim=224 --causal --dtype=f16 | FileCheck %s
// RUN: attn-run --backward --heads=8 --kv-heads=1 --seq-q=1 --seq-k=239 --head-dim=256 --softcap=30 --dtype=bf16 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=239 --seq-k=1 --head-dim=32 --causal | FileCheck %s
// RUN: attn-run --backward --heads=16 --kv-heads=2 --seq-q=128 --seq-k=128 --head-dim=64 --value-dim=128 --causal --dtype=f16 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=200 --seq-k=300 --head-dim=128 --window=40,40 --softcap=20 --grad-splits=4 | FileCheck %s
// RUN: attn-run --backward --heads=2 --seq-q=256 --seq-k=256 --head-dim=256 --alibi --window=64,64 --dtype=bf16 | FileCheck %s

// Masks, key lengths and block sparsity: a boolean mask with a fully masked
// row, an additive mask (used in the scores; no gradient is taken for it),
// per-sequence key lengths including 0, and a block mask with empty, partial
// and full blocks.
// RUN: attn-run --backward --batch=2 --heads=2 --seq-q=77 --seq-k=99 --head-dim=64 --mask=bool --causal | FileCheck %s
// RUN: attn-run --backward --batch=2 --heads=2 --seq-q=77 --seq-k=99 --head-dim=64 --mask=additive --dtype=bf16 | FileCheck %s
// RUN: attn-run --backward --batch=3 --heads=2 --seq-q=9 --seq-k=130 --head-dim=64 --key-lengths=0,77,130 --causal | FileCheck %s
// RUN: attn-run --backward --batch=2 --heads=2 --seq-q=150 --seq-k=200 --head-dim=64 --block-mask=32,64 --mask=additive --grad-splits=2 | FileCheck %s

// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: backward:
// CHECK: check dQ : {{.*}} PASS
// CHECK: check dK : {{.*}} PASS
// CHECK: check dV : {{.*}} PASS
// CHECK: {{^PASS$}}
