#!/usr/bin/env bash
# CPU memory scaling: peak resident memory and time of one attention
# (B = 1, H = 1, D = 64, f32, Sq = Sk = S, scale 1/8) written two ways, one
# module each, run by mlir-runner on the same inputs generated in the process:
#   tiled: attn.attention, lowered by `attn-opt --attn-to-cpu` (tiled
#          online-softmax loops with FlashAttention-2's tiles);
#   naive: the three-op lowering that materialises the S x S scores
#          (scores = Q K^T * scale, a row softmax, O = P V, as linalg on
#          tensors), lowered by stock mlir-opt with $NAIVE_PIPELINE.
# Each run prints the sum of O; the script checks that the two variants
# agree (relative difference <= 1e-3) and exits 1 when they do not or when a
# compile or a run fails (naive sizes over the budget are skipped, not
# failed). Wall time and peak RSS of the compile (attn-opt / mlir-opt) and of
# the run (mlir-runner, its JIT compilation included) come from
# /usr/bin/time (Debian package `time`). Peak RSS is compared with a model
# of the data the run must hold: Q, K, V and O (4 * S * 64 * 4 bytes) for
# tiled, plus the S x S scores (S * S * 4 bytes) for naive; what is left
# ("RSS - model") is the runner, its JIT and the libraries, about constant.
#
# Usage: benchmarks/cpu-memory-scaling.sh [options] [S ...]
#   S ...                    sizes (default: 1024 4096 16384 65536)
#   --csv FILE               also write the rows as CSV to FILE
#   --repeat N               runs per (S, variant); the median time and the
#                            median peak RSS are reported (default 3)
#   --naive-budget-gib G     skip naive runs whose S x S scores need more than
#                            G GiB (default $NAIVE_LIMIT_GIB, else 12)
#   --mem-cap-gib G          every process runs under `ulimit -v` of its data
#                            model + 2 GiB, at most G GiB (default 20)
#   --attn-options "OPTS"    options of attn-to-cpu, e.g. "block-m=64 block-n=64"
#   --keep DIR               keep the generated and lowered modules in DIR
#   --print-pipeline         print the naive lowering's pipeline and exit
# Tools (environment, defaults in brackets):
#   ATTN_OPT [$ATTN_BUILD_DIR/bin/attn-opt, ATTN_BUILD_DIR=<repo>/build],
#   MLIR_OPT [$LLVM_DIR/bin/mlir-opt, LLVM_DIR=/usr/lib/llvm-22],
#   MLIR_RUNNER [$LLVM_DIR/bin/mlir-runner],
#   MLIR_C_RUNNER_UTILS [$LLVM_DIR/lib/libmlir_c_runner_utils.so],
#   MLIR_RUNNER_UTILS [$LLVM_DIR/lib/libmlir_runner_utils.so],
#   NAIVE_PIPELINE [see --print-pipeline].
# Prints a markdown table and the checks on stdout, progress on stderr.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
llvm="${LLVM_DIR:-/usr/lib/llvm-22}"
ATTN_OPT="${ATTN_OPT:-$build/bin/attn-opt}"
MLIR_OPT="${MLIR_OPT:-$llvm/bin/mlir-opt}"
MLIR_RUNNER="${MLIR_RUNNER:-$llvm/bin/mlir-runner}"
MLIR_C_RUNNER_UTILS="${MLIR_C_RUNNER_UTILS:-$llvm/lib/libmlir_c_runner_utils.so}"
MLIR_RUNNER_UTILS="${MLIR_RUNNER_UTILS:-$llvm/lib/libmlir_runner_utils.so}"
# attn-to-cpu's passes without the attn ones (lib/Pipelines/AttnToCPU.cpp);
# on the naive module both give the same LLVM dialect, byte for byte.
default_pipeline='builtin.module(canonicalize,cse,one-shot-bufferize{bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map},cse,canonicalize,buffer-deallocation-pipeline,convert-bufferization-to-memref,func.func(convert-linalg-to-loops),scf-forall-to-for,convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,convert-to-llvm,reconcile-unrealized-casts)'
NAIVE_PIPELINE="${NAIVE_PIPELINE:-$default_pipeline}"

usage() { sed -n '/^# Usage:/,/^# Prints/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
csv="" repeat=3 budget_gib="${NAIVE_LIMIT_GIB:-12}" cap_gib=20 attn_options="" keep=""
sizes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --csv) csv="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --naive-budget-gib) budget_gib="$2"; shift 2 ;;
    --mem-cap-gib) cap_gib="$2"; shift 2 ;;
    --attn-options) attn_options="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --print-pipeline) echo "$NAIVE_PIPELINE"; exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) [[ "$1" =~ ^[1-9][0-9]*$ ]] || { echo "not a size: $1" >&2; exit 2; }
       sizes+=("$1"); shift ;;
  esac
