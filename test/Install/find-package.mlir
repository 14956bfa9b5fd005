// The installed package serves a downstream compiler: install into a fresh
// prefix, build a consumer with find_package(AttnMLIR), and run it.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cmake --install %attn_obj_root --prefix %t/prefix > %t/install.log
// RUN: cmake -G Ninja -S %S/consumer -B %t/build -DCMAKE_PREFIX_PATH=%t/prefix -DCMAKE_BUILD_TYPE=Release > %t/configure.log
// RUN: cmake --build %t/build > %t/build.log
// RUN: %t/build/attn-consumer %s 2>&1 | FileCheck %s
// RUN: ls %t/prefix/bin/attn-opt %t/prefix/lib/AttnPlugin.so %t/prefix/include/attn/Dialect/Attn/IR/AttnOps.td %t/prefix/include/attn/Dialect/Attn/IR/AttnOps.h.inc
// The installed tools start and work from the prefix, not the build tree.
// RUN: %t/prefix/bin/attn-opt %s --attn-print-plan -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOL
// RUN: %mlir_opt %s --load-dialect-plugin=%t/prefix/lib/AttnPlugin.so --load-pass-plugin=%t/prefix/lib/AttnPlugin.so --pass-pipeline="builtin.module(attn-print-plan)" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOOL
// The Python package installs where the prefix's interpreter imports it
// without PYTHONPATH: into a virtual environment, its site-packages.
// RUN: %python -m venv --system-site-packages --without-pip %t/venv
// RUN: cmake --install %attn_obj_root --prefix %t/venv > %t/venv-install.log
// RUN: env -u PYTHONPATH %t/venv/bin/python -c "import attn_mlir, numpy as np; x = np.ones((1, 2, 8, 4), np.float32); print(attn_mlir.attention(x, x, x).sum(), attn_mlir.__file__)" | FileCheck %s --check-prefix=PYTHON
// The installed package finds the installed libattnrt (its GPU runtime),
// which says there is no driver here.
// RUN: not env -u PYTHONPATH ATTNRT_LIBCUDA=/no/such/libcuda.so %t/venv/bin/python -c "import attn_mlir._runtime as r; r.device(0)" 2>&1 | FileCheck %s --check-prefix=PYGPU
// Outside an environment, under the prefix, pip's layout (the install says
// to put it on PYTHONPATH).
// RUN: FileCheck %s --check-prefix=PREFIX < %t/install.log
// RUN: %t/prefix/bin/attn-run --heads=2 --seq-q=1 --seq-k=300 --head-dim=64 --block-m=16 --block-n=64 --lean=3 | FileCheck %s --check-prefix=CPU
// RUN: %mpirun -n 2 %t/prefix/bin/attn-run --ring=2 --seq-q=8 --head-dim=8 | FileCheck %s --check-prefix=MPI
// RUN: %t/prefix/bin/attn-compile %attn_src_root/examples/gqa-layer.mlir -o %t/bundle | FileCheck %s --check-prefix=COMPILE
// RUN: %t/prefix/bin/attn-launch %t/bundle --validate | FileCheck %s --check-prefix=LAUNCH
// TOOL: remark: attention B=1 Hq=4 Hkv=4 (MHA) Sq=16 Sk=16 D=64 Dv=64 f32
// CPU: Lean over 3 CTAs
// CPU: {{^PASS$}}
// MPI: bytes sent per rank: {{.*}} exact
// MPI: rank {{[01]}} of 2: PASS
// COMPILE: 2 kernel(s) for sm_90a
// LAUNCH: 2 kernel(s), manifest valid
// PYTHON: 64.0 {{.*}}/venv/lib/python3.{{[0-9]+}}/site-packages/attn_mlir/__init__.py
// PREFIX: attn_mlir: {{.*}}/prefix/lib/python3.{{[0-9]+}}/site-packages is not on {{.*}}: add it to PYTHONPATH
// PYGPU: attn_mlir._errors.GpuError: ATTNRT_ERROR_NO_DRIVER: {{.*}}cannot open the CUDA driver

// CHECK-DAG: attention scale 1.250000e-01
// CHECK-DAG: remark: attention B=1 Hq=4 Hkv=4 (MHA) Sq=16 Sk=16 D=64 Dv=64 f32
func.func @f(%q: tensor<1x4x16x64xf32>, %o: tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>, tensor<1x4x16x64xf32>)
      outs(%o : tensor<1x4x16x64xf32>) -> tensor<1x4x16x64xf32>
  return %r : tensor<1x4x16x64xf32>
}
