#!/usr/bin/env python3
"""Runs families of bad input against the tools and tabulates what each gets.

Every input is run once under a time limit and a memory limit, and its outcome
is classified:
  error     non-zero exit with an "error" message and no signal (the goal)
  FAIL      attn-run ran the input and its check reported FAIL (e.g. a zero
            tolerance), with a non-zero exit
  accepted  exit 0: valid after all (attn-run's own check passed, or the
            lowering succeeded)
  crash     killed by a signal (abort, segfault), or an LLVM stack dump
  hang      still running at the time limit
  unclear   non-zero exit without a message naming an error
The table (markdown) is what docs/reliability.md reports; inputs that crash,
hang or end unclearly are listed after it.

Usage: scripts/robustness-sweep.py [--build build] [--timeout 60] [--jobs 2]
"""

import argparse
import concurrent.futures
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

from json_mutations import edited, mutations

INT64_MAX = 2**63 - 1
NUMBERS = ["0", "-1", "-16", "3", "100000", str(2**31), str(2**32 + 1),
           str(2**53 + 1), str(2**62), str(INT64_MAX), str(2**63), "abc", "",
           "1e9"]
MEMORY_LIMIT = 8 << 30

ATTENTION = """func.func @f(%q: tensor<{B}x{H}x{S}x{D}x{T}>, %k: tensor<{B}x{H}x{K}x{D}x{T}>,
             %v: tensor<{B}x{H}x{K}x{D}x{T}>) -> tensor<{B}x{H}x{S}x{D}x{T}> {{
  %o0 = tensor.empty() : tensor<{B}x{H}x{S}x{D}x{T}>
  %o = attn.attention ins(%q, %k, %v : tensor<{B}x{H}x{S}x{D}x{T}>, tensor<{B}x{H}x{K}x{D}x{T}>,
      tensor<{B}x{H}x{K}x{D}x{T}>) outs(%o0 : tensor<{B}x{H}x{S}x{D}x{T}>) {{{ATTRS}}}
      -> tensor<{B}x{H}x{S}x{D}x{T}>
  return %o : tensor<{B}x{H}x{S}x{D}x{T}>
}}
"""
SHAPE = dict(B=1, H=2, S=64, K=64, D=64, T="bf16", ATTRS="causal")
TARGET = ('module attributes {{attn.target = #attn.target<chip = "{chip}", '
          'sms = {sms}, smem_per_block = {smem}, smem_per_sm = 233472, '
          'regs_per_sm = 65536, regs_per_thread = 255>}} {{\n{body}}}\n')


def module(**changes):
    fields = dict(SHAPE, **changes)
    return ATTENTION.format(**fields)


