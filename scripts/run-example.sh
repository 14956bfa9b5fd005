#!/usr/bin/env bash
# The main job: takes an attention module (default: the shipped Llama-style
# GQA layer, examples/gqa-layer.mlir) through the compiler and runs it:
#   1. parses and verifies it;
#   2. reports the plan for each attention (work, FlashAttention-2 tiling on
#      the module's target, blocks visited after masked-block skipping,
#      partition);
#   3. lowers it with attn-to-cpu to the LLVM dialect;
#   4. compiles and runs each attention with attn-run on seeded random inputs
#      and checks it against the float64 reference: schedule, time, errors;
#   5. compiles the attentions the GPU kernel supports (default: @prefill)
#      to a kernel bundle with attn-compile and, where ptxas is installed,
#      reports each kernel's registers, spills and shared memory.
# Usage: scripts/run-example.sh [module.mlir [gpu-function ...]]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
input="${1:-$root/examples/gqa-layer.mlir}"
shift || true
gpu_functions=("$@")
[ ${#gpu_functions[@]} -gt 0 ] || gpu_functions=(prefill)

"$root/scripts/build.sh" attn-opt attn-run attn-compile >/dev/null

echo "== $input: parsed and verified =="
"$build/bin/attn-opt" "$input" -o /dev/null
echo "ok"
echo
echo "== plan for each attention =="
"$build/bin/attn-opt" "$input" --attn-print-plan --mlir-print-op-on-diagnostic=false \
  -o /dev/null 2>&1
echo
echo "== attn-to-cpu =="
lowered="$build/examples/$(basename "${input%.mlir}").llvm.mlir"
mkdir -p "$(dirname "$lowered")"
"$build/bin/attn-opt" "$input" --attn-to-cpu -o "$lowered"
echo "LLVM dialect: $(grep -c 'llvm.func' "$lowered") functions, $(wc -l <"$lowered") lines in $lowered"
echo
echo "== attn-run: compile, run on the CPU, check against the float64 reference =="
"$build/bin/attn-run" "$input"
echo
echo "== attn-compile: FlashAttention-2 GPU kernels (PTX + manifest) =="
bundle="$build/examples/$(basename "${input%.mlir}").bundle"
"$build/bin/attn-compile" "$input" -o "$bundle" \
  $(printf -- '--function=%s ' "${gpu_functions[@]}")
ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
chip="$(grep -o '"target": "[a-z0-9_]*"' "$bundle/manifest.json" | head -1 | cut -d'"' -f4)"
if [ -x "$ptxas" ]; then
  "$ptxas" -arch="$chip" -v "$bundle/kernels.ptx" -o /dev/null 2>&1 \
    | grep -E "Compiling entry|spill|Used" | sed 's/^ptxas info *: /  /'
else
  echo "(ptxas not found: no resource report)"
fi
