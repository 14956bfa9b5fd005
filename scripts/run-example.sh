#!/usr/bin/env bash
# The main job: takes an attention module (default: the shipped Llama-3-8B
# prefill and decode example), verifies it and reports what the compiler will
# do with each attention.
# Usage: scripts/run-example.sh [module.mlir]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
input="${1:-$root/examples/llama3-8b.mlir}"

"$root/scripts/build.sh" attn-opt >/dev/null

echo "== $input: parsed and verified =="
"$build/bin/attn-opt" "$input" --canonicalize
echo
echo "== plan for each attention =="
"$build/bin/attn-opt" "$input" --attn-print-plan --mlir-print-op-on-diagnostic=false \
  -o /dev/null 2>&1
