// attn-compile writes a bundle: the PTX of every kernel and a manifest that
// says how to launch each one.
// RUN: rm -rf %t && attn-compile %s -o %t --function=prefill --split-kv=false | FileCheck %s --check-prefix=SAY
// RUN: FileCheck %s --input-file=%t/manifest.json
// RUN: FileCheck %s --input-file=%t/kernels.ptx --check-prefix=PTX
// SAY: 1 kernel(s) for sm_90a in {{[0-9.]+}} s ->

// CHECK: "format": "attn-kernel-bundle"
// CHECK: "kernels": [
// CHECK:     "attention": {
// CHECK-NEXT:  "causal": true,
// CHECK-NEXT:  "scale": 0.125
// sm_90a's default tiles: 128 x 128 in two warpgroups (wgmma), and the
// producer warpgroup that issues the tensor copies: 384 threads.
// CHECK:     "block": [
// CHECK-NEXT:  384,
// Q (16 KiB), two stages of K and V (64 KiB), then two mbarriers (8 bytes
// each) for each stage: the full one, which K's and V's tensor copies
// complete on, and the empty one, which the consumers release it on; then
// Q's, which its tensor copy completes on.
// CHECK:     "dynamic_shared_memory": 81960,
// The grid is a formula of the parameters' sizes: (ceil(Sq / 128), B, Hq).
// CHECK:     "grid": [
// CHECK-NEXT:  {
// CHECK-NEXT:    "ceil_div": 128,
// CHECK-NEXT:    "dim": 2,
// CHECK-NEXT:    "param": "Q"
// CHECK-NEXT:  },
// CHECK-NEXT:  {
// CHECK-NEXT:    "dim": 0,
// CHECK-NEXT:    "param": "Q"
// CHECK-NEXT:  },
// CHECK-NEXT:  {
// CHECK-NEXT:    "dim": 1,
// CHECK-NEXT:    "param": "Q"
// CHECK-NEXT:  }
// CHECK:     "name": "prefill_attention0",
// CHECK:     "params": [
// CHECK:         "alignment": 16,
// CHECK-NEXT:    "name": "Q",
// CHECK-NEXT:    "shape": [
// CHECK-NEXT:      2,
// CHECK-NEXT:      8,
// CHECK-NEXT:      300,
// CHECK-NEXT:      64
// CHECK-NEXT:    ],
// CHECK-NEXT:    "strides": [
// CHECK-NEXT:      153600,
// CHECK-NEXT:      19200,
// CHECK-NEXT:      64,
// CHECK-NEXT:      1
// CHECK-NEXT:    ],
// CHECK-NEXT:    "type": "f16"
// CHECK:         "name": "K",
// CHECK:         "name": "V",
// CHECK:         "name": "O",
// CHECK:         "alignment": 4,
// CHECK-NEXT:    "name": "LSE",
// CHECK:         "type": "f32"
// The plan the kernel was built from (#attn.kernel), for a reader.
// CHECK:     "plan": {
// CHECK-NEXT:  "consumer_registers": 240,
// CHECK-NEXT:  "entry_registers": 168,
// CHECK-NEXT:  "kv": "tensor",
// CHECK-NEXT:  "loop": "ping_pong",
// CHECK-NEXT:  "o": "tensor",
// CHECK-NEXT:  "producer_registers": 24,
// CHECK-NEXT:  "q": "tensor",
// CHECK-NEXT:  "roles": "producer",
// CHECK-NEXT:  "unit": "wgmma"
// CHECK-NEXT: },
// CHECK-NEXT: "producer_warps": 4,
// CHECK:     "target": "sm_90a",
// The tensor maps of K, V, O and Q, which libattnrt encodes for each
// launch.
// CHECK:     "tensor_maps": [
// CHECK:         "name": "k_map",
// CHECK-NEXT:    "param": "K",
// CHECK-NEXT:    "swizzle": 128
// CHECK:         "name": "v_map",
// CHECK-NEXT:    "param": "V",
// CHECK:         "name": "o_map",
// CHECK-NEXT:    "param": "O",
// CHECK:         "name": "q_map",
// CHECK-NEXT:    "param": "Q",
// CHECK:     "tiles": {
// CHECK-NEXT:  "block_m": 128,
// CHECK-NEXT:  "block_n": 128,
// CHECK-NEXT:  "packed_heads": 1,
// CHECK-NEXT:  "stages": 2,
// CHECK-NEXT:  "warps": 8
// CHECK: "ptx": "kernels.ptx",
// Version 11: a kernel has producer warps.
// CHECK: "version": 11

