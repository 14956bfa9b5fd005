#!/usr/bin/python3
"""Compile-time scaling of attn-opt in the number of attentions per function.

Generates a module with one function holding N attn.attention ops (small
static-shape attentions: B = 1, H = 2, S = 128, D = 64, causal), compiles it
with attn-opt (`--attn-to-cpu` by default) under -mlir-timing and reports,
for every N, the wall and CPU time, the peak resident memory, the CPU time
per attention and the slowest passes. Compile time that grows linearly in N
has a flat time per attention: the script says whether it is flat (CPU time
per attention at the largest N within --tolerance of that at the smallest).
CPU time (user + sys) is the measure, as wall time on a shared machine
follows its load.

Usage: benchmarks/compile_scale.py [options] [N ...]   (default N: 250 500 1000 2000)
  --mode independent|chained|sliced
        independent: every attention reads the function's Q, K and V and
                     writes its own output argument (default);
        chained:     attention i takes attention i - 1's output as its query;
        sliced:      attention i reads slice i of Q, K, V and writes slice i
                     of O (extract_slice / insert_slice into one tensor).
  --pipeline SPEC   what attn-opt runs, repeatable: a pipeline name with its
                    options ("attn-to-cpu", "attn-to-ptx=chip=sm_90") or
                    file:PATH, a textual --pass-pipeline read from PATH (to
                    compare a changed pipeline); default attn-to-cpu
  --ptx             adds attn-to-ptx=chip=sm_90 (bf16; LLVM's NVPTX backend
                    makes it about 0.5 s per attention: use small N)
  --repeat R        runs per (pipeline, N); medians are reported (default 1)
  --top K           passes listed from -mlir-timing (default 4)
  --tolerance F     flat when CPU time per attention at the largest N is at
                    most (1 + F) x that at the smallest (default 0.35)
  --keep DIR        keep the generated modules in DIR
  --csv FILE        also write the rows as CSV
  --timeout S       per-compile limit in seconds (default 1800)
Environment: ATTN_OPT [$ATTN_BUILD_DIR/bin/attn-opt, ATTN_BUILD_DIR=<repo>/build].
Exits 1 when a compile fails, 2 when some pipeline is not flat.
Python standard library only.
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


B, H, S, D = 1, 2, 128, 64


def generate(n, mode, dtype, causal=True):
    """A module with one function @layer holding n attentions.

    independent: every attention reads the function's Q, K and V and writes
      its own output argument (all results returned);
    chained: attention i reads the output of attention i - 1 as its query
      and the function's K and V, into a tensor.empty;
    sliced: attention i reads slice i of the function's Q, K, V and writes
      slice i of its O (extract_slice / insert_slice)."""
    t = f"tensor<{B}x{H}x{S}x{D}x{dtype}>"
    big = f"tensor<{n * B}x{H}x{S}x{D}x{dtype}>"
    attrs = " {causal}" if causal else ""
    lines = []
    if mode == "independent":
        params = [f"%q: {t}, %k: {t}, %v: {t}"] + [f"%o{i}: {t}" for i in range(n)]
        lines.append(f"func.func @layer({', '.join(params)}) -> (" +
                     ", ".join([t] * n) + ") {")
        for i in range(n):
            lines.append(
                f"  %r{i} = attn.attention ins(%q, %k, %v : {t}, {t}, {t}) "
                f"outs(%o{i} : {t}){attrs} -> {t}")
        lines.append("  return " + ", ".join(f"%r{i}" for i in range(n)) +
                     " : " + ", ".join([t] * n))
    elif mode == "chained":
        lines.append(f"func.func @layer(%q: {t}, %k: {t}, %v: {t}) -> {t} {{")
        query = "%q"
        for i in range(n):
            lines.append(f"  %e{i} = tensor.empty() : {t}")
            lines.append(
                f"  %r{i} = attn.attention ins({query}, %k, %v : {t}, {t}, {t}) "
                f"outs(%e{i} : {t}){attrs} -> {t}")
            query = f"%r{i}"
        lines.append(f"  return {query} : {t}")
    else:
        def slice_of(src, i):
            return (f"tensor.extract_slice {src}[{i * B}, 0, 0, 0] "
                    f"[{B}, {H}, {S}, {D}] [1, 1, 1, 1] : {big} to {t}")
        lines.append(f"func.func @layer(%q: {big}, %k: {big}, %v: {big}, "
                     f"%o: {big}) -> {big} {{")
        out = "%o"
        for i in range(n):
            for x in "qkv":
                lines.append(f"  %{x}{i} = " + slice_of(f"%{x}", i))
            lines.append(f"  %e{i} = " + slice_of(out, i))
            lines.append(
                f"  %r{i} = attn.attention ins(%q{i}, %k{i}, %v{i} : {t}, {t}, {t}) "
                f"outs(%e{i} : {t}){attrs} -> {t}")
            lines.append(
                f"  %o{i} = tensor.insert_slice %r{i} into {out}"
                f"[{i * B}, 0, 0, 0] [{B}, {H}, {S}, {D}] [1, 1, 1, 1] "
                f": {t} into {big}")
            out = f"%o{i}"
        lines.append(f"  return {out} : {big}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def parse_timing(text, top):
    """The top passes of -mlir-timing's report: [(name, seconds, percent)]."""
    rows = []
    for line in text.splitlines():
        # "   12.3456 ( 35.1%)   12.3456 ( 35.1%)  CSE"  (wall, optionally user)
        m = re.match(r"\s*([0-9.]+) \(\s*([0-9.]+)%\)(?:\s+[0-9.]+ \(\s*[0-9.]+%\))?\s+(\S.*)$", line)
        if not m:
            continue
        name = m.group(3).strip()
        if name in ("Total", "Rest") or name.startswith("'"):
            continue
        rows.append((name, float(m.group(1)), float(m.group(2))))
    # Passes that run several times (CSE, Canonicalizer) appear once per run.
    merged = {}
    for name, sec, pct in rows:
        s, p = merged.get(name, (0.0, 0.0))
        merged[name] = (s + sec, p + pct)
    ordered = sorted(merged.items(), key=lambda kv: -kv[1][0])
    return [(k, v[0], v[1]) for k, v in ordered[:top]]


