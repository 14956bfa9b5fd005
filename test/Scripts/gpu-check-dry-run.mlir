// The one-call GPU check's dry run: every step that needs no GPU (the
// sweep's modules compiled to bundles, each bundle read back and checked by
// attn-launch --validate, the r_* bundles' run-time lengths, attn-launch
// failing cleanly without a driver, the Python package carried without its
// compiler loading its bundles, the benchmark script compiling).
// RUN: rm -rf %t
// RUN: env ATTN_BUILD_DIR=%attn_obj_root bash %attn_src_root/scripts/gpu-check.sh dry-run %t --no-build | FileCheck %s
// CHECK: 7 bundles for {'chip': 'sm_90', 'sms': 132, 'smem_per_block': 232448} in
// CHECK: prepared 201 bundles in
// CHECK: attn-launch --validate: 201 bundles valid
// CHECK: run-time lengths: 6 bundles, each at --lengths=1,1,1000 --lengths=4,1,4097 --lengths=2,300,300 --lengths=1,1000,300
// CHECK: attn-launch without a driver: attn-launch: error: cannot open the CUDA driver
// CHECK: 7 python bundles load without the compiler
// CHECK: compare_sdpa.py and compare_decode.py compile
// CHECK: dry run passed
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
