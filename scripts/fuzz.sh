#!/usr/bin/env bash
# Fuzzes attn-mlir with libFuzzer (test/Fuzz/README.md).
#
#   scripts/fuzz.sh                build, then run every target
#   scripts/fuzz.sh build          build the fuzz targets in build-sanitize/
#                                  (scripts/build-sanitize.sh: Clang 22,
#                                  ASan, UBSan, libFuzzer)
#   scripts/fuzz.sh run TARGET...  for each TARGET (mlir, npy, manifest,
#                                  bundle, capi, ptx): replay its kept crashes,
#                                  then fuzz it
#
# ATTN_FUZZ_SECONDS (default 60) bounds each target's fuzzing; 0 replays the
# kept crashes only. A target's corpus grows in build-sanitize/test/Fuzz/
# corpus/TARGET/ from its seeds (test/Fuzz/seeds/TARGET/, and for mlir the
# lit suite's inputs, generated into build-sanitize/test/Fuzz/seeds/mlir/).
# An input that crashes is copied to test/Fuzz/crashes/TARGET/ and the script
# fails: commit it with the fix, and every later run replays it. ctest runs
# this as attn-fuzz-build and attn-fuzz-TARGET (test/CMakeLists.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
seconds="${ATTN_FUZZ_SECONDS:-60}"
targets=(mlir npy manifest bundle capi ptx)
source "$root/scripts/sanitizer-env.sh"

# Inputs longer than this are not generated; the longest MLIR seed (a lit
# test's split) is under 10 KB.
declare -A max_len=([mlir]=16384 [npy]=4096 [manifest]=16384 [bundle]=16384 [capi]=1024 [ptx]=8192)

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

build() {
  "$root/scripts/build-sanitize.sh" attn-fuzzers
}

# run TARGET: replay test/Fuzz/crashes/TARGET/*, then fuzz for $seconds.
run() {
  local target="$1" fuzzer="$build/bin/attn-fuzz-$1"
  [ -n "${max_len[$target]:-}" ] || { echo "fuzz.sh: no target '$target'" >&2; return 2; }
  [ -x "$fuzzer" ] || { echo "fuzz.sh: $fuzzer is not built (scripts/fuzz.sh build)" >&2; return 2; }
  local work="$build/test/Fuzz" crashes="$root/test/Fuzz/crashes/$target"
  local corpus="$work/corpus/$target" artifacts="$work/artifacts/$target"
  local log="$work/logs/$target.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  # -timeout: one input may take this long (attn-to-ptx under ASan takes
  # about a second); -rss_limit_mb: MLIR contexts and ASan's quarantine.
  local options=(-timeout=60 -rss_limit_mb=4096 "-max_len=${max_len[$target]}"
    "-dict=$root/test/Fuzz/$target.dict")

  local kept=()
  [ -d "$crashes" ] && mapfile -t kept < <(find "$crashes" -type f ! -name '.*' | sort)
  if [ ${#kept[@]} -gt 0 ]; then
    # Given files, libFuzzer runs each once and fails on the first crash.
    if ! "$fuzzer" "${options[@]}" "${kept[@]}" >"$log" 2>&1; then
      tail -60 "$log"
      echo "attn-fuzz-$target: a kept crash in test/Fuzz/crashes/$target/ still crashes (log: $log)"
      return 1
    fi
    echo "attn-fuzz-$target: ${#kept[@]} kept crash input(s) replayed, none crashes"
  fi
  [ "$seconds" -gt 0 ] || return 0

  local seeds=()
  for dir in "$root/test/Fuzz/seeds/$target" "$work/seeds/$target"; do
    [ -d "$dir" ] && seeds+=("$dir")
  done
  rm -f "$artifacts"/*
  local status=0
  "$fuzzer" "${options[@]}" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?
  local done_line runs
  done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)"
  runs="$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')"
  if [ "$status" -ne 0 ]; then
    tail -80 "$log"
    mkdir -p "$crashes"
    local found
    for found in "$artifacts"/*; do
      [ -f "$found" ] || continue
      cp "$found" "$crashes/"
      echo "attn-fuzz-$target: kept $(basename "$found") in test/Fuzz/crashes/$target/"
    done
    echo "attn-fuzz-$target: FAILED after $runs runs (log: $log)"
    return 1
  fi
  echo "attn-fuzz-$target: ${seconds}s, $runs runs, no crash; ${done_line:-no final stats}"
}

command="${1:-all}"
[ $# -gt 0 ] && shift
case "$command" in
  build) build ;;
  run)
    [ $# -ge 1 ] || usage
    failed=0
    for target in "$@"; do run "$target" || failed=1; done
    exit "$failed"
    ;;
  all)
    build
    failed=0
    for target in "${targets[@]}"; do run "$target" || failed=1; done
    exit "$failed"
    ;;
  *) usage ;;
esac