class Sweep:
    def __init__(self, build, timeout, work):
        self.bin = os.path.join(build, "bin")
        self.plugin = os.path.join(build, "lib", "AttnPlugin.so")
        self.timeout = timeout
        self.work = work
        self.cases = []  # (family, description, argv)
        self.counter = 0

    def file(self, text, suffix=".mlir"):
        self.counter += 1
        path = os.path.join(self.work, f"input{self.counter}{suffix}")
        mode = "wb" if isinstance(text, bytes) else "w"
        with open(path, mode) as f:
            f.write(text)
        return path

    def add(self, family, description, argv):
        tool = argv[0]
        if not os.path.isabs(tool):
            argv = [os.path.join(self.bin, tool)] + argv[1:]
        self.cases.append((family, description, argv))

    # --- the families -----------------------------------------------------
    def options(self):
        for option in ["batch", "heads", "kv-heads", "seq-q", "seq-k",
                       "head-dim", "value-dim", "splits", "lean", "block-m",
                       "block-n", "repeat", "window", "scale", "softcap",
                       "tolerance"]:
            for value in NUMBERS:
                if option == "window":
                    value = f"{value},{value}"
                self.add("attn-run options", f"--{option}={value}",
                         ["attn-run", f"--{option}={value}"])
        for option in ["dtype", "out-dtype", "mask", "device"]:
            for value in ["", "f64", "i8", "x" * 1000]:
                self.add("attn-run options", f"--{option}={value}",
                         ["attn-run", f"--{option}={value}"])

    def sizes(self):
        for dim in ["B", "H", "S", "K", "D"]:
            for value in [0, 1, 3, 2**31, 2**48, 2**62, INT64_MAX]:
                path = self.file(module(**{dim: value}))
                for pipeline in ["--attn-to-cpu", "--attn-print-plan",
                                 "--attn-to-ptx=chip=sm_90a"]:
                    self.add("static sizes", f"{dim}={value} {pipeline}",
                             ["attn-opt", path, pipeline])
                self.add("static sizes", f"{dim}={value} attn-run",
                         ["attn-run", path])

    def attributes(self):
        tiles = "block_m = {m}, block_n = {n}, warps = {w}, stages = {s}"
        values = [0, -16, 16, 64, 4096, 8192, 2**62, INT64_MAX]
        for name in ["m", "n", "w", "s"]:
            for value in values:
                fields = dict(m=64, n=64, w=4, s=2)
                fields[name] = value
                attrs = f"causal, tiles = #attn.fa2<{tiles.format(**fields)}>"
                path = self.file(module(ATTRS=attrs))
                for pipeline in ["--attn-to-cpu", "--attn-print-plan",
                                 "--attn-to-ptx=chip=sm_90a"]:
                    self.add("attributes", f"fa2 {name}={value} {pipeline}",
                             ["attn-opt", path, pipeline])
        for partition in ["split_kv<splits = {v}>", "lean<ctas = {v}>",
                          "attention2d<q_parts = {v}, kv_parts = 2>",
                          "ring<devices = {v}>"]:
            for value in [0, -1, 1, 7, 2**31, 2**62, INT64_MAX]:
                attrs = f"partition = #attn.{partition.format(v=value)}"
                path = self.file(module(ATTRS=attrs))
                for pipeline in ["--attn-to-cpu", "--attn-print-plan"]:
                    self.add("attributes", f"{attrs} {pipeline}",
                             ["attn-opt", path, pipeline])
        for left, right in [(0, INT64_MAX), (INT64_MAX, INT64_MAX), (-1, 0),
                            (2**62, 0), (0, 2**62 + 1)]:
            attrs = f"causal, window = array<i64: {left}, {right}>"
            path = self.file(module(ATTRS=attrs))
            for pipeline in ["--attn-to-cpu", "--attn-print-plan"]:
                self.add("attributes", f"window {left},{right} {pipeline}",
                         ["attn-opt", path, pipeline])
            # attn-run checks the result against its reference.
            self.add("attributes", f"window {left},{right} attn-run",
                     ["attn-run", path])
        for sms, smem in [(0, 232448), (2**62, 232448), (INT64_MAX, 232448),
                          (132, 0), (132, INT64_MAX), (132, 2**40)]:
            path = self.file(TARGET.format(chip="sm_90a", sms=sms, smem=smem,
                                           body=module()))
            for pipeline in ["--attn-select-schedule", "--attn-print-plan",
                             "--attn-to-ptx"]:
                self.add("attributes", f"target sms={sms} smem={smem}",
                         ["attn-opt", path, pipeline])

    def pipelines(self):
        path = self.file(module())
        for chip in ["sm_60", "sm_70", "sm_75", "sm_80a", "gfx90a", "", "sm_",
                     "sm_x", "sm_100000000000000000000", "sm_80", "sm_90a"]:
            self.add("chips and pipelines", f"attn-to-ptx chip={chip}",
                     ["attn-opt", path, f"--attn-to-ptx=chip={chip}"])
            self.add("chips and pipelines", f"attn-compile --chip={chip}",
                     ["attn-compile", path, f"--chip={chip}", "-o",
                      os.path.join(self.work, "bundle")])
        for nested in ["func.func(attn-to-cpu)", "func.func(attn-to-ptx)",
                       "func.func(attn-select-schedule)",
                       "func.func(attn-distribute)", "func.func(attn-decompose)",
                       "func.func(attn-print-plan)", "any(attn-to-cpu)"]:
            for tool in [["attn-opt"],
                         [shutil.which("mlir-opt") or
                          "/usr/lib/llvm-22/bin/mlir-opt",
                          f"--load-dialect-plugin={self.plugin}",
                          f"--load-pass-plugin={self.plugin}"]]:
                pipeline = f"builtin.module({nested})"
                self.add("chips and pipelines", f"{tool[0]} {pipeline}",
                         tool + [path, f"--pass-pipeline={pipeline}"])

    def files(self):
        good_npy = os.path.join(self.work, "q.npy")
        subprocess.run([os.path.join(self.bin, "attn-run"), "--heads=2",
                        "--seq-q=8", "--head-dim=4", "--no-check",
                        f"--o-npy={good_npy}"], capture_output=True)
        data = open(good_npy, "rb").read()
        fifo = os.path.join(self.work, "fifo")
        os.mkfifo(fifo)
        inputs = {
            "/dev/zero": "/dev/zero", "/dev/urandom": "/dev/urandom",
            "a FIFO": fifo, "a directory": self.work,
            "a missing file": os.path.join(self.work, "missing.npy"),
            "an empty file": self.file(b"", ".npy"),
            "a truncated .npy": self.file(data[: len(data) // 2], ".npy"),
            "a .npy with bytes after the data": self.file(data + b"x", ".npy"),
            "a 4 GiB header claim": self.file(
                b"\x93NUMPY\x02\x00\xff\xff\xff\xff", ".npy"),
            "a shape of 2^62": self.file(data.replace(b"(1, 2, 8, 4)",
                                                      b"(4611686018427387904, 2, 8, 4)"), ".npy"),
            "garbage": self.file(os.urandom(4096), ".npy"),
        }
        for name, path in inputs.items():
            for operand in ["q", "k", "v"]:
                self.add("files", f"--{operand}-npy={name}",
                         ["attn-run", "--heads=2", "--seq-q=8", "--head-dim=4",
                          f"--{operand}-npy={path}"])
            self.add("files", f"module {name}", ["attn-run", path])
            self.add("files", f"attn-compile {name}",
                     ["attn-compile", path, "-o",
                      os.path.join(self.work, "bundle-files")])
        outputs = {"/dev/full": "/dev/full", "/dev/null": "/dev/null",
                   "a directory": self.work, "a FIFO": fifo,
                   "a missing directory": os.path.join(self.work, "no", "o.npy")}
        for name, path in outputs.items():
            self.add("files", f"--o-npy={name}",
                     ["attn-run", "--heads=2", "--seq-q=8", "--head-dim=4",
                      f"--o-npy={path}"])
            self.add("files", f"attn-compile -o {name}",
                     ["attn-compile", self.file(module()), "-o", path])

    def bundles(self):
        good = os.path.join(self.work, "good-bundle")
        subprocess.run([os.path.join(self.bin, "attn-compile"),
                        self.file(module()), "-o", good], capture_output=True)
        manifest = json.load(open(os.path.join(good, "manifest.json")))
        ptx = open(os.path.join(good, "kernels.ptx")).read()

        replacements = [0, -1, 2**53 + 1, 2**62, INT64_MAX, "x", None, [], {}]
        cases = [(p, r) for p, r in mutations(manifest, replacements) if p]
        random.Random(1).shuffle(cases)
        for path, replacement in cases[:200]:
            directory = tempfile.mkdtemp(dir=self.work)
            with open(os.path.join(directory, "manifest.json"), "w") as f:
                json.dump(edited(manifest, path, replacement), f)
            with open(os.path.join(directory, "kernels.ptx"), "w") as f:
                f.write(ptx)
            where = ".".join(str(p) for p in path)
            self.add("bundles", f"{where} = {replacement!r}",
                     ["attn-launch", "--validate", directory])
        for name, text in [("empty PTX", ""), ("garbage PTX", "garbage\n"),
                           ("PTX of another kernel",
                            ptx.replace(".entry f_", ".entry g_")),
                           ("/dev/zero", None)]:
            directory = tempfile.mkdtemp(dir=self.work)
            shutil.copy(os.path.join(good, "manifest.json"), directory)
            if text is None:
                os.symlink("/dev/zero", os.path.join(directory, "kernels.ptx"))
            else:
                open(os.path.join(directory, "kernels.ptx"), "w").write(text)
            self.add("bundles", name, ["attn-launch", "--validate", directory])

    def mutated_text(self, sources):
        rng = random.Random(2)
        texts = [open(s, errors="replace").read() for s in sources]
        for i in range(200):
            text = rng.choice(texts)
            cut = rng.randrange(len(text))
            kind = rng.choice(["truncate", "flip", "duplicate", "digits"])
            if kind == "truncate":
                text = text[:cut]
            elif kind == "flip":
                text = text[:cut] + chr(rng.randrange(32, 127)) + text[cut + 1:]
            elif kind == "duplicate":
                text = text[:cut] + text[cut:cut + 200] + text[cut:]
            else:
                text = text[:cut] + str(rng.choice([0, 2**62, INT64_MAX])) + \
                    text[cut:]
            path = self.file(text)
            pipeline = rng.choice(["--attn-to-cpu", "--attn-print-plan",
                                   "--attn-select-schedule",
                                   "--attn-to-ptx=chip=sm_90a"])
            self.add("mutated modules", f"{kind} {pipeline}",
                     ["attn-opt", path, pipeline])

    # --- running ------------------------------------------------------------
    def run_one(self, case):
        family, description, argv = case

        def limits():
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        try:
            result = subprocess.run(argv, capture_output=True,
                                    timeout=self.timeout, preexec_fn=limits,
                                    cwd=self.work, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return family, description, "hang", ""
        err = result.stderr.decode(errors="replace")
        if result.returncode < 0 or "Stack dump" in err or \
                "LLVM ERROR" in err or "PLEASE submit" in err:
            return family, description, "crash", err[-300:]
        if result.returncode == 0:
            return family, description, "accepted", ""
        if result.stdout.decode(errors="replace").rstrip().endswith("FAIL"):
            return family, description, "FAIL", ""
        if "error" in err.lower() or "Cannot find option" in err or \
                "Unknown command line" in err or "invalid" in err.lower():
            return family, description, "error", ""
        return family, description, "unclear", err[-300:]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        sweep = Sweep(os.path.abspath(args.build), args.timeout, work)
        sweep.options()
        sweep.sizes()
        sweep.attributes()
        sweep.pipelines()
        sweep.files()
        sweep.bundles()
        sources = [os.path.join(d, f)
                   for d, _, fs in os.walk(os.path.join(root, "test"))
                   for f in fs if f.endswith(".mlir")]
        sweep.mutated_text(sorted(sources))
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(sweep.run_one, sweep.cases))

    outcomes = ["error", "FAIL", "accepted", "crash", "hang", "unclear"]
    families = []
    for family, _, _, _ in results:
        if family not in families:
            families.append(family)
    print("| family | inputs | " + " | ".join(outcomes) + " |")
    print("|---" * (len(outcomes) + 2) + "|")
    totals = {o: 0 for o in outcomes}
    for family in families:
        rows = [r for r in results if r[0] == family]
        counts = {o: sum(1 for r in rows if r[2] == o) for o in outcomes}
        for o in outcomes:
            totals[o] += counts[o]
        print(f"| {family} | {len(rows)} | " +
              " | ".join(str(counts[o]) for o in outcomes) + " |")
    print(f"| all | {len(results)} | " +
          " | ".join(str(totals[o]) for o in outcomes) + " |")
    bad = [r for r in results if r[2] in ("crash", "hang", "unclear")]
    for family, description, outcome, detail in bad:
        print(f"\n{outcome}: {family}: {description}\n{detail}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
