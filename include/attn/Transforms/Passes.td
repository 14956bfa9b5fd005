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
    FlashAttention-2 tiling (the pinned `tiles` attribute, else the tiles and
    GQA packing `attn-select-schedule` picks for the module's `attn.target`,
    else FlashAttention-2's default for the head dimension), how many
    query-block x key-block tiles the tiled loops visit after masked-block
    skipping and how many of those need an element mask, and the pinned work
    partition; without one, and with unpinned tiles on a target, the split-KV
    partition and tiles `attn-to-ptx` adds by default (`chooseKvPartition`,
    the rule `attn-select-schedule` applies). The IR is not changed. An op with dynamic sizes gets a remark saying the plan is decided
    at run time.

    Every `attn.attention_grad` gets the backward's plan: the problem, its
    nominal FLOPs (2.5 times the forward's), the tiles `attn-decompose-grad`
    uses, the key/value blocks per (batch, key/value head) and the pieces
    their programs are cut into, the (key/value block, query block) tiles
    visited per query head after masked-block skipping (MaskGeometry's
    transposed range) and how many need an element mask, and the f32 copies
    of dQ.

    With `svg-dir=DIR`, it also draws each attention's schedule as an SVG
    picture, `DIR/<function>-<n>.svg` for the n-th attention of a function
    (`lib/Analysis/SchedulePicture.cpp`, from the same models as the
    lowering): FlashAttention-2's CTAs and the key/value blocks each visits
    after masked-block skipping; split-KV's splits; Lean attention's CTAs
    across output tiles with each tile's host; the ranks of ATTENTION2D and
    ring attention over the score matrix. A gradient's picture,
    `DIR/<function>-grad-<n>.svg`, shows the key/value blocks by the query
    blocks each visits, coloured by the piece that owns them. A file that
    cannot be written is an error.

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
  let options = [
    Option<"svgDir", "svg-dir", "std::string", /*default=*/"\"\"",
           "Also write each attention's schedule as an SVG picture into this "
           "directory">
  ];
}

def AttnRaiseAttention : Pass<"attn-raise-attention"> {
  let summary = "Rewrite attention written as linalg ops (matmul, softmax, matmul) into attn.attention";
  let description = [{
    Finds `O = softmax(scale * Q K^T [+ mask]) V` written as linalg ops on
    tensors, as front ends emit it, and rewrites it into one
    `attn.attention` when, and only when, it computes exactly that:

    - the two products: any linalg op the contraction interface accepts
      (`linalg.matmul`, `linalg.batch_matmul`, `linalg.generic`, ...) with
      loops (batch..., m, n, k), starting from a zero fill; K may be read as
      `[.., Sk, D]` (a product with B transposed) or `[.., D, Sk]`, V as
      `[.., Sk, Dv]` or `[.., Dv, Sk]` (a transpose is inserted);
    - the softmax over the last dimension: `linalg.softmax`, or its
      decomposition `e = exp(x - rowmax(x))`, `e / rowsum(e)` (or `e` times
      the element-wise `1 / rowsum(e)`), or `exp(x - lse)` with
      `lse = rowmax(x) + log(rowsum(e))`, with the row maximum
      (`maximumf` or `maxnumf`) and sum as `linalg.generic` or
      `linalg.reduce` reductions starting from -inf (or the lowest finite
      value of the scores' type: f16's -65504) and 0 (or -0), possibly
      given a trailing unit dimension afterwards or copied back to the full
      shape, and reading the same values the exponential does; a reduction
      generic may compute other results nothing uses (torch-mlir's maximum
      also computes an argmax);
    - an optional scale: a multiplication or division of the scores by a
      positive constant, or of Q, K^T or both before the product (the scale
      is the product of the factors; none means a scale of 1, never
      1/sqrt(D)); terms that are 0 whatever the inputs (0 times a constant
      or a constant fill, torch-mlir's baddbmm with beta = 0) are dropped;
    - an optional mask: a float tensor added to the (scaled) scores, or a
      `select(c, x, -inf)` (`select(c, -inf, x)`) of them, which becomes the
      boolean mask `c` (`not c`); it is read through its trailing dimensions
      (it broadcasts over the leading ones; one broadcast over the queries,
      a key-padding mask `[B, 1, 1, Sk]` or `[Sk]`, is given to the op
      broadcast to `[.., Sq, Sk]`). A mask computed in the body of
      the op that adds or selects it (linalg-fuse-elementwise-ops fuses an
      index-built causal mask there) is computed again by a `linalg.generic`
      of its own over the loops it depends on (`[Sq, Sk]` for a causal
      mask); a mask computed from the scores is refused;
    - a log-sum-exp the front end also computes from the decomposed
      softmax's statistics (an element-wise f32 `log(rowsum) + rowmax`,
      FlashAttention's softmax_lse): it becomes the op's LSE result,
      reshaped to the front end's view of the rows. The op is built at
      the product P V; the LSE's users that come before it and do not
      feed it (a reshape for a second result) move after it, and those
      that feed it (the softmax's) keep the front end's value;
    - f32 extensions and truncations around any step (the attention
      computes in f32 whatever the front end rounded to);
    - the shapes front ends leave around these: unit dimensions indexed
      with a constant 0, row statistics kept as `[.., 1]`, same-type
      `tensor.cast` ops and whole-tensor `tensor.extract_slice` ops between
      any two steps, and `tensor.collapse_shape`/`expand_shape` anywhere
      (the mask of products whose heads are folded into the batch must be
      one `[Sq, Sk]` matrix);
    - grouped-query heads repeated the way Llama's `repeat_kv` does (a
      group dimension after the key/value heads, broadcast by
      `linalg.broadcast`, a copying `linalg.generic` or an addition of a
      full-size zero constant (TOSA), possibly after an `expand_shape` that
      inserts it, then folded into the heads by `collapse_shape`), the same
      for K and V: the attention reads the
      key/value heads in place (head h reads key/value head h / G, as
      `repeat_kv` does). A repeat that puts the group in front of the heads
      (head h holding h mod Hkv) is left as it is.

    TOSA attention is raised after MLIR's `tosa-to-linalg` lowering
    (`tosa-to-linalg-named`, `tosa-to-linalg`, `tosa-to-arith`,
    `tosa-to-tensor`), whose output is of these forms.

    Element-wise steps may be separate `linalg.generic` ops or fused into
    one: element-wise ops are read as expression trees through each other.
    A read is kept as the tensor (seen through reshapes) and the row-major
    index of the element read, as a function of the loops
    (`ElementIndex`), so reads of the same elements through different views
    compare equal: reductions and products may run on other views of the
    same loops (unit loops added, heads folded into the batch, or split
    into key/value heads and groups by reshape propagation; a product may
    read K broadcast over the group).
    `linalg.transpose`, `linalg.broadcast` and `linalg.map` are read
    through at the element their maps give. The second product may also be
    written as `V^T P^T` (StableHLO's `dot_general %v, %p`, whose result is
    O^T): each product is read as written and with its operands swapped,
    and the raised O is laid out as the product's result. A product whose
    loops are in another order than (batch..., m, n, k) (StableHLO's
    `dot_general` lowering) is read in the order P is read in, or the
    scores (through a transpose); its right operand may skip the group loop
    of (B, Hkv, G), read as grouped-query K or V (JAX's grouped Q against
    unrepeated K and V).
    Rank-2 and rank-3 operands become rank 4 with unit dimensions in front
    (and the result is collapsed back). Anything else (a softmax over
    another axis, no normalisation, the exponential of something else, a
    maximum or sum of other values, a mask added after the scale is applied
    to it, a non-constant scale, P read with the keys as rows) is left
    untouched; with `remarks`, each product with an operand computed from
    an exponential (or by a `linalg.softmax`) that is not raised gets a
    remark with the reason and
    the op (and line) the match stopped at, and each raised one says so. Ops
    that only fed a raised attention are erased. docs/raising-forms.md
    lists the forms real front ends emit, with their sources.

    ```mlir
    %s = linalg.batch_matmul_transpose_b ins(%q, %k : ...) outs(%zero : ...)
    %x = linalg.generic {mul by 0.125} ins(%s) ...
    %p = linalg.softmax dimension(2) ins(%x : ...) outs(%init : ...)
    %o = linalg.batch_matmul ins(%p, %v : ...) outs(%zero2 : ...)
    ```

    becomes an `attn.attention {scale = 0.125}` of `[1, B, S, D]` views.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Say, as remarks, what was raised and why a softmax-fed product "
           "was not">
  ];
  let dependentDialects = [
    "::mlir::attn::AttnDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnAttachTarget : Pass<"attn-attach-target", "ModuleOp"> {
  let summary = "Give a module without an #attn.target the limits of its chip's reference device";
  let description = [{
    Schedules are chosen for the module's `#attn.target`. A module compiled
    for a chip without one (`attn-to-ptx{chip=...}` and `attn-compile
    --chip=...` run this pass first) gets the target of one GPU of that
    chip, its reference device (`lib/Analysis/ReferenceDevices.cpp`):
    sm_80, A100 SXM (108 SMs, 163 KiB of shared memory per block); sm_86,
    A10 (72, 99 KiB); sm_87, Jetson AGX Orin (16, 163 KiB); sm_89, L40S
    (142, 99 KiB); sm_90 and sm_90a, H100 SXM (132, 227 KiB); sm_100, B200
    (148, 227 KiB); sm_120, RTX 5090 (170, 99 KiB); each with 65536
    registers per SM and 255 per thread. The target keeps the chip's own
    name, so `chip=sm_90a` gives the wgmma kernels that sm_90a allows, and
    the tiles fit the chip's shared memory (99 KiB on sm_86, where sm_80's
    163 KiB tiles would not launch).

    A module that has an `#attn.target` keeps it: the target describes the
    GPU more precisely than the chip (an H100 PCIe has 114 SMs). A chip
    without a reference device is an error that names the table; give such
    a module its own target.

    Example: `attn-attach-target{chip=sm_90a}` on a module without a target
    attaches `#attn.target<chip = "sm_90a", sms = 132, smem_per_block =
    232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread =
    255>`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_80\"",
           "The chip whose reference device's limits a module without an "
           "#attn.target gets">
  ];
}

def AttnSelectSchedule : Pass<"attn-select-schedule", "ModuleOp"> {
  let summary = "Choose each attention's FlashAttention-2 tiles (and split-KV) for the target";
  let description = [{
    For every `attn.attention` under a module carrying an `#attn.target` (the
    nearest enclosing op that has one), attaches
    `tiles = #attn.fa2<block_m, block_n, warps, stages>`: the first of
    FlashAttention-2's tilings for the wider of D and Dv (the table in
    `lib/Analysis/Fa2Defaults.cpp`: D <= 64: 128 x 128, then 128 x 64 and
    64 x 64, 4 warps; D <= 128: 128 x 64 with 4 warps, then 128 x 128 with 8,
    then 128 x 32 and 64 x 64 with 4; D <= 256: 128 x 64 with 8 warps, then
    64 x 64 with 4), each tried with two stages and then with one, that fits
    the target (`lib/Analysis/Fa2Resources.cpp`):

    - shared memory per block: the Q block plus `stages` K and V tiles, in
      the operands' element size (2 bytes for f16 and bf16; f32 operands
      count 4 bytes, what a kernel that keeps them in f32 needs, and so never
      too little for one that converts them to 16 bits);
    - registers per thread: the thread's share of the f32 accumulators of O
      (block_m x Dv) and S (block_m x block_n) plus 64 (P, row state,
      addresses; calibrated on ptxas so that the kernel does not spill), at
      most `regs_per_thread` and at most `regs_per_sm` over the CTA's threads;
    - one CTA on an SM: its shared memory plus the 1 KiB the hardware
      reserves per CTA within `smem_per_sm`.

    On sm_80 (163 KiB per block) this gives 128 x 64 with 4 warps for
    D = 64, 128 x 128 with 8 warps for D = 128, and 128 x 64 with 8 warps
    for D = 256 (one stage, the table's: with two, ptxas spilled).

    On a chip with warpgroup MMA (sm_90a) the kernels' products are `wgmma`,
    and whole-warpgroup tilings are tried first (`warpgroupCandidates`):
    128 x 128 with 8 warps up to D = 128, 64 x 64 with 4 warps beyond (one
    stage; measured fastest on an H100, docs/performance.md), then 64-row
    fallbacks, then FlashAttention-2's table. `matrix-unit=mma-sync` (the
    kernels' products on `mma.sync`, as attn-to-nvgpu's option of that
    name) takes FlashAttention-2's table alone, as on sm_80.

    With a block mask of `Bq` x `Bk` blocks, each tiling is first cut down
    to nest in them (each tile reads one element of the block mask):
    block_m and block_n become the largest multiples of 16 at most their
    own that divide `Bq` and `Bk`, warps are halved until each owns whole
    16-row slices, and a cut that leaves a warp more rows than the table's
    tiling gave it (outside the register model's calibration) is skipped;
    then smaller nested sides follow (`fa2Tilings`). 32 x 32 blocks at
    D = 64 give 32 x 32 with 2 warps, 48 x 80 blocks 16 x 80 with 1. Blocks
    whose sides are not multiples of 16 are an error (no `#attn.fa2` tiling
    nests in them; the CPU's decomposition takes them).

    GQA packing (`packed_heads` = Hq / Hkv, FlashAttention-3's rule): when
    the real rows fill less than 90% of what they fill packed, that is
    Sq / (ceil(Sq / block_m) block_m) < 0.9 x g Sq / (ceil(g Sq / block_m)
    block_m) with g = Hq / Hkv, the tiles pack the g query heads of each
    key/value head into one block's rows: decode and short speculative
    steps, not prefill. Never with a mask operand, a block mask or a
    run-time Sq.

    With `split-kv`, an op with neither a `partition` nor pinned `tiles`
    (pinned tiles pin FlashAttention-2's grid) also gets
    `partition = #attn.split_kv<splits = S>` and split-KV's tiles (64-row
    blocks with 4 warps, 64 keys up to D = 128 and 32 beyond) when
    FlashAttention-2's rule
    (flash-decoding) gives S > 1: with `n` = B x Hq / p x ceil(p Sq / block_m)
    CTAs (p the packed heads)
    and 2 x SMs slots (two CTAs per SM, FlashAttention-2's assumption), S = 1
    when n >= 0.8 x 2 x SMs; otherwise the smallest S whose wave efficiency
    w / ceil(w), w = n x S / (2 x SMs), is at least 85% of the best, for S up
    to 128, 2 x SMs and the most key/value blocks a query block visits,
    skipping an S that would leave its last split empty. Split-KV is correct
    with every feature of the op (masks, windows, score regions).

    Lengths taken at run time (a `?` batch, Sq or Sk) need one choice for
    every length the kernel will run with. Packing needs only Sq. A
    run-time Sq gets no partition (decode or prefill: the grid over query
    blocks is unknown). Otherwise a run-time batch counts as 1, the batch
    that needs splitting most, and a run-time Sk bounds S by 128 and the
    slots only, as for a long cache: a decode kernel for every cache length
    is split, and a piece past a call's blocks is empty (it writes
    LSE = -inf, which the merge weighs zero). Split-KV's S is then fixed for
    every call: a larger run-time batch is over-split. Lean's G is fixed too,
    but its LeanTiles and each CTA's range are counted at launch from the
    lengths, so any batch and cache length are spread evenly.

    Under a module with an `#attn.cluster` of more than one rank, an op
    without a partition first gets the distribution the cost model of
    `lib/Analysis/DistributionCost.cpp` predicts to communicate fastest:
    ring attention or ATTENTION2D on one of the `R x C = ranks` grids
    (non-square ones included), zig-zag when causal. Each collective costs
    `(members - 1)` messages of one piece over the slowest link its group
    crosses (ranks in nodes of `ranks_per_node`, row-major: grid rows are
    consecutive ranks, columns `C` apart), the bytes being those the
    lowering moves. An op that cannot be distributed (a mask operand,
    dynamic sizes) gets a warning and stays whole on every rank.

    With the tiles and partition chosen, an op that becomes a GPU kernel
    (f16 or bf16 operands, no frame, no distributed partition) gets its
    kernel plan: `kernel = #attn.kernel<...>` (lib/Analysis/KernelPlan.cpp),
    the matrix unit, how K, V and Q arrive (cp.async or tensor copies), the
    warp roles and their setmaxnreg registers, the loop form (sequential,
    overlapped, ping-pong), O's stores and the CTAs an SM ptxas is held to
    (Lean); with the stages the tiles keep in the target's shared memory. A
    score region or constant mask that attn-derive-block-mask will turn into
    a block mask gets the sequential loop. An `attn.attention_grad` under a
    target gets its backward kernel's plan (the unit, and whether its tiles
    come by tensor copies). attn-to-nvgpu builds what the plan says; the
    printed IR is a contract a user can edit and pin.

    Pinned tiles are kept, but checked against the same limits: tiles that
    cannot fit are an error that states what they need and what the target
    allows, and so is an op for which no tiling fits. A pinned `kernel` is
    kept and checked (an error names the field that cannot be built and
    why: a unit the chip lacks, a ping-pong without two consumer
    warpgroups, registers setmaxnreg cannot move, stages beyond shared
    memory). A pinned partition is
    kept as it is. Attentions without a target are left alone (the lowerings
    then use FlashAttention-2's default), or are an error with
    `require-target`. Nothing else is emitted, and running the pass twice
    changes nothing.

    Both options are off when the pass runs alone; `attn-to-ptx` and
    `attn-compile` run it with `split-kv` (`split-kv=false` and
    `--split-kv=false` turn it off; `lean=true` and `--lean` ask for Lean
    instead). The crossovers against FlashAttention-2's grid are not
    measured on a GPU yet.

    The same decode for any batch and cache length,
    `tensor<?x32x1x128xbf16>` against `tensor<?x8x?x128xbf16>`, gets
    `packed_heads = 4` and, with `split-kv`, `#attn.split_kv<splits = 29>`
    (8 packed tiles for B = 1; S = 29 fills 232 of 264 slots, 88%, within
    85% of S = 33's 100%), with `lean` `#attn.lean<ctas = 264>`.

    Example, a decoding step with grouped-query heads on
    `#attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, ...>`,
    with `split-kv`:

    ```mlir
    %r = attn.attention ins(%q, %k, %v : tensor<1x32x1x128xbf16>,
        tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        outs(%o : tensor<1x32x1x128xbf16>) -> tensor<1x32x1x128xbf16>
    ```

    gets `{partition = #attn.split_kv<splits = 32>, tiles =
    #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2,
    packed_heads = 4>}`: GQA packing leaves 8 CTAs (one per key/value head)
    for 264 slots and 128 key/value blocks; S = 32 fills 256 of 264 slots
    (97%).

    With `lean` the same attention gets `#attn.lean<ctas = 264>` over the
    same split-KV tiles (a Lean kernel, too, starts its loops at run-time
    blocks; so does a pinned `#attn.lean`): 80 KiB of shared memory, two
    CTAs per SM, and its 8 x 128 = 1024 LeanTiles exceed 4 per SM, so every
    resident slot is used. `split-kv` and `lean` exclude each other. Neither is the
    default yet: their crossovers against FlashAttention-2's grid are not
    measured.
  }];
  let options = [
    Option<"splitKv", "split-kv", "bool", /*default=*/"false",
           "Also attach #attn.split_kv<splits = S> where FlashAttention-2's "
           "rule splits the key/value range">,
    Option<"lean", "lean", "bool", /*default=*/"false",
           "Attach #attn.lean<ctas = G> instead where FlashAttention-2's rule "
           "would split: G persistent CTAs, as many as the target holds at "
           "once (about two LeanTiles each when there are few)">,
    Option<"requireTarget", "require-target", "bool", /*default=*/"false",
           "Fail on an attention with no attn.target around it">,
    Option<"matrixUnit", "matrix-unit", "std::string", /*default=*/"\"auto\"",
           "The matrix unit the kernels will use (auto, mma-sync, wgmma; "
           "attn-to-nvgpu's option): mma-sync takes FlashAttention-2's "
           "tilings where the chip has warpgroup MMA">
  ];
}

def AttnDeriveBlockMask : Pass<"attn-derive-block-mask"> {
  let summary = "Attach the block mask that the score region and a constant mask prove";
  let description = [{
    Gives every `attn.attention` without a block mask the one its IR proves
    at compile time, when that makes some block empty or full
    (`BlockMaskDerivation.h`): blocks are the tiles (`block-m` x `block-n`,
    else the op's, else FlashAttention-2's default, as `attn-decompose`
    resolves them), and

    - a block is empty when the score region yields -inf for every element
      of it, evaluated over intervals: each index argument over the block's
      rows or keys (b and h one by one where the region reads them), the
      score over every finite float; integer arithmetic, comparisons,
      selects and `tensor.extract` from constant tensors are followed, so a
      document mask over constant sequence ids proves every cross-document
      block empty;
    - a block is empty where a constant mask operand hides every score, full
      where it keeps every one.

    The block mask is semantically neutral here (it only states what the
    region and mask already say), so the result does not change; every
    lowering then skips the empty blocks and reads no mask in the full ones.
    Causal and window masks need nothing: the loops are bounded by them.
    Attentions with dynamic sizes or a frame, and regions over more than
    2^20 (batch, head, block) triples, are left alone.

    ```mlir
    %docs = arith.constant dense<[0, 0, 1, 1]> : tensor<4xi32>
    %o = attn.attention ins(%q, %k, %v : tensor<1x1x4x8xf32>, ...)
        outs(%init : tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %di = tensor.extract %docs[%i] : tensor<4xi32>
        %dj = tensor.extract %docs[%j] : tensor<4xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        %ninf = arith.constant 0xFF800000 : f32
        %r = arith.select %same, %s, %ninf : f32
        attn.yield %r : f32
    }
    ```

    with `block-m=2 block-n=2` gets

    ```mlir
    %blocks = arith.constant dense<[[[[1, 0], [0, 1]]]]> : tensor<1x1x2x2xi8>
    %o = attn.attention ins(...) block_mask(%blocks : tensor<1x1x2x2xi8> blocks [2, 2]) ...
    ```
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Query rows per tile (0: from the op's tiles, else FlashAttention-2's default)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Keys per tile (0: from the op's tiles, else FlashAttention-2's default)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AttnOutline : Pass<"attn-outline", "ModuleOp"> {
  let summary = "Move each attention of a function that holds several into a private function over buffers";
  let description = [{
    For every top-level `func.func` that holds more than one `attn.attention`
    or `attn.partial_attention`, moves each of them into a private function
    of its own that takes buffers: the inputs (Q, K, V, the mask, block mask
    and key lengths, the frame, and any value the score region uses from
    outside it) as read-only memrefs or scalars, the destinations as memrefs
    it writes (`bufferization.materialize_in_destination`). The caller turns
    its tensors into buffers (`bufferization.to_buffer read_only`), allocates
    the outputs, calls, and reads the results back as tensors
    (`bufferization.to_tensor restrict writable`). Constants the score region
    uses are cloned into the new function. A function with one attention is
    left alone.

    Why: One-Shot Bufferize keeps one alias set per buffer and checks every
    operand that touches a set against the whole set. A key/value tensor that
    N attentions of one function read would otherwise put all their tiles in
    one set, O(N^2) for the function (2,000 attentions sharing K and V spent
    7.8 s of 50 s there); each outlined attention has sets of its own, and
    every later pass works on functions of one attention's size, so the
    attn-to-cpu pipeline's compile time grows linearly in the number of
    attentions (docs/performance.md). Inputs cross as memrefs of any strides
    and offset, so views pass without a copy; destinations are new
    identity-layout buffers (a result that goes into a view of a larger
    tensor is copied there by the caller's bufferization).

    ```mlir
    %o1 = attn.attention ins(%q, %k, %v : ...) outs(%e1 : T) -> T
    %o2 = attn.attention ins(%o1, %k, %v : ...) outs(%e2 : T) -> T
    ```

    becomes

    ```mlir
    %qb = bufferization.to_buffer %q read_only : T to M
    ...
    %b1 = memref.alloc() {alignment = 64 : i64} : M
    call @layer_attention(%qb, %kb, %vb, %b1) : (M, M, M, M) -> ()
    %o1 = bufferization.to_tensor %b1 restrict writable : M to T
    ...
    func.func private @layer_attention(%q: M, %k: M, %v: M, %o: M) {
      %qt = bufferization.to_tensor %q restrict : M to T
      ...
      %e = tensor.empty() : T
      %r = attn.attention ins(%qt, %kt, %vt : ...) outs(%e : T) -> T
      bufferization.materialize_in_destination %r in restrict writable %o
          : (T, M) -> ()
      return
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnPartitionKV : Pass<"attn-partition-kv"> {
  let summary = "Make split-KV and Lean partitions explicit: partial attentions and a merge";
  let description = [{
    Rewrites every `attn.attention` whose `partition` is `#attn.split_kv` or
    `#attn.lean` into an `attn.partial_attention`, which computes one f32
    partial (O, LSE) per piece of each output tile's key/value range into
    slot-indexed destinations, followed by the `attn.merge` over the slots
    that gives the original results. Which keys each piece covers is the
    work assignment of the partition (see `attn.partial_attention`); this
    pass pins the tiles the pieces are made of (the op's, the block sizes of
    the options, else FlashAttention-2's split-KV default; as an `#attn.fa2`, so
    block sizes must follow its rules: multiples of 16) and sizes the slots:
    S for split-KV, for Lean a bound on the CTAs an output tile meets
    (computed at run time when the sizes are dynamic).

    The CPU path runs the result (`attn-decompose` the partials as tiled
    loops, `attn-lower-merge` the merge); `attn-to-nvgpu` reads the same
    work assignment off the `partition` of the `attn.attention` and fuses
    the partials and their merge into one kernel (Lean attention's hosts
    merge), so `attn-to-ptx` does not run this pass.

    ```mlir
    %o = attn.attention ins(%q, %k, %v : tensor<1x4x1x64xf32>,
                            tensor<1x4x1000x64xf32>, tensor<1x4x1000x64xf32>)
        outs(%init : tensor<1x4x1x64xf32>)
        {partition = #attn.lean<ctas = 5>} -> tensor<1x4x1x64xf32>
    ```

    becomes (the default tiles of a Lean or split-KV kernel for D = 64 are
    64 x 64: 16 blocks per tile, 64 LeanTiles, 13 or 12 per CTA, at most 3
    CTAs per tile)

    ```mlir
    %wo = tensor.empty() : tensor<3x1x4x1x64xf32>
    %wl = tensor.empty() : tensor<3x1x4x1xf32>
    %po, %pl = attn.partial_attention ins(%q, %k, %v : ...)
        outs(%wo, %wl : tensor<3x1x4x1x64xf32>, tensor<3x1x4x1xf32>)
        {partition = #attn.lean<ctas = 5>,
         tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
        -> tensor<3x1x4x1x64xf32>, tensor<3x1x4x1xf32>
    %o = attn.merge ins(%po, %pl : ...) outs(%init : tensor<1x4x1x64xf32>)
        dim = 0 -> tensor<1x4x1x64xf32>
    ```
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Query rows per tile (0: from the op's tiles, else FlashAttention-2's default)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Keys per tile (0: from the op's tiles, else FlashAttention-2's default)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnDecomposeGrad : Pass<"attn-decompose-grad"> {
  let summary = "Decompose attn.attention_grad into FlashAttention-2's tiled backward loops";
  let description = [{
    Rewrites every `attn.attention_grad` into the FlashAttention-2 backward
    algorithm (its Algorithm 2) on tensors, target-independent and executable
    on the CPU:

    - `Dsum = rowsum(dO * O)` (f32) first;
    - an `scf.forall` over (piece, batch, key/value head): the key/value
      blocks of `block_n` keys of each (batch, key/value head) are cut into
      the pieces of the op's `#attn.split_kv` partition (one piece without
      it); the program of a piece walks its blocks and owns their dK and dV,
      accumulated in f32 and rounded once per block;
    - for each block, an `scf.for` over the query heads of its group and the
      query blocks of `block_m` rows that see it (MaskGeometry's
      `queryBlockRange`, the transpose of the forward's key/value block
      range: causal and window masks skip the blocks no row of which sees
      the block); P is recomputed from Q, K and the forward's LSE with the
      forward's own score tiles (scale, softcap, mask operand, position
      masks only on tiles that straddle them, an empty block-mask block
      skipped); then `dV += P^T dO`, `dP = dO V^T`, `dS = P (dP - Dsum)`,
      back through the score region (its derivative, by forward-mode
      differentiation of its body: the rules of addf, subf, mulf, divf, negf,
      maximumf, minimumf, maxnumf, minnumf, select, exp, exp2, log, log2,
      tanh, sqrt, sin, cos, absf and fma), the softcap and the scale,
      `dK += dS^T Q`, and `dQ += dS K` into the piece's own f32 copy of dQ;
    - dQ = the sum of the copies in piece order, rounded once.

    No matrix larger than `block_m x block_n` scores is formed, and the
    result is the same bytes whatever order the programs run in. Tiles come
    from the `block-m`/`block-n` options, else the op's `tiles`, else
    FlashAttention-2's backward default for the head dimension. A score
    region that reads the score in an op without a rule is refused, naming
    the op (ops that do not read it, such as the index arithmetic of ALiBi,
    need none; comparisons and conversions to integers are piecewise
    constant). Hidden scores contribute 0 even where the region's derivative
    is not finite.

    Example:

    ```mlir
    %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : ...) out(%o, %lse : ...)
        grad(%do : ...) outs(%dq0, %dk0, %dv0 : ...) {causal} -> ...
    ```

    becomes (abridged)

    ```mlir
    %dsum = linalg.generic ... // rowsum(dO * O)
    %r:3 = scf.forall (%s, %b, %g) in (1, 2, 2)
        shared_outs(%dqc = %copies, %dk = %dk_zero, %dv = %dv_zero) -> ... {
      %blocks = scf.for %n = %first to %last step %c1 iter_args(...) {
        %heads = scf.for %hg = %c0 to %group step %c1 iter_args(...) {
          %rows = scf.for %m = %m0 to %m1 step %c1 iter_args(...) {
            // S, P = exp2(S - LSE log2 e), dV, dP, dS, dK, dQ copy
          }
        }
      }
      scf.forall.in_parallel { tensor.parallel_insert_slice ... }
    }
    %dq = linalg.generic ... // sum of the copies, rounded
    ```
  }];
  let options = [
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Query rows per step (0: the op's tiles or the default)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Keys per key/value block (0: the op's tiles or the default)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Decompose attn.attention and attn.partial_attention into tiled online-softmax loops";
  let description = [{
    Rewrites every `attn.attention` into the FlashAttention-2 forward
    algorithm on tensors, target-independent and executable on the CPU:

    - an `scf.forall` over (batch, query head, query block) — for
      `attn.partial_attention`, over (slot, batch, query head, query block) —
      whose body owns `block_m` query rows;
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

    With a block mask, each tile reads its block's element (tiles nest in
    the mask's blocks): an empty block leaves the state untouched (an
    `scf.if` around the block's work, so its K and V are never read) and a
    full block computes its scores without the mask operand.

    Grouped-query heads read their key/value head in place (`h / (Hq / Hkv)`),
    the score region is inlined into the score computation, and tail blocks
    (lengths that are not multiples of the tiles) are handled with dynamic tile
    sizes. A row with no visible key gets O = 0 and LSE = -inf. No tensor larger
    than `block_m x block_n` scores is ever created.

    With GQA packing (`#attn.fa2`'s `packed_heads = p`), Q and the
    destinations are viewed as `[B, Hq / p, p Sq, ...]` (an expand and a
    collapse of the same elements), the forall runs over (batch, tiled head,
    query block) and tiled head t reads key/value head `t p / (Hq / Hkv)`;
    the masks and the score region see each row's own head and query
    (MaskGeometry's tiled rows).

    An `attn.partial_attention` (from `attn-partition-kv`) runs the same loop
    over piece s of each query block's visible key/value blocks, as its
    split-KV or Lean work assignment cuts them, and writes the normalised
    f32 partial (O, LSE) into slot s.

    Tile sizes come from the `block-m`/`block-n` options, else the op's
    `tiles` attribute, else FlashAttention-2's default for the head dimension;
    a partial attention's tiles define its pieces, so options that disagree
    with them are an error. An `attn.attention` that still has a partition is
    rejected: run `attn-partition-kv` first (ATTENTION2D is distributed, not
    decomposed).

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

def AttnStripModuleAttributes : Pass<"attn-strip-module-attributes", "ModuleOp"> {
  let summary = "Remove attn.target and attn.cluster once every attn op is lowered";
  let description = [{
    The `attn.target` and `attn.cluster` attributes of a module say what the
    schedules are chosen for; once no op of the attn dialect is left, nothing
    reads them. This pass removes them from the module and every module
    nested in it, so that the output of `attn-to-cpu` (which runs it last)
    is plain LLVM dialect that stock tools (`mlir-translate --mlir-to-llvmir`,
    `mlir-runner`) parse without the attn dialect. An op of the attn dialect
    still in the module is an error: the attributes are still needed.
  }];
}

#endif // ATTN_TRANSFORMS_PASSES_TD
