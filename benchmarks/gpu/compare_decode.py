#!/usr/bin/env python3
"""attn-mlir's decode kernels against PyTorch's, in one run.

Runs on a GPU machine with PyTorch and Triton (no LLVM/MLIR needed). For each
decode configuration of benchmarks/gpu/sweep.py (one query row, bf16,
D = 128, Hq/Hkv in {32/8, 32/32}, B in {1, 4, 16}, Sk from 1k to 512k where K
and V fit), one after the other:
  * attn-mlir's Lean attention (bundle d_lean_*), FlashAttention-2's grid
    without a split (bundle d_fa2_*) and the schedule attn-select-schedule
    picks (bundle d_picked_*: split-KV where FlashAttention-2's rule splits,
    else its grid; the table names it), timed by attn-launch --bench;
  * PyTorch SDPA with the FLASH_ATTENTION backend (FlashAttention-2's
    split-KV; is_causal=False, enable_gqa=True) and CUDNN_ATTENTION;
  * FlexDecoding: torch.compile(flex_attention) with enable_gqa.
Each row gives microseconds and the achieved bandwidth, bytes of K and V read
over the time, against the device's copy bandwidth (bytes read plus written
by a device-to-device copy). PyTorch's kernels are checked against the math
backend on a small case first; attn-launch checks ours in the correctness
step of the GPU check (c_lean_*, c_split_*).

Usage: python3 benchmarks/gpu/compare_decode.py --attn-launch BIN --bundles DIR
                                                [--out DIR] [--quick]
Writes decode.md and decode.csv to DIR (default: .).
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import flex_attention

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_sdpa import bundle_ms, comparison_arguments, copy_bandwidth, median_ms, write_results  # noqa: E402
from sweep import decode_configs  # noqa: E402

D = 128
# --quick: the budgeted GPU check's decode lengths (scripts/gpu-check.sh).
QUICK_LENGTHS = (16384, 131072)
flex = torch.compile(flex_attention, dynamic=False)


def pytorch(name, q, k, v):
    if name == "flex":
        return flex(q, k, v, enable_gqa=True)
    backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[name]
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=False, enable_gqa=True)


def check(name):
    q = torch.randn(2, 32, 1, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(2, 8, 3000, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    out = pytorch(name, q, k, v).float()
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), enable_gqa=True)
    return ((out - ref).norm() / ref.norm()).item()


def bench_pytorch(name, hq, hkv, b, sk):
    q = torch.randn(b, hq, 1, D, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, sk, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    try:
        return median_ms(lambda: pytorch(name, q, k, v))
    except Exception as error:  # a backend that does not take the shape
        print(f"  {name}: {type(error).__name__}: {str(error).splitlines()[0]}", flush=True)
        return None


def picked_schedule(bundles, name, hq):
    """The schedule of bundle NAME: split-KV with S splits makes the grid's z
    H x S (a constant), FlashAttention-2's grid has z = H, where H is the
    tiled heads: Hq, or Hq / packed_heads with a KV head's query heads
    packed into one tile."""
    with open(os.path.join(bundles, name, "manifest.json")) as f:
        kernel = json.load(f)["kernels"][0]
    z, heads = kernel["grid"][2], hq // kernel["tiles"].get("packed_heads", 1)
    return f"split-KV {z // heads}" if isinstance(z, int) and z > heads else "FA-2 grid"


def main():
    args = comparison_arguments(__doc__, "d_*", "Hq/Hkv = 32/8, B = 1 and Sk = 16k and 128k only, "
                                "without FlexDecoding (its compilation takes minutes)")

    props = torch.cuda.get_device_properties(0)
    bandwidth = copy_bandwidth()
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}; "
          f"copy {bandwidth:.2f} TB/s", flush=True)
    kinds = ("flash", "cudnn") if args.quick else ("flash", "cudnn", "flex")
    for name in kinds:
        err = check(name)
        print(f"check {name}: rel err {err:.2e}", flush=True)
        if not err < 1e-2:
            sys.exit(1)

    rows = []
    for hq, hkv, b, sk in decode_configs():
        if args.quick and (hkv != 8 or b != 1 or sk not in QUICK_LENGTHS):
            continue
        suffix = f"h{hq}_{hkv}_b{b}_s{sk}"
        row = {"Hq": hq, "Hkv": hkv, "B": b, "Sk": sk,
               "lean": bundle_ms(args, f"d_lean_{suffix}", "attn_launch_decode.csv"),
               "fa2_grid": bundle_ms(args, f"d_fa2_{suffix}", "attn_launch_decode.csv"),
               "picked": bundle_ms(args, f"d_picked_{suffix}", "attn_launch_decode.csv"),
               "schedule": picked_schedule(args.bundles, f"d_picked_{suffix}", hq)}
        for name in kinds:
            row[name] = bench_pytorch(name, hq, hkv, b, sk)
        kv_bytes = 2 * b * hkv * sk * D * 2
        for key in ("lean", "fa2_grid", "picked") + kinds:
            ms = row[key]
            row[f"{key}_tbs"] = kv_bytes / ms / 1e9 if ms else None
        rows.append(row)
        best = min((row[k], k) for k in kinds if row[k])
        print(f"Hq/Hkv={hq}/{hkv} B={b:2d} Sk={sk:6d}: lean {1e3 * row['lean']:8.1f} us "
              f"({row['lean_tbs']:.2f} TB/s), picked ({row['schedule']}) "
              f"{1e3 * row['picked']:8.1f} us, best PyTorch {best[1]} {1e3 * best[0]:8.1f} us",
              flush=True)

    def us(ms):
        return f"{1e3 * ms:.1f}" if ms else "-"

    lines = [f"{props.name}, torch {torch.__version__}; device copy {bandwidth:.2f} TB/s; "
             "microseconds (K+V bandwidth in TB/s)", "",
             "| Hq/Hkv | B | Sk | Lean | Lean TB/s (% of copy) | FA-2 grid, no split | "
             "picked schedule | picked | picked TB/s (% of copy) | SDPA flash | "
             "SDPA cuDNN | FlexDecoding | Lean / best PyTorch | picked / best PyTorch |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        best = min(r[k] for k in kinds if r[k])
        lines.append(
            f"| {r['Hq']}/{r['Hkv']} | {r['B']} | {r['Sk']} | {us(r['lean'])} | "
            f"{r['lean_tbs']:.2f} ({100 * r['lean_tbs'] / bandwidth:.0f}%) | {us(r['fa2_grid'])} | "
            f"{r['schedule']} | {us(r['picked'])} | "
            f"{r['picked_tbs']:.2f} ({100 * r['picked_tbs'] / bandwidth:.0f}%) | "
            f"{us(r['flash'])} | {us(r['cudnn'])} | {us(r.get('flex'))} | {best / r['lean']:.2f}x | "
            f"{best / r['picked']:.2f}x |")
    write_results(args.out, "decode", rows, lines)


if __name__ == "__main__":
    main()
