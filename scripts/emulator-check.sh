#!/usr/bin/env bash
# Every kernel configuration of the GPU check, run on the PTX emulator
# (docs/emulator.md): the test suite's check that the generated PTX computes
# attention, with the emulator's bounds, race and synchronisation checks.
#
#   scripts/emulator-check.sh DIR [BUILD]
#       Writes the c_* and r_* modules of benchmarks/gpu/sweep.py at the
#       emulator's sizes (sweep.py --emulated) into DIR, compiles each to a
#       bundle with attn-compile (as gpu-check.sh does: the schedule each
#       names), gives the kernels the GPU reference cannot check (a score
#       region, a constant block mask, a backward kernel) a reference case
#       (attn-run [--backward] --write-reference), and runs every bundle through attn-launch on the
#       emulator (ATTNRT_LIBCUDA=emulator): checked against the GPU
#       reference kernels (themselves emulated) or the reference case, the
#       r_* bundles at each of sweep.py's EMULATED_RUN_TIME_LENGTHS; and
#       the Python package's GPU cases (python/tests/gpu_check.py
#       prepare-emulated: compiled by attn_mlir.precompile at the same
#       sizes) through attn-launch too. sm_90a bundles compute on wgmma
#       where their tiles allow (docs/gpu-kernel.md); sweep.py's
#       MMA_SYNC_TWINS run a second time compiled with
#       --matrix-unit=mma-sync (NAME+mma-sync), so that the mma.sync body of
#       sm_80 stays checked on every schedule. Each bundle's PTX also goes
#       through ptxas -v for its target (PTXAS, else ptxas on PATH or in
#       /usr/local/cuda/bin): a kernel that spills or has a stack frame
#       fails its configuration.
#       Two bundles at a time; DIR/summary.txt lists the failures. Exits 1
#       if any bundle failed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:?usage: emulator-check.sh DIR [BUILD]}"
build="${2:-${ATTN_BUILD_DIR:-$root/build}}"
bin="$build/bin"

rm -rf "$dir"
mkdir -p "$dir/modules" "$dir/bundles" "$dir/logs"
{
  python3 "$root/benchmarks/gpu/sweep.py" "$dir/modules" --set correctness --emulated
  python3 "$root/benchmarks/gpu/sweep.py" "$dir/modules" --set run-time --emulated
} >"$dir/list.txt"
# The Python package's cases, compiled by the package (Debian's
# interpreter: the one its compiler module is built for).
PYTHONPATH="$build/python" /usr/bin/python3 "$root/python/tests/gpu_check.py" \
  prepare-emulated "$dir/bundles/python" >"$dir/logs/python-prepare.txt"
ls "$dir/bundles/python" | sed 's|^|python/|' >>"$dir/list.txt"
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sweep
print("\n".join(name + "+mma-sync" for name in sweep.MMA_SYNC_TWINS))' \
  "$root/benchmarks/gpu" >>"$dir/list.txt"
lengths="$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sweep
print(" ".join("--lengths=%d,%d,%d" % t for t in sweep.EMULATED_RUN_TIME_LENGTHS))' \
  "$root/benchmarks/gpu")"

# One configuration: compile, write its reference case if the GPU
# reference cannot check it, run it on the emulator.
check_one() {
  local name="$1" split=--split-kv=false unit=
  local module="${name%+mma-sync}"
  [ "$module" != "$name" ] && unit=--matrix-unit=mma-sync
  case "$module" in c_split_decode) split= ;; esac
  local log="$dir/logs/${name//\//-}.txt"
  # python/* bundles are compiled already.
  if [ "${name#python/}" = "$name" ] &&
     ! "$bin/attn-compile" "$dir/modules/$module.mlir" -o "$dir/bundles/$name" $split $unit >"$log" 2>&1; then
    echo "$name: FAIL (attn-compile)"; return 0
  fi
  # Every kernel compiles without spilling (ptxas -v for the bundle's
  # target: no stack frame, no spill stores or loads).
  if [ -n "$ptxas" ]; then
    local target
    target=$(grep -m1 -oE '"target": *"sm_[0-9a-z]+"' "$dir/bundles/$name/manifest.json" | grep -oE 'sm_[0-9a-z]+')
    if ! "$ptxas" -arch="$target" -v "$dir/bundles/$name/kernels.ptx" -o /dev/null >>"$log" 2>&1; then
      echo "$name: FAIL (ptxas)"; return 0
    fi
    if grep -E 'bytes stack frame' "$log" | grep -vqE '\b0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads'; then
      echo "$name: FAIL (ptxas: $(grep -m1 -E '[1-9][0-9]* bytes (stack frame|spill)' "$log"))"; return 0
    fi
  fi
  # A backward kernel's case is the gradient's (attn-run --backward).
  local backward=
  grep -qE '"gradient": *true' "$dir/bundles/$name/manifest.json" && backward=--backward
  if [ "${name#c_}" != "$name" ] &&
     grep -qE '"(score_region|block_mask|gradient)": *true' "$dir/bundles/$name/manifest.json"; then
    if ! "$bin/attn-run" "$dir/modules/$module.mlir" $backward --write-reference="$dir/bundles/$name/reference" >>"$log" 2>&1; then
      echo "$name: FAIL (attn-run --write-reference)"; return 0
    fi
  fi
  local runs=""
  [ "${name#r_}" != "$name" ] && runs="$lengths"
  # shellcheck disable=SC2086 # one option per triple
  if ATTNRT_LIBCUDA=emulator "$bin/attn-launch" "$dir/bundles/$name" $runs >>"$log" 2>&1; then
    echo "$name: PASS ($(grep -c ': PASS' "$log") outputs)"
  else
    echo "$name: FAIL ($(grep -m1 -E 'FAIL|PTX emulator|error' "$log" || echo 'see the log'))"
  fi
}
export -f check_one
# ptxas from PTXAS (CMake passes the one it found), else from PATH or the
# CUDA toolkit; without one, the spills go unchecked (said below).
ptxas="${PTXAS:-$(command -v ptxas || true)}"
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
[ -z "$ptxas" ] && echo "emulator check: no ptxas found: spills are not checked"
export dir bin lengths ptxas

start=$(date +%s)
xargs -P 2 -I{} bash -c 'check_one {}' <"$dir/list.txt" | tee "$dir/summary.txt"
failed=$(grep -c ': FAIL' "$dir/summary.txt" || true)
total=$(wc -l <"$dir/list.txt")
echo "emulator check: $((total - failed)) of $total configurations pass in $(( $(date +%s) - start )) s"
[ "$failed" -eq 0 ]
