// The one-call GPU check's dry run: every step that needs no GPU (the
// sweep's modules compiled to bundles, each bundle read back and checked by
// attn-launch --validate, the r_* bundles' run-time lengths, attn-launch
// failing cleanly without a driver, the Python package carried without its
// compiler loading its bundles (the ten forward cases', and the three
// gradient cases' forward-with-LSE and backward bundles), the benchmark
// scripts compiling). The
// kernels the GPU reference cannot check have reference cases: a score
// region (ALiBi), the causal softcapped ALiBi D = 96 one with a block
// mask argument, and the six c_grad_* bundles' backward kernels (gradient
// cases).
// RUN: rm -rf %t
// RUN: env ATTN_BUILD_DIR=%attn_obj_root bash %attn_src_root/scripts/gpu-check.sh dry-run %t --no-build | FileCheck %s
// CHECK: 20 bundles for {'chip': 'sm_90a', 'sms': 132, 'smem_per_block': 232448} in
// The sweep's 310 modules (20 of them g_* backward benchmarks), the 24 benchmark kernels once more on mma.sync
// and sweep.py's 14 MMA_SYNC_TWINS (NAME+mma-sync; c_region_alibi's twin
// has a reference case too).
// CHECK: prepared 349 bundles in {{.*}}, 11 with a reference case
// CHECK: attn-launch --validate: 349 bundles valid, 11 reference cases read
// CHECK: run-time lengths: 8 bundles, each at --lengths=1,1,1000 --lengths=4,1,4097 --lengths=2,300,300 --lengths=1,1000,300
// CHECK: attn-launch without a driver: attn-launch: error: cannot open the CUDA driver
// CHECK: 20 python bundles load without the compiler
// CHECK: compare_sdpa.py, compare_backward.py, compare_decode.py and compare_flex.py compile
// CHECK: the prepared directory fits the device tool's carry ({{[0-9]+}} of 56 MiB)
// CHECK: dry run passed
// The bundles travel with their PTX gzipped (run unpacks it).
// RUN: ls %t/bundles/c_window | FileCheck %s --check-prefix=PACKED
// PACKED: kernels.ptx.gz
// PACKED-NEXT: manifest.json
// RUN: ls %t/bundles/c_region_alibi/reference %t/bundles/c_blocks_d96_alibi/reference | FileCheck %s --check-prefix=CASES
// CASES: block_mask.npy
// CASES: reference.json
// CASES: reference.json
// RUN: not bash %attn_src_root/scripts/gpu-check.sh run %t %t/out frobnicate 2>&1 | FileCheck %s --check-prefix=STEP
// STEP: gpu-check.sh: no step 'frobnicate' (steps: correctness sanitizers benchmark backward decode variants overhead)
// RUN: ls %t/bin | FileCheck %s --check-prefix=CARRY
// CARRY: attn-launch
// CARRY: attnrt-launch-overhead
// RUN: ls %t/lib | FileCheck %s --check-prefix=LIB
// LIB: libattnrt.so
// The package travels without its compiler module (it needs LLVM/MLIR).
// RUN: test -f %t/python/attn_mlir/_runtime.py
// RUN: not ls %t/python/attn_mlir/_attn_mlir*
// RUN: not bash %attn_src_root/scripts/gpu-check.sh frobnicate 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: scripts/gpu-check.sh prepare DIR [--no-build]
