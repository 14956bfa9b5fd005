#!/usr/bin/env bash
# CPU memory scaling: peak resident memory and time of one attention
# (B = 1, H = 1, D = 64, f32, Sq = Sk = S, scale 1/8) written two ways in one
# module each, both lowered by the attn-to-cpu pipeline and run by
# mlir-runner on the same inputs generated in the process:
#   tiled: attn.attention (tiled online-softmax loops, FlashAttention-2
#          tiles);
#   naive: the three-op lowering that materialises the S x S scores
#          (scores = Q K^T * scale, a row softmax, O = P V, as linalg on
#          tensors).
# Each prints the sum of O; the two must agree. Peak RSS and wall time of the
# run (JIT compilation included) come from /usr/bin/time (Debian package
# `time`).
#
# Usage: benchmarks/cpu-memory-scaling.sh [S ...]     (default: 1024 4096 16384 65536)
#   NAIVE_LIMIT_GIB (default 12): naive runs whose S x S scores would need
#   more are skipped and reported, so that the machine is never exhausted.
# Prints a markdown table on stdout.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
llvm="${LLVM_DIR:-/usr/lib/llvm-22}"
limit_gib="${NAIVE_LIMIT_GIB:-12}"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 4096 16384 65536)

command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
for tool in "$build/bin/attn-opt" "$llvm/bin/mlir-runner"; do
  [ -x "$tool" ] || { echo "missing $tool (build first: scripts/build.sh)" >&2; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

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

# Runs "$@" under /usr/bin/time; prints "<seconds> <peak KiB>" last.
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || {
    echo "failed: $*" >&2; cat "$work/err" >&2; return 1; }
  cat "$work/time"
}

# Lowers variant $2 of size $1 with attn-to-cpu and runs it; prints a row.
run_variant() {
  local s=$1 variant=$2 secs kib
  attention_module "$s" "$variant" > "$work/$variant.mlir"
  "$build/bin/attn-opt" "$work/$variant.mlir" --attn-to-cpu -o "$work/$variant.llvm.mlir"
  read -r secs kib < <(measure "$llvm/bin/mlir-runner" "$work/$variant.llvm.mlir" \
      -e main -entry-point-result=void -O3 \
      -shared-libs="$llvm/lib/libmlir_c_runner_utils.so,$llvm/lib/libmlir_runner_utils.so")
  echo "| $s | $variant | $secs | $((kib / 1024)) | $(tail -1 "$work/out") |"
}

echo "| S | variant | run s | peak RSS MiB | sum of O |"
echo "|---|---|---|---|---|"
for s in "${sizes[@]}"; do
  run_variant "$s" tiled
  need_gib=$(( s * s * 4 / 1024 / 1024 / 1024 ))
  if [ "$need_gib" -ge "$limit_gib" ]; then
    echo "| $s | naive | skipped: its scores alone need $need_gib GiB | - | - |"
  else
    run_variant "$s" naive
  fi
done
