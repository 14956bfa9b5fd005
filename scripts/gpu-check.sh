#!/usr/bin/env bash
# The one-call GPU check (docs/runtime.md, "The GPU check").
#
#   scripts/gpu-check.sh prepare DIR [--no-build]
#       Here, where LLVM/MLIR are: builds attn-compile, attn-run, attn-launch,
#       attnrt-launch-overhead and the Python package, writes the sweep's
#       modules (benchmarks/gpu/sweep.py) and compiles each to a bundle;
#       gives each c_* bundle whose kernel the GPU reference cannot check
#       (a score region, a constant block mask, a backward kernel) a
#       reference case in its reference/ (attn-run [--backward]
#       --write-reference: the inputs and the float64 reference's outputs or
#       gradients);
#       compiles python/tests/gpu_check.py's cases with attn_mlir, and puts
#       in DIR everything the GPU machine needs: bin/ (attn-launch,
#       attnrt-launch-overhead), lib/libattnrt.so*, bundles/*, modules/*,
#       python/attn_mlir (the package without its compiler) and
#       python-bundles/*. The bundles' kernels.ptx are left gzipped (PTX
#       text shrinks about sixfold, and DIR must fit the device tool's
#       carry); run unpacks them.
#   scripts/gpu-check.sh run DIR OUT [all | STEP...]
#       On the GPU machine (CUDA driver, compute-sanitizer, PyTorch and
#       Triton; no LLVM/MLIR). With no step named, the budgeted plan, which
#       fits one call of at most 10 minutes of device time on an H100,
#       most valuable first: correctness (all of it); memcheck and
#       racecheck on c_lean_many, c_split_many and c_region_alibi; the
#       benchmark and the backward benchmark at D = 128, S = 4k and 16k
#       (--quick); decode at B = 1,
#       Hq/Hkv = 32/8, Sk = 16k and 128k against SDPA flash and cuDNN
#       (--quick); the launch overhead. `all` runs every step in full (what
#       the budget leaves for a later call: every benchmark size, the
#       variants, synccheck, two more sanitized kernels); naming steps runs
#       those in full:
#         correctness  every c_* bundle through attn-launch (checked against
#                      the GPU reference, or against its reference case),
#                      every r_* bundle (compiled for run-time lengths) at
#                      each (B, Sq, Sk) of sweep.py's RUN_TIME_LENGTHS, one
#                      bundle for all; and attn_mlir.attention on torch CUDA
#                      tensors (python/tests/gpu_check.py run);
#         sanitizers   compute-sanitizer memcheck, racecheck and synccheck
#                      on small ones, a Lean kernel with contributors among
#                      them (each tool run limited to 5 minutes: a
#                      persistent kernel whose CTAs the tool serialises
#                      would wait forever);
#         benchmark    every b_* bundle through attn-launch --bench (and its
#                      NAME+mma-sync twin, the mma.sync body), and the
#                      same configurations through PyTorch SDPA's
#                      FLASH_ATTENTION and CUDNN_ATTENTION backends
#                      (benchmarks/gpu/compare_sdpa.py): benchmark.md, .csv;
#         backward     the backward kernel of every g_* bundle through
#                      attn-launch --bench --no-check, and SDPA's backward
#                      pass with its FLASH_ATTENTION and CUDNN_ATTENTION
#                      backends on the same shapes
#                      (benchmarks/gpu/compare_backward.py): backward.md,
#                      .csv;
#         decode       the d_* bundles (Lean, FlashAttention-2's grid, the
#                      picked schedule) against SDPA flash, cuDNN and
#                      FlexDecoding (compare_decode.py): decode.md, .csv;
#         variants     the v_* bundles (ALiBi, softcap, window, documents,
#                      causal; D in {64, 80, 96, 128}) against
#                      FlexAttention and SDPA (compare_flex.py):
#                      variants.md, .csv;
#         overhead     the host cost of attnrtLaunch over a bare
#                      cuLaunchKernel.
#       Exits non-zero if a step failed; OUT/summary.txt says which. The
#       steps can go in separate calls with one OUT (summary.txt is
#       appended to).
#   scripts/gpu-check.sh dry-run DIR [--no-build]
#       Here, without a GPU: prepare, then every step of run that needs none
#       (each bundle read and checked and each reference case read by
#       attn-launch --validate; attn-launch fails cleanly without a driver; the package
#       in DIR loads its bundles without the compiler; the benchmark scripts
#       compile; DIR, packed, fits in 56 MiB, what the device tool
#       carries besides the working tree).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# The sanitizers' kernels, the budgeted plan's first:
# c_lean_many: a persistent Lean kernel whose hosts wait for contributors.
# c_split_many: split-KV, 16 CTAs counting on one output tile, the last
# merging.
# c_region_alibi: a score region inlined into the kernel.
sanitized=(c_lean_many c_split_many c_region_alibi c_tail_q_lt_k c_window)
budgeted_sanitized=3
# Debian's interpreter: the one the package's compiler module is built for.
python=/usr/bin/python3

