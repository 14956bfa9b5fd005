#!/usr/bin/python3
"""Plots a GPU benchmark CSV: TFLOP/s against S, ours against SDPA's backends.

Reads the benchmark.csv that gpu/compare_sdpa.py writes (columns D, causal,
S, ours_tflops, flash_tflops, cudnn_tflops; lines starting with # are
comments) and draws one panel per (D, causal).

Usage: benchmarks/plot_benchmark.py CSV OUT.png [--title TEXT]
"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

SERIES = [("ours_tflops", "attn-mlir", "o-"),
          ("flash_tflops", "SDPA FlashAttention-2", "s--"),
          ("cudnn_tflops", "SDPA cuDNN", "^:")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("out")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    with open(args.csv) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    panels = sorted({(int(r["D"]), r["causal"] == "True") for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6),
                             sharey=True, squeeze=False)
    for ax, (d, causal) in zip(axes[0], panels):
        panel = sorted((r for r in rows if int(r["D"]) == d and (r["causal"] == "True") == causal),
                       key=lambda r: int(r["S"]))
        lengths = [int(r["S"]) for r in panel]
        for key, label, style in SERIES:
            if key in panel[0] and panel[0][key]:
                ax.plot(lengths, [float(r[key]) for r in panel], style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths)
        ax.set_xticklabels([f"{s // 1024}k" if s >= 1024 else str(s) for s in lengths])
        ax.set_title(f"D = {d}, {'causal' if causal else 'not causal'}")
        ax.set_xlabel("S (B x S = 16k tokens)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("TFLOP/s (bf16, forward)")
    axes[0][0].set_ylim(bottom=0)
    axes[0][0].legend(loc="lower right", fontsize=8)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot: {args.out}")


if __name__ == "__main__":
    main()