// PTX: .target sm_90a
// PTX: .visible .entry prefill_attention0(
// The tensor maps are by-value parameters, read through their generic
// addresses (attn-tensor-map-parameters).
// PTX: .param .align 64 .b8 prefill_attention0_param_5[128],
// PTX-NEXT: .param .align 64 .b8 prefill_attention0_param_6[128]
// The register count setmaxnreg moves registers within (168 a thread for
// 384 threads): the producer keeps 24 and issues the copies, the consumers
// get 240 and compute.
// PTX: .maxnreg 168
// PTX: cvta.param.u64
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: setmaxnreg.inc.sync.aligned.u32 240;
// PTX: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16

// The chip can be named; an attention the kernel does not support, a
// missing function and a module without attentions are errors.
// RUN: attn-compile %s -o %t.sm80 --function=prefill --chip=sm_80 | FileCheck %s --check-prefix=SM80
// SM80: 1 kernel(s) for sm_80
// RUN: not attn-compile %s -o %t.all 2>&1 | FileCheck %s --check-prefix=REJECTED
// REJECTED: error: attn-to-nvgpu supports f16 and bf16 operands, got 'f32'
// RUN: not attn-compile %s -o %t.x --function=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// A softcap and a score region are in the manifest, for the GPU check.
// RUN: rm -rf %t.capped && attn-compile %s -o %t.capped --function=capped
// RUN: FileCheck %s --check-prefix=CAPPED --input-file=%t.capped/manifest.json
// CAPPED: "attention": {
// CAPPED-DAG: "score_region": true
// CAPPED-DAG: "softcap": 30
// MISSING: attn-compile: error: no function @missing in
// A mask operand is a parameter after LSE: its type (i1: a byte per
// element), its shape with the broadcast batch and the run-time lengths, and
// an alignment of its element's bytes.
// RUN: rm -rf %t.masked && attn-compile %s -o %t.masked --function=masked
// RUN: FileCheck %s --check-prefix=MASKED --input-file=%t.masked/manifest.json
// MASKED: "name": "LSE",
// MASKED: "alignment": 1,
// MASKED-NEXT: "name": "mask",
// MASKED-NEXT: "shape": [
// MASKED-NEXT:   1,
// MASKED-NEXT:   4,
// MASKED-NEXT:   null,
// MASKED-NEXT:   null
// MASKED-NEXT: ],
// MASKED-NEXT: "strides": [
// MASKED-NEXT:   null,
// MASKED-NEXT:   null,
// MASKED-NEXT:   null,
// MASKED-NEXT:   1
// MASKED-NEXT: ],
// MASKED-NEXT: "type": "i1"
// MASKED: "scalars": [
// A block mask that is an argument is the i8 block_mask parameter, before
// the key lengths; the attention names its blocks, which libattnrt checks
// its sizes against (ceil(Sq / Bq), ceil(Sk / Bk)); attn-launch reads the
// bundle.
// RUN: rm -rf %t.sparse && attn-compile %s -o %t.sparse --function=sparse
// RUN: FileCheck %s --check-prefix=SPARSE --input-file=%t.sparse/manifest.json
// RUN: attn-launch %t.sparse --validate | FileCheck %s --check-prefix=SPARSE-VALID
// SPARSE: "block_mask_blocks": [
// SPARSE-NEXT:   128,
// SPARSE-NEXT:   256
// SPARSE: "name": "block_mask",
// SPARSE-NEXT: "shape": [
// SPARSE-NEXT:   1,
// SPARSE-NEXT:   4,
// SPARSE-NEXT:   null,
// SPARSE-NEXT:   null
// SPARSE: "type": "i8"
// SPARSE: "name": "key_lengths",
// SPARSE-VALID: valid
// RUN: not attn-compile %S/../attn-run/Inputs/no-attention.mlir -o %t.none 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: error: no attn.attention to compile
// Chips the kernels cannot run on, or that are not chips, are refused up
// front (they used to crash in instruction selection).
// RUN: not attn-compile %s -o %t.75 --function=prefill --chip=sm_75 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: attn-compile: error: the kernels use sm_80 instructions (mma.sync m16n8k16, cp.async): sm_75 is too old; use sm_80 or newer
// The matrix unit can be named: mma.sync on sm_90a too; wgmma only on sm_90a.
// RUN: rm -rf %t.mma && attn-compile %s -o %t.mma --function=prefill --split-kv=false --matrix-unit=mma-sync
// RUN: FileCheck %s --input-file=%t.mma/kernels.ptx --check-prefix=MMA-SYNC
// MMA-SYNC-NOT: wgmma
// MMA-SYNC: mma.sync.aligned.m16n8k16
// MMA-SYNC-NOT: wgmma
// RUN: not attn-compile %s -o %t.bad --function=prefill --matrix-unit=wgmma --chip=sm_80 2>&1 | FileCheck %s --check-prefix=WGMMA-SM80
// WGMMA-SM80: attn-compile: error: matrix-unit=wgmma needs chip sm_90a (wgmma is an architecture-specific feature of sm_90), got sm_80
// RUN: not attn-compile %s -o %t.bad --function=prefill --matrix-unit=tensor 2>&1 | FileCheck %s --check-prefix=BAD-UNIT
// BAD-UNIT: attn-compile: error: matrix-unit must be auto, mma-sync or wgmma, got "tensor"
// RUN: not attn-compile %s -o %t.empty --function=prefill --chip= 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-compile: error: chip must name an NVPTX architecture such as sm_80 or sm_90a, got ""
// RUN: not attn-compile %s -o %t.80a --function=prefill --chip=sm_80a 2>&1 | FileCheck %s --check-prefix=NOT-A-CHIP
// RUN: not attn-compile %s -o %t.gfx --function=prefill --chip=gfx90a 2>&1 | FileCheck %s --check-prefix=NOT-A-CHIP
// NOT-A-CHIP: attn-compile: error: chip must name an NVPTX architecture such as sm_80 or sm_90a, got "{{sm_80a|gfx90a}}"
// Chips LLVM's NVPTX back end does not know, named or in the module's
// #attn.target, aborted in instruction selection ("Cannot select"); newer
// chips it knows compile.
// RUN: not attn-compile %s -o %t.999 --function=prefill --chip=sm_999 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not attn-compile %s -o %t.1000 --function=prefill --chip=sm_1000 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: sed 's/chip = "sm_90a"/chip = "sm_999"/' %s > %t.target999.mlir
// RUN: not attn-compile %t.target999.mlir -o %t.t999 --function=prefill 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: attn-compile: error: chip sm_{{999|1000}} is not an NVPTX architecture that LLVM 22 knows; the kernels can be compiled for sm_80, {{.*}}, sm_90a, sm_100, sm_100a,
// RUN: rm -rf %t.100a && attn-compile %s -o %t.100a --function=prefill --chip=sm_100a | FileCheck %s --check-prefix=SM100A
// RUN: FileCheck %s --input-file=%t.100a/kernels.ptx --check-prefix=PTX100A
// SM100A: 1 kernel(s) for sm_100a
// PTX100A: .version 8.6
// PTX100A: .target sm_100a

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @prefill(%q: tensor<2x8x300x64xf16>, %k: tensor<2x8x300x64xf16>, %v: tensor<2x8x300x64xf16>,
                     %o: tensor<2x8x300x64xf16>, %l: tensor<2x8x300xf32>) -> (tensor<2x8x300x64xf16>, tensor<2x8x300xf32>) {
    %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x300x64xf16>, tensor<2x8x300x64xf16>, tensor<2x8x300x64xf16>)
        outs(%o, %l : tensor<2x8x300x64xf16>, tensor<2x8x300xf32>) {causal} -> tensor<2x8x300x64xf16>, tensor<2x8x300xf32>
    return %r#0, %r#1 : tensor<2x8x300x64xf16>, tensor<2x8x300xf32>
  }
  func.func @capped(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
        outs(%o : tensor<1x1x64x64xf16>) {softcap = 30.0 : f32} -> tensor<1x1x64x64xf16> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %half = arith.constant 0.5 : f32
      %r = arith.mulf %s, %half : f32
      attn.yield %r : f32
    }
    return %r : tensor<1x1x64x64xf16>
  }
  func.func @masked(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %m: tensor<1x4x?x?xi1>,
                    %o: tensor<?x4x?x64xf16>, %l: tensor<?x4x?xf32>) -> (tensor<?x4x?x64xf16>, tensor<?x4x?xf32>) {
    %r:2 = attn.attention ins(%q, %k, %k : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>)
        mask(%m : tensor<1x4x?x?xi1>) outs(%o, %l : tensor<?x4x?x64xf16>, tensor<?x4x?xf32>) -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
    return %r#0, %r#1 : tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
  }
  func.func @sparse(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %bm: tensor<1x4x?x?xi8>, %lengths: tensor<?xi32>,
                    %o: tensor<?x4x?x64xf16>) -> tensor<?x4x?x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>)
        block_mask(%bm : tensor<1x4x?x?xi8> blocks [128, 256]) key_lengths(%lengths : tensor<?xi32>)
        outs(%o : tensor<?x4x?x64xf16>) {causal} -> tensor<?x4x?x64xf16>
    return %r : tensor<?x4x?x64xf16>
  }
  func.func @f32_operands(%q: tensor<1x1x64x64xf32>, %o: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
        outs(%o : tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
    return %r : tensor<1x1x64x64xf32>
  }
}