done
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 4096 16384 65536)
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "--repeat needs a positive integer" >&2; exit 2; }

[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
for tool in "$ATTN_OPT" "$MLIR_OPT" "$MLIR_RUNNER"; do
  [ -x "$tool" ] || { echo "missing $tool (build first: scripts/build.sh)" >&2; exit 1; }
done
for lib in "$MLIR_C_RUNNER_UTILS" "$MLIR_RUNNER_UTILS"; do
  [ -f "$lib" ] || { echo "missing $lib" >&2; exit 1; }
done
if [ -n "$keep" ]; then mkdir -p "$keep"; work="$(cd "$keep" && pwd)"
else work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT; fi

# The attention of size $1, written as variant $2 (tiled or naive), with
# inputs Q[i,d] = sin(0.37 i + 0.11 d), K[j,d] = cos(0.23 j + 0.17 d),
# V[j,d] = sin(0.05 j + 0.29 d); prints the sum of O.
attention_module() {
  local s=$1
  cat <<MLIR
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#qk_q = affine_map<(i, j, d) -> (i, d)>
#qk_k = affine_map<(i, j, d) -> (j, d)>
#qk_s = affine_map<(i, j, d) -> (i, j)>
#pv_p = affine_map<(i, d, j) -> (i, j)>
#pv_v = affine_map<(i, d, j) -> (j, d)>
#pv_o = affine_map<(i, d, j) -> (i, d)>
func.func private @printF32(f32)
func.func private @printNewline()
func.func @input(%a: f32, %b: f32, %cos: i1, %n: index) -> tensor<?x64xf32> {
  %e = tensor.empty(%n) : tensor<?x64xf32>
  %t = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<?x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %d = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %di = arith.index_cast %d : index to i64
    %fi = arith.sitofp %ii : i64 to f32
    %fd = arith.sitofp %di : i64 to f32
    %x = arith.mulf %fi, %a : f32
    %y = arith.mulf %fd, %b : f32
    %z = arith.addf %x, %y : f32
    %s = math.sin %z : f32
    %c = math.cos %z : f32
    %r = arith.select %cos, %c, %s : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  return %t : tensor<?x64xf32>
}
func.func @main() {
  %n = arith.constant $s : index
  %true = arith.constant true
  %false = arith.constant false
  %c37 = arith.constant 0.37 : f32
  %c11 = arith.constant 0.11 : f32
  %c23 = arith.constant 0.23 : f32
  %c17 = arith.constant 0.17 : f32
  %c05 = arith.constant 0.05 : f32
  %c29 = arith.constant 0.29 : f32
  %q = call @input(%c37, %c11, %false, %n) : (f32, f32, i1, index) -> tensor<?x64xf32>
  %k = call @input(%c23, %c17, %true, %n) : (f32, f32, i1, index) -> tensor<?x64xf32>
  %v = call @input(%c05, %c29, %false, %n) : (f32, f32, i1, index) -> tensor<?x64xf32>
MLIR
  if [ "$2" = tiled ]; then
    cat <<MLIR
  %q4 = tensor.expand_shape %q [[0, 1, 2], [3]] output_shape [1, 1, %n, 64] : tensor<?x64xf32> into tensor<1x1x?x64xf32>
  %k4 = tensor.expand_shape %k [[0, 1, 2], [3]] output_shape [1, 1, %n, 64] : tensor<?x64xf32> into tensor<1x1x?x64xf32>
  %v4 = tensor.expand_shape %v [[0, 1, 2], [3]] output_shape [1, 1, %n, 64] : tensor<?x64xf32> into tensor<1x1x?x64xf32>
  %oe4 = tensor.empty(%n) : tensor<1x1x?x64xf32>
  %o4 = attn.attention ins(%q4, %k4, %v4 : tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>, tensor<1x1x?x64xf32>)
      outs(%oe4 : tensor<1x1x?x64xf32>) {scale = 0.125 : f32} -> tensor<1x1x?x64xf32>
  %o = tensor.collapse_shape %o4 [[0, 1, 2], [3]] : tensor<1x1x?x64xf32> into tensor<?x64xf32>
  %zero = arith.constant 0.0 : f32
MLIR
  else
    cat <<MLIR
  %zero = arith.constant 0.0 : f32
  %minf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  // scores = Q K^T * scale: the S x S buffer.
  %se = tensor.empty(%n, %n) : tensor<?x?xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<?x64xf32>, tensor<?x64xf32>) outs(%s0 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b fastmath<reassoc, contract> : f32
    %r = arith.addf %acc, %p fastmath<reassoc, contract> : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  // softmax over each row, in place.
  %me = tensor.empty(%n) : tensor<?xf32>
  %m0 = linalg.fill ins(%minf : f32) outs(%me : tensor<?xf32>) -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%s : tensor<?x?xf32>) outs(%m0 : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.mulf %x, %scale : f32
    %r = arith.maximumf %acc, %y : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  %p = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<?xf32>) outs(%s : tensor<?x?xf32>) {
  ^bb0(%mx: f32, %x: f32):
    %y = arith.mulf %x, %scale : f32
    %z = arith.subf %y, %mx : f32
    %r = math.exp %z : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %l0 = linalg.fill ins(%zero : f32) outs(%me : tensor<?xf32>) -> tensor<?xf32>
  %l = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<?x?xf32>) outs(%l0 : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  // O = P V / l.
  %oe = tensor.empty(%n) : tensor<?x64xf32>
  %o0 = linalg.fill ins(%zero : f32) outs(%oe : tensor<?x64xf32>) -> tensor<?x64xf32>
  %o1 = linalg.generic {indexing_maps = [#pv_p, #pv_v, #pv_o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p, %v : tensor<?x?xf32>, tensor<?x64xf32>) outs(%o0 : tensor<?x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %t = arith.mulf %a, %b fastmath<reassoc, contract> : f32
    %r = arith.addf %acc, %t fastmath<reassoc, contract> : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
  %o = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%l : tensor<?xf32>) outs(%o1 : tensor<?x64xf32>) {
  ^bb0(%sum: f32, %x: f32):
    %r = arith.divf %x, %sum : f32
    linalg.yield %r : f32
  } -> tensor<?x64xf32>
MLIR
  fi
  cat <<MLIR
  %ce = tensor.empty() : tensor<f32>
  %c0 = linalg.fill ins(%zero : f32) outs(%ce : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%o : tensor<?x64xf32>) outs(%c0 : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %value = tensor.extract %sum[] : tensor<f32>
  call @printF32(%value) : (f32) -> ()
  call @printNewline() : () -> ()
  return
}
MLIR
}

# Bytes of data the variant $2 of size $1 must hold: Q, K, V and O, plus the
# S x S scores for naive.
model_bytes() {
  local s=$1 bytes=$(( 4 * $1 * 64 * 4 ))
  [ "$2" = naive ] && bytes=$(( bytes + s * s * 4 ))
  echo "$bytes"
}

# `ulimit -v` in KiB for a process holding $1 bytes of data: the data plus
# 2 GiB for the runner, its JIT and the libraries, at most --mem-cap-gib.
vm_cap_kib() {
  local kib=$(( $1 / 1024 + 2 * 1024 * 1024 )) cap
  cap=$(awk -v g="$cap_gib" 'BEGIN { printf "%d", g * 1024 * 1024 }')
  [ "$kib" -lt "$cap" ] || kib=$cap
  echo "$kib"
}

# Runs "$@" under /usr/bin/time and `ulimit -v $cap`; stdout goes to
# $work/out. Prints "<seconds> <peak KiB>", or fails (message on stderr).
measure() {
  local cap=$1; shift
  if ! ( ulimit -v "$cap"; exec /usr/bin/time -f '%e %M' -o "$work/time" "$@" ) \
      >"$work/out" 2>"$work/err"; then
    { echo "failed under ulimit -v $cap KiB: $*"; tail -5 "$work/err"; } >&2
    return 1
  fi
  tail -1 "$work/time"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
  if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# Generates, lowers and runs variant $2 of size $1 ($3 runs). Sets
# compile_s, run_s, rss_kib and sum; returns 1 on failure (status set).
run_variant() {
  local s=$1 variant=$2 runs=$3 cap secs kib times="" rsss="" i
  local src="$work/$variant-$s.mlir" low="$work/$variant-$s.llvm.mlir"
  cap=$(vm_cap_kib "$(model_bytes "$s" "$variant")")
  attention_module "$s" "$variant" > "$src"
  if [ "$variant" = tiled ]; then
    read -r compile_s kib < <(measure "$cap" "$ATTN_OPT" "$src" \
        "--attn-to-cpu${attn_options:+=$attn_options}" -o "$low") \
      || { status="compile failed"; return 1; }
  else
    read -r compile_s kib < <(measure "$cap" "$MLIR_OPT" "$src" \
        --pass-pipeline="$NAIVE_PIPELINE" -o "$low") \
      || { status="compile failed"; return 1; }
  fi
  for (( i = 0; i < runs; i++ )); do
    read -r secs kib < <(measure "$cap" "$MLIR_RUNNER" "$low" -e main \
        -entry-point-result=void -O3 \
        -shared-libs="$MLIR_C_RUNNER_UTILS,$MLIR_RUNNER_UTILS") \
      || { status="run failed (ulimit -v $(mib $(( cap / 1024 ))) GiB)"; return 1; }
    times+=" $secs"; rsss+=" $kib"
    sum="$(tail -1 "$work/out")"
    # A finite number, else (nan, inf, nothing) the run failed.
    [[ "$sum" =~ ^-?[0-9]+(\.[0-9]*)?(e[-+]?[0-9]+)?$ ]] \
      || { status="run printed '$sum', not a number"; return 1; }
  done
  run_s=$(echo "$times" | median)
  rss_kib=$(echo "$rsss" | median)
  status=ok
}

declare -A rss sums
rows=() failed=0
row() {  # S variant compile-s run-s rss-MiB model-MiB rss-minus-model sum status
  rows+=("$*")
  if [ "$9" = ok ]; then
    echo "| $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 |"
  else
    echo "| $1 | $2 | ${9} | - | - | $6 | - | - |"
  fi
}

echo "| S | variant | compile s | run s | peak RSS MiB | model MiB | RSS - model MiB | sum of O |"
echo "|---|---|---|---|---|---|---|---|"
for s in "${sizes[@]}"; do
  for variant in tiled naive; do
    model=$(model_bytes "$s" "$variant")
    model_mib=$(mib $(( model / 1024 )))
    if [ "$variant" = naive ] && awk -v s="$s" -v g="$budget_gib" \
        'BEGIN { exit !(s * s * 4 > g * 2^30) }'; then
      need=$(awk -v s="$s" 'BEGIN { printf "%.3g", s * s * 4 / 2^30 }')
      row "$s" naive - - - "$model_mib" - - "skipped: needs $need GiB for S x S (budget $budget_gib)"
      continue
    fi
    echo "running: $variant, S = $s" >&2
    if run_variant "$s" "$variant" "$repeat"; then
      rss[$s,$variant]=$rss_kib; sums[$s,$variant]=$sum
      row "$s" "$variant" "$compile_s" "$run_s" "$(mib "$rss_kib")" \
          "$model_mib" "$(mib $(( rss_kib - model / 1024 )))" "$sum" ok
    else
      row "$s" "$variant" - - - "$model_mib" - - "$status"
      failed=1
    fi
  done
done

echo
echo "Median of $repeat runs each. Checksums, and growth of peak RSS between consecutive sizes:"
echo
agree=1
for s in "${sizes[@]}"; do
  if [ -z "${sums[$s,tiled]:-}" ] || [ -z "${sums[$s,naive]:-}" ]; then continue; fi
  line=$(awk -v t="${sums[$s,tiled]}" -v n="${sums[$s,naive]}" 'BEGIN {
    d = t - n; if (d < 0) d = -d; m = n < 0 ? -n : n; r = m > 0 ? d / m : d
    printf "%.2g %s", r, (r <= 1e-3 ? "agree" : "DISAGREE") }')
  echo "- S = $s: sum of O tiled ${sums[$s,tiled]}, naive ${sums[$s,naive]}: relative difference ${line% *}, ${line#* }"
  [ "${line#* }" = agree ] || agree=0
done
for variant in tiled naive; do
  prev=""
  for s in "${sizes[@]}"; do
    [ -n "${rss[$s,$variant]:-}" ] || { prev=""; continue; }
    if [ -n "$prev" ]; then
      awk -v v="$variant" -v a="$prev" -v b="$s" -v ra="${rss[$prev,$variant]}" \
          -v rb="${rss[$s,$variant]}" \
          -v ma="$(model_bytes "$prev" "$variant")" -v mb="$(model_bytes "$s" "$variant")" 'BEGIN {
        printf "- %s, S = %d -> %d (S x %g): peak RSS x %.2f, %+.1f MiB; model %+.1f MiB (x %.2f)\n",
          v, a, b, b / a, rb / ra, (rb - ra) / 1024, (mb - ma) / 2^20, mb / ma }'
    fi
    prev=$s
  done
done

if [ -n "$csv" ]; then
  { echo "S,variant,compile_s,run_s,peak_rss_mib,model_mib,rss_minus_model_mib,sum_of_o,status"
    for r in "${rows[@]}"; do
      read -r a b c d e f g h st <<<"$r"
      echo "$a,$b,$c,$d,$e,$f,$g,$h,\"$st\""
    done; } > "$csv"
fi
[ "$agree" = 1 ] || { echo "tiled and naive disagree" >&2; exit 1; }
[ "$failed" = 0 ] || { echo "some runs failed" >&2; exit 1; }
