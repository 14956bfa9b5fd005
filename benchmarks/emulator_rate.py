#!/usr/bin/env python3
"""The PTX emulator's speed: thread instructions a second on the suite's kernels.

Runs every bundle of an emulator check's directory (scripts/emulator-check.sh
DIR writes DIR/bundles) through attn-launch on the emulator, without the
check's reference (--no-check: the kernel's launches and the seeded fill
only), with ATTN_EMULATOR_PROFILE set, which records each launch's thread
instructions and the seconds the emulator spent in it (on the emulator the
fill is the host's: only the kernels run). Reports the thread instructions,
the seconds and their ratio for each bundle and in all. One bundle at a
time, so that the seconds are one core's.

The r_* bundles (run-time lengths) run at the first of sweep.py's
EMULATED_RUN_TIME_LENGTHS.

Usage: emulator_rate.py DIR [--build BUILD] [--match TEXT]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "gpu"))
import sweep  # noqa: E402


def bundles_of(directory):
    root = os.path.join(directory, "bundles")
    found = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name == "python":
            found += [os.path.join(path, sub) for sub in sorted(os.listdir(path))]
        elif os.path.isfile(os.path.join(path, "manifest.json")):
            found.append(path)
    return found


def run(launch, bundle):
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as profile:
        env = dict(os.environ, ATTNRT_LIBCUDA="emulator",
                   ATTN_EMULATOR_PROFILE=profile.name)
        command = [launch, bundle, "--no-check"]
        if os.path.basename(bundle).startswith("r_"):
            command.append("--lengths=%d,%d,%d" %
                           sweep.EMULATED_RUN_TIME_LENGTHS[0])
        result = subprocess.run(command, capture_output=True, text=True,
                                env=env)
        if result.returncode != 0:
            sys.exit("emulator_rate.py: %s failed:\n%s%s" %
                     (" ".join(command), result.stdout, result.stderr))
        with open(profile.name) as lines:
            return [json.loads(line) for line in lines if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--match", default="",
                        help="only bundles whose path contains TEXT")
    args = parser.parse_args()
    launch = os.path.join(args.build, "bin", "attn-launch")
    total_instructions = total_seconds = 0.0
    print("| bundle | thread instructions (M) | seconds | M/s |")
    print("|---|---:|---:|---:|")
    for bundle in bundles_of(args.directory):
        if args.match not in bundle:
            continue
        launches = run(launch, bundle)
        instructions = sum(l["thread_instructions"] for l in launches)
        seconds = sum(l["seconds"] for l in launches)
        total_instructions += instructions
        total_seconds += seconds
        print("| %s | %.1f | %.3f | %.1f |" %
              (os.path.relpath(bundle, args.directory), instructions / 1e6,
               seconds, instructions / 1e6 / max(seconds, 1e-9)))
    print("| **all** | %.1f | %.2f | **%.1f** |" %
          (total_instructions / 1e6, total_seconds,
           total_instructions / 1e6 / max(total_seconds, 1e-9)))


if __name__ == "__main__":
    main()
