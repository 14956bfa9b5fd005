// RUN: attn-opt %s --split-input-file --attn-strip-module-attributes --verify-diagnostics | FileCheck %s

// Nothing of the attn dialect is left: the target and the cluster go, from
// nested modules too; other attributes stay.
// CHECK-LABEL: module attributes {test.kept}
// CHECK-NOT: attn.
// CHECK: module @inner {
// CHECK: llvm.func @f
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>,
                   attn.cluster = #attn.cluster<ranks = 4, ranks_per_node = 4>, test.kept} {
  module @inner attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
    llvm.func @f() {
      llvm.return
    }
  }
}

// -----

// An attention still to lower needs its target: an error.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @f(%q: tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32> {
    // expected-error @+1 {{'attn.attention' is not lowered yet}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>)
        outs(%q : tensor<1x1x8x16xf32>) -> tensor<1x1x8x16xf32>
    return %r : tensor<1x1x8x16xf32>
  }
}
