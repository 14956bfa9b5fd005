#!/usr/bin/env bash
# Configures (once) and builds build-sanitize/: the project built by Clang 22
# with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's coverage
# (ATTN_SANITIZE=ON, ATTN_FUZZ=ON; cmake/AttnSanitizers.cmake), against
# Debian's uninstrumented libMLIR.so/libLLVM.so. One build serves both
# scripts/fuzz.sh and scripts/sanitize.sh.
# Usage: scripts/build-sanitize.sh [ninja targets...]   (default: everything)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_SANITIZE_BUILD_DIR:-$root/build-sanitize}"

"$root/scripts/install-deps.sh"
# ccache keys on paths relative to the checkout: a fresh clone (CI) reuses
# the objects of another checkout's build-sanitize/. With debug information
# ccache also hashes the working directory unless told not to, which made
# every fresh clone compile build-sanitize/ from scratch; the price is a
# compilation directory in the line tables that may name another checkout.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
if [ ! -f "$build/build.ninja" ]; then
  # -O1 and line tables: readable sanitizer stacks at a fraction of the
  # compile time of full debug information. NDEBUG stays defined as in
  # Debian's LLVM, whose headers change some classes' layout without it.
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DATTN_SANITIZE=ON -DATTN_FUZZ=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir >/dev/null
fi
ninja -C "$build" "$@"
