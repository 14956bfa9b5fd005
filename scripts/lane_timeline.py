"""Schematic timelines for the pictures of docs/gpu-kernel.md: boxes on
lanes (draw-overlapped-loop.py, draw-warp-roles.py)."""


def draw_lanes(axis, lanes, colours, boxes, fontsize=7):
    """Draws `boxes`, (lane index, start, length, colour key, label), on the
    rows of `lanes` (the first at the top), and labels the rows."""
    for lane, start, length, kind, label in boxes:
        y = len(lanes) - 1 - lane
        axis.broken_barh([(start, length)], (y - 0.35, 0.7),
                         facecolors=colours[kind], edgecolor="black",
                         linewidth=0.6)
        if label:
            axis.text(start + length / 2, y, label, ha="center",
                      va="center", fontsize=fontsize)
    axis.set_yticks(range(len(lanes)))
    axis.set_yticklabels(list(reversed(lanes)), fontsize=8)
    axis.tick_params(axis="x", labelsize=7)
