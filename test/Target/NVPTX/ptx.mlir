// The PTX of attn-to-ptx has the instructions the kernel is built from and
// nothing in local memory (LLVM's own stack). ptxas assembles it for both
// targets when it is installed.
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" -o %t.sm80
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" -o %t.sm90
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 --input-file=%t.sm80
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 --input-file=%t.sm90
// RUN: FileCheck %s --check-prefix=NONE --input-file=%t.sm80
// RUN: FileCheck %s --check-prefix=NONE --input-file=%t.sm90

// CHECK: gpu.binary @attn_kernels
// SM80-SAME: chip = "sm_80"
// SM90-SAME: chip = "sm_90"
// SM80-SAME: .target sm_80
// SM90-SAME: .target sm_90
// CHECK-SAME: .visible .entry prefill_attention0(
// Dynamic shared memory aligned for the swizzle's 1024-byte atoms
// (attn-align-dynamic-shared-memory).
// CHECK-SAME: .shared .align 1024 .b8 __dynamic_shmem__0;
// CHECK-DAG: cp.async.cg.shared.global [%{{[a-z0-9]+}}], [%{{[a-z0-9]+}}], 16, %{{[a-z0-9]+}};
// CHECK-DAG: cp.async.wait_group \091;
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-DAG: shfl.sync.bfly.b32
// CHECK-DAG: ex2.approx.ftz.f32
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// O leaves in 16-byte stores.
// CHECK-DAG: st.global.v4.b32

// Nothing in local memory (LLVM's own stack), and no libdevice: exp2 is
// the hardware's ex2.
// NONE-NOT: .local
// NONE-NOT: __nv_

func.func @prefill(%q: tensor<1x8x300x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                   %v: tensor<1x2x300x64xbf16>, %o: tensor<1x8x300x64xbf16>) -> tensor<1x8x300x64xbf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x8x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>)
      outs(%o : tensor<1x8x300x64xbf16>) {causal} -> tensor<1x8x300x64xbf16>
  return %r : tensor<1x8x300x64xbf16>
}
