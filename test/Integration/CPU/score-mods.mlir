// Score modifications: the scale, softcap, ALiBi through the score region,
// and all of them together with a mask and causal masking.
// RUN: attn-run --heads=4 --seq-q=128 --seq-k=1000 --head-dim=64 --scale=0.05 --lse | FileCheck %s
// RUN: attn-run --heads=4 --seq-q=128 --seq-k=1000 --head-dim=64 --softcap=2.5 --scale=1.0 --lse | FileCheck %s
// RUN: attn-run --heads=8 --seq-q=128 --seq-k=1000 --head-dim=64 --alibi --causal --lse | FileCheck %s
// RUN: attn-run --heads=8 --kv-heads=2 --seq-q=17 --seq-k=17 --head-dim=80 --alibi --softcap=30 --mask=additive --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=8 --seq-q=1 --seq-k=4096 --head-dim=128 --alibi --splits=3 --dtype=f16 --lse | FileCheck %s

// The first two have no score region.
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
