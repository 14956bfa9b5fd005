#!/usr/bin/env bash
# Builds everything and runs the whole test suite (lit + GoogleTest) with ctest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"

"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
