#!/usr/bin/env python3
"""attn-mlir's attention kernels against PyTorch SDPA, in one run.

Runs on a GPU machine with PyTorch and Triton (no LLVM/MLIR needed):
  * the device's two ceilings: a large bf16 matrix product (TFLOP/s) and a
    device-to-device copy (TB/s, bytes read plus bytes written);
  * over the forward sweep of the benchmark (B*S = 16k tokens, H*D = 2048,
    D in {64, 128}, S in {512 .. 16k}, causal and not, bf16; FLOPs =
    4*B*H*S*S*D, halved for causal), for each configuration one after the
    other: attn-mlir's kernel (bundle b_d<D>_s<S>[_causal] of --bundles, as
    written by scripts/gpu-check.sh prepare, timed by attn-launch --bench),
    the same kernel on mma.sync where --bundles also holds
    b_d<D>_s<S>[_causal]+mma-sync (an sm_90a bundle's default body is wgmma;
    the mma.sync one is the comparison), and PyTorch's
    scaled_dot_product_attention with its FLASH_ATTENTION and
    CUDNN_ATTENTION backends.
Each SDPA backend is first checked against the math backend on float32 copies
of the inputs (relative L2 error); attn-launch checks our kernels in the
correctness step of the GPU check. Times are medians of CUDA-event timings
over inputs rotated among several sets so that the L2 cache does not hold
them (attn-launch --bench; triton.testing.do_bench for SDPA).

Usage: python3 benchmarks/gpu/compare_sdpa.py [--attn-launch BIN --bundles DIR]
                                              [--out DIR] [--quick]
Writes benchmark.md and benchmark.csv to DIR (default: .).
"""
import argparse
import csv
import os
import subprocess
import sys

