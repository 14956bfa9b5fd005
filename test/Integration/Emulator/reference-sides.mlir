// The kernel check's reference computed on both sides: by the GPU reference
// kernels (lib/GpuCheck/ReferenceKernels.cu, nvcc's PTX, run here on the
// emulator) and by the same code compiled for the host (ReferenceRow.h;
// the default on the emulator, where the reference kernels cost ten to a
// hundred times the checked kernel's instructions). Every feature the
// reference evaluates is here: f16 and bf16, an additive and a boolean mask
// operand, a softcap, a window, causal, GQA, a block mask argument and key
// lengths (one of them 0: a row without keys). Both pass the same kernels,
// and they agree: O's error and each naive attention's error (the
// tolerance's yardstick) come out the same to the digits printed.
//
// RUN: rm -rf %t && attn-compile %s -o %t
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t --reference=device > %t.device
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t > %t.host
// RUN: cat %t.device %t.host | FileCheck %s
// CHECK: kernel additive_softcap_window_attention0
// CHECK: O {{.*}}, rel L2 [[O1:[-+.e0-9]+]], tolerance {{.*}} (2x naive f16: [[N1:[-+.e0-9]+]]): PASS
// CHECK: LSE {{.*}} (2x naive f16: [[L1:[-+.e0-9]+]]): PASS
// CHECK: kernel boolean_causal_gqa_attention0
// CHECK: O {{.*}}, rel L2 [[O2:[-+.e0-9]+]], tolerance {{.*}} (2x naive bf16: [[N2:[-+.e0-9]+]]): PASS
// CHECK: LSE {{.*}} (2x naive bf16: [[L2:[-+.e0-9]+]]): PASS
// CHECK: kernel blocks_lengths_attention0
// CHECK: key-lengths=300,0,236
// CHECK: O {{.*}}, rel L2 [[O3:[-+.e0-9]+]], tolerance {{.*}} (2x naive bf16: [[N3:[-+.e0-9]+]]): PASS
// CHECK: LSE {{.*}} (2x naive bf16: [[L3:[-+.e0-9]+]]): PASS
// CHECK: kernel additive_softcap_window_attention0
// CHECK: O {{.*}}, rel L2 [[O1]], tolerance {{.*}} (2x naive f16: [[N1]]): PASS
// CHECK: LSE {{.*}} (2x naive f16: [[L1]]): PASS
// CHECK: kernel boolean_causal_gqa_attention0
// CHECK: O {{.*}}, rel L2 [[O2]], tolerance {{.*}} (2x naive bf16: [[N2]]): PASS
// CHECK: LSE {{.*}} (2x naive bf16: [[L2]]): PASS
// CHECK: kernel blocks_lengths_attention0
// CHECK: O {{.*}}, rel L2 [[O3]], tolerance {{.*}} (2x naive bf16: [[N3]]): PASS
// CHECK: LSE {{.*}} (2x naive bf16: [[L3]]): PASS
// CHECK-NOT: FAIL

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @additive_softcap_window(%q: tensor<1x2x40x64xf16>, %k: tensor<1x2x53x64xf16>, %v: tensor<1x2x53x64xf16>, %m: tensor<1x2x40x53xf32>, %o: tensor<1x2x40x64xf16>, %l: tensor<1x2x40xf32>) -> (tensor<1x2x40x64xf16>, tensor<1x2x40xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<1x2x40x64xf16>, tensor<1x2x53x64xf16>, tensor<1x2x53x64xf16>) mask(%m : tensor<1x2x40x53xf32>) outs(%o, %l : tensor<1x2x40x64xf16>, tensor<1x2x40xf32>) {softcap = 30.0 : f32, window = array<i64: 17, 3>} -> tensor<1x2x40x64xf16>, tensor<1x2x40xf32>
  return %r#0, %r#1 : tensor<1x2x40x64xf16>, tensor<1x2x40xf32>
}
func.func @boolean_causal_gqa(%q: tensor<2x4x33x64xbf16>, %k: tensor<2x2x47x64xbf16>, %v: tensor<2x2x47x64xbf16>, %m: tensor<1x1x33x47xi1>, %o: tensor<2x4x33x64xbf16>, %l: tensor<2x4x33xf32>) -> (tensor<2x4x33x64xbf16>, tensor<2x4x33xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x4x33x64xbf16>, tensor<2x2x47x64xbf16>, tensor<2x2x47x64xbf16>) mask(%m : tensor<1x1x33x47xi1>) outs(%o, %l : tensor<2x4x33x64xbf16>, tensor<2x4x33xf32>) {causal} -> tensor<2x4x33x64xbf16>, tensor<2x4x33xf32>
  return %r#0, %r#1 : tensor<2x4x33x64xbf16>, tensor<2x4x33xf32>
}
func.func @blocks_lengths(%q: tensor<3x2x1x64xbf16>, %k: tensor<3x2x300x64xbf16>, %v: tensor<3x2x300x64xbf16>, %bm: tensor<1x2x1x5xi8>, %lengths: tensor<3xi32>, %o: tensor<3x2x1x64xbf16>, %l: tensor<3x2x1xf32>) -> (tensor<3x2x1x64xbf16>, tensor<3x2x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<3x2x1x64xbf16>, tensor<3x2x300x64xbf16>, tensor<3x2x300x64xbf16>) block_mask(%bm : tensor<1x2x1x5xi8> blocks [64, 64]) key_lengths(%lengths : tensor<3xi32>) outs(%o, %l : tensor<3x2x1x64xbf16>, tensor<3x2x1xf32>) -> tensor<3x2x1x64xbf16>, tensor<3x2x1xf32>
  return %r#0, %r#1 : tensor<3x2x1x64xbf16>, tensor<3x2x1xf32>
}
}
