#!/usr/bin/env python3
"""attn-mlir's score modification and masks against FlexAttention, in one run.

Runs on a GPU machine with PyTorch and Triton (no LLVM/MLIR needed). For each
variant of benchmarks/gpu/sweep.py's v_* set (ALiBi as a score region,
softcap 30, a sliding window of 1024, a document mask of 8 equal documents,
causal; bf16, B*S = 16k tokens, H = 2048 // D, S in {1k, 4k, 16k}), one
after the other:
  * attn-mlir's kernel (bundle v_<variant>_d<D>_s<S>, timed by attn-launch
    --bench), for D in {64, 80, 96, 128};
  * FlexAttention (torch.compile(flex_attention)) with the same score_mod
    (ALiBi: score + 2^-h (k - q); softcap: 30 tanh(score / 30)) or the same
    mask_mod as a block mask made once by create_block_mask, for D in {64,
    128} (and 80, 96 where it takes them);
  * SDPA where it expresses the variant: is_causal=True on the
    FLASH_ATTENTION backend for causal, an explicit mask or ALiBi bias (the
    default backend choice) for the window, the documents and ALiBi while
    the mask takes at most 2 GiB.
TFLOP/s count the scores each variant leaves visible (4 * B * H * D per
visible (query, key) pair), the same for every implementation, so that the
ratios are ratios of time. FlexAttention and SDPA are first checked against
a float32 attention with the same bias or mask written out here (relative
L2 error below 1e-2; SDPA's ALiBi bias is rounded to bf16, as SDPA takes
it); attn-launch checks our kernels in the correctness step of the GPU check
at S = 1000 (c_region_*, c_softcap_*, c_window, c_blocks_*), not these
v_* kernels themselves.

Usage: python3 benchmarks/gpu/compare_flex.py --attn-launch BIN --bundles DIR
                                              [--out DIR] [--quick]
Writes variants.md and variants.csv to DIR (default: .).
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_sdpa import bundle_ms, comparison_arguments, median_ms, write_results  # noqa: E402
from sweep import (VARIANT_DOCUMENTS, VARIANT_WINDOW, VARIANTS,  # noqa: E402
                   variant_configs)

# Each variant and shape compiles its own kernel (about 65 in all); past
# Dynamo's default of 8 per function, FlexAttention would fall back to its
# unfused path, which stores every score.
torch._dynamo.config.cache_size_limit = 1000
flex = torch.compile(flex_attention, dynamic=False)
# SDPA's explicit masks and biases up to this size.
MAX_MASK_BYTES = 2 << 30


def document_ids(s):
    """The document of each token: VARIANT_DOCUMENTS equal documents, as
    sweep.documents numbers them."""
    return torch.arange(s, device="cuda") * VARIANT_DOCUMENTS // s


def visible_pairs(variant, s):
    """How many (query, key) pairs of one head the variant leaves visible."""
    if variant in ("alibi", "softcap"):
        return s * s
    if variant == "causal":
        return s * (s + 1) // 2
    if variant == "window":
        rows = torch.arange(s, dtype=torch.int64)
        return int((torch.clamp(rows, max=VARIANT_WINDOW) + 1).sum())
    sizes = torch.bincount(document_ids(s).cpu())
    return int((sizes * sizes).sum())


def flex_arguments(variant, s):
    """FlexAttention's score_mod and block_mask for the variant."""
    if variant == "alibi":
        def alibi(score, b, h, q, k):
            return score + torch.exp2(-h.to(torch.float32)) * (k - q)
        return {"score_mod": alibi}
    if variant == "softcap":
        def softcap(score, b, h, q, k):
            return 30.0 * torch.tanh(score / 30.0)
        return {"score_mod": softcap}
    if variant == "causal":
        def keep(b, h, q, k):
            return q >= k
    elif variant == "window":
        def keep(b, h, q, k):
            return (q >= k) & (q - k <= VARIANT_WINDOW)
    else:
        docs = document_ids(s)

        def keep(b, h, q, k):
            return docs[q] == docs[k]
    return {"block_mask": create_block_mask(keep, B=None, H=None, Q_LEN=s, KV_LEN=s)}


def sdpa_arguments(variant, s, h):
    """SDPA's arguments and backend for the variant, or None where it cannot
    express it (softcap) or its mask would exceed MAX_MASK_BYTES."""
    if variant == "causal":
        return {"is_causal": True}, SDPBackend.FLASH_ATTENTION
    rows = torch.arange(s, device="cuda")[:, None]
    keys = torch.arange(s, device="cuda")[None, :]
    if variant == "alibi":
        if h * s * s * 2 > MAX_MASK_BYTES:
            return None
        slopes = torch.exp2(-torch.arange(h, device="cuda", dtype=torch.float32))
        bias = slopes[:, None, None] * (keys - rows)[None].to(torch.float32)
        return {"attn_mask": bias.to(torch.bfloat16)[None]}, None
    if variant == "softcap" or s * s > MAX_MASK_BYTES:
        return None
    if variant == "window":
        mask = (rows >= keys) & (rows - keys <= VARIANT_WINDOW)
    else:
        docs = document_ids(s)
        mask = docs[:, None] == docs[None, :]
    return {"attn_mask": mask[None, None]}, None


def run_sdpa(q, k, v, arguments, backend):
    if backend is None:
        return F.scaled_dot_product_attention(q, k, v, **arguments)
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, **arguments)


