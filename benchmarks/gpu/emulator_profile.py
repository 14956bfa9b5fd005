#!/usr/bin/env python3
"""The Hopper kernels next to the mma.sync ones, on the PTX emulator.

Numbers without a GPU: each configuration of the GPU check's correctness
set (sweep.py --emulated, the emulator check's sizes) is compiled twice
with attn-compile, --matrix-unit=mma-sync and --matrix-unit=wgmma (the
schedule each module names: --split-kv=false but for c_split_decode, as
scripts/emulator-check.sh does), and run once each through attn-launch on
the PTX emulator with ATTN_EMULATOR_PROFILE. For each kernel it reports
the warp instructions per 64 x 64 block of the scores it visits (the
tile pairs, a query block and a key block, that attn-opt --attn-print-plan
counts, times the tile's rows and columns, over 4096) by class, so that
kernels of different tiles compare; the share of the
softmax's float and ex2 work, the shared-memory wavefronts against the
conflict-free ones, the global requests and the tensor copies. These are
instruction counts, not times: the profile says where a GPU's time can
go, not how long it takes.

Usage: emulator_profile.py [--build DIR] [--out DIR] [--plot FILE] [NAME ...]
Writes OUT/emulator_profile.md (and the plot with --plot); prints the table.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
UNITS = ("mma-sync", "wgmma")
CLASSES = ("mma", "ldmatrix", "exp2", "float", "integer", "memory", "control",
           "sync", "convert")
DEFAULT_NAMES = ("c_bf16_d64", "c_bf16_d128", "c_bf16_d128_causal", "c_f16_d256",
                 "c_softcap_d128", "c_split_many", "c_lean_many",
                 "c_pack_decode")


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit("emulator_profile.py: %s failed (%d):\n%s%s" %
                 (" ".join(command), result.returncode, result.stdout,
                  result.stderr))
    return result.stdout + result.stderr


def visited_pairs(build, module, unit):
    """Tile pairs the kernel visits, over every batch and (tiled) head."""
    plan = run([os.path.join(build, "bin", "attn-opt"), module,
                "--attn-select-schedule=matrix-unit=%s" % unit,
                "--attn-print-plan", "-o", os.devnull])
    shape = re.search(r"attention B=(\d+) Hq=(\d+)", plan)
    tiles = re.search(r"tiles: #attn\.fa2<([^>]*)>", plan)
    visited = re.search(r"per \(batch, [^)]*\): \d+ query blocks, (\d+) of",
                        plan)
    if not (shape and tiles and visited):
        sys.exit("emulator_profile.py: no plan for %s:\n%s" % (module, plan))
    packed = re.search(r"packed_heads = (\d+)", tiles.group(1))
    heads = int(shape.group(2)) // (int(packed.group(1)) if packed else 1)
    return int(visited.group(1)) * int(shape.group(1)) * heads


def profile(build, out, name, unit):
    module = os.path.join(out, "modules", name + ".mlir")
    bundle = os.path.join(out, unit, name)
    command = [os.path.join(build, "bin", "attn-compile"), module, "-o",
               bundle, "--matrix-unit=" + unit]
    if name != "c_split_decode":
        command.append("--split-kv=false")
    run(command)
    with open(os.path.join(bundle, "manifest.json")) as f:
        kernel = json.load(f)["kernels"][0]
    records = os.path.join(bundle, "profile.jsonl")
    if os.path.exists(records):
        os.remove(records)
    env = dict(os.environ, ATTNRT_LIBCUDA="emulator",
               ATTN_EMULATOR_PROFILE=records)
    run([os.path.join(build, "bin", "attn-launch"), bundle], env)
    with open(records) as f:
        launches = [json.loads(line) for line in f]
    # The first launch of the kernel (attn-launch launches it twice, and the
    # reference kernels around it).
    record = next(r for r in launches if r["kernel"] == kernel["name"])
    tiles = kernel["tiles"]
    record["tiles"] = "%dx%d, %d warps%s" % (
        tiles["block_m"], tiles["block_n"], tiles["warps"],
        " + %d" % kernel["producer_warps"] if kernel.get("producer_warps")
        else "")
    # The 64 x 64 blocks of scores the visited tile pairs hold.
    record["blocks"] = (visited_pairs(build, module, unit) *
                        tiles["block_m"] * tiles["block_n"] / 4096)
    return record


def row(name, records):
    cells = [name]
    per = {}
    for unit in UNITS:
        r = records[unit]
        warps = r["warp_instructions"]
        per[unit] = sum(warps.values()) / r["blocks"]
    change = per["wgmma"] / per["mma-sync"] - 1
    cells += ["%s / %s" % (records["mma-sync"]["tiles"],
                           records["wgmma"]["tiles"]),
              "%.0f / %.0f (%+.0f%%)" % (per["mma-sync"], per["wgmma"],
                                         100 * change)]
    for unit in UNITS:
        r = records[unit]
        warps = r["warp_instructions"]
        total = sum(warps.values())
        cells.append(", ".join(
            "%s %.0f" % (c, warps[c] / r["blocks"]) for c in CLASSES
            if warps[c]))
        cells.append("%.0f%%" % (100 * (warps["float"] + warps["exp2"]) /
                                 total))
    for unit in UNITS:
        r = records[unit]
        ideal = r["shared_ideal_wavefronts"]
        cells.append("%d (%.2fx)" % (r["shared_wavefronts"],
                                     r["shared_wavefronts"] / ideal
                                     if ideal else 1.0))
    w = records["wgmma"]
    cells.append("%d / %d in, %d out" % (records["mma-sync"]["global_requests"],
                                         w["tensor_loads"], w["tensor_stores"]))
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| configuration | tiles (mma.sync / wgmma) | warp instructions a "
    "64 x 64 block of scores (mma.sync / wgmma) | mma.sync by class, a block "
    "| float + ex2 share | wgmma by class, a block | float + ex2 share | shared "
    "wavefronts, mma.sync (x conflict-free) | wgmma | global requests of "
    "mma.sync / tensor copies of wgmma |\n"
    "|---|---|---|---|---|---|---|---|---|---|")


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(results)
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(names)), 5))
    width = 0.38
    colours = plt.get_cmap("tab10")
    for u, unit in enumerate(UNITS):
        bottom = [0.0] * len(names)
        for c, cls in enumerate(CLASSES):
            heights = [results[n][unit]["warp_instructions"][cls] /
                       results[n][unit]["blocks"] for n in names]
            xs = [i + (u - 0.5) * width for i in range(len(names))]
            ax.bar(xs, heights, width, bottom=bottom, color=colours(c),
                   edgecolor="black" if unit == "wgmma" else "none",
                   label=cls if u == 0 else None)
            bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20, ha="right")
    ax.set_ylabel("warp instructions per 64 x 64 block of scores")
    ax.set_title("PTX emulator: mma.sync (left bar) against wgmma (right, "
                 "outlined), by class")
    ax.legend(ncol=3, fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(DEFAULT_NAMES))
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default="emulator-profile")
    parser.add_argument("--plot", help="a PNG of the classes per block of scores")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    out = os.path.abspath(args.out)
    run([sys.executable, os.path.join(HERE, "sweep.py"),
         os.path.join(out, "modules"), "--set", "correctness", "--emulated"])
    results = {}
    for name in args.names:
        if not os.path.exists(os.path.join(out, "modules", name + ".mlir")):
            sys.exit("emulator_profile.py: no configuration %s in sweep.py's "
                     "correctness set" % name)
        results[name] = {unit: profile(build, out, name, unit)
                         for unit in UNITS}
    table = "\n".join([HEADER] + [row(n, r) for n, r in results.items()])
    with open(os.path.join(out, "emulator_profile.md"), "w") as f:
        f.write(table + "\n")
    print(table)
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
