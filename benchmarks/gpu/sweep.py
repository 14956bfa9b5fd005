#!/usr/bin/env python3
"""The attention modules of the one-call GPU check (scripts/gpu-check.sh).

Writes one module per configuration into DIR, each with a single
attn.attention (a function named like its file) and the module's
#attn.target, and prints their names:
  * correctness (c_*): D in {64, 128, 256}, f16 and bf16, causal or not, with
    tail lengths (S = 1000); decode (Sq = 1), GQA 8:1, Sq > Sk and Sq < Sk
    with causal masks (rows with no visible key), a sliding window; Lean
    attention (decode, one CTA, many contributors, causal prefill, Sq = 4,
    Sq > Sk with output tiles that see no key); split-KV (the decode split
    attn-select-schedule picks, a piece per block, causal prefill with
    empty pieces, Sq = 4, Sq > Sk); GQA packing (decode, a speculative
    step, split-KV, Lean, ALiBi); softcap with D in {64, 128, 256} and
    through Lean attention and split-KV; ALiBi and a document mask (a constant
    id table, block-sparse) as score regions (checked against reference
    cases: gpu-check.sh has attn-run write each one's inputs and float64
    reference outputs, since the GPU reference cannot evaluate a region);
    FlashAttention's test matrix of
    head dimensions (32 to 224) and length pairs, and D != Dv;
    per-sequence key lengths (a GQA decode step split and packed, a causal
    speculative step, a causal prefill at D = 128), which attn-launch
    fills with a full, an empty and a partly filled sequence and the
    check's NaN past each one's end; mask
    operands (boolean and additive, broadcast batch or heads; through
    FlashAttention-2's grid, split-KV and Lean attention), which attn-launch
    fills with a seeded mask that also hides whole rows; block masks passed
    as the kernel's block_mask parameter (with a mask operand, softcap, D =
    96, split-KV and Lean, and blocks smaller than the tiles: 1- and 2-warp
    tilings), which attn-launch fills with empty, partial and full blocks,
    the first query block of each head empty;
  * run-time lengths (r_*): kernels compiled with the batch, Sq and Sk
    dynamic, which gpu-check.sh runs at each of RUN_TIME_LENGTHS: FlashAttention-2's
    grid, split-KV and Lean attention (GQA-packed decode, causal prefill),
    a boolean mask operand and a block mask with per-sequence key lengths;
  * benchmark (b_*): bf16, B*S = 16k tokens, H*D = 2048, D in {64, 128},
    S in {512, 1k, 2k, 4k, 8k, 16k}, causal or not;
  * backward (g_*): the same shapes for S in {1k, 2k, 4k, 8k, 16k}, each
    function an attention and its gradient (benchmarks/gpu/compare_backward.py
    times the backward kernel);
  * decode (d_*): one query row, bf16, D = 128, Hq/Hkv in {32/8, 32/32},
    B in {1, 4, 16}, Sk in {1k, 4k, 16k, 64k, 128k, 256k, 512k} where K and V fit
    in 32 GiB; Lean attention (d_lean_*, 264 CTAs, two per H100 SM, with the
    tiles attn-select-schedule attaches: a KV head's query heads packed into
    one tile), FlashAttention-2's grid without a split (d_fa2_*: one split
    pinned) and the schedule attn-compile picks by default (d_picked_*: GQA
    packing for 32/8, split-KV where FlashAttention-2's rule splits, else its
    grid). gpu-check.sh compiles every other module with --split-kv=false,
    so that each runs the schedule it names;
  * score modification and masks (v_*, compared with FlexAttention by
    benchmarks/gpu/compare_flex.py): ALiBi (a score region), softcap 30, a
    sliding window of 1024, a document mask of 8 documents (a score region
    over a constant id table) and causal, bf16, D in {64, 80, 96, 128}, S
    in {1k, 4k, 16k}, B*S = 16k tokens, H = 2048 // D.

With --emulated, the same configurations at the sizes the PTX emulator runs
in the test suite (scripts/emulator-check.sh): see emulated().

Usage: sweep.py DIR [--set correctness|run-time|benchmark|backward|decode|variants|all] [--target ATTR] [--emulated]
"""
import argparse
import os
import re

