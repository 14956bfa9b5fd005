// Every head dimension of the matrix, each with its FlashAttention-2 default
// tiles, on lengths that are not multiples of them, in each element type.
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=32 | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --dtype=f16 | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=80 --dtype=bf16 | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=128 | FileCheck %s
// RUN: attn-run --heads=1 --seq-q=128 --seq-k=1000 --head-dim=256 --dtype=bf16 | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=17 --seq-k=17 --head-dim=80 --value-dim=32 --causal | FileCheck %s
// A head dimension beyond FlashAttention-2's table runs with pinned tiles.
// RUN: attn-run --heads=1 --seq-q=40 --seq-k=70 --head-dim=320 --block-m=16 --block-n=32 | FileCheck %s --check-prefix=PINNED

// CHECK: schedule: tiles
// CHECK: check O  : {{.*}} PASS
// CHECK: {{^PASS$}}

// PINNED: schedule: tiles 16x32 (--block-m/--block-n)
// PINNED: {{^PASS$}}
