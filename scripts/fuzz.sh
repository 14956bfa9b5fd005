#!/usr/bin/env bash
# Fuzzes attn-mlir with libFuzzer (test/Fuzz/README.md).
#
#   scripts/fuzz.sh                build, then run every target
#   scripts/fuzz.sh build          build the fuzz targets in build-sanitize/
#                                  (scripts/build-sanitize.sh: Clang 22,
#                                  ASan, UBSan, libFuzzer)
#   scripts/fuzz.sh run TARGET...  for each TARGET (mlir, npy, manifest,
#                                  bundle, capi, ptx): replay its kept crashes,
#                                  then fuzz it, randomised, for
#                                  ATTN_FUZZ_SECONDS (default 600; 0 replays
#                                  the kept crashes only)
#   scripts/fuzz.sh check TARGET...
#                                  what the test suite runs: replay its kept
#                                  crashes, then a fixed number of inputs
#                                  mutated with a fixed seed from its seeds
#                                  alone, address randomisation off, so that
#                                  the same tree passes or fails the same way
#                                  on every machine and every run
#
# `run` keeps a target's corpus in build-sanitize/test/Fuzz/corpus/TARGET/,
# growing from its seeds (test/Fuzz/seeds/TARGET/, and for mlir the lit
# suite's inputs, generated into build-sanitize/test/Fuzz/seeds/mlir/) run
# after run; `check` starts from the seeds every time. An input that crashes
# is copied to test/Fuzz/crashes/TARGET/ and the script fails: commit it
# with the fix, and every later run replays it. ctest runs `build` as
# attn-fuzz-build and `check` as attn-fuzz-TARGET (test/CMakeLists.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
seconds="${ATTN_FUZZ_SECONDS:-600}"
targets=(mlir npy manifest bundle capi ptx)
source "$root/scripts/sanitizer-env.sh"

# Inputs longer than this are not generated; the longest MLIR seed (a lit
# test's split) is under 10 KB.
declare -A max_len=([mlir]=16384 [npy]=4096 [manifest]=16384 [bundle]=16384 [capi]=1024 [ptx]=8192)
# The inputs `check` runs, the seeds included: each target's 10-40 s on two
# busy cores (their speeds differ by 10^3).
# mlir's and capi's 0: their seeds are replayed, not mutated. What MLIR
# and the JIT do varies from run to run in ways that steer libFuzzer's
# mutations (measured: two fresh clones' 1,000 mlir inputs, two runs of
# 100 capi inputs, ended with different corpora); scripts/fuzz.sh fuzzes
# them. mlir's 480 seeds, the lit suite's inputs through their pipelines
# under ASan, take minutes.
declare -A check_runs=([mlir]=0 [npy]=100000 [manifest]=50000 [bundle]=10000 [capi]=0 [ptx]=20000)

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

build() {
  "$root/scripts/build-sanitize.sh" attn-fuzzers
}

# Runs "$@" with nothing open but standard input (/dev/null), output and
# error: libFuzzer's comparison tracing feeds the values the code compares,
# file descriptors among them, to its mutations.
with_standard_files_only() {
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      fd="${fd##*/}"
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec "$@" </dev/null
  )
}

