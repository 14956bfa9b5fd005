// Element types: f32, f16 and bf16 inputs, outputs in another type than the
// inputs, and the tolerance each is held to.
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --dtype=f32 | FileCheck %s --check-prefixes=CHECK,F32
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --dtype=f16 | FileCheck %s --check-prefixes=CHECK,F16
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --dtype=bf16 | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --dtype=bf16 --out-dtype=f32 | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=1000 --head-dim=64 --dtype=f32 --out-dtype=f16 | FileCheck %s --check-prefixes=CHECK,F16

// F32: (tolerance 1.00e-05, f32) PASS
// F16: 2x naive f16
// BF16: 2x naive bf16
// CHECK: {{^PASS$}}

// The check can fail: no output is exact, so a zero tolerance fails, with a
// non-zero exit.
// RUN: not attn-run --heads=2 --seq-q=17 --seq-k=17 --head-dim=64 --tolerance=0 | FileCheck %s --check-prefix=STRICT
// STRICT: (tolerance 0.00e+00, --tolerance) FAIL
// STRICT: {{^FAIL$}}
