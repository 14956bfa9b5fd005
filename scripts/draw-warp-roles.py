#!/usr/bin/python3
"""Draws docs/images/warp-roles.svg: the warp roles of a warp-specialised
wgmma kernel (docs/gpu-kernel.md, "Warp roles"): who waits on and arrives at
which mbarrier of the two-stage ring, and one key/value range of four blocks
(the overlapped loop's five copy groups) as the producer, the copy engine and
the consumers run it. A schematic: the durations are illustrative units, not
measurements.

    scripts/draw-warp-roles.py [OUT.svg]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from lane_timeline import draw_lanes  # noqa: E402

# Illustrative durations (one unit: one product of a block).
ISSUE, COPY, STEP = 0.25, 1.8, 2.6
BLOCKS, STAGES = 4, 2
LANES = ["producer thread", "copies on full[0]", "copies on full[1]",
         "consumer warpgroups"]
COLOURS = {"issue": "#fdd0a2", "copy": "#9ecae1", "step": "#74c476",
           "wait": "#f0f0f0"}


def roles(axis):
    """The CTA's roles and the stage ring, as boxes and arrows: the
    producer's arrows drawn to stage 0, the consumers' to stage 1 (each
    role uses both stages in turn)."""
    axis.set_xlim(0, 10)
    axis.set_ylim(0, 3.9)
    axis.axis("off")

    def box(x, y, w, h, text, colour, size=7.5):
        axis.add_patch(matplotlib.patches.FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.05", facecolor=colour,
            edgecolor="black", linewidth=0.7))
        axis.text(x + w / 2, y + h / 2, text, ha="center", va="center",
                  fontsize=size)

    def arrow(start, end, colour, rad=0.0):
        axis.annotate("", xy=end, xytext=start,
                      arrowprops=dict(arrowstyle="->", color=colour,
                                      linewidth=1.0,
                                      connectionstyle=f"arc3,rad={rad}"))

    box(0.1, 1.3, 2.4, 1.8,
        "producer warpgroup\nwarps 8-11, setmaxnreg.dec 24\n\n"
        "its first thread, group g:\nwait empty[g % 2]\n"
        "arrive.expect_tx full[g % 2]\ntensor copies of K, V", "#fdd0a2")
    box(7.5, 1.3, 2.4, 1.8,
        "consumer warpgroups\nwarps 0-7, setmaxnreg.inc 240\n\n"
        "step r:\nwait full[r % 2]\nS, softmax, P V (wgmma)\n"
        "every thread: arrive empty[r % 2]", "#c7e9c0")
    frames = []
    for stage in range(STAGES):
        x = 3.2 + 2.3 * stage
        frames.append(x)
        axis.add_patch(matplotlib.patches.Rectangle(
            (x - 0.1, 0.75), 1.9, 2.85, facecolor="none", edgecolor="grey",
            linestyle=":", linewidth=0.8))
        axis.text(x + 0.85, 3.4, f"stage {stage}", ha="center", fontsize=7.5)
        box(x, 2.55, 1.7, 0.6, "K tile", "#deebf7")
        box(x, 1.75, 1.7, 0.6, "V tile", "#deebf7")
        box(x, 0.9, 0.8, 0.5, f"full[{stage}]\n1 arrival\n+ bytes",
            "#fee6ce", 6)
        box(x + 0.9, 0.9, 0.8, 0.5, f"empty[{stage}]\n256\narrivals",
            "#e5f5e0", 6)
    p, c = frames
    arrow((2.55, 2.7), (p - 0.05, 2.85), "#3182bd")
    arrow((2.55, 2.5), (p - 0.05, 2.05), "#3182bd")
    axis.text(2.85, 2.95, "copies", fontsize=6.5, color="#3182bd")
    arrow((2.55, 1.45), (p - 0.05, 1.15), "#e6550d")
    axis.text(2.6, 1.05, "arrive.\nexpect_tx", fontsize=6.5, color="#e6550d")
    arrow((p + 1.3, 0.85), (1.3, 1.25), "#31a354", rad=-0.35)
    axis.text(2.9, 0.3, "wait (parity)", fontsize=6.5, color="#31a354")
    arrow((c + 1.75, 2.45), (7.45, 2.45), "#3182bd")
    axis.text(7.2, 2.55, "wgmma\nreads", fontsize=6.5, color="#3182bd",
              ha="center", va="bottom")
    arrow((c + 0.4, 0.85), (8.7, 1.25), "#e6550d", rad=0.35)
    axis.text(7.6, 0.3, "wait (parity)", fontsize=6.5, color="#e6550d")
    arrow((7.45, 1.45), (c + 1.75, 1.15), "#31a354")
    axis.text(7.25, 1.55, "arrive", fontsize=6.5, color="#31a354",
              ha="center")
    axis.set_title("The roles and the stage ring (two stages; two consumer "
                   "warpgroups of 128 x 128 tiles: 384 threads, 168 "
                   "registers each at entry)", fontsize=9, loc="left")


def timeline():
    """One range: the producer issues group g once group g - 2 is released;
    group g lands COPY later; consumer step r starts once group r landed
    and step r - 1 is done, and releases group r when it ends."""
    boxes, releases = [], {}
    issued, steps_done = {}, 0.0
    landed = {}
    t_producer = 0.0
    groups = BLOCKS + 1
    # Consumers and producer interleave: walk the groups in order, the
    # producer limited by the releases computed so far.
    for g in range(groups):
        ready = releases.get(g - STAGES, 0.0)
        start = max(t_producer, ready)
        if start > t_producer:
            boxes.append((0, t_producer, start - t_producer, "wait", ""))
        boxes.append((0, start, ISSUE, "issue", f"g{g}"))
        t_producer = start + ISSUE
        issued[g] = start
        label = (f"K{g}" if g == 0 else f"V{g - 1}" if g == BLOCKS
                 else f"K{g} V{g - 1}")
        boxes.append((1 + g % STAGES, start + ISSUE, COPY, "copy", label))
        landed[g] = start + ISSUE + COPY
        # Step g runs once its group landed and step g - 1 is done.
        step_start = max(steps_done, landed[g])
        text = (f"S{g}, softmax {g}" if g == 0 else f"P{g - 1}V{g - 1}"
                if g == BLOCKS else f"S{g}, softmax {g}, P{g - 1}V{g - 1}")
        length = STEP if 0 < g < BLOCKS else STEP * 0.6
        boxes.append((3, step_start, length, "step", text))
        steps_done = step_start + length
        releases[g] = steps_done
    return boxes, issued, releases, steps_done


def draw_timeline(axis):
    boxes, issued, releases, end = timeline()
    draw_lanes(axis, LANES, COLOURS, boxes, fontsize=6.5)
    # A release lets the producer issue the group that reuses the stages.
    for g, at in releases.items():
        if g + STAGES in issued:
            axis.annotate("", xy=(issued[g + STAGES], len(LANES) - 1.35),
                          xytext=(at, 0.35),
                          arrowprops=dict(arrowstyle="->", color="#31a354",
                                          linewidth=0.8))
    axis.set_xlim(0, end * 1.05)
    axis.set_ylim(-0.6, len(LANES) - 0.3)
    axis.set_xlabel("time (illustrative units: one product = 1; grey: the "
                    "producer waiting on an empty mbarrier; green arrows: "
                    "a step's release lets the group two later go)",
                    fontsize=8)
    axis.set_title("One key/value range of four blocks (the overlapped loop: "
                   "group g holds K of block g and V of block g - 1); no CTA "
                   "barrier between steps", fontsize=9, loc="left")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "docs/images/warp-roles.svg"
    figure, axes = plt.subplots(2, 1, figsize=(10, 7.2),
                                gridspec_kw={"height_ratios": [1.35, 1]})
    roles(axes[0])
    draw_timeline(axes[1])
    figure.tight_layout()
    figure.savefig(out)


if __name__ == "__main__":
    main()
