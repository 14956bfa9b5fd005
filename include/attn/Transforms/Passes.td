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

def AttnSelectSchedule : Pass<"attn-select-schedule", "ModuleOp"> {
  let summary = "Choose each attention's FlashAttention-2 tiles for the target";
  let description = [{
    For every `attn.attention` in a module with an `#attn.target`, attaches
    `tiles = #attn.fa2<block_m, block_n, warps, stages>`: the first of
    FlashAttention-2's tilings for the head dimension (D <= 64: 128 x 128,
    then 128 x 64, 64 x 64, 4 warps; D <= 128: 128 x 64 with 4 warps, then
    128 x 128 with 8, then 128 x 32 and 64 x 64 with 4; D <= 256: 128 x 64 with 8 warps, then 64 x 64 with 4;
    each with two stages, then one) that fits both the target's shared
    memory per block (the Q tile plus `stages` K and V tiles in the input
    element type) and its registers per thread (the thread's share of the
    f32 accumulators of O and S, plus 64, calibrated so that the kernel does
    not spill: on sm_80 and sm_90 this picks 128 x 64 for D = 64, 128 x 128
    with 8 warps for D = 128 and 128 x 64 with 8 warps for D = 256). An op whose tiles are pinned keeps them, but they are
    checked against the same limits and rejected with the numbers when they
    cannot fit; so is an op for which nothing fits. Attentions in modules
    without a target are left alone (the lowerings then use
    FlashAttention-2's default). Running the pass twice changes nothing.

    Example, on `#attn.target<chip = "sm_86", ..., smem_per_block = 101376,
    ...>` with D = 256 in bf16: 128 x 64 needs 192 KiB with two stages and
    128 KiB with one, 64 x 64 needs 160 KiB with two, so the op gets
    `#attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>` (96 KiB);
    on sm_90a (227 KiB) it gets 128 x 64, 8 warps, two stages.
  }];
}

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Decompose attn.attention into tiled online-softmax loops";
  let description = [{
    Rewrites every `attn.attention` into the FlashAttention-2 forward
    algorithm on tensors, target-independent and executable on the CPU:

    - an `scf.forall` over (batch, query head, query block) — with split-KV,
      over (split, batch, query head, query block) — whose body owns `block_m`
      query rows;
    - inside it, an `scf.for` over the key/value blocks of `block_n` keys that
      the query block can see: with `causal` or a `window`, its bounds skip
      every fully masked block, and the element mask is applied only on the
      blocks that straddle the mask boundary (one `scf.if` per block, not a
      branch per element);
    - a running row maximum `m`, row sum `l` and unnormalised f32 accumulator
      carried through the loop; scores are scaled by `scale * log2(e)` (folded
      into one multiply when no softcap, score region or additive mask needs
      natural units) so that `exp2` replaces `exp`; one division by `l` at the
      end; LSE = `(m + log2 l) * ln 2`.

    Grouped-query heads read their key/value head in place (`h / (Hq / Hkv)`),
    the score region is inlined into the score computation, and tail blocks
    (lengths that are not multiples of the tiles) are handled with dynamic tile
    sizes. A row with no visible key gets O = 0 and LSE = -inf. No tensor larger
    than `block_m x block_n` scores is ever created.

    With `partition = #attn.split_kv<splits = S>`, each query block's visible
    key/value blocks are cut into S contiguous ranges; every split writes a
    normalised f32 partial (O, LSE) and an `attn.merge` combines them into the
    op's results (lower it with `attn-lower-merge`).

    Tile sizes come from the `block-m`/`block-n` options, else the op's
    `tiles` attribute, else FlashAttention-2's default for the head dimension.
    Lean and ATTENTION2D partitions are rejected with a diagnostic.

    Example:

    ```mlir
    %o = attn.attention ins(%q, %k, %v : tensor<1x8x1000x64xf32>, ...)
        outs(%init : tensor<1x8x1000x64xf32>) {causal} -> tensor<1x8x1000x64xf32>
    ```

    becomes (abridged)

    ```mlir
    %r = scf.forall (%b, %h, %mb) in (1, 8, 8) shared_outs(%out = %init) -> ... {
      %q_tile = tensor.extract_slice %q[%b, %h, %row0, 0] [1, 1, %rows, 64] [1, 1, 1, 1]
      %end = ...   // one past the last key block this query block can see
      %state:3 = scf.for %n = %c0 to %end step %c1 iter_args(%m = ..., %l = ..., %acc = ...) {
        %s = linalg.generic {...} ins(%q_tile, %k_tile ...)   // Q K^T * scale * log2(e)
        %s2 = scf.if %straddles_diagonal -> tensor<?x?xf32> { ...causal mask... } else { ... }
        ...   // row max, exp2, row sum, rescale, P V
      }
      ...     // O = acc / l, cast; LSE
      scf.forall.in_parallel { tensor.parallel_insert_slice ... }
    }
    ```
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Query rows per tile (0: from the op's tiles, else FlashAttention-2's default)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Keys per tile (0: from the op's tiles, else FlashAttention-2's default)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnLowerMerge : Pass<"attn-lower-merge"> {
  let summary = "Lower attn.merge to linalg: the log-sum-exp merge of partials";
  let description = [{
    Rewrites every `attn.merge` into three `linalg.generic` ops over the
    partials, reducing along the split dimension:

    ```
    M   = max_s LSE_s                  (0 when every LSE_s is -inf)
    W   = sum_s exp(LSE_s - M)
    LSE = M + ln W                     (-inf when W = 0)
    O   = sum_s exp(LSE_s - M) / W * O_s   (0 when W = 0)
    ```

    Empty partials (LSE_s = -inf) contribute zero weight; rows whose partials
    are all empty get O = 0 and LSE = -inf, never NaN. O is rounded to its
    element type once, after the sum.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