def pipeline_args(spec):
    if spec.startswith("file:"):
        with open(spec[5:]) as f:
            return [f"--pass-pipeline={f.read().strip()}"]
    return [f"--{spec}"]


def measure(attn_opt, spec, path, timeout):
    """(wall s, peak RSS MiB, CPU s, stderr) of one compile. It runs under a
    fresh Python child so that RUSAGE_CHILDREN is this compile's alone."""
    helper = (
        "import resource,subprocess,sys,time\n"
        "t=time.monotonic()\n"
        "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,"
        "stderr=subprocess.PIPE,text=True)\n"
        "w=time.monotonic()-t\n"
        "r=resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "sys.stdout.write(f'{p.returncode} {w} {r.ru_maxrss} {r.ru_utime+r.ru_stime}\\n')\n"
        "sys.stdout.write(p.stderr)\n")
    cmd = [attn_opt, path] + pipeline_args(spec) + ["-mlir-timing", "-o",
                                                     os.devnull]
    proc = subprocess.run([sys.executable, "-c", helper] + cmd,
                          capture_output=True, text=True, timeout=timeout)
    first, _, rest = proc.stdout.partition("\n")
    rc, wall, maxrss_kib, cpu = first.split()
    if int(rc) != 0:
        raise RuntimeError(f"{path} with {spec} failed ({rc}):\n" + rest[-4000:])
    return float(wall), int(maxrss_kib) / 1024.0, float(cpu), rest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sizes", nargs="*", type=int,
                    default=[250, 500, 1000, 2000])
    ap.add_argument("--mode", choices=["independent", "chained", "sliced"],
                    default="independent")
    ap.add_argument("--pipeline", action="append")
    ap.add_argument("--ptx", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--tolerance", type=float, default=0.35)
    ap.add_argument("--keep")
    ap.add_argument("--csv")
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args()

    build = os.environ.get("ATTN_BUILD_DIR", os.path.join(ROOT, "build"))
    attn_opt = os.environ.get("ATTN_OPT", os.path.join(build, "bin", "attn-opt"))
    if not os.access(attn_opt, os.X_OK):
        sys.exit(f"attn-opt not found at {attn_opt} (set ATTN_OPT or ATTN_BUILD_DIR)")
    specs = args.pipeline or ["attn-to-cpu"]
    if args.ptx:
        specs.append("attn-to-ptx=chip=sm_90")

    workdir = args.keep or tempfile.mkdtemp(prefix="attn-compile-scale-")
    os.makedirs(workdir, exist_ok=True)
    rows = []
    failed = False
    for spec in specs:
        # The GPU path takes f16 and bf16 only.
        dtype = "bf16" if "ptx" in spec else "f32"
        for n in sorted(args.sizes):
            path = os.path.join(workdir, f"{args.mode}-{dtype}-{n}.mlir")
            with open(path, "w") as f:
                f.write(generate(n, args.mode, dtype))
            runs = []
            try:
                for _ in range(args.repeat):
                    runs.append(measure(attn_opt, spec, path, args.timeout))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"error: {e}", file=sys.stderr)
                failed = True
                continue
            wall = statistics.median(r[0] for r in runs)
            rss = statistics.median(r[1] for r in runs)
            cpu = statistics.median(r[2] for r in runs)
            top = parse_timing(runs[-1][3], args.top)
            rows.append(dict(spec=spec, n=n, wall=wall, cpu=cpu, rss=rss,
                             per=cpu / n * 1000.0, top=top))
            print(f"{spec} N={n}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                  f"{rss:.0f} MiB, {cpu / n * 1000.0:.2f} ms CPU/attention",
                  file=sys.stderr)

    print(f"\nmode: {args.mode}; attn-opt: {attn_opt}\n")
    print("| pipeline | N | wall (s) | CPU (s) | CPU ms / attention "
          "| peak RSS (MiB) | slowest passes, wall (s) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        top = ", ".join(f"{name} {sec:.2f}" for name, sec, _ in r["top"])
        name = r["spec"] if len(r["spec"]) < 40 else r["spec"][:37] + "..."
        print(f"| {name} | {r['n']} | {r['wall']:.2f} | {r['cpu']:.2f} | "
              f"{r['per']:.2f} | {r['rss']:.0f} | {top} |")
    all_flat = True
    print()
    for spec in specs:
        mine = [r for r in rows if r["spec"] == spec]
        if len(mine) < 2:
            continue
        lo, hi = mine[0], mine[-1]
        ratio = hi["per"] / lo["per"]
        flat = ratio <= 1 + args.tolerance
        all_flat &= flat
        print(f"{spec}: CPU time per attention at N={hi['n']} is {ratio:.2f}x "
              f"that at N={lo['n']}: "
              f"{'flat (linear)' if flat else 'NOT flat (super-linear)'}")
    if args.csv:
        with open(args.csv, "w") as f:
            f.write("pipeline,mode,n,wall_s,cpu_s,cpu_ms_per_attention,"
                    "peak_rss_mib\n")
            for r in rows:
                f.write(f"\"{r['spec']}\",{args.mode},{r['n']},{r['wall']:.3f},"
                        f"{r['cpu']:.3f},{r['per']:.3f},{r['rss']:.1f}\n")
    if failed:
        return 1
    return 0 if all_flat else 2


if __name__ == "__main__":
    sys.exit(main())
