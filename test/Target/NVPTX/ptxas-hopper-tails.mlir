// The tiles attn-select-schedule chooses for an sm_90a target assemble
// without spilling for causal attentions whose lengths are not multiples of
// the tiles (the gpu-check correctness shapes): a tail of keys adds the
// element mask to the last block. With two stages the D = 256 kernel spilled
// 4 bytes here; the table gives it one. Every ptxas test also checks that
// ptxas serialises no wgmma ("Potential Performance Loss: wgmma.mma_async
// instructions are serialized", as it does when a register a running
// product reads is redefined before its wgmma.wait_group).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log

// COMPILE: 3 kernel(s)
// CHECK-DAG: Compiling entry function 'd64_attention0'
// CHECK-DAG: Compiling entry function 'd128_attention0'
// CHECK-DAG: Compiling entry function 'd256_attention0'
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @d64(%q: tensor<2x4x1000x64xbf16>, %o: tensor<2x4x1000x64xbf16>, %l: tensor<2x4x1000xf32>) -> tensor<2x4x1000x64xbf16> {
    %r:2 = attn.attention ins(%q, %q, %q : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>)
        outs(%o, %l : tensor<2x4x1000x64xbf16>, tensor<2x4x1000xf32>) {causal} -> tensor<2x4x1000x64xbf16>, tensor<2x4x1000xf32>
    return %r#0 : tensor<2x4x1000x64xbf16>
  }
  func.func @d128(%q: tensor<2x4x1000x128xf16>, %o: tensor<2x4x1000x128xf16>, %l: tensor<2x4x1000xf32>) -> tensor<2x4x1000x128xf16> {
    %r:2 = attn.attention ins(%q, %q, %q : tensor<2x4x1000x128xf16>, tensor<2x4x1000x128xf16>, tensor<2x4x1000x128xf16>)
        outs(%o, %l : tensor<2x4x1000x128xf16>, tensor<2x4x1000xf32>) {causal} -> tensor<2x4x1000x128xf16>, tensor<2x4x1000xf32>
    return %r#0 : tensor<2x4x1000x128xf16>
  }
  func.func @d256(%q: tensor<2x4x1000x256xbf16>, %o: tensor<2x4x1000x256xbf16>, %l: tensor<2x4x1000xf32>) -> tensor<2x4x1000x256xbf16> {
    %r:2 = attn.attention ins(%q, %q, %q : tensor<2x4x1000x256xbf16>, tensor<2x4x1000x256xbf16>, tensor<2x4x1000x256xbf16>)
        outs(%o, %l : tensor<2x4x1000x256xbf16>, tensor<2x4x1000xf32>) {causal} -> tensor<2x4x1000x256xbf16>, tensor<2x4x1000xf32>
    return %r#0 : tensor<2x4x1000x256xbf16>
  }
}
