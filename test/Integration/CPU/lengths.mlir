// Each (Sq, Sk) of the matrix: a decode step, lengths below one tile, more
// keys than queries, more queries than keys, and a square prefill; causal
// (bottom-right aligned) and not, with LSE.
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=4096 --head-dim=64 --lse | FileCheck %s
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=4096 --head-dim=64 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=17 --seq-k=17 --head-dim=64 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=17 --seq-k=17 --head-dim=64 --causal --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --causal --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=1000 --seq-k=128 --head-dim=64 --lse | FileCheck %s
// RUN: attn-run --heads=1 --seq-q=1024 --seq-k=1024 --head-dim=128 --causal --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=1 --seq-q=1024 --seq-k=1024 --head-dim=64 --dtype=f16 --lse | FileCheck %s

// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
