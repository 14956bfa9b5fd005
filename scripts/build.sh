#!/usr/bin/env bash
# Configures (once) and builds attn-mlir in build/ with Ninja and ccache.
# Usage: scripts/build.sh [ninja targets...]   (default: everything)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
# ccache keys on paths relative to the checkout: a fresh clone (CI) reuses
# the objects of another checkout's build/.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
fi
ninja -C "$build" "$@"
