//===- AttnOps.td - The attn dialect's operations ---------*- tablegen -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"

//===----------------------------------------------------------------------===//
// attn.attention
//===----------------------------------------------------------------------===//

// The operands, attributes, score region and accessors that attn.attention
// and attn.partial_attention share.
class Attn_AttentionLikeOp<string mnemonic> : Attn_Op<mnemonic, [
    AttrSizedOperandSegments,
    RecursiveMemoryEffects,
    DestinationStyleOpInterface]> {
  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    Optional<AnyRankedTensor>:$mask,
    Optional<AnyRankedTensor>:$block_mask,
    Optional<TensorOf<[I32]>>:$key_lengths,
    Optional<Index>:$query_offset,
    Optional<Index>:$key_offset,
    Optional<Index>:$query_total,
    Optional<Index>:$key_total,
    Variadic<AnyRankedTensor>:$outputs,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$causal,
    OptionalAttr<DenseI64ArrayAttr>:$window,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<DenseI64ArrayAttr>:$block_mask_size,
    OptionalAttr<Attn_Fa2TilesAttr>:$tiles,
    OptionalAttr<Attn_PartitionAttr>:$partition,
    OptionalAttr<Attn_KernelAttr>:$kernel
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region AnyRegion:$score);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,` type($value) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`block_mask` `(` $block_mask^ `:` type($block_mask) `blocks`
     $block_mask_size `)`)?
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`frame` `(` $query_offset^ `,` $key_offset `of` $query_total `,` $key_total `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict `->` type($results)
    (`score` $score^)?
  }];

  let extraClassDeclaration = [{
    /// The destinations (`outs`): O, then LSE when present.
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutputsMutable();
    }
    ::mlir::Value getInitOut() { return getOutputs()[0]; }
    /// The LSE destination, or null.
    ::mlir::Value getInitLse() {
      return getOutputs().size() > 1 ? getOutputs()[1] : ::mlir::Value();
    }
    ::mlir::Value getOut() { return getResults()[0]; }
    /// The LSE result, or null.
    ::mlir::Value getLse() {
      return getResults().size() > 1 ? getResults()[1] : ::mlir::Value();
    }

    /// The scale applied to Q K^T: the `scale` attribute, else 1/sqrt(D).
    /// Only valid on a verified op.
    float getEffectiveScale();

    /// The sliding window as (left, right), if any.
    std::optional<std::pair<int64_t, int64_t>> getWindowSizes();

    /// Whether the op carries a score-modification region.
    bool hasScoreModifier() { return !getScore().empty(); }

    /// Whether a kernel of the op starts its key/value loop at a block
    /// chosen at run time and merges partials: a split-KV partition of
    /// several splits, or Lean attention. Such kernels take split-KV's tiles
    /// (Fa2Defaults.h, fa2SplitKvCandidates).
    bool splitsKeyValues();

    /// Whether the keys a sequence attends to end where its `key_lengths`
    /// entry says.
    bool hasKeyLengths() { return static_cast<bool>(getKeyLengths()); }

    /// Whether the op computes a part of a larger attention (`frame`).
    bool hasFrame() { return static_cast<bool>(getQueryOffset()); }

    /// The rows and keys of one block of the block mask, if there is one.
    std::optional<std::pair<int64_t, int64_t>> getBlockMaskBlock() {
      std::optional<ArrayRef<int64_t>> size = getBlockMaskSize();
      if (!size || size->size() != 2)
        return std::nullopt;
      return std::make_pair((*size)[0], (*size)[1]);
    }
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Attn_AttentionOp : Attn_AttentionLikeOp<"attention"> {
  let summary = "Exact scaled dot-product attention, with GQA, masking and score modification";
  let description = [{
    Computes, for every batch `b`, query head `h`, query `i` and output
    feature `e`:

    ```
    s[k]   = score_mod(softcap(scale * sum_d Q[b,h,i,d] * K[b,g(h),k,d]), b, h, i, k)
             + additive_mask[b,h,i,k]                       (when the mask is additive)
    s[k]   = -inf   where k is not visible from i (causal, window, boolean mask)
    O[b,h,i,e] = sum_k softmax(s)[k] * V[b,g(h),k,e]
    LSE[b,h,i] = log sum_k exp(s[k])                          (natural logarithm)
    ```

    Shapes: Q is `[B, Hq, Sq, D]`, K is `[B, Hkv, Sk, D]`, V is
    `[B, Hkv, Sk, Dv]`, O is `[B, Hq, Sq, Dv]` and the optional LSE is
    `[B, Hq, Sq]`. `Hq` is a multiple of `Hkv`; query head `h` reads key/value
    head `g(h) = h / (Hq / Hkv)` (multi-head when equal, grouped-query when
    `Hkv` divides `Hq`, multi-query when `Hkv = 1`). Q, K and V share one
    element type among f16, bf16 and f32; O is any of those; LSE is f32.
    Scores, the softmax state and the accumulator are f32 whatever the inputs.

    The op is in destination-passing style: `outs` names the tensors the
    results are written into, and result `i` has the type of `outs` operand
    `i`. Dimensions may be dynamic; every check below that needs a static size
    is made when both sizes are known. Static sizes are positive, and no
    operand holds more than 2^48 bytes (256 TiB, more than any machine
    addresses), so that no size computed from them overflows.

    Attributes:
    - `scale` (f32, positive): multiplies `Q K^T`; default `1 / sqrt(D)`
      (required when `D` is dynamic).
    - `causal`: key `k` is visible from query `i` only if `k <= i + Sk - Sq`
      (bottom-right aligned, as FlashAttention-2, so the last query sees every
      key when `Sq != Sk`).
    - `window = array<i64: left, right>`: sliding window, both non-negative;
      key `k` is visible from query `i` only if
      `i + Sk - Sq - left <= k <= i + Sk - Sq + right`. With `causal` as well
      the right edge is the causal one. A side of 2^62 or more (e.g.
      INT64_MAX) is unbounded.
    - `softcap` (f32, positive): `softcap(x) = softcap * tanh(x / softcap)`,
      applied to the scaled score before `score` and the mask.
    - `tiles`: a pinned `#attn.fa2<...>` tiling; without it schedule selection
      chooses one.
    - `partition`: a pinned `#attn.split_kv<...>`, `#attn.lean<...>` or
      `#attn.attention2d<...>` work partition.
    - `kernel`: a pinned `#attn.kernel<...>`, the GPU kernel's matrix unit,
      copies, warp roles, loop form and epilogue; without it
      `attn-select-schedule` (with an `#attn.target`) or `attn-to-nvgpu`
      chooses them (docs/gpu-kernel.md).

    Optional `mask` operand of shape `[B or 1, Hq or 1, Sq, Sk]` (size-1
    batch and head dimensions broadcast): element type `i1` is a boolean mask
    (`true` keeps the score), a float element type (f16, bf16, f32) is added to
    the score.

    Optional `block_mask(%bm : tensor<[B or 1] x [Hq or 1] x Nq x Nk x i8>
    blocks [Bq, Bk])`: a block-sparse mask (FlashAttention's block-sparse
    attention, FlexAttention's BlockMask). Queries are cut into blocks of
    `Bq` rows and keys into blocks of `Bk` keys (`Nq = ceil(Sq / Bq)`,
    `Nk = ceil(Sk / Bk)`; the last blocks may be shorter); size-1 batch and
    head dimensions broadcast. The element for (b, h, query block x, key
    block y) says what that block of scores is:
    - `0`, empty: every score of the block is hidden. Lowerings skip the
      block: none of its scores is computed (the GPU kernel still copies
      its K and V tiles, to keep its pipeline's order; docs/gpu-kernel.md).
    - `2`, full: the `mask` operand is not applied in the block (as if it
      kept every score and added 0); lowerings do not read it there.
    - `1` (and any other value), partial: nothing changes.
    Causal, window, softcap and the score region apply in every non-empty
    block as usual. Tilings nest in the mask's blocks: `Bq` is a multiple of
    the tiles' `block_m` and `Bk` of their `block_n` (schedule selection
    picks such tiles; a pinned tiling that does not is an error), so each
    tile reads one element; split-KV, Lean and the GPU take `#attn.fa2`
    tiles, whose sides are multiples of 16, so their blocks must be
    too. Both sizes are
    from 1 to 2^31 - 1. A framed attention cannot carry one.

    Optional `key_lengths(%lengths : tensor<B x i32>)`: per-sequence key
    counts, FlashAttention's `cache_seqlens`. Sequence `b` attends to its
    first `lengths[b]` keys only, and its causal and window masks are aligned
    by them (the diagonal of row `i` is key `i + lengths[b] - Sq`), as if its
    K and V ended there: a batch of KV caches of different fill levels in
    tensors of one capacity `Sk`, so that one compiled decode step serves
    every cache length. Each length must be in `[0, Sk]`; lowerings clamp it
    to that range, so that no key past `Sk` is read. A sequence of length 0
    gives `O = 0` and `LSE = -inf`. A framed attention, and `#attn.lean`
    (whose work assignment counts every sequence's keys when it is built),
    cannot carry it.

    Optional `score` region: one block with arguments
    `(%score: f32, %b: index, %h: index, %q: index, %k: index)` that yields the
    new f32 score with `attn.yield`; enough for ALiBi, relative position bias
    and custom masks (yield `-inf` to mask a score). It must be side-effect
    free: lowerings may evaluate it in any order, any number of times.

    Optional `frame(%q0, %k0 of %sq, %sk)` (four `index` values): the op
    computes a part of a larger attention of `%sq` queries and `%sk` keys,
    rows `%q0 .. %q0 + Sq - 1` of it against keys `%k0 .. %k0 + Sk - 1`.
    Query row `i` and key `k` of the operands are at positions `%q0 + i` and
    `%k0 + k` of that attention: the causal and window masks are those of
    the larger attention (aligned by `%sq` and `%sk`), the score region sees
    those positions, and keys at positions `%sk` and beyond are hidden (so
    padding at the end of the keys is masked). Rows at positions `%sq` and
    beyond are computed like any other; their values are unspecified. The
    distribution layer gives every rank its part of an attention this way.
    The part's O and LSE are those of its rows over its keys only: the
    `attn.merge` of the parts over all keys gives the larger attention.

    A query row with no visible key produces `O = 0` and `LSE = -inf`.

    Example: Llama-style grouped-query prefill, 32 query heads over 8
    key/value heads, causal, with the log-sum-exp kept for the backward pass.

    ```mlir
    %o, %lse = attn.attention
        ins(%q, %k, %v : tensor<1x32x2048x128xbf16>, tensor<1x8x2048x128xbf16>,
                         tensor<1x8x2048x128xbf16>)
        outs(%o_init, %lse_init : tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>)
        {causal} -> tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>
    ```

    ALiBi through the score region:

    ```mlir
    %o = attn.attention ins(%q, %k, %v : tensor<2x8x128x64xf16>,
                            tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>)
        outs(%init : tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
        score {
        ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
          %d = arith.subi %j, %i : index
          %di = arith.index_cast %d : index to i64
          %df = arith.sitofp %di : i64 to f32
          %slope = arith.constant 0.0625 : f32
          %bias = arith.mulf %df, %slope : f32
          %r = arith.addf %s, %bias : f32
          attn.yield %r : f32
        }
    ```
  }];

  let builders = [
    // Results take the types of the destinations; `mask` and `initLse` may be
    // null.
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value, "::mlir::Value":$mask,
                   "::mlir::Value":$initOut, "::mlir::Value":$initLse)>
  ];

}

//===----------------------------------------------------------------------===//
// attn.partial_attention
//===----------------------------------------------------------------------===//

def Attn_PartialAttentionOp : Attn_AttentionLikeOp<"partial_attention"> {
  let summary = "The partial attention states of a schedule that splits the key/value range";
  let description = [{
    The schedule IR of split-KV and Lean attention: `attn-partition-kv`
    rewrites an `attn.attention` with such a `partition` into this op, which
    computes the partials, followed by the `attn.merge` that combines them.

    The op has the operands, attributes and score region of
    `attn.attention`, with the same meaning, and requires `tiles` and
    `partition` (`#attn.split_kv` or `#attn.lean`): they define the work
    assignment. The queries are cut into output tiles of `block_m` rows of
    one batch and head; the key/value blocks of `block_n` keys an output
    tile must visit (those not fully hidden from all its rows by the causal
    and window masks) are cut into pieces 0 .. S-1:

    - `#attn.split_kv<splits = S>`: S equal runs of ceil(n / S) blocks, the
      last ones shorter or empty.
    - `#attn.lean<ctas = G>`: the visible blocks of every output tile, tiles
      in (batch, head, query block) order, form one sequence of LeanTiles
      divided evenly over G CTAs (t = ceil(T / G) each for the first
      T - (t - 1) G CTAs, t - 1 for the others); piece s of a tile is the
      part of it that the s-th CTA meeting the tile computes. Piece 0 is the
      host's (the CTA computing the tile's first block). S must be at least
      the most CTAs any tile meets, which `attn-partition-kv` computes; the
      verifier checks S <= G only, and `attn-decompose` refuses fewer slots
      than the schedule's pieces (static sizes).

    `outs` are the partials: O `[S, B, Hq, Sq, Dv]` and LSE `[S, B, Hq, Sq]`,
    both f32. Slot s of every row holds the attention of that row over the
    keys of piece s only, normalised by its own row sum, and its natural
    log-sum-exp; an empty piece (or a row that sees none of its keys) gives
    O = 0 and LSE = -inf. `attn.merge` over dimension 0, in slot order, gives
    the result of the `attn.attention` the op came from.

    ```mlir
    %po, %pl = attn.partial_attention
        ins(%q, %k, %v : tensor<1x32x1x128xbf16>, tensor<1x8x4096x128xbf16>,
                         tensor<1x8x4096x128xbf16>)
        outs(%wo, %wl : tensor<4x1x32x1x128xf32>, tensor<4x1x32x1xf32>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>,
         partition = #attn.split_kv<splits = 4>}
        -> tensor<4x1x32x1x128xf32>, tensor<4x1x32x1xf32>
    %o, %lse = attn.merge ins(%po, %pl : tensor<4x1x32x1x128xf32>, tensor<4x1x32x1xf32>)
        outs(%o_init, %lse_init : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>)
        dim = 0 -> tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// attn.attention_grad
//===----------------------------------------------------------------------===//

def Attn_AttentionGradOp : Attn_Op<"attention_grad", [
    AttrSizedOperandSegments,
    RecursiveMemoryEffects,
    DestinationStyleOpInterface]> {
  let summary = "The gradient of attn.attention: dQ, dK and dV from O, LSE and dO";
  let description = [{
    The backward pass of `attn.attention`: given the forward's inputs Q, K,
    V, its output O and log-sum-exp LSE, and the gradient dO of a loss with
    respect to O, computes the gradients of the loss with respect to Q, K and
    V:

    ```
    P[i, k]  = exp(s[k] - LSE[i])                (s as in attn.attention)
    dV[k, e] = sum over query heads of the group, sum_i P[i, k] dO[i, e]
    dP[i, k] = sum_e dO[i, e] V[k, e]
    Dsum[i]  = sum_e dO[i, e] O[i, e]            (= sum_k P[i, k] dP[i, k])
    dS[i, k] = P[i, k] (dP[i, k] - Dsum[i])
    dC[i, k] = dS[i, k] * d score_mod(c)/dc * d softcap(x)/dx,
               at x = scale * sum_d Q K and c = softcap(x)
    dQ[i, d] = scale * sum_k dC[i, k] K[k, d]
    dK[k, d] = scale * sum over the group's query heads, sum_i dC[i, k] Q[i, d]
    ```

    The operands and attributes mean what they mean on the `attn.attention`
    whose gradient is taken: Q, K, V, the `mask`, `block_mask` and
    `key_lengths` operands, `scale`, `causal`, `window` and `softcap`. O and
    LSE are that attention's results (LSE in f32, natural log); dO has O's
    shape. dQ, dK and dV have the shapes of Q, K and V, each in f16, bf16
    or f32; they are accumulated in f32 and rounded once.

    Rows that see no key (LSE = -inf) contribute nothing; keys past a
    sequence's key length get dK = dV = 0. A boolean mask and the block mask
    have no gradient. With grouped-query heads, dK and dV of a key/value head
    sum over the query heads that read it.

    Attributes for the schedule (target-independent, like the forward's):
    - `tiles`: a pinned `#attn.fa2<...>` tiling: `block_n` keys per key/value
      block, the unit a program owns (its dK and dV), and `block_m` query
      rows per step of the program's loop over the query blocks that see the
      block (FlashAttention-2's Algorithm 2). `packed_heads` must be 1.
      Without it the backward's default tiling applies.
    - `partition = #attn.split_kv<splits = S>`: the key/value blocks of
      every (batch, key/value head) are cut into S pieces of ceil(n / S)
      blocks (as split-KV cuts them); one program per piece owns dK and dV
      of its blocks and adds its dQ terms into its own f32 copy of dQ; the S
      copies are summed in piece order at the end, so the result does not
      depend on the order programs run in. Without it, S = 1.
    - `deterministic`: the result must be the same bytes run to run
      (FlashAttention's `deterministic=True`): a target may not accumulate
      dQ with atomics in an order that varies. The target-independent
      lowering always is.
    - `kernel`: the GPU backward kernel's plan (`#attn.kernel`): its
      `unit`, and with `kv = tensor` (and `q = tensor`) all its tiles by
      tensor copies; every warp computes (`roles = none`), the loop is
      sequential and dQ, dK and dV leave by lanes. `attn-select-schedule`
      writes it under an `#attn.target`; `attn-to-nvgpu` builds it or
      refuses it with the reason.

    A score region is differentiated with respect to the score
    (`attn-decompose-grad` builds its derivative from the body's arith and
    math ops; a region that reads the score in an op without a derivative
    rule is refused, naming the op).

    With an additive mask, an optional fourth destination dMask, of the
    mask's shape (f16, bf16 or f32), receives the mask's gradient:
    `dMask[b, h, i, k] = dS[i, k]`, summed over the batches and heads that
    share a broadcast (size-1) dimension of the mask; 0 where the score is
    hidden, and in the full blocks of a block mask (the mask is not applied
    there). Without it the mask is used and gets no gradient.

    ```mlir
    %dq, %dk, %dv = attn.attention_grad
        ins(%q, %k, %v : tensor<2x8x512x64xbf16>, tensor<2x2x512x64xbf16>,
                         tensor<2x2x512x64xbf16>)
        out(%o, %lse : tensor<2x8x512x64xbf16>, tensor<2x8x512xf32>)
        grad(%do : tensor<2x8x512x64xbf16>)
        outs(%dq0, %dk0, %dv0 : tensor<2x8x512x64xbf16>,
             tensor<2x2x512x64xbf16>, tensor<2x2x512x64xbf16>)
        {causal} -> tensor<2x8x512x64xbf16>, tensor<2x2x512x64xbf16>,
                    tensor<2x2x512x64xbf16>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$query,
    AnyRankedTensor:$key,
    AnyRankedTensor:$value,
    AnyRankedTensor:$out,
    AnyRankedTensor:$lse,
    AnyRankedTensor:$grad_out,
    Optional<AnyRankedTensor>:$mask,
    Optional<AnyRankedTensor>:$block_mask,
    Optional<TensorOf<[I32]>>:$key_lengths,
    Variadic<AnyRankedTensor>:$outputs,
    OptionalAttr<F32Attr>:$scale,
    UnitAttr:$causal,
    OptionalAttr<DenseI64ArrayAttr>:$window,
    OptionalAttr<F32Attr>:$softcap,
    OptionalAttr<DenseI64ArrayAttr>:$block_mask_size,
    OptionalAttr<Attn_Fa2TilesAttr>:$tiles,
    OptionalAttr<Attn_PartitionAttr>:$partition,
    UnitAttr:$deterministic,
    OptionalAttr<Attn_KernelAttr>:$kernel
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region AnyRegion:$score);

  let assemblyFormat = [{
    `ins` `(` $query `,` $key `,` $value `:` type($query) `,` type($key) `,` type($value) `)`
    `out` `(` $out `,` $lse `:` type($out) `,` type($lse) `)`
    `grad` `(` $grad_out `:` type($grad_out) `)`
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`block_mask` `(` $block_mask^ `:` type($block_mask) `blocks`
     $block_mask_size `)`)?
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)`
    attr-dict `->` type($results)
    (`score` $score^)?
  }];

  let extraClassDeclaration = [{
    /// The destinations (`outs`): dQ, dK, dV, then optionally dMask.
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutputsMutable();
    }
    ::mlir::Value getGradQuery() { return getResults()[0]; }
    ::mlir::Value getGradKey() { return getResults()[1]; }
    ::mlir::Value getGradValue() { return getResults()[2]; }
    /// The additive mask's gradient and its destination, or null.
    ::mlir::Value getGradMask() {
      return getResults().size() > 3 ? getResults()[3] : ::mlir::Value();
    }
    ::mlir::Value getInitGradMask() {
      return getOutputs().size() > 3 ? getOutputs()[3] : ::mlir::Value();
    }

    /// As on attn.attention.
    float getEffectiveScale();
    std::optional<std::pair<int64_t, int64_t>> getWindowSizes();
    bool hasScoreModifier() { return !getScore().empty(); }
    bool hasKeyLengths() { return static_cast<bool>(getKeyLengths()); }
    /// A gradient is never taken of a part of a larger attention.
    bool hasFrame() { return false; }
    std::optional<std::pair<int64_t, int64_t>> getBlockMaskBlock() {
      std::optional<ArrayRef<int64_t>> size = getBlockMaskSize();
      if (!size || size->size() != 2)
        return std::nullopt;
      return std::make_pair((*size)[0], (*size)[1]);
    }
  }];

  let builders = [
    // The gradient of `forward` (its inputs, masks, attributes and score
    // region; not its schedule), given its results `out` and `lse`, into the
    // destinations `inits` (dQ, dK, dV). `forward` must not have a frame.
    OpBuilder<(ins "AttentionOp":$forward, "::mlir::Value":$out,
                   "::mlir::Value":$lse, "::mlir::Value":$gradOut,
                   "::mlir::ValueRange":$inits)>
  ];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.yield
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["AttentionOp", "PartialAttentionOp", "AttentionGradOp"]>]> {
  let summary = "Yields the modified score from an attention's score region";
  let description = [{
    Terminates the `score` region of `attn.attention` (or
    `attn.partial_attention`, `attn.attention_grad`) with the new f32 score.

    ```mlir
    attn.yield %new_score : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// attn.merge
//===----------------------------------------------------------------------===//

def Attn_MergeOp : Attn_Op<"merge", [
    Pure,
    DestinationStyleOpInterface]> {
  let summary = "Log-sum-exp merge of partial attention states along a split dimension";
  let description = [{
    Combines `N` partial attention results, each normalised by its own row sum
    and stacked along dimension `dim` of the partials, into one result:

    ```
    M   = max_s LSE_s                   (0 when every LSE_s is -inf)
    LSE = M + ln sum_s exp(LSE_s - M)
    O   = sum_s exp(LSE_s - LSE) * O_s  (0 when LSE is -inf)
    ```

    It is associative and commutative: split-KV, Lean attention and
    ATTENTION2D all recombine their partials with it. An empty partial has
    `LSE_s = -inf` and contributes nothing; a row whose partials are all empty
    gives `O = 0` and `LSE = -inf`, never NaN.

    Shapes: `partial_out` has rank `r + 1` and `partial_lse` rank `r`; they
    agree on their first `r` dimensions, and `dim < r` is the split dimension.
    `out` is `partial_out` without dimension `dim`, the optional `lse` is
    `partial_lse` without it. Partials and LSE are f32; `out` is f16, bf16 or
    f32 (rounded once, after the merge).

    A merge of a single partial is the identity (producers write `O_s = 0` in
    rows where `LSE_s = -inf`) and folds away when `out` is f32.

    ```mlir
    %o, %lse = attn.merge
        ins(%po, %pl : tensor<8x1x32x1x128xf32>, tensor<8x1x32x1xf32>)
        outs(%o_init, %lse_init : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>)
        dim = 0 -> tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>
    ```
  }];

  let arguments = (ins
    AnyRankedTensor:$partial_out,
    AnyRankedTensor:$partial_lse,
    Variadic<AnyRankedTensor>:$outputs,
    I64Attr:$dim
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);

  let assemblyFormat = [{
    `ins` `(` $partial_out `,` $partial_lse `:` type($partial_out) `,` type($partial_lse) `)`
    `outs` `(` $outputs `:` type($outputs) `)`
    `dim` `=` $dim attr-dict `->` type($results)
  }];

  let extraClassDeclaration = [{
    /// The destinations (`outs`): O, then LSE when present.
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getOutputsMutable();
    }
    ::mlir::Value getInitOut() { return getOutputs()[0]; }
    /// The LSE destination, or null.
    ::mlir::Value getInitLse() {
      return getOutputs().size() > 1 ? getOutputs()[1] : ::mlir::Value();
    }
    ::mlir::Value getOut() { return getResults()[0]; }
    /// The LSE result, or null.
    ::mlir::Value getLse() {
      return getResults().size() > 1 ? getResults()[1] : ::mlir::Value();
    }
  }];

  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
