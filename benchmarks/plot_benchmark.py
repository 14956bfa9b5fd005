#!/usr/bin/python3
"""Plots a GPU benchmark CSV of the one-call GPU check, ours against PyTorch's.

benchmark.csv (gpu/compare_sdpa.py; columns D, causal, S, ours_tflops,
flash_tflops, cudnn_tflops, and mma_sync_tflops where the run had the
mma.sync twins): TFLOP/s against S, one panel per (D, causal).
decode.csv (gpu/compare_decode.py; columns Hq, Hkv, B, Sk and milliseconds
lean, picked, fa2_grid, flash, cudnn, flex): microseconds against Sk, one
panel per (Hq/Hkv, B). Which it is, the header says; lines starting with #
are comments.

Usage: benchmarks/plot_benchmark.py CSV OUT.png [--title TEXT]
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

PREFILL_SERIES = [("ours_tflops", "attn-mlir", "o-"),
                  ("mma_sync_tflops", "attn-mlir on mma.sync", "d-."),
                  ("flash_tflops", "SDPA FlashAttention-2", "s--"),
                  ("cudnn_tflops", "SDPA cuDNN", "^:")]
DECODE_SERIES = [("picked", "attn-mlir, picked schedule", "o-"),
                 ("lean", "attn-mlir, Lean", "D-"),
                 ("fa2_grid", "attn-mlir, FA-2 grid (no split)", "x-"),
                 ("flash", "SDPA FlashAttention-2", "s--"),
                 ("cudnn", "SDPA cuDNN", "^:"),
                 ("flex", "FlexDecoding", "v:")]


def length_label(s):
    return f"{s // 1024}k" if s >= 1024 else str(s)


def draw(axes, panels, rows_of, length_key, series, value):
    """Panel after panel of AXES, one per key of PANELS: each series' VALUE
    against length_key."""
    for ax, panel_key in zip(axes, panels):
        panel = sorted(rows_of(panel_key), key=lambda r: int(r[length_key]))
        lengths = [int(r[length_key]) for r in panel]
        for key, label, style in series:
            points = [(n, value(r[key])) for n, r in zip(lengths, panel) if r.get(key)]
            if points:
                ax.plot(*zip(*points), style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths)
        ax.set_xticklabels([length_label(s) for s in lengths])
        ax.grid(alpha=0.3)


def prefill(rows):
    panels = sorted({(int(r["D"]), r["causal"] == "True") for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6),
                             sharey=True, squeeze=False)
    row_axes = axes[0]
    draw(row_axes, panels,
         lambda p: (r for r in rows if int(r["D"]) == p[0] and (r["causal"] == "True") == p[1]),
         "S", PREFILL_SERIES, float)
    for ax, (d, causal) in zip(row_axes, panels):
        ax.set_title(f"D = {d}, {'causal' if causal else 'not causal'}")
        ax.set_xlabel("S (B x S = 16k tokens)")
    row_axes[0].set_ylabel("TFLOP/s (bf16, forward)")
    row_axes[0].set_ylim(bottom=0)
    row_axes[0].legend(loc="lower right", fontsize=8)
    return fig


def decode(rows):
    # A row per head ratio (most query heads per key/value head first), its
    # batches from left to right.
    heads = sorted({(int(r["Hq"]), int(r["Hkv"])) for r in rows}, key=lambda h: -h[0] / h[1])
    batches = {h: sorted({int(r["B"]) for r in rows if (int(r["Hq"]), int(r["Hkv"])) == h})
               for h in heads}
    columns = max(len(b) for b in batches.values())
    fig, axes = plt.subplots(len(heads), columns, figsize=(4.2 * columns, 3.6 * len(heads)),
                             squeeze=False)
    panels, flat = [], []
    for row, h in zip(axes, heads):
        panels += [(h, b) for b in batches[h]]
        flat += list(row[:len(batches[h])])
        for unused in row[len(batches[h]):]:
            unused.set_visible(False)
    draw(flat, panels,
         lambda p: (r for r in rows if ((int(r["Hq"]), int(r["Hkv"])), int(r["B"])) == p),
         "Sk", DECODE_SERIES, lambda ms: 1e3 * float(ms))
    for ax, ((hq, hkv), b) in zip(flat, panels):
        ax.set_yscale("log")
        ax.tick_params(axis="x", labelsize=7)
        ax.set_title(f"Hq/Hkv = {hq}/{hkv}, B = {b}")
        ax.set_xlabel("Sk (one query row, D = 128)")
    for row in axes:
        row[0].set_ylabel("microseconds (bf16)")
    flat[0].legend(loc="upper left", fontsize=7)
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("out")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    with open(args.csv) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows:
        parser.error(f"{args.csv} has no rows")
    if "Sk" in rows[0]:
        fig = decode(rows)
    elif "S" in rows[0]:
        fig = prefill(rows)
    else:
        parser.error(f"{args.csv} is neither a benchmark.csv nor a decode.csv "
                     f"(columns {', '.join(rows[0])})")
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
