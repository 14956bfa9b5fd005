#!/usr/bin/python3
"""Draws docs/images/overlapped-loop.svg: the CTA body's loop over four
key/value blocks with two stages, as FlashAttention-2's loop runs it
(mma.sync: copies, S, softmax, P V in turn) and as the overlapped loop runs it
(wgmma: block r's softmax beside block r - 1's P V, K and V by tensor copies;
docs/gpu-kernel.md). A
schematic: the durations are illustrative units, not measurements.

    scripts/draw-overlapped-loop.py [OUT.svg]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from lane_timeline import draw_lanes  # noqa: E402

# Illustrative durations (one unit: one product of a block).
COPY, PRODUCT, SOFTMAX, RESCALE = 1.8, 1.0, 1.6, 0.25
BLOCKS = 4
LANES = ["copies", "tensor cores", "warp registers"]
COLOURS = {"copy": "#9ecae1", "S": "#fd8d3c", "PV": "#e6550d",
           "softmax": "#74c476", "rescale": "#31a354"}


def sequential():
    """FlashAttention-2's loop: group n holds K and V of block n."""
    boxes, barriers, landed = [], [], {0: COPY}
    boxes.append((0, 0.0, COPY, "copy", "K0 V0"))
    t = 0.0
    for n in range(BLOCKS):
        start = max(t, landed[n])
        barriers.append(start)
        if n + 1 < BLOCKS:
            boxes.append((0, start, COPY, "copy", f"K{n + 1} V{n + 1}"))
            landed[n + 1] = start + COPY
        boxes.append((1, start, PRODUCT, "S", f"S{n}"))
        t = start + PRODUCT
        boxes.append((2, t, SOFTMAX, "softmax", f"softmax {n}"))
        t += SOFTMAX
        boxes.append((1, t, PRODUCT, "PV", f"P{n}V{n}"))
        t += PRODUCT
    return boxes, barriers, t


def overlapped():
    """The overlapped loop: group r holds K of block r and V of block r - 1;
    step r issues S_r and P_{r-1} V_{r-1}, softmax(S_r) runs beside the
    latter, O is rescaled once it is done."""
    boxes, barriers, landed = [], [], {0: COPY}
    boxes.append((0, 0.0, COPY, "copy", "K0"))
    t = 0.0
    for r in range(BLOCKS + 1):
        start = max(t, landed[r])
        barriers.append(start)
        if r + 1 <= BLOCKS:
            label = f"K{r + 1} V{r}" if r + 1 < BLOCKS else f"V{r}"
            boxes.append((0, start, COPY, "copy", label))
            landed[r + 1] = start + COPY
        tensor = start
        if r < BLOCKS:
            boxes.append((1, tensor, PRODUCT, "S", f"S{r}"))
            tensor += PRODUCT
        if r > 0:
            boxes.append((1, tensor, PRODUCT, "PV", f"P{r - 1}V{r - 1}"))
        product_done = tensor + (PRODUCT if r > 0 else 0.0)
        if r < BLOCKS:
            softmax_start = start + PRODUCT
            boxes.append((2, softmax_start, SOFTMAX, "softmax",
                          f"softmax {r}"))
            t = max(softmax_start + SOFTMAX, product_done)
            if r > 0:
                boxes.append((2, t, RESCALE, "rescale", ""))
                t += RESCALE
        else:
            t = product_done
    return boxes, barriers, t


def draw(axis, title, boxes, barriers, end, width):
    draw_lanes(axis, LANES, COLOURS, boxes)
    for x in barriers:
        axis.axvline(x, color="black", linestyle="--", linewidth=0.7)
    axis.axvline(end, color="#b30000", linewidth=1.2)
    axis.text(end, len(LANES) - 0.45, f" done at {end:.1f}", color="#b30000",
              fontsize=8, va="bottom")
    axis.set_xlim(0, width)
    axis.set_ylim(-0.6, len(LANES) - 0.1)
    axis.set_title(title, fontsize=9, loc="left")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "docs/images/overlapped-loop.svg"
    first, second = sequential(), overlapped()
    width = max(first[2], second[2]) * 1.12
    figure, axes = plt.subplots(2, 1, figsize=(10, 5.4), sharex=True)
    draw(axes[0], "FlashAttention-2's loop (mma.sync): S, softmax, P V in "
         "turn; a copy group holds K and V of one block\n"
         "(cp.async from every thread)", *first, width)
    draw(axes[1], "The overlapped loop (wgmma): softmax of block r beside "
         "P V of block r - 1; a copy group holds K of block r and V of "
         "block r - 1\n(tensor copies issued by thread 0, landing on their "
         "stage's mbarrier)", *second, width)
    legend = [matplotlib.patches.Patch(facecolor=colour, edgecolor="black",
                                       label=name)
              for name, colour in zip(["copy group", "S = Q K^T", "O += P V",
                                       "softmax", "O *= alpha"],
                                      COLOURS.values())]
    figure.legend(handles=legend, fontsize=7, loc="lower center", ncol=5)
    axes[1].set_xlabel("time (illustrative units: one product = 1; dashed: "
                       "the step's barrier, with its group landed: "
                       "cp.async.wait_group, or the mbarrier's phase)",
                       fontsize=8)
    figure.tight_layout(rect=(0, 0.06, 1, 1))
    figure.savefig(out)


if __name__ == "__main__":
    main()