# fuzz MODE TARGET: replay test/Fuzz/crashes/TARGET/*, then fuzz it as MODE
# (run or check) says.
fuzz() {
  local mode="$1" target="$2" top="$root" bin="$build"
  local launcher=()
  if [ "$mode" = check ]; then
    # The same addresses every run and on every machine: address
    # randomisation off, and a stack that starts the same, so paths
    # relative to the checkout and a fixed environment (pointer-keyed maps
    # in MLIR iterate by address, and alignment steers copies: both steer
    # coverage, and so the mutations), and the same open files (under
    # ctest and in a shell they differed, and so did npy's corpus).
    cd "$root"
    top=. bin="$(realpath -m --relative-to="$root" "$build")"
    launcher=(with_standard_files_only env -i HOME=/ PATH=/usr/bin:/bin
      "ASAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH" "ASAN_OPTIONS=$ASAN_OPTIONS"
      "UBSAN_OPTIONS=$UBSAN_OPTIONS" "LSAN_OPTIONS=${LSAN_OPTIONS//$root\//}")
    setarch "$(uname -m)" -R true 2>/dev/null && launcher+=(setarch "$(uname -m)" -R)
  fi
  local fuzzer="$bin/bin/attn-fuzz-$target"
  [ -n "${max_len[$target]:-}" ] || { echo "fuzz.sh: no target '$target'" >&2; return 2; }
  [ -x "$fuzzer" ] || { echo "fuzz.sh: $fuzzer is not built (scripts/fuzz.sh build)" >&2; return 2; }
  local work="$bin/test/Fuzz" crashes="$top/test/Fuzz/crashes/$target"
  local corpus="$work/corpus/$target" artifacts="$work/artifacts/$target"
  local log="$work/logs/$target.log"
  # -timeout: one input may take this long (attn-to-ptx under ASan takes
  # about a second); -rss_limit_mb: MLIR contexts and ASan's quarantine.
  local options=(-timeout=60 -rss_limit_mb=4096 "-max_len=${max_len[$target]}"
    "-dict=$top/test/Fuzz/$target.dict")
  if [ "$mode" = check ]; then
    # A fresh corpus, a fixed seed and count, no reloading of the corpus
    # (libFuzzer rereads it every second).
    corpus="$work/check-corpus/$target" log="$work/logs/$target-check.log"
    rm -rf "$corpus"
  fi
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"

  local kept=()
  [ -d "$crashes" ] && mapfile -t kept < <(find "$crashes" -type f ! -name '.*' | sort)
  if [ ${#kept[@]} -gt 0 ]; then
    # Given files, libFuzzer runs each once and fails on the first crash.
    if ! "${launcher[@]}" "$fuzzer" "${options[@]}" "${kept[@]}" >"$log" 2>&1; then
      tail -60 "$log"
      echo "attn-fuzz-$target: a kept crash in test/Fuzz/crashes/$target/ still crashes (log: $log)"
      return 1
    fi
    echo "attn-fuzz-$target: ${#kept[@]} kept crash input(s) replayed, none crashes"
  fi
  local seeds=()
  for dir in "$top/test/Fuzz/seeds/$target" "$work/seeds/$target"; do
    [ -d "$dir" ] && seeds+=("$dir")
  done
  if [ "$mode" = run ]; then
    [ "$seconds" -gt 0 ] || return 0
    options+=(-max_total_time="$seconds")
  elif [ "${check_runs[$target]}" -gt 0 ]; then
    options+=(-seed=1 "-runs=${check_runs[$target]}" -reload=0)
  else
    local inputs=()
    mapfile -t inputs < <(find "${seeds[@]}" -type f ! -name '.*' | sort)
    if ! "${launcher[@]}" "$fuzzer" "${options[@]}" "${inputs[@]}" >"$log" 2>&1; then
      tail -60 "$log"
      echo "attn-fuzz-$target: a seed crashes (log: $log)"
      return 1
    fi
    echo "attn-fuzz-$target: ${#inputs[@]} seeds replayed, none crashes (not mutated)"
    return 0
  fi
  rm -f "$artifacts"/*
  local status=0
  "${launcher[@]}" "$fuzzer" "${options[@]}" -print_final_stats=1 \
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
  local what="${seconds}s"
  [ "$mode" = check ] && what="seed 1"
  echo "attn-fuzz-$target: $what, $runs runs, no crash; ${done_line:-no final stats}"
}

command="${1:-all}"
[ $# -gt 0 ] && shift
case "$command" in
  build) build ;;
  run|check)
    [ $# -ge 1 ] || usage
    failed=0
    for target in "$@"; do fuzz "$command" "$target" || failed=1; done
    exit "$failed"
    ;;
  all)
    build
    failed=0
    for target in "${targets[@]}"; do fuzz run "$target" || failed=1; done
    exit "$failed"
    ;;
  *) usage ;;
esac
