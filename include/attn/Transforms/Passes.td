//===- Passes.td - attn-mlir passes ------------------------*- tablegen -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_PASSES_TD
#define ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnPrintPlan : Pass<"attn-print-plan"> {
  let summary = "Report, for every attn.attention, the work and the tiled schedule it gets";
  let description = [{
    Emits a remark on every `attn.attention` whose sizes are static, stating
    what the compiler will do with it: the problem (batch, heads and the
    grouped-query ratio, lengths, head dimensions, element type, masking), its
    nominal forward FLOPs (FlashAttention's count, halved when causal), the
    memory an untiled lowering would spend on the `Sq x Sk` score tensor, the
    FlashAttention-2 tiling (the pinned `tiles` attribute, else FlashAttention-2's
    default for the head dimension, limited by the shared memory of the
    module's `attn.target` when it has one), how many query-block x key-block
    tiles the tiled loops visit after masked-block skipping and how many of
    those need an element mask, and the pinned work partition. The IR is not
    changed. An op with dynamic sizes gets a remark saying the plan is decided
    at run time.

    Example:

    ```mlir
    %o = attn.attention ins(%q, %k, %v : tensor<1x8x1024x64xf16>,
        tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>)
        outs(%init : tensor<1x8x1024x64xf16>) {causal} -> tensor<1x8x1024x64xf16>
    ```

    gets

    ```
    remark: attention B=1 Hq=8 Hkv=8 (MHA) Sq=1024 Sk=1024 D=64 Dv=64 f16 causal
      work: 4.29 GFLOP nominal; an untiled lowering would hold 32.0 MiB of f32 scores
      tiles: #attn.fa2<block_m = 128, block_n = 128, warps = 4, stages = 2> (FlashAttention-2 default for D=64), 64.0 KiB shared memory per CTA
      per (batch, head): 8 query blocks, 36 of 64 key blocks visited (56.2%), 8 with an element mask
      partition: none
    ```
  }];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
