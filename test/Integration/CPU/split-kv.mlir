// Split-KV (flash-decoding): 1, 3 and 16 partials merged with attn.merge,
// with fewer visible blocks than partials (empty partials have LSE = -inf:
// the first query block of the causal 17 x 17 case sees one of the two key
// blocks, the window case visits 21 of its 8 x 16 block pairs),
// against the same reference as the unsplit attention.
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=4096 --head-dim=128 --splits=1 --lse | FileCheck %s
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=4096 --head-dim=128 --splits=3 --lse | FileCheck %s
// RUN: attn-run --heads=4 --seq-q=1 --seq-k=4096 --head-dim=128 --splits=16 --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --splits=3 --causal --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=17 --seq-k=17 --head-dim=64 --block-m=16 --block-n=16 --splits=2 --causal --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=1000 --seq-k=256 --head-dim=64 --block-n=16 --splits=16 --window=32,0 --lse | FileCheck %s

// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}
