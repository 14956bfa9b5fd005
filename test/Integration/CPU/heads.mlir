// Grouped-query heads read their key/value head in place: GQA 8:1, MQA and
// a batch, with and without causal masking and split-KV.
// RUN: attn-run --batch=2 --heads=8 --kv-heads=1 --seq-q=17 --seq-k=17 --head-dim=64 --lse | FileCheck %s
// RUN: attn-run --batch=2 --heads=16 --kv-heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --causal --dtype=bf16 | FileCheck %s
// RUN: attn-run --heads=32 --kv-heads=4 --seq-q=1 --seq-k=4096 --head-dim=128 --dtype=f16 --splits=16 --lse | FileCheck %s
// RUN: attn-run --batch=3 --heads=4 --kv-heads=1 --seq-q=1000 --seq-k=128 --head-dim=32 --causal | FileCheck %s

// CHECK: check O  : {{.*}} PASS
// CHECK: {{^PASS$}}
