#!/usr/bin/env python3
"""attn-mlir's backward kernel against PyTorch SDPA's backward, in one run.

Runs on a GPU machine with PyTorch and Triton (no LLVM/MLIR needed), over
the backward sweep (B*S = 16k tokens, H*D = 2048, D in {64, 128}, S in
{1k .. 16k}, causal and not, bf16): for each configuration one after the
other, attn-mlir's backward kernel (kernel <name>_attention_grad0 of bundle
g_d<D>_s<S>[_causal] of --bundles, as scripts/gpu-check.sh prepare writes
it, timed by attn-launch --bench --no-check on seeded inputs), and the
backward pass of PyTorch's scaled_dot_product_attention with its
FLASH_ATTENTION and CUDNN_ATTENTION backends (torch.autograd.grad of O with
respect to Q, K and V, the forward run once per input set before the
timing). FLOPs are
FlashAttention's count for a backward pass: 2.5 times the forward's (4 B H
S^2 D, halved for causal), whatever a kernel recomputes. The correctness
step of the GPU check checks our backward kernel (the c_grad_* bundles and
the Python package's gradient cases). Times are medians of CUDA-event
timings over input sets rotated past the L2 cache (attn-launch --bench
for ours; triton.testing.do_bench for SDPA).

Usage: python3 benchmarks/gpu/compare_backward.py --attn-launch BIN --bundles DIR
                                                  [--out DIR] [--quick]
Writes backward.md and backward.csv to DIR (default: .).
"""
import os

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel

from compare_sdpa import (BACKENDS, attn_launch_bench, comparison_arguments, matmul_peak,
                          median_ms, write_results)

LENGTHS = (1024, 2048, 4096, 8192, 16384)


def backward_flops(b, h, s, d, causal):
    return 2.5 * 4 * b * h * s * s * d / (2 if causal else 1)


def sdpa_backward(backend, s, d, causal, sets=4):
    """B, H, ms and TFLOP/s of SDPA's backward pass with BACKEND, over
    input sets rotated as attn-launch rotates ours (so that the L2 cache
    does not hold one launch's inputs for the next)."""
    b, h = 16384 // s, 2048 // d
    graphs = []
    with sdpa_kernel(BACKENDS[backend]):
        for _ in range(sets):
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16,
                                   requires_grad=True) for _ in range(3))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            graphs.append((o, (q, k, v), torch.randn_like(o)))
    turn = [0]

    def run():
        o, inputs, grad_out = graphs[turn[0] % sets]
        turn[0] += 1
        torch.autograd.grad(o, inputs, grad_out, retain_graph=True)

    ms = median_ms(run)
    return b, h, ms, backward_flops(b, h, s, d, causal) / ms / 1e9


def ours(args, s, d, causal, peak):
    """ms and TFLOP/s of our backward kernel, from attn-launch."""
    name = f"g_d{d}_s{s}" + ("_causal" if causal else "")
    row = attn_launch_bench(args.attn_launch, os.path.join(args.bundles, name),
                            os.path.join(args.out, "attn_launch_backward.csv"),
                            f"--kernel={name}_attention_grad0", f"--peak-tflops={peak:.1f}")
    return float(row["median_ms"]), float(row["tflops"])


def main():
    args = comparison_arguments(__doc__, "g_*", "D = 128, S = 4k and 16k only")
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}",
          flush=True)
    peak = matmul_peak()
    print(f"bf16 matmul 8192^3: {peak:.0f} TFLOP/s", flush=True)
    rows = []
    for d in (128,) if args.quick else (64, 128):
        for causal in (False, True):
            for s in (4096, 16384) if args.quick else LENGTHS:
                row = {"D": d, "causal": causal, "S": s}
                row["ours_ms"], row["ours_tflops"] = ours(args, s, d, causal, peak)
                for backend in BACKENDS:
                    b, h, ms, tflops = sdpa_backward(backend, s, d, causal)
                    row.update({"B": b, "H": h, f"{backend}_ms": ms, f"{backend}_tflops": tflops})
                rows.append(row)
                print(f"D={d} causal={int(causal)} S={s:5d}: ours {row['ours_tflops']:6.1f}  "
                      f"flash {row['flash_tflops']:6.1f}  cudnn {row['cudnn_tflops']:6.1f} TFLOP/s "
                      f"(backward)", flush=True)
    lines = [
        f"{props.name}, torch {torch.__version__}; bf16 matmul {peak:.0f} TFLOP/s; backward "
        "passes, FLOPs 2.5x the forward's",
        "",
        "| D | causal | S | B | H | attn-mlir TFLOP/s | FA-2 (flash) | cuDNN | ours / FA-2 | "
        "ours / cuDNN | ours % of matmul peak |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['D']} | {'yes' if r['causal'] else 'no'} | {r['S']} | {r['B']} | {r['H']} | "
            f"{r['ours_tflops']:.1f} | {r['flash_tflops']:.1f} | {r['cudnn_tflops']:.1f} | "
            f"{r['ours_tflops'] / r['flash_tflops']:.2f} | "
            f"{r['ours_tflops'] / r['cudnn_tflops']:.2f} | {100 * r['ours_tflops'] / peak:.0f}% |")
    write_results(args.out, "backward", rows, lines)


if __name__ == "__main__":
    main()
