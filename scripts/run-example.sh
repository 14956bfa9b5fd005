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
#      to a kernel bundle with attn-compile and runs it: where a GPU is
#      present, with attn-launch through libattnrt (the driver's registers,
#      shared memory and CTAs per SM, and the check against the GPU
#      reference); else it reports ptxas's registers, spills and shared
#      memory with the CTAs per SM they allow (the CPU backend ran the same
#      attention in step 4).
# Usage: scripts/run-example.sh [module.mlir [gpu-function ...]]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_BUILD_DIR:-$root/build}"
input="${1:-$root/examples/gqa-layer.mlir}"
shift || true
gpu_functions=("$@")
[ ${#gpu_functions[@]} -gt 0 ] || gpu_functions=(prefill)

"$root/scripts/build.sh" attn-opt attn-run attn-compile attn-launch >/dev/null

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
echo
if probe="$("$build/bin/attn-launch" --probe 2>&1)"; then
  echo "== attn-launch: run the bundle on the GPU, check against the GPU reference =="
  "$build/bin/attn-launch" "$bundle"
  exit
fi
echo "== no GPU here: the attention ran on the CPU backend above; ptxas's view of the kernel =="
echo "(${probe#attn-launch: error: })"
ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
chip="$(grep -o '"target": "[a-z0-9_]*"' "$bundle/manifest.json" | head -1 | cut -d'"' -f4)"
if [ ! -x "$ptxas" ]; then
  echo "(ptxas not found: no resource report)"
  exit
fi
threads="$(tr -d ' \n' <"$bundle/manifest.json" | grep -o '"block":\[[0-9]*' | head -1 | grep -o '[0-9]*$')"
dynamic="$(grep -o '"dynamic_shared_memory": [0-9]*' "$bundle/manifest.json" | head -1 | grep -o '[0-9]*$')"
"$ptxas" -arch="$chip" -v "$bundle/kernels.ptx" -o /dev/null 2>&1 \
  | grep -E "Compiling entry|spill|Used" | sed 's/^ptxas info *: /  /' \
  | awk -v threads="$threads" -v dynamic="$dynamic" '
      { print }
      /Used [0-9]+ registers/ {
        match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15)
        # H100/A100 limits: 64K registers (allocated per warp in units of 256)
        # and 228/164 KiB of shared memory per SM (1 KiB reserved per CTA).
        warp_regs = int((regs * 32 + 255) / 256) * 256
        by_regs = int(65536 / (warp_regs * threads / 32))
        by_smem = int(233472 / (dynamic + 1024))
        ctas = by_regs < by_smem ? by_regs : by_smem
        printf "  %d threads, %d B dynamic shared memory: %d CTA(s) per SM on sm_90 (by registers %d, by shared memory %d)\n", threads, dynamic, ctas, by_regs, by_smem
      }'
