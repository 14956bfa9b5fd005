// Lean attention kernels assemble with ptxas for sm_90a without spilling: a
// GQA decode step (D = 128, 32 query heads over 8 key/value heads, 8k keys)
// over the 132 SMs, and a causal prefill whose output tiles differ in length
// (D = 64, 300 queries and keys).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/lean | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_90a -v %t/lean/kernels.ptx -o %t/lean.cubin > %t/lean.log 2>&1
// RUN: FileCheck %s --input-file=%t/lean.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/lean.log
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/lean/manifest.json

// COMPILE: 2 kernel(s) for sm_90a
// CHECK-DAG: Compiling entry function 'decode_attention0'
// CHECK-DAG: Compiling entry function 'prefill_attention0'
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill

// The manifest asks for a persistent launch with the runtime's workspaces.
// MANIFEST: "grid": [
// MANIFEST-NEXT: 132,
// MANIFEST-NEXT: 1,
// MANIFEST-NEXT: 1
// MANIFEST: "name": "decode_attention0"
// MANIFEST: "persistent": true
// MANIFEST: "workspaces": [
// MANIFEST: "name": "partial_o"
// MANIFEST: "name": "flags"
// MANIFEST-NEXT: "zero_init": true

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @decode(%q: tensor<1x32x1x128xbf16>, %k: tensor<1x8x8192x128xbf16>, %o: tensor<1x32x1x128xbf16>, %l: tensor<1x32x1xf32>) -> (tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>) {
    %r:2 = attn.attention ins(%q, %k, %k : tensor<1x32x1x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        outs(%o, %l : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>)
        {partition = #attn.lean<ctas = 132>} -> tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>
    return %r#0, %r#1 : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>
  }
  func.func @prefill(%q: tensor<1x2x300x64xf16>, %o: tensor<1x2x300x64xf16>) -> tensor<1x2x300x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x2x300x64xf16>, tensor<1x2x300x64xf16>, tensor<1x2x300x64xf16>)
        outs(%o : tensor<1x2x300x64xf16>) {causal, partition = #attn.lean<ctas = 7>} -> tensor<1x2x300x64xf16>
    return %r : tensor<1x2x300x64xf16>
  }
}
