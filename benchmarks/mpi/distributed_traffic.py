#!/usr/bin/python3
"""ATTENTION2D against ring attention on the CPU under mpirun: bytes and time.

For each P in --ranks (square grids for ATTENTION2D), runs the same attention
with `attn-run --attention2d=R,R` and `attn-run --ring=P` under mpirun and
collects what rank 0 reports: the bytes every rank sent (counted by
libattnmpi), the traffic model's bytes, the run time between barriers and the
checks. Also prints the paper's per-rank traffic formulas (ALGORITHMS.md,
per head, elements): ATTENTION2D (C-1)Sd/P + 2(R-1)Sd/P + (C-1)S(d+1)/P and
ring 2Sd(P-1)/P, which equal the measured bytes for MHA with f32 operands
(partials travel in f32). Writes a markdown table and a plot.

The ranks oversubscribe the machine's cores, so times are only comparable as
ratios within one run.

Usage: benchmarks/mpi/distributed_traffic.py [--build build] [--out DIR]
"""
import argparse
import math
import os
import re
import subprocess
import sys


def run(build, ranks, partition, args):
    command = ["mpirun", "-n", str(ranks), os.path.join(build, "bin", "attn-run"),
               partition] + args
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    text = result.stdout + result.stderr
    sent = re.search(r"bytes sent per rank: ([\d ]+) \(model (\d+): (\w+)\)", text)
    time = re.search(r"run ([\d.]+) ms", text)
    passed = result.returncode == 0 and all(
        line.endswith("PASS") for line in text.splitlines() if "check " in line)
    if not sent or not time:
        sys.exit(f"{' '.join(command)} failed:\n{text}")
    measured = [int(b) for b in sent.group(1).split()]
    return {"bytes": max(measured), "model": int(sent.group(2)),
            "exact": sent.group(3) == "exact", "ms": float(time.group(1)),
            "passed": passed}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default="build/benchmarks/mpi")
    parser.add_argument("--ranks", default="4,9,16")
    parser.add_argument("--seq", type=int, default=2304)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--head-dim", type=int, default=64)
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    s, h, d = options.seq, options.heads, options.head_dim
    spec = [f"--seq-q={s}", f"--heads={h}", f"--head-dim={d}", "--causal",
            "--lse", "--dtype=f32"]

    rows = []
    for p in [int(x) for x in options.ranks.split(",")]:
        r = math.isqrt(p)
        if r * r != p:
            sys.exit(f"{p} ranks: use a square number for the square grid")
        two_d = run(options.build, p, f"--attention2d={r},{r}", spec)
        ring = run(options.build, p, f"--ring={p}", spec)
        paper_2d = 4 * h * ((r - 1) * s * d + 2 * (r - 1) * s * d + (r - 1) * s * (d + 1)) / p
        paper_ring = 4 * h * 2 * s * d * (p - 1) / p
        rows.append((p, r, two_d, ring, paper_2d, paper_ring))
        print(f"P={p}: 2D {two_d} ring {ring}", flush=True)

    lines = [
        f"Causal MHA prefill, S = {s}, {h} heads, D = {d}, f32; bytes sent by "
        "each rank per run (all ranks equal).",
        "",
        "| P | grid | ATTENTION2D bytes (model, paper formula) | ring bytes "
        "(model, paper formula) | ring / 2D bytes | 2D ms | ring ms | checks |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p, r, two_d, ring, paper_2d, paper_ring in rows:
        lines.append(
            f"| {p} | {r}x{r} | {two_d['bytes']} ({two_d['model']}, "
            f"{paper_2d:.0f}) | {ring['bytes']} ({ring['model']}, "
            f"{paper_ring:.0f}) | {ring['bytes'] / two_d['bytes']:.2f} | "
            f"{two_d['ms']:.0f} | {ring['ms']:.0f} | "
            f"{'PASS' if two_d['passed'] and ring['passed'] else 'FAIL'} |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(options.out, "distributed_traffic.md"), "w") as f:
        f.write(table)
    print(table)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ps = [row[0] for row in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ps, [row[2]["bytes"] / 2**20 for row in rows], "o-", label="ATTENTION2D, measured")
    ax.plot(ps, [row[4] / 2**20 for row in rows], "k:", label="ATTENTION2D, paper formula")
    ax.plot(ps, [row[3]["bytes"] / 2**20 for row in rows], "s-", label="ring, measured")
    ax.plot(ps, [row[5] / 2**20 for row in rows], "k--", label="ring, paper formula")
    ax.set_xlabel("ranks P")
    ax.set_ylabel("MiB sent per rank per run")
    ax.set_xticks(ps)
    ax.set_ylim(bottom=0)
    ax.set_title(f"Causal MHA, S={s}, {h} heads, D={d}, f32")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(options.out, "distributed_traffic.png")
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
