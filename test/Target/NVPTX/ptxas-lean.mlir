// Lean attention kernels assemble with ptxas for sm_90a and sm_80 without
// spilling: a GQA decode step (D = 128, 32 query heads over 8 key/value
// heads, 8k keys) over the 132 SMs, a causal prefill whose output tiles
// differ in length (D = 64, 300 queries and keys), and the same two with
// the batch, Sq and Sk taken at run time (one kernel for every length: the
// LeanTiles are counted and split over the fixed CTAs at launch), with the
// tiles attn-select-schedule gives them (64 x 64, two stages, for the
// run-time decode). That kernel spilled 40 bytes on sm_90a while LLVM's
// loop-invariant code motion hoisted per-lane addresses above the walk over
// LeanTiles (ptxas 13.0; docs/performance.md, Lean kernels). A kernel whose
// G needs more CTAs per SM (ceil(G / 132 SMs)) than fit the register file
// at 255 registers a thread holds ptxas to them (.minnctapersm), so that
// every CTA is resident: the D = 64 decode at 396 CTAs (3 per SM, 168
// registers) and no other here. The causal speculative decode at D = 64
// (4 queries, packed heads) spilled 8-16 bytes held to 3 per SM, which the
// register estimate gave it before it counted kMaskedLeanRegisters for a
// Lean kernel whose mask hides keys; it now runs 264 CTAs. A run-time GQA decode at
// D = 224 (rows of 28 chunks of 16 bytes, which 128 threads do not divide)
// spilled 36-48 bytes while the tile copies spread chunks evenly over the
// threads (TileCopyLayout.h; docs/performance.md, tile copies).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/lean | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE80
// RUN: %ptxas -arch=sm_90a -v %t/lean/kernels.ptx -o %t/lean.cubin > %t/lean.log 2>&1
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: FileCheck %s --input-file=%t/lean.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/lean.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/lean/manifest.json
// RUN: attn-launch --validate %t/lean | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=RESIDENT --input-file=%t/lean/kernels.ptx
// RESIDENT-NOT: .minnctapersm
// RESIDENT: .entry decode_d64_attention0(
// RESIDENT: .minnctapersm 3
// RESIDENT-NOT: .minnctapersm

// COMPILE: 7 kernel(s) for sm_90a
// COMPILE80: 7 kernel(s) for sm_80
// CHECK-DAG: Compiling entry function 'decode_attention0'
// CHECK-DAG: Compiling entry function 'prefill_attention0'
// CHECK-DAG: Compiling entry function 'decode_run_time_attention0'
// CHECK-DAG: Compiling entry function 'prefill_run_time_attention0'
// CHECK-DAG: Compiling entry function 'decode_d224_attention0'
// CHECK-DAG: Compiling entry function 'decode_d64_attention0'
// CHECK-DAG: Compiling entry function 'speculative_d64_attention0'
// VALID: 7 kernel(s), manifest valid
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized

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
  func.func @decode_run_time(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %o: tensor<?x32x?x128xbf16>, %l: tensor<?x32x?xf32>) -> (tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>) {
    %r:2 = attn.attention ins(%q, %k, %k : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
        outs(%o, %l : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>)
        {causal, partition = #attn.lean<ctas = 264>} -> tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
    return %r#0, %r#1 : tensor<?x32x?x128xbf16>, tensor<?x32x?xf32>
  }
  func.func @prefill_run_time(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %o: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>)
        outs(%o : tensor<?x4x?x64xf16>) {causal, partition = #attn.lean<ctas = 132>} -> tensor<?x4x?x64xf16>
    return %r : tensor<?x4x?x64xf16>
  }
  func.func @decode_d224(%q: tensor<?x32x1x224xbf16>, %k: tensor<?x8x?x224xbf16>, %o: tensor<?x32x1x224xbf16>) -> tensor<?x32x1x224xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x32x1x224xbf16>, tensor<?x8x?x224xbf16>, tensor<?x8x?x224xbf16>)
        outs(%o : tensor<?x32x1x224xbf16>)
        {causal, partition = #attn.lean<ctas = 264>, tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1, packed_heads = 4>} -> tensor<?x32x1x224xbf16>
    return %r : tensor<?x32x1x224xbf16>
  }
  func.func @decode_d64(%q: tensor<?x32x1x64xbf16>, %k: tensor<?x8x?x64xbf16>, %o: tensor<?x32x1x64xbf16>) -> tensor<?x32x1x64xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x32x1x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>)
        outs(%o : tensor<?x32x1x64xbf16>)
        {causal, partition = #attn.lean<ctas = 396>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>} -> tensor<?x32x1x64xbf16>
    return %r : tensor<?x32x1x64xbf16>
  }
  func.func @speculative_d64(%q: tensor<?x32x4x64xbf16>, %k: tensor<?x8x?x64xbf16>, %o: tensor<?x32x4x64xbf16>) -> tensor<?x32x4x64xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x32x4x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>)
        outs(%o : tensor<?x32x4x64xbf16>)
        {causal, partition = #attn.lean<ctas = 264>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>} -> tensor<?x32x4x64xbf16>
    return %r : tensor<?x32x4x64xbf16>
  }
}
