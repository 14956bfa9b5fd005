#!/usr/bin/env bash
# Builds everything and runs the whole test suite (lit + GoogleTest) with ctest,
# then says where the time went: the build, ctest, and its slowest tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"

start=$SECONDS
"$root/scripts/build.sh"
built=$SECONDS
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" || status=$?
echo "test.sh: build $((built - start)) s, ctest $((SECONDS - built)) s; its slowest tests (s):"
awk '/^[0-9]+\/[0-9]+ Testing: /{name = $3} /^Test time = /{printf "%8.1f  %s\n", $4, name}' \
  "$build/Testing/Temporary/LastTest.log" | sort -rn | head -8
exit "$status"