import torch
import torch.nn.functional as F
import triton.testing
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def median_ms(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")


def matmul_peak():
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = median_ms(lambda: a @ b)
    return 2 * n**3 / ms / 1e9


def copy_bandwidth():
    x = torch.randn(1 << 30, device="cuda", dtype=torch.float32)  # 4 GiB
    y = torch.empty_like(x)
    ms = median_ms(lambda: y.copy_(x))
    return 2 * x.numel() * 4 / ms / 1e9


def write_results(out, stem, rows, lines):
    """STEM.csv from the rows, STEM.md from the table lines, and the table
    on stdout."""
    with open(os.path.join(out, stem + ".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    table = "\n".join(lines)
    with open(os.path.join(out, stem + ".md"), "w") as f:
        f.write(table + "\n")
    print(table)


def check(backend, causal, d):
    b, h, s = 2, 4, 1000
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    with sdpa_kernel(BACKENDS[backend]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    return ((out - ref).norm() / ref.norm()).item()


def bench(backend, s, d, causal, sets=4):
    b, h = 16384 // s, 2048 // d
    inputs = [
        tuple(torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        for _ in range(sets)
    ]
    turn = [0]

    def run():
        q, k, v = inputs[turn[0] % sets]
        turn[0] += 1
        F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    with sdpa_kernel(BACKENDS[backend]):
        ms = median_ms(run)
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    return b, h, ms, flops / ms / 1e9


def attn_launch_bench(attn_launch, bundle, csv_path, *options):
    """The row attn-launch --bench appends to CSV_PATH for BUNDLE (a dict
    of the CSV's columns); its report goes to stderr. PyTorch's cached
    blocks are released first: attn-launch allocates in another process
    (H100, 2026-11-27: the decode sweep ran out of memory at 4 GiB of K and
    V with tens of GiB held in PyTorch's cache)."""
    torch.cuda.empty_cache()
    subprocess.run([attn_launch, bundle, "--bench", "--no-check", f"--csv={csv_path}", *options],
                   check=True, stdout=sys.stderr)
    with open(csv_path) as f:
        return list(csv.DictReader(f))[-1]


def bundle_ms(args, name, csv_name):
    """The median ms of bundle NAME of --bundles, from attn-launch --bench
    (its rows appended to CSV_NAME in --out)."""
    row = attn_launch_bench(args.attn_launch, os.path.join(args.bundles, name),
                            os.path.join(args.out, csv_name))
    return float(row["median_ms"])


def comparison_arguments(doc, bundles, quick):
    """The arguments of a comparison script that needs our bundles
    (compare_decode.py, compare_flex.py): --attn-launch, --bundles (the
    BUNDLES set), --out (created) and --quick (QUICK says what it keeps)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--attn-launch", required=True, help="attn-launch binary")
    parser.add_argument("--bundles", required=True, help=f"directory of the {bundles} bundles")
    parser.add_argument("--out", default=".")
    parser.add_argument("--quick", action="store_true", help=quick)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    return args


def ours(attn_launch, bundles, out, s, d, causal, peak, suffix=""):
    """TFLOP/s and ms of our kernel for one configuration, from attn-launch;
    None for a bundle name with `suffix` that --bundles does not hold."""
    name = f"b_d{d}_s{s}" + ("_causal" if causal else "") + suffix
    if suffix and not os.path.isdir(os.path.join(bundles, name)):
        return None
    row = attn_launch_bench(attn_launch, os.path.join(bundles, name),
                            os.path.join(out, "attn_launch_bench.csv"), f"--peak-tflops={peak:.1f}")
    return float(row["median_ms"]), float(row["tflops"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".")
    parser.add_argument("--quick", action="store_true", help="D = 128, S = 4k and 16k only")
    parser.add_argument("--attn-launch", help="attn-launch binary")
    parser.add_argument("--bundles", help="directory of the b_* bundles")
    args = parser.parse_args()
    if bool(args.attn_launch) != bool(args.bundles):
        parser.error("--attn-launch and --bundles go together")
    os.makedirs(args.out, exist_ok=True)

    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}", flush=True)
    peak = matmul_peak()
    bandwidth = copy_bandwidth()
    print(f"bf16 matmul 8192^3: {peak:.0f} TFLOP/s; device copy: {bandwidth:.2f} TB/s", flush=True)

    for backend in BACKENDS:
        for d in (64, 128):
            for causal in (False, True):
                err = check(backend, causal, d)
                status = "ok" if err < 1e-2 else "FAIL"
                print(f"check {backend} D={d} causal={causal}: rel err {err:.2e} {status}", flush=True)
                if status != "ok":
                    sys.exit(1)

    lengths = (4096, 16384) if args.quick else (512, 1024, 2048, 4096, 8192, 16384)
    rows = []
    for d in (128,) if args.quick else (64, 128):
        for causal in (False, True):
            for s in lengths:
                row = {"D": d, "causal": causal, "S": s}
                if args.bundles:
                    row["ours_ms"], row["ours_tflops"] = ours(
                        args.attn_launch, args.bundles, args.out, s, d, causal, peak)
                    mma_sync = ours(args.attn_launch, args.bundles, args.out, s, d, causal,
                                    peak, suffix="+mma-sync")
                    if mma_sync:
                        row["mma_sync_ms"], row["mma_sync_tflops"] = mma_sync
                for backend in BACKENDS:
                    b, h, ms, tflops = bench(backend, s, d, causal)
                    row.update({"B": b, "H": h, f"{backend}_ms": ms, f"{backend}_tflops": tflops})
                rows.append(row)
                line = (f"D={d} causal={int(causal)} S={s:5d} B={row['B']:2d} H={row['H']:2d}: "
                        f"flash {row['flash_tflops']:6.1f}  cudnn {row['cudnn_tflops']:6.1f}")
                if args.bundles:
                    line += f"  ours {row['ours_tflops']:6.1f} ({row['ours_tflops'] / row['flash_tflops']:.2f}x FA-2)"
                    if "mma_sync_tflops" in row:
                        line += f"  ours on mma.sync {row['mma_sync_tflops']:6.1f}"
                print(line + " TFLOP/s", flush=True)

    lines = [
        f"{props.name}, torch {torch.__version__}; bf16 matmul {peak:.0f} TFLOP/s, copy {bandwidth:.2f} TB/s",
        "",
    ]
    if args.bundles:
        lines += [
            "| D | causal | S | B | H | attn-mlir TFLOP/s | on mma.sync | FA-2 (flash) | cuDNN | ours / FA-2 | ours / cuDNN | ours % of matmul peak |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            mma_sync = f"{r['mma_sync_tflops']:.1f}" if "mma_sync_tflops" in r else "-"
            lines.append(
                f"| {r['D']} | {'yes' if r['causal'] else 'no'} | {r['S']} | {r['B']} | {r['H']} | "
                f"{r['ours_tflops']:.1f} | {mma_sync} | {r['flash_tflops']:.1f} | {r['cudnn_tflops']:.1f} | "
                f"{r['ours_tflops'] / r['flash_tflops']:.2f} | {r['ours_tflops'] / r['cudnn_tflops']:.2f} | "
                f"{100 * r['ours_tflops'] / peak:.0f}% |"
            )
    else:
        lines += [
            "| D | causal | S | B | H | FA-2 (flash) TFLOP/s | cuDNN TFLOP/s | FA-2 % of matmul peak |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            lines.append(
                f"| {r['D']} | {'yes' if r['causal'] else 'no'} | {r['S']} | {r['B']} | {r['H']} | "
                f"{r['flash_tflops']:.1f} | {r['cudnn_tflops']:.1f} | {100 * r['flash_tflops'] / peak:.0f}% |"
            )
    write_results(args.out, "benchmark", rows, lines)


if __name__ == "__main__":
    main()
