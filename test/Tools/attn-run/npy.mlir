// .npy inputs and outputs. O written by one run (f16, [1, 2, 64, 32]) has
// the shape and type of Q, K and V of the next, which reads it back.
// RUN: attn-run --heads=2 --seq-q=64 --head-dim=32 --dtype=f16 --lse --o-npy=%t.o.npy --lse-npy=%t.lse.npy | FileCheck %s
// RUN: attn-run --heads=2 --seq-q=64 --head-dim=32 --dtype=f16 --q-npy=%t.o.npy --k-npy=%t.o.npy --v-npy=%t.o.npy | FileCheck %s
// CHECK: check O  : {{.*}} PASS
// CHECK: {{^PASS$}}
//
// Without size options the sizes and the element type come from the files:
// Q [B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv].
// RUN: attn-run --q-npy=%t.o.npy --k-npy=%t.o.npy --v-npy=%t.o.npy | FileCheck %s --check-prefix=FROM-FILES
// FROM-FILES: @attention: B=1 Hq=2 Hkv=2 (MHA) Sq=64 Sk=64 D=32 Dv=32 f16
// FROM-FILES: {{^PASS$}}
// RUN: not attn-run --lse --q-npy=%t.lse.npy 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: {{.*}}.lse.npy: Q must have 4 dimensions [B, H, S, D], got 3
//
// The files are NumPy's format: a version 1.0 header padded to a multiple of 64 bytes.
// RUN: head -c 128 %t.o.npy | FileCheck %s --check-prefix=HEADER-O
// RUN: head -c 128 %t.lse.npy | FileCheck %s --check-prefix=HEADER-LSE
// HEADER-O: NUMPY{{.*}}{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2, 64, 32), }
// HEADER-LSE: NUMPY{{.*}}{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 64), }
//
// A boolean mask as NumPy saves one (dtype bool), hiding every key of row 1:
// its LSE is -inf (bytes 00 00 80 ff) for both heads, and the check passes.
// RUN: attn-run --heads=2 --seq-q=4 --seq-k=6 --head-dim=32 --mask=bool --mask-npy=%S/Inputs/mask-4x6.npy --lse --lse-npy=%t.masked.npy | FileCheck %s
// RUN: od -A n -t x1 -j 128 -v %t.masked.npy | FileCheck %s --check-prefix=MINUS-INF
// MINUS-INF: {{^ ([0-9a-f]{2} ){4}00 00 80 ff( [0-9a-f]{2}){8}$}}
// MINUS-INF-NEXT: {{^ ([0-9a-f]{2} ){4}00 00 80 ff( [0-9a-f]{2}){8}$}}
//
// Bad files end in one message and a non-zero exit.
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=16 --dtype=f16 --q-npy=%t.o.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: error: {{.*}}.o.npy: shape [1, 2, 64, 32] does not match Q's [1, 2, 64, 16]
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=32 --dtype=bf16 --k-npy=%t.o.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: {{.*}}.o.npy: holds f16 but bf16 was expected
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=32 --v-npy=%t.missing.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: attn-run: error: cannot read {{.*}}.missing.npy: No such file or directory
// RUN: head -c 100 %t.o.npy > %t.truncated.npy
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=32 --dtype=f16 --q-npy=%t.truncated.npy 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: error: {{.*}}.truncated.npy: {{.*}}
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=32 --q-npy=%s 2>&1 | FileCheck %s --check-prefix=NOT-NPY
// NOT-NPY: error: {{.*}}npy.mlir: not a .npy file (bad magic)
// RUN: not attn-run --heads=2 --seq-q=4 --seq-k=6 --head-dim=32 --mask=additive --mask-npy=%S/Inputs/mask-4x6.npy 2>&1 | FileCheck %s --check-prefix=MASK-TYPE
// MASK-TYPE: error: {{.*}}mask-4x6.npy: holds bool but f32 was expected
