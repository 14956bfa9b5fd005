#!/usr/bin/env python3
"""Writes attn-fuzz-mlir's seed corpus from the lit suite's .mlir files.

Usage: make_mlir_seeds.py TEST_DIR OUT_DIR

Each file is cut at its `// -----` separators (as --split-input-file does);
each piece, without its comment lines (RUN, CHECK, expected-error, prose),
becomes a seed prefixed with the byte that makes MlirFuzzer.cpp run the
pipeline the file's RUN lines run (attn-run tests: attn-to-cpu; attn-compile
tests: attn-to-ptx; anything else: parse and verify only). Seeds are named
by content hash, so regenerating them is idempotent. Generated at build
time rather than copied, so that the corpus follows the suite.
"""

import hashlib
import pathlib
import re
import sys

# Indices into kPipelines in MlirFuzzer.cpp; the most specific match first.
RULES = [
    (re.compile(r"tosa-to-linalg"), 16),
    (re.compile(r"attn-select-schedule[^ ]*split-kv=true"), 12),
    (re.compile(r"attn-select-schedule[^ ]*lean=true"), 13),
    (re.compile(r"attn-to-ptx[^ ]*lean=true"), 14),
    (re.compile(r"attn-raise-attention.*attn-to-cpu"), 15),
    (re.compile(r"attn-select-schedule"), 1),
    (re.compile(r"attn-print-plan"), 2),
    (re.compile(r"attn-to-cpu"), 3),
    (re.compile(r"attn-to-ptx"), 4),
    (re.compile(r"attn-decompose"), 5),
    (re.compile(r"attn-partition-kv"), 6),
    (re.compile(r"attn-lower-merge"), 7),
    (re.compile(r"attn-raise-attention"), 8),
    (re.compile(r"attn-distribute"), 9),
    (re.compile(r"attn-lower-collectives"), 10),
    (re.compile(r"attn-to-nvgpu"), 11),
    (re.compile(r"\battn-run\b"), 3),
    (re.compile(r"\battn-compile\b"), 4),
]


def pipelines_of(text):
    """The pipeline indices a file's RUN lines select (0 when none)."""
    found = set()
    for line in re.findall(r"RUN:(.*)", text):
        for pattern, index in RULES:
            if pattern.search(line):
                found.add(index)
                break
    return sorted(found) or [0]


def main():
    test_dir, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.iterdir():
        old.unlink()
    count = 0
    for path in sorted(test_dir.rglob("*.mlir")):
        if "Fuzz" in path.relative_to(test_dir).parts:
            continue
        text = path.read_text(errors="surrogateescape")
        for piece in re.split(r"^// -----.*$", text, flags=re.MULTILINE):
            body = "\n".join(line for line in piece.splitlines()
                             if not line.lstrip().startswith("//")).strip()
            if not body:
                continue
            for index in pipelines_of(text):
                seed = (bytes([index]) +
                        body.encode(errors="surrogateescape") + b"\n")
                name = hashlib.sha1(seed).hexdigest()
                (out_dir / name).write_bytes(seed)
                count += 1
    print(f"{count} MLIR seeds in {out_dir}")


if __name__ == "__main__":
    main()