prepare() {
  local dir="$1" build_tools="$2"
  if [ "$build_tools" = yes ]; then
    "$root/scripts/build.sh" attn-compile attn-run attn-launch attnrt-launch-overhead _attn_mlir >/dev/null
  fi
  rm -rf "$dir/modules" "$dir/bundles" "$dir/bin" "$dir/lib" "$dir/python" "$dir/python-bundles"
  mkdir -p "$dir/modules" "$dir/bundles" "$dir/bin" "$dir/lib" "$dir/python/attn_mlir"
  python3 "$root/benchmarks/gpu/sweep.py" "$dir/modules" >"$dir/modules/list.txt"
  # Two compilations at a time; any failure fails the step. The *_picked_*
  # and c_split_decode modules take the schedule attn-compile picks by
  # default (split-KV where FlashAttention-2's rule splits); the others keep
  # the schedule they name (FlashAttention-2's grid unless partitioned).
  xargs -P 2 -I{} sh -c 'case "$2" in *_picked_*|c_split_decode) split= ;; *) split=--split-kv=false ;; esac
    "$0" "$1/modules/$2.mlir" -o "$1/bundles/$2" $split >/dev/null' \
    "$build/bin/attn-compile" "$dir" {} <"$dir/modules/list.txt"
  # On mma.sync once more (NAME+mma-sync): the benchmark's kernels, which
  # compare_sdpa.py times next to the default body (wgmma on sm_90a), and
  # sweep.py's MMA_SYNC_TWINS, which the correctness step checks beside it.
  { grep '^b_' "$dir/modules/list.txt"
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sweep
print("\n".join(sweep.MMA_SYNC_TWINS))' "$root/benchmarks/gpu"; } | xargs -r -P 2 -I{} \
    "$build/bin/attn-compile" "$dir/modules/{}.mlir" -o "$dir/bundles/{}+mma-sync" \
    --split-kv=false --matrix-unit=mma-sync >/dev/null
  # Reference cases for the kernels the GPU reference cannot check (their
  # manifests say score_region, block_mask or gradient: a backward kernel,
  # whose case is the gradient's): attn-run checks the CPU kernel and writes
  # the case, its report in modules/NAME.reference.txt.
  { grep -lE '"(score_region|block_mask|gradient)": *true' "$dir"/bundles/c_*/manifest.json || true; } |
    xargs -r -n 1 dirname | xargs -r -P 2 -I{} sh -c 'name="$(basename "$2")"
      backward=; grep -qE "\"gradient\": *true" "$2/manifest.json" && backward=--backward
      "$0" "$1/modules/${name%+mma-sync}.mlir" $backward --write-reference="$2/reference" \
        >"$1/modules/$name.reference.txt" 2>&1 ||
        { cat "$1/modules/$name.reference.txt" >&2; exit 1; }' \
    "$build/bin/attn-run" "$dir" {}
  cp "$build/bin/attn-launch" "$build/bin/attnrt-launch-overhead" "$dir/bin/"
  cp -P "$build"/lib/libattnrt.so* "$dir/lib/"
  PYTHONPATH="$build/python" "$python" "$root/python/tests/gpu_check.py" prepare "$dir/python-bundles"
  cp "$build"/python/attn_mlir/*.py "$dir/python/attn_mlir/"
  echo "prepared $(ls -d "$dir"/bundles/*/ | wc -l) bundles in $dir," \
    "$(ls -d "$dir"/bundles/*/reference 2>/dev/null | wc -l) with a reference case"
}

# attn-launch's --lengths options for the r_* bundles: sweep.py's
# RUN_TIME_LENGTHS.
run_time_lengths() {
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import sweep
print(" ".join("--lengths=%d,%d,%d" % t for t in sweep.RUN_TIME_LENGTHS))' \
    "$root/benchmarks/gpu"
}

dry_run() {
  local dir="$1"
  "$dir/bin/attn-launch" --validate "$dir"/bundles/*/ >/dev/null
  echo "attn-launch --validate: $(ls -d "$dir"/bundles/*/ | wc -l) bundles valid," \
    "$(ls -d "$dir"/bundles/*/reference 2>/dev/null | wc -l) reference cases read"
  echo "run-time lengths: $(ls -d "$dir"/bundles/r_*/ | wc -l) bundles, each at $(run_time_lengths)"
  # Without a driver (or with this machine's), attn-launch must end in one
  # clear message and exit 1, never crash.
  local status=0
  ATTNRT_LIBCUDA="$dir/no-such-libcuda.so" \
    "$dir/bin/attn-launch" "$dir/bundles/c_window" 2>"$dir/no-driver.txt" || status=$?
  if [ "$status" -ne 1 ] || ! grep -q "cannot open the CUDA driver" "$dir/no-driver.txt"; then
    echo "attn-launch without a driver: exit $status, $(cat "$dir/no-driver.txt")" >&2
    return 1
  fi
  echo "attn-launch without a driver: $(cat "$dir/no-driver.txt")"
  # The package as the GPU machine has it: no compiler, libattnrt at ../../lib.
  PYTHONPATH="$dir/python" "$python" -c 'import sys, attn_mlir
print(attn_mlir.load_bundles(sys.argv[1]), "python bundles load without the compiler")' "$dir/python-bundles"
  python3 -m py_compile "$root/benchmarks/gpu/compare_sdpa.py" \
    "$root/benchmarks/gpu/compare_backward.py" "$root/benchmarks/gpu/compare_decode.py" \
    "$root/benchmarks/gpu/compare_flex.py"
  echo "compare_sdpa.py, compare_backward.py, compare_decode.py and compare_flex.py compile"
}

# The bundles' PTX gzipped for the device tool's carry, and back.
pack() { find "$1/bundles" -name kernels.ptx -exec gzip -9 {} +; }
unpack() { find "$1/bundles" -name kernels.ptx.gz -exec gunzip -f {} +; }

# The device tool carries at most 64 MiB with the working tree: the packed
# directory must leave room for it (reference cases are big).
check_carry() {
  local dir="$1" bytes limit=$((56 << 20))
  bytes="$(du -sb "$dir" | cut -f1)"
  if [ "$bytes" -gt "$limit" ]; then
    echo "gpu-check.sh: $dir holds $((bytes >> 20)) MiB, more than the $((limit >> 20)) MiB the device tool can carry with the working tree" >&2
    return 1
  fi
  echo "the prepared directory fits the device tool's carry ($((bytes >> 20)) of $((limit >> 20)) MiB)"
  echo "dry run passed; on the GPU machine: scripts/gpu-check.sh run $dir OUT"
}

# The steps of run, in order; `run DIR OUT STEP...` runs some of them.
steps=(correctness sanitizers benchmark backward decode variants overhead)
# The budgeted plan: these steps, the sanitizers and the benchmarks cut down.
budgeted=(correctness sanitizers benchmark backward decode overhead)

run() {
  local dir="$1" out="$2"
  shift 2
  local chosen=("$@") quick=no
  if [ ${#chosen[@]} -eq 0 ]; then
    chosen=("${budgeted[@]}"); quick=yes
  elif [ "${chosen[*]}" = all ]; then
    chosen=("${steps[@]}")
  fi
  for step in "${chosen[@]}"; do
    case " ${steps[*]} " in
      *" $step "*) ;;
      *) echo "gpu-check.sh: no step '$step' (steps: ${steps[*]})" >&2; return 2 ;;
    esac
  done
  wanted() { case " ${chosen[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
  unpack "$dir"
  mkdir -p "$out"
  local launch="$dir/bin/attn-launch" failed=() summary="$out/summary.txt"
  # Appended to: the steps may go in several calls with one OUT.
  echo "== $(date -u '+%Y-%m-%d %H:%M UTC'): run ${chosen[*]}$([ $quick = yes ] && echo ' (budgeted)')" >>"$summary"
  note() { echo "$*" | tee -a "$summary"; }

  if wanted correctness; then
    echo "== 1. correctness =="
    if "$launch" "$dir"/bundles/c_*/ --csv="$out/correctness.csv" 2>&1 | tee "$out/correctness.txt"; then
      note "correctness: PASS ($(grep -c ': PASS' "$out/correctness.txt") outputs)"
    else
      note "correctness: FAIL"; failed+=(correctness)
    fi
    local lengths
    lengths="$(run_time_lengths)"
    # shellcheck disable=SC2086 # one option per triple
    if "$launch" "$dir"/bundles/r_*/ $lengths --csv="$out/run-time-lengths.csv" 2>&1 | tee "$out/run-time-lengths.txt"; then
      note "run-time lengths: PASS ($(grep -c ': PASS' "$out/run-time-lengths.txt") outputs)"
    else
      note "run-time lengths: FAIL"; failed+=(run-time-lengths)
    fi
    if PYTHONPATH="$dir/python" python3 "$root/python/tests/gpu_check.py" run "$dir/python-bundles" 2>&1 | tee "$out/python.txt"; then
      note "python: PASS ($(grep -c ': PASS' "$out/python.txt") cases)"
    else
      note "python: FAIL"; failed+=(python)
    fi
  fi

  if wanted sanitizers; then
    echo "== 2. compute-sanitizer =="
    local sanitizer tools=(memcheck racecheck synccheck) bundles=() limit=300
    sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
    local names=("${sanitized[@]}")
    if [ $quick = yes ]; then
      tools=(memcheck racecheck); names=("${sanitized[@]:0:$budgeted_sanitized}"); limit=90
    fi
    for name in "${names[@]}"; do bundles+=("$dir/bundles/$name"); done
    for tool in "${tools[@]}"; do
      if [ ! -x "$sanitizer" ]; then
        note "$tool: FAIL (compute-sanitizer not found)"; failed+=("$tool"); continue
      fi
      # Each tool run limited: a persistent kernel whose CTAs the tool
      # serialises would wait forever.
      if timeout "$limit" "$sanitizer" --tool "$tool" --error-exitcode 3 "$launch" "${bundles[@]}" \
          >"$out/sanitizer-$tool.txt" 2>&1; then
        note "$tool: PASS on ${names[*]} ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY' "$out/sanitizer-$tool.txt" | tail -1))"
      else
        note "$tool: FAIL on ${names[*]} (exit $?, see sanitizer-$tool.txt)"; failed+=("$tool")
        tail -20 "$out/sanitizer-$tool.txt"
      fi
    done
  fi

  # 3-4: the prefill sweep (benchmark.*), its backward passes
  # (backward.*), the decode sweep (decode.*) and the variants against
  # FlexAttention (variants.*), each with PyTorch's kernels in the same run.
  for bench in compare_sdpa:benchmark compare_backward:backward compare_decode:decode \
      compare_flex:variants; do
    local script="${bench%%:*}.py" stem="${bench#*:}"
    wanted "$stem" || continue
    echo "== $stem: $script, ours and PyTorch's in the same run =="
    local options=()
    [ $quick = yes ] && options=(--quick)
    if python3 "$root/benchmarks/gpu/$script" --attn-launch "$launch" \
        --bundles "$dir/bundles" --out "$out" "${options[@]}" 2>&1 | tee "$out/$stem.txt"; then
      note "$stem: done ($stem.md, $stem.csv)"
    else
      note "$stem: FAIL"; failed+=("$stem")
    fi
  done

  if wanted overhead; then
    echo "== 5. launch overhead =="
    if "$dir/bin/attnrt-launch-overhead" "$dir/bundles/c_window" 2>&1 | tee "$out/launch-overhead.txt"; then
      note "launch overhead: $(grep overhead: "$out/launch-overhead.txt" | sed 's/ *overhead: *//')"
    else
      note "launch overhead: FAIL"; failed+=(launch-overhead)
    fi
  fi

  if [ ${#failed[@]} -gt 0 ]; then
    note "FAILED: ${failed[*]}"
    return 1
  fi
  note "all steps passed: ${chosen[*]}"
}

[ $# -ge 1 ] || usage
command="$1"; shift
case "$command" in
  prepare|dry-run)
    [ $# -ge 1 ] || usage
    dir="$1"; build_tools=yes
    [ "${2:-}" = "--no-build" ] && build_tools=no
    prepare "$dir" "$build_tools"
    if [ "$command" = dry-run ]; then dry_run "$dir"; fi
    pack "$dir"
    if [ "$command" = dry-run ]; then check_carry "$dir"; fi
    ;;
  run)
    [ $# -ge 2 ] || usage
    run "$@"
    ;;
  *) usage ;;
esac