def check(variant):
    """Relative L2 errors of FlexAttention and SDPA against a float32
    attention written out here (the same bias or mask). SDPA takes ALiBi as
    a bias in the inputs' bf16, which rounds it (by up to 4 at distance
    1000): its reference adds the same rounded bias."""
    b, h, s, d = 1, 4, 1024, 64
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    scores = (q.float() @ k.float().transpose(-1, -2)) / d**0.5
    rows = torch.arange(s, device="cuda")[:, None]
    keys = torch.arange(s, device="cuda")[None, :]
    sdpa_scores = None
    if variant == "alibi":
        slopes = torch.exp2(-torch.arange(h, device="cuda", dtype=torch.float32))
        bias = slopes[:, None, None] * (keys - rows)
        sdpa_scores = scores + bias.to(torch.bfloat16).float()
        scores = scores + bias
    elif variant == "softcap":
        scores = 30.0 * torch.tanh(scores / 30.0)
    else:
        keep = {"causal": rows >= keys,
                "window": (rows >= keys) & (rows - keys <= VARIANT_WINDOW),
                "documents": document_ids(s)[:, None] == document_ids(s)[None, :]}[variant]
        scores = scores.masked_fill(~keep, float("-inf"))

    def error(out, scores):
        ref = torch.softmax(scores, dim=-1) @ v.float()
        return ((out.float() - ref).norm() / ref.norm()).item()
    errors = {"flex": error(flex(q, k, v, **flex_arguments(variant, s)), scores)}
    sdpa = sdpa_arguments(variant, s, h)
    if sdpa:
        errors["sdpa"] = error(run_sdpa(q, k, v, *sdpa),
                               scores if sdpa_scores is None else sdpa_scores)
    return errors


def bench_pytorch(run, b, h, s, d, sets=4):
    """Median ms of run(q, k, v) over input sets rotated so that the L2
    cache does not hold them; None when the implementation refuses."""
    inputs = [tuple(torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
              for _ in range(sets)]
    turn = [0]

    def step():
        run(*inputs[turn[0] % sets])
        turn[0] += 1
    try:
        return median_ms(step)
    except Exception as error:  # e.g. a head dimension it does not take
        print(f"  {type(error).__name__}: {str(error).splitlines()[0]}", flush=True)
        return None


def main():
    args = comparison_arguments(__doc__, "v_*", "S = 4k, D in {64, 128} only")

    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}",
          flush=True)
    for variant in VARIANTS:
        errors = check(variant)
        print(f"check {variant}: " + ", ".join(f"{n} rel err {e:.2e}" for n, e in errors.items()),
              flush=True)
        if not all(e < 1e-2 for e in errors.values()):
            sys.exit(1)

    rows = []
    for variant, d, s, b, h in variant_configs():
        if args.quick and (s != 4096 or d not in (64, 128)):
            continue
        flops = 4 * b * h * d * visible_pairs(variant, s)
        row = {"variant": variant, "D": d, "S": s, "B": b, "H": h,
               "ours_ms": bundle_ms(args, f"v_{variant}_d{d}_s{s}", "attn_launch_variants.csv")}
        arguments = flex_arguments(variant, s)
        row["flex_ms"] = bench_pytorch(lambda q, k, v: flex(q, k, v, **arguments), b, h, s, d)
        sdpa = sdpa_arguments(variant, s, h)
        row["sdpa_ms"] = (bench_pytorch(lambda q, k, v: run_sdpa(q, k, v, *sdpa), b, h, s, d)
                          if sdpa else None)
        for key in ("ours", "flex", "sdpa"):
            ms = row[f"{key}_ms"]
            row[f"{key}_tflops"] = flops / ms / 1e9 if ms else None
        rows.append(row)
        print(f"{variant:9s} D={d:3d} S={s:5d}: ours {row['ours_tflops']:6.1f}, flex "
              f"{row['flex_tflops'] or 0:6.1f}, sdpa {row['sdpa_tflops'] or 0:6.1f} TFLOP/s",
              flush=True)

    def number(x):
        return f"{x:.1f}" if x else "-"

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "-"

    # D = 80 and 96 against the D = 64 and 128 of the same variant and S.
    reference = {(r["variant"], r["S"], r["D"]): r["ours_tflops"] for r in rows}
    lines = [f"{props.name}, torch {torch.__version__}; TFLOP/s of the visible scores "
             "(4 B H D per visible (query, key) pair)", "",
             "| variant | D | S | B | H | attn-mlir | FlexAttention | SDPA | ours / Flex | "
             "ours / SDPA | ours / ours at D = 64, 128 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        versus = "-"
        if r["D"] in (80, 96):
            others = [reference.get((r["variant"], r["S"], d)) for d in (64, 128)]
            versus = " / ".join(ratio(r["ours_tflops"], t) for t in others)
        lines.append(
            f"| {r['variant']} | {r['D']} | {r['S']} | {r['B']} | {r['H']} | "
            f"{number(r['ours_tflops'])} | {number(r['flex_tflops'])} | {number(r['sdpa_tflops'])} | "
            f"{ratio(r['ours_tflops'], r['flex_tflops'])} | {ratio(r['ours_tflops'], r['sdpa_tflops'])} | "
            f"{versus} |")
    write_results(args.out, "variants", rows, lines)


if __name__ == "__main__":
    main()