TILES_64 = "tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>"
# (B, Sq, Sk) at which every r_* kernel runs: a decode step, one over a cache
# whose last block has one key, a causal square prefill, causal Sq > Sk
# (output tiles without keys).
RUN_TIME_LENGTHS = ((1, 1, 1000), (4, 1, 4097), (2, 300, 300), (1, 1000, 300))
# The same cases at the sizes the PTX emulator runs in the test suite.
EMULATED_RUN_TIME_LENGTHS = ((1, 1, 200), (2, 1, 257), (1, 100, 100), (1, 200, 70))
# Split-KV's tiles for D = 128 with 4 query heads per tile (GQA packing).
PACKED_4 = "tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4"

H100 = ('#attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, '
        'smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>')


# ALiBi as a score region: s + 2^(-h) (k - q), slopes of 4 heads.
ALIBI = """ score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %minus = arith.constant -1.0 : f32
    %e = arith.mulf %hf, %minus : f32
    %slope = math.exp2 %e : f32
    %bias = arith.mulf %df, %slope : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }"""


def documents(length, count):
    """A document mask over `count` equal documents of `length` tokens, as a
    score region over a constant id table (attn-to-ptx proves the
    cross-document blocks empty and the kernel skips them)."""
    ids = ", ".join(str(i * count // length) for i in range(length))
    return f""" score {{
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %docs = arith.constant dense<[{ids}]> : tensor<{length}xi32>
    %di = tensor.extract %docs[%i] : tensor<{length}xi32>
    %dj = tensor.extract %docs[%j] : tensor<{length}xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %hidden = arith.constant 0xFF800000 : f32
    %r = arith.select %same, %s, %hidden : f32
    attn.yield %r : f32
  }}"""


def module(name, dtype, b, hq, hkv, sq, sk, d, flags, target, region="",
           dv=None, key_lengths=False, mask=None, block_mask=None,
           backward=False):
    """`d` is the head dimension of Q and K; `dv`, that of V and O, is `d`
    unless given. With `key_lengths`, the attention takes per-sequence key
    lengths (attn-launch fills them: the first sequence full, the second
    empty, the others random). `mask` = (element type, batch, heads) gives
    it a mask operand [batch, heads, Sq, Sk] (1 broadcasts); `block_mask` =
    (batch, heads, Bq, Bk) a block mask argument [batch, heads, ceil(Sq /
    Bq), ceil(Sk / Bk)] of Bq x Bk blocks. With `backward`, the function
    also takes dO and computes the attention's gradient
    (attn.attention_grad, the same attributes): its bundle holds the
    backward kernel beside the forward's."""
    dv = dv or d
    q = f"tensor<{b}x{hq}x{sq}x{d}x{dtype}>"
    k = f"tensor<{b}x{hkv}x{sk}x{d}x{dtype}>"
    v = f"tensor<{b}x{hkv}x{sk}x{dv}x{dtype}>"
    o = f"tensor<{b}x{hq}x{sq}x{dv}x{dtype}>"
    lse = f"tensor<{b}x{hq}x{sq}xf32>"
    lengths = f"tensor<{b}xi32>"
    attrs = f" {{{flags}}}" if flags else ""
    lengths_arg = f", %lengths: {lengths}" if key_lengths else ""
    lengths_operand = f" key_lengths(%lengths : {lengths})" if key_lengths else ""
    mask_arg = mask_operand = ""
    if mask:
        element, mask_b, mask_h = mask
        mask_type = f"tensor<{mask_b}x{mask_h}x{sq}x{sk}x{element}>"
        mask_arg = f", %m: {mask_type}"
        mask_operand = f" mask(%m : {mask_type})"
    if block_mask:
        blocks_b, blocks_h, rows, keys = block_mask
        count = lambda n, side: "?" if n == "?" else -(-n // side)
        blocks_type = f"tensor<{blocks_b}x{blocks_h}x{count(sq, rows)}x{count(sk, keys)}xi8>"
        mask_arg += f", %bm: {blocks_type}"
        mask_operand += f" block_mask(%bm : {blocks_type} blocks [{rows}, {keys}])"
    grad_arg = grad_results = grad_op = ""
    if backward:
        grad_arg = f", %do: {o}"
        grad_results = f", {q}, {k}, {v}"
        grad_op = (f"  %g:3 = attn.attention_grad ins(%q, %k, %v : {q}, {k}, {v}) out(%r#0, %r#1 : {o}, {lse})"
                   f" grad(%do : {o}){mask_operand}{lengths_operand} outs(%q, %k, %v : {q}, {k}, {v}){attrs}"
                   f" -> {q}, {k}, {v}\n")
    returned = f"%r#0, %r#1{', %g#0, %g#1, %g#2' if backward else ''} : {o}, {lse}{grad_results}"
    return (
        f"module attributes {{attn.target = {target}}} {{\n"
        f"func.func @{name}(%q: {q}, %k: {k}, %v: {v}{mask_arg}{lengths_arg}, %o: {o}, %l: {lse}{grad_arg}) -> ({o}, {lse}{grad_results}) {{\n"
        f"  %r:2 = attn.attention ins(%q, %k, %v : {q}, {k}, {v}){mask_operand}{lengths_operand} outs(%o, %l : {o}, {lse}){attrs} -> {o}, {lse}{region}\n"
        f"{grad_op}"
        f"  return {returned}\n"
        f"}}\n}}\n"
    )


def correctness():
    """(name, dtype, B, Hq, Hkv, Sq, Sk, D or (D, Dv), flags[, region])."""
    for dtype in ("f16", "bf16"):
        for d in (64, 128, 256):
            for causal in (False, True):
                name = f"c_{dtype}_d{d}" + ("_causal" if causal else "")
                yield name, dtype, 2, 4, 4, 1000, 1000, d, "causal" if causal else ""
    yield "c_decode", "bf16", 8, 32, 8, 1, 4096, 128, ""
    yield "c_gqa", "bf16", 2, 32, 4, 512, 512, 128, "causal"
    yield "c_tail_q_gt_k", "f16", 1, 4, 4, 1000, 777, 128, "causal"
    yield "c_tail_q_lt_k", "bf16", 1, 4, 2, 300, 1000, 64, "causal"
    yield "c_window", "bf16", 1, 4, 4, 700, 700, 64, "window = array<i64: 100, 20>"
    # Lean attention (persistent CTAs, hosts merging contributors' partials):
    # a GQA decode step over the 132 SMs (2016 LeanTiles, 15-16 per CTA);
    # one CTA doing every tile alone; more CTAs than LeanTiles (many
    # contributors per tile); a causal prefill with tiles of different
    # lengths; speculative decoding (Sq = 4) with MQA and a tail of keys.
    yield "c_lean_decode", "bf16", 1, 32, 8, 1, 8000, 128, "partition = #attn.lean<ctas = 132>"
    yield "c_lean_alone", "f16", 1, 4, 4, 1, 1000, 64, "partition = #attn.lean<ctas = 1>"
    yield "c_lean_many", "bf16", 1, 2, 2, 1, 1000, 64, "partition = #attn.lean<ctas = 64>"
    yield "c_lean_causal", "f16", 2, 4, 4, 1000, 1000, 64, "causal, partition = #attn.lean<ctas = 13>"
    yield "c_lean_spec", "bf16", 2, 8, 1, 4, 3000, 128, "causal, partition = #attn.lean<ctas = 33>"
    yield "c_lean_q_gt_k", "f16", 1, 4, 4, 1000, 300, 64, "causal, partition = #attn.lean<ctas = 9>"
    # Split-KV (one launch; the last CTA of each output tile merges): the
    # split attn-compile picks for a GQA decode step (its default: the 4 query
    # heads of a KV head packed, 32 splits of 64 x 64 tiles for 8 CTAs on 132
    # SMs); a piece per 64-key block; a causal
    # prefill whose first query blocks leave pieces empty; speculative
    # decoding with MQA; Sq > Sk with output tiles that see no key.
    yield "c_split_decode", "bf16", 1, 32, 8, 1, 8000, 128, ""
    yield "c_split_many", "bf16", 1, 2, 2, 1, 1000, 64, f"{TILES_64}, partition = #attn.split_kv<splits = 16>"
    yield "c_split_causal", "f16", 2, 4, 4, 1000, 1000, 64, "causal, partition = #attn.split_kv<splits = 5>"
    yield "c_split_spec", "bf16", 2, 8, 1, 4, 3000, 128, "causal, partition = #attn.split_kv<splits = 6>"
    yield "c_split_q_gt_k", "f16", 1, 4, 4, 1000, 300, 64, "causal, partition = #attn.split_kv<splits = 3>"
    # Pinned three-stage pipelines (two blocks in flight): a packed split
    # decode and a causal prefill on 128 x 128 tiles (224 KiB at D = 128).
    yield ("c_split_three_stages", "bf16", 1, 32, 8, 1, 3000, 128,
           "tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 3, packed_heads = 4>, "
           "partition = #attn.split_kv<splits = 8>")
    yield ("c_three_stages_causal", "f16", 1, 4, 4, 1000, 1000, 128,
           "causal, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 3>")
    # The overlapped wgmma loop at D = 128 (its default 128 x 128 tiles keep
    # the sequential loop: softmaxOverlapUnfit): 128 x 64 in two warpgroups,
    # causal, a tail of keys.
    yield ("c_overlap_d128", "bf16", 1, 4, 2, 1000, 1000, 128,
           "causal, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 2>")
    # GQA packing (the query heads of a key/value head share a CTA's rows,
    # head after head): a decode step on FlashAttention-2's grid, a causal
    # speculative step whose 12 packed rows span three heads, split-KV and
    # Lean over packed tiles, and an ALiBi region (each row's own head).
    yield "c_pack_decode", "bf16", 4, 32, 8, 1, 8000, 128, f"{PACKED_4}>"
    yield "c_pack_spec", "f16", 2, 8, 2, 3, 1000, 64, "causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>"
    yield "c_pack_split", "bf16", 1, 32, 8, 1, 8000, 128, f"{PACKED_4}>, partition = #attn.split_kv<splits = 16>"
    yield "c_pack_lean", "bf16", 1, 32, 8, 1, 8000, 128, f"{PACKED_4}>, partition = #attn.lean<ctas = 132>"
    # Softcap (Gemma 2's 50 and 30): the GPU reference applies it too. D =
    # 256 takes the 64 x 32 tiles a modified score leaves room for.
    yield "c_softcap_d64", "bf16", 2, 4, 4, 1000, 1000, 64, "causal, softcap = 30.0 : f32"
    yield "c_softcap_d128", "f16", 2, 8, 2, 777, 1000, 128, "softcap = 50.0 : f32"
    yield "c_softcap_d256", "bf16", 1, 4, 4, 1000, 1000, 256, "causal, softcap = 50.0 : f32"
    yield "c_softcap_lean", "bf16", 1, 32, 8, 1, 8000, 128, "softcap = 30.0 : f32, partition = #attn.lean<ctas = 132>"
    yield "c_softcap_split", "bf16", 1, 32, 8, 1, 8000, 128, "softcap = 30.0 : f32, partition = #attn.split_kv<splits = 8>"
    # A score region: the GPU reference cannot evaluate it, so attn-launch
    # checks it against the reference case gpu-check.sh writes with attn-run
    # (run, repeated bit for bit and sanitized too).
    yield "c_region_alibi", "f16", 1, 4, 4, 600, 600, 128, "causal, softcap = 30.0 : f32", ALIBI
    yield "c_region_documents", "bf16", 1, 4, 4, 600, 600, 64, "causal", documents(600, 4)
    yield "c_region_alibi_packed", "f16", 2, 8, 2, 4, 1000, 64, "causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>", ALIBI
    # FlashAttention's test matrix: head dimensions other than 64, 128 and
    # 256 (rows padded in shared memory) over its length pairs, causal or
    # not, a window, softcap and GQA; and D != Dv.
    pairs = [(113, 203), (128, 217), (113, 211), (108, 256), (256, 512),
             (512, 256), (1023, 1024), (1024, 1023), (1, 239), (239, 1)]
    flags = ["causal", "", "window = array<i64: 64, 0>",
             "causal, softcap = 30.0 : f32"]
    for i, d in enumerate((32, 40, 80, 96, 112, 160, 192, 224)):
        for j in range(2):
            sq, sk = pairs[(2 * i + j) % len(pairs)]
            flag = flags[(i + j) % len(flags)]
            dtype = ("bf16", "f16")[j]
            hkv = 2 if (i + j) % 3 == 0 else 4
            yield f"c_hd{d}_{j}", dtype, 2, 4, hkv, sq, sk, d, flag
    yield "c_dv_mla", "bf16", 1, 8, 2, 1000, 1000, (192, 128), "causal"
    yield "c_dv_wide", "f16", 1, 4, 4, 333, 700, (64, 128), ""
    # Per-sequence key lengths (a batch of KV caches of one capacity): a GQA
    # decode step, packed and split, with a full, an empty and partly
    # filled caches; a causal speculative step on FlashAttention-2's grid;
    # a causal prefill at D = 128 on the default tiles (on sm_90a two
    # consumer warpgroups taking turns, which zero V past each sequence's
    # end themselves).
    yield "c_lengths_decode", "bf16", 8, 32, 8, 1, 4096, 128, f"{PACKED_4}>, partition = #attn.split_kv<splits = 16>", "", {"key_lengths": True}
    yield "c_lengths_spec", "f16", 4, 8, 2, 4, 1000, 64, f"causal, {TILES_64}", "", {"key_lengths": True}
    yield "c_lengths_prefill", "bf16", 4, 8, 8, 1000, 2047, 128, "causal", "", {"key_lengths": True}
    # Mask operands, checked against the GPU reference with the mask
    # attn-launch samples (rows it hides entirely give O = 0, LSE = -inf).
    yield "c_mask_boolean", "bf16", 2, 4, 2, 1000, 1000, 128, "causal", "", {"mask": ("i1", 2, 1)}
    yield "c_mask_additive", "f16", 1, 8, 8, 300, 777, 64, "softcap = 30.0 : f32", "", {"mask": ("f32", 1, 8)}
    yield "c_mask_split", "bf16", 4, 32, 8, 1, 4096, 128, "partition = #attn.split_kv<splits = 8>", "", {"mask": ("i1", 4, 1)}
    yield "c_mask_lean", "bf16", 1, 32, 8, 4, 2000, 128, "causal, partition = #attn.lean<ctas = 132>", "", {"mask": ("f16", 1, 32)}
    # Block masks given at run time (the kernel's block_mask parameter),
    # checked against the GPU reference with the block mask attn-launch
    # samples: empty blocks skipped, full blocks without the mask operand; a
    # causal softcapped D = 96 one; split-KV and Lean decode steps.
    yield "c_blocks_mask", "bf16", 2, 4, 2, 1000, 1000, 128, "causal", "", {"mask": ("i1", 2, 1), "block_mask": (2, 1, 128, 128)}
    yield "c_blocks_d96", "bf16", 2, 8, 2, 1000, 1000, 96, "causal, softcap = 30.0 : f32", "", {"block_mask": (1, 8, 128, 128)}
    # The same with ALiBi as a score region (checked against a reference
    # case, above).
    yield "c_blocks_d96_alibi", "bf16", 1, 8, 2, 600, 600, 96, "causal, softcap = 30.0 : f32", ALIBI, {"block_mask": (1, 8, 128, 128)}
    yield "c_blocks_split", "bf16", 4, 32, 8, 1, 4096, 128, "partition = #attn.split_kv<splits = 8>", "", {"block_mask": (4, 1, 64, 256)}
    yield "c_blocks_lean", "bf16", 1, 32, 8, 4, 2000, 128, "causal, partition = #attn.lean<ctas = 132>", "", {"block_mask": (1, 32, 64, 256)}
    # Blocks smaller than FlashAttention-2's tiles take tiles nested in
    # them: 48 x 48 blocks 16 x 48 tiles of one warp, 32 x 32 blocks 32 x 32
    # tiles of two.
    yield "c_blocks_one_warp", "f16", 2, 4, 4, 300, 500, 64, "causal", "", {"block_mask": (1, 4, 48, 48)}
    yield "c_blocks_two_warps", "bf16", 1, 4, 2, 300, 300, 128, "", "", {"block_mask": (1, 4, 32, 32)}
    # The backward kernel (attn.attention_grad), beside its forward's in the
    # bundle, checked against a gradient case (attn-run --backward
    # --write-reference: the float64 reference gradient): GQA, causal,
    # window, softcap, Dv != D, D = 256.
    # Sizes kept small: a gradient case holds nine arrays, and the prepared
    # check must fit the device tool's carry (gpu-check.sh dry-run).
    yield "c_grad_d64_causal_gqa", "bf16", 2, 4, 1, 500, 500, 64, "causal", "", {"backward": True}
    yield "c_grad_d128", "f16", 1, 2, 2, 500, 389, 128, "", "", {"backward": True}
    yield "c_grad_d128_window_softcap", "bf16", 1, 4, 1, 400, 400, 128, "window = array<i64: 100, 20>, softcap = 30.0 : f32", "", {"backward": True}
    yield "c_grad_dv128", "f16", 1, 2, 2, 300, 600, (64, 128), "causal", "", {"backward": True}
    yield "c_grad_d256", "bf16", 1, 2, 1, 300, 300, 256, "causal", "", {"backward": True}
    yield "c_grad_key_lengths", "bf16", 3, 2, 1, 200, 400, 64, "causal", "", {"backward": True, "key_lengths": True}


def run_time():
    """Kernels for run-time lengths ("?" sizes): one bundle serves every
    (B, Sq, Sk) of RUN_TIME_LENGTHS."""
    packed_32 = "tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 2, packed_heads = 4"
    yield "r_fa2_causal", "bf16", "?", 8, 2, "?", "?", 128, "causal, tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>"
    yield "r_split_decode", "bf16", "?", 32, 8, "?", "?", 128, f"causal, {PACKED_4}>, partition = #attn.split_kv<splits = 8>"
    yield "r_lean_decode", "bf16", "?", 32, 8, "?", "?", 128, f"causal, {packed_32}>, partition = #attn.lean<ctas = 264>"
    yield "r_lean_prefill", "f16", "?", 4, 4, "?", "?", 64, "causal, partition = #attn.lean<ctas = 132>"
    yield "r_mask", "bf16", "?", 8, 2, "?", "?", 64, "causal", "", {"mask": ("i1", "?", 1)}
    yield "r_blocks", "f16", "?", 8, 2, "?", "?", 64, "causal", "", {"block_mask": ("?", 1, 128, 128), "key_lengths": True}


def benchmark():
    for d in (64, 128):
        for causal in (False, True):
            for s in (512, 1024, 2048, 4096, 8192, 16384):
                name = f"b_d{d}_s{s}" + ("_causal" if causal else "")
                yield name, "bf16", 16384 // s, 2048 // d, 2048 // d, s, s, d, "causal" if causal else ""


BACKWARD_LENGTHS = (1024, 2048, 4096, 8192, 16384)


def backward():
    for d in (64, 128):
        for causal in (False, True):
            for s in BACKWARD_LENGTHS:
                name = f"g_d{d}_s{s}" + ("_causal" if causal else "")
                yield (name, "bf16", 16384 // s, 2048 // d, 2048 // d, s, s, d,
                       "causal" if causal else "", "", {"backward": True})


# The variants compared with FlexAttention: name -> (flags, score region) of
# the attention for length S.
VARIANT_WINDOW = 1024
VARIANT_DOCUMENTS = 8
VARIANTS = {
    "alibi": lambda s: ("", ALIBI),
    "softcap": lambda s: ("softcap = 30.0 : f32", ""),
    "window": lambda s: (f"window = array<i64: {VARIANT_WINDOW}, 0>", ""),
    "documents": lambda s: ("", documents(s, VARIANT_DOCUMENTS)),
    "causal": lambda s: ("causal", ""),
}
VARIANT_HEAD_DIMS = (64, 80, 96, 128)
VARIANT_LENGTHS = (1024, 4096, 16384)


def variant_configs():
    """(variant, D, S, B, H) of the variant benchmark."""
    for variant in VARIANTS:
        for d in VARIANT_HEAD_DIMS:
            for s in VARIANT_LENGTHS:
                yield variant, d, s, 16384 // s, 2048 // d


def variants():
    for variant, d, s, b, h in variant_configs():
        flags, region = VARIANTS[variant](s)
        yield f"v_{variant}_d{d}_s{s}", "bf16", b, h, h, s, s, d, flags, region


DECODE_HEADS = ((32, 8), (32, 32))
DECODE_BATCHES = (1, 4, 16)
DECODE_LENGTHS = (1024, 4096, 16384, 65536, 131072, 262144, 524288)


def decode_configs():
    """(Hq, Hkv, B, Sk) of the decode benchmark."""
    for hq, hkv in DECODE_HEADS:
        for b in DECODE_BATCHES:
            for sk in DECODE_LENGTHS:
                if 2 * b * hkv * sk * 128 * 2 <= 32 << 30:
                    yield hq, hkv, b, sk


def decode():
    for hq, hkv, b, sk in decode_configs():
        suffix = f"h{hq}_{hkv}_b{b}_s{sk}"
        # Lean's tiles are the ones attn-select-schedule attaches (a KV
        # head's query heads packed into one tile; unpacked, each query
        # head's tile reads K and V again: H100, 2026-11-27, 0.57-0.78 TB/s
        # at 32/8 with 64 x 64 tiles pinned).
        yield (f"d_lean_{suffix}", "bf16", b, hq, hkv, 1, sk, 128,
               "partition = #attn.lean<ctas = 264>")
        yield (f"d_fa2_{suffix}", "bf16", b, hq, hkv, 1, sk, 128,
               "partition = #attn.split_kv<splits = 1>")
        yield f"d_picked_{suffix}", "bf16", b, hq, hkv, 1, sk, 128, ""


# Correctness configurations that the emulator check and the GPU check also
# compile with --matrix-unit=mma-sync (NAME+mma-sync): on sm_90a the default
# body computes on wgmma, and these keep the mma.sync body (sm_80's)
# checked on every schedule, beside it.
MMA_SYNC_TWINS = (
    "c_bf16_d128_causal", "c_f16_d256", "c_gqa", "c_split_many", "c_lean_many",
    "c_softcap_d128", "c_region_alibi", "c_mask_boolean", "c_blocks_mask", "c_pack_decode",
    "c_hd80_1", "c_dv_mla", "r_fa2_causal", "r_lean_decode",
)


def emulated_length(n, base=128):
    """A length the PTX emulator runs in seconds that keeps what made N
    awkward: lengths past 2 BASE become BASE plus N's remainder modulo 128
    (1000 -> 232, 777 -> 137), so tails stay tails. Decode steps keep more
    keys (BASE 512: 4096 -> 512, 8000 -> 576), for their splits and Lean
    tiles."""
    if n == "?" or n <= 2 * base:
        return n
    return base + n % 128


def emulated(config):
    """CONFIG at the test suite's sizes (the PTX emulator): one or two
    sequences, at most two key/value heads (the query heads per key/value
    head kept, so GQA packing is unchanged), shorter lengths; a mask's or
    block mask's leading sizes follow."""
    name, dtype, b, hq, hkv, sq, sk, d, flags, *extra = config
    options = dict(extra[1]) if len(extra) > 1 else {}
    keep_batch = 3 if options.get("key_lengths") else 1
    small_b = b if b == "?" else min(b, keep_batch)
    small_hkv = min(hkv, 2)
    small_hq = small_hkv * (hq // hkv)
    follow = lambda n, full, small: small if n == full else n
    if "mask" in options:
        element, mb, mh = options["mask"]
        options["mask"] = (element, follow(mb, b, small_b), follow(mh, hq, small_hq))
    if "block_mask" in options:
        bb, bh, rows, keys = options["block_mask"]
        options["block_mask"] = (follow(bb, b, small_b), follow(bh, hq, small_hq), rows, keys)
    region = extra[0] if extra else ""
    if region and "tensor<" in region:
        # A document table is as long as the sequence.
        region = documents(emulated_length(sq), 4)
    decode = sq != "?" and sq <= 8
    small_sq = emulated_length(sq)
    small_sk = emulated_length(sk, 512 if decode else 128)
    # Split-KV needs a block of keys (up to 128) per split.
    splits = re.search(r"splits = (\d+)", flags)
    if splits and small_sk != "?":
        small_sk = max(small_sk, int(splits.group(1)) * 128 + sk % 128)
        if sq == sk:
            small_sq = small_sk
    return (name, dtype, small_b, small_hq, small_hkv, small_sq, small_sk, d,
            flags, region, options)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--set", choices=("correctness", "run-time", "benchmark", "backward", "decode",
                                           "variants", "all"),
                        default="all")
    parser.add_argument("--target", default=H100, help="the modules' #attn.target")
    parser.add_argument("--emulated", action="store_true",
                        help="the test suite's sizes, for the PTX emulator (emulated())")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    configs = []
    if args.set in ("correctness", "all"):
        configs += list(correctness())
    if args.set in ("run-time", "all"):
        configs += list(run_time())
    if args.set in ("benchmark", "all"):
        configs += list(benchmark())
    if args.set in ("backward", "all"):
        configs += list(backward())
    if args.set in ("decode", "all"):
        configs += list(decode())
    if args.set in ("variants", "all"):
        configs += list(variants())
    if args.emulated:
        configs = [emulated(config) for config in configs]
    for config in configs:
        with open(os.path.join(args.dir, config[0] + ".mlir"), "w") as f:
            name, dtype, b, hq, hkv, sq, sk, d, flags, *extra = config
            region = extra[0] if extra else ""
            options = extra[1] if len(extra) > 1 else {}
            d, dv = d if isinstance(d, tuple) else (d, d)
            f.write(module(name, dtype, b, hq, hkv, sq, sk, d, flags,
                           args.target, region, dv=dv, **options))
        print(config[0])


if __name__ == "__main__":
    main()
