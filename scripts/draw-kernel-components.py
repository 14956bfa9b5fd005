#!/usr/bin/python3
"""Draws docs/images/kernel-components.svg: how attn-to-nvgpu assembles a
GPU kernel (docs/gpu-kernel.md, "CTA body and kernel skeletons"): the kernel
plan in the IR (#attn.kernel) choosing, the skeletons mapping a schedule onto
CTAs, the two CTA bodies, the components they are built from, and which plan
field each component serves. The dashed box is a part still inside the
operand staging, not yet a component of its own.

    scripts/draw-kernel-components.py [OUT.svg]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

PLAN, SKELETON, BODY, COMPONENT, PRIMITIVE = (
    "#fdd0a2", "#c6dbef", "#c7e9c0", "#fff7bc", "#f0f0f0")


def draw(axis):
    axis.set_xlim(0, 12)
    axis.set_ylim(0, 8.2)
    axis.axis("off")

    def box(x, y, w, h, title, detail, colour, dashed=False):
        axis.add_patch(matplotlib.patches.FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.05", facecolor=colour,
            edgecolor="black", linewidth=0.7,
            linestyle="--" if dashed else "-"))
        axis.text(x + w / 2, y + h - 0.12, title, ha="center", va="top",
                  fontsize=7.5, fontweight="bold")
        axis.text(x + w / 2, y + h - 0.42, detail, ha="center", va="top",
                  fontsize=6.3)
        return (x, y, w, h)

    def arrow(start, end, colour="black", label=None):
        axis.annotate("", xy=end, xytext=start,
                      arrowprops=dict(arrowstyle="->", color=colour,
                                      linewidth=0.8))
        if label:
            axis.text((start[0] + end[0]) / 2 + 0.05,
                      (start[1] + end[1]) / 2, label, fontsize=6,
                      color=colour)

    box(0.2, 7.0, 11.6, 1.0, "#attn.kernel: the plan in the IR",
        "written by attn-select-schedule (planKernel, planGradKernel: "
        "lib/Analysis/KernelPlan.cpp), checked when pinned\n"
        "unit | kv, q | roles, registers | loop | o | min_ctas_per_sm",
        PLAN)
    box(0.2, 5.45, 5.6, 1.15, "kernel skeletons (KernelSkeletons.cpp)",
        "which CTA computes which output tile and key/value range:\n"
        "FlashAttention-2's grid | split-KV's pieces and merge |\n"
        "Lean's persistent CTAs (min_ctas_per_sm)", SKELETON)
    box(6.2, 5.45, 5.6, 1.15, "warp roles (WarpRoles.cpp)",
        "the skeleton built once per role (roles, registers):\n"
        "producer warpgroup and consumers, setmaxnreg,\n"
        "named barriers, the ping-pong's turns", SKELETON)
    fwd = box(0.2, 3.4, 7.4, 1.6, "Fa2CtaBody: the forward CTA body "
              "(CtaBody.h)",
              "the loop over key/value blocks (loop):\n"
              "sequential | overlapped (S of block n beside P V of n - 1) "
              "| ping-pong\n", BODY)
    box(0.45, 3.5, 3.3, 0.75, "OperandStaging (OperandStaging.h)",
        "CpAsyncStaging.cpp | TensorCopyStaging.cpp:\n"
        "stages, mbarriers, the producer's share (kv, q)", COMPONENT)
    box(4.0, 3.5, 3.35, 0.75, "key/value access",
        "how a key block's rows are found:\n"
        "dense [B, H, S, D] (paged, ragged: to come)", COMPONENT, dashed=True)
    grad = box(8.0, 3.4, 3.8, 1.6, "Fa2GradBody: the backward body",
               "(Fa2GradKernel.cpp)\nits own grid: CTAs owning a key/value\n"
               "block (dK, dV) or a query block (dQ);\n"
               "P and dS recomputed from LSE (unit, kv)", BODY)
    soft = box(0.2, 1.5, 2.6, 1.3, "SoftmaxStep",
               "a block's scores: scale, softcap,\nscore region, masks, "
               "block mask;\nthe online softmax and rescale;\nthe state's "
               "layout", COMPONENT)
    epi = box(3.0, 1.5, 2.6, 1.3, "CtaEpilogue",
              "O and LSE: lane stores |\ntensor stores (o);\npartials into "
              "slots, their\nlog-sum-exp merge", COMPONENT)
    unit = box(5.9, 1.5, 5.9, 1.3, "ProductUnit (ProductUnit.h)  (unit)",
               "rows x streamed^T and acc + A B, C fragments either way\n\n"
               "MmaSyncUnit.cpp: ldmatrix, mma.sync m16n8k16\n"
               "WgmmaUnit.cpp: descriptors, wgmma (issued apart for the "
               "overlapped loop)", COMPONENT)
    box(0.2, 0.1, 11.6, 1.0, "CtaPrimitives (CtaPrimitives.cpp), shared by "
        "every body and component",
        "lanes and fragment layouts, the CTA's rows and mask geometry, "
        "swizzled shared-memory tiles, cp.async and tensor copies "
        "(TensorCopy.cpp),\nwgmma as IR (WarpgroupMma.cpp), "
        "quad reductions, approximate exp2 / log2 / tanh", PRIMITIVE)

    arrow((3.0, 7.0), (3.0, 6.65), "#e6550d", "schedule")
    arrow((9.0, 7.0), (9.0, 6.65), "#e6550d", "roles")
    arrow((3.0, 5.45), (3.0, 5.05))
    arrow((7.0, 5.45), (6.6, 5.05))
    for target in (soft, epi):
        arrow((fwd[0] + 1.5 + target[0] / 2, fwd[1]),
              (target[0] + target[2] / 2, target[1] + target[3] + 0.05))
    arrow((6.4, fwd[1]), (7.2, unit[1] + unit[3] + 0.05))
    arrow((grad[0] + 1.9, grad[1]), (10.2, unit[1] + unit[3] + 0.05))
    axis.text(0.2, -0.25, "solid: a component of its own file; dashed: still "
              "inside the staging. Plan fields in parentheses.",
              fontsize=6.3)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "docs/images/kernel-components.svg"
    figure, axis = plt.subplots(figsize=(11, 7.6))
    draw(axis)
    figure.tight_layout()
    figure.savefig(out, **({"metadata": {"Date": None}} if out.endswith(".svg") else {"dpi": 110}))


if __name__ == "__main__":
    main()
