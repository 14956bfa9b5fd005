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
#   5. compiles the attentions the GPU kernels support (default: @prefill,
#      split-KV where FlashAttention-2's rule splits it, and @decode, Lean
#      attention) to a kernel bundle
#      with attn-compile and runs it: where a GPU is
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
[ ${#gpu_functions[@]} -gt 0 ] || gpu_functions=(prefill decode)

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
echo "== attn-compile: GPU kernels (PTX + manifest) =="
bundle="$build/examples/$(basename "${input%.mlir}").bundle"
"$build/bin/attn-compile" "$input" -o "$bundle" \
  $(printf -- '--function=%s ' "${gpu_functions[@]}")
echo
if probe="$("$build/bin/attn-launch" --probe 2>&1)"; then
  echo "== attn-launch: run the bundle on the GPU, check against the GPU reference =="
  "$build/bin/attn-launch" "$bundle"
  exit
fi
echo "== no GPU here: the attentions ran on the CPU backend above; ptxas's view of the kernels =="
echo "(${probe#attn-launch: error: })"
ptxas="$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)"
chip="$(grep -o '"target": "[a-z0-9_]*"' "$bundle/manifest.json" | head -1 | cut -d'"' -f4)"
if [ ! -x "$ptxas" ]; then
  echo "(ptxas not found: no resource report)"
  exit
fi
# Per kernel: ptxas's registers, spills and shared memory, and the CTAs per SM
# they allow with the manifest's threads and dynamic shared memory (H100 and
# A100 limits: 64K registers, allocated per warp in units of 256, and
# 228/164 KiB of shared memory per SM with 1 KiB reserved per CTA).
"$ptxas" -arch="$chip" -v "$bundle/kernels.ptx" -o /dev/null 2>&1 \
  | /usr/bin/python3 -c '
import json, re, sys
kernels = {k["name"]: k for k in json.load(open(sys.argv[1]))["kernels"]}
name = None
for line in sys.stdin:
    line = re.sub(r"^ptxas info *: ", "", line.rstrip())
    entry = re.search(r"Compiling entry function .(\w+).", line)
    if entry:
        name = entry.group(1)
    if not re.search(r"Compiling entry|spill|Used", line):
        continue
    print("  " + line.strip())
    used = re.search(r"Used (\d+) registers", line)
    if used and name in kernels:
        k = kernels[name]
        threads, dynamic = k["block"][0], k["dynamic_shared_memory"]
        warp_regs = (int(used.group(1)) * 32 + 255) // 256 * 256
        by_regs = 65536 // (warp_regs * threads // 32)
        by_smem = 233472 // (dynamic + 1024)
        persistent = ("; persistent grid of %d CTAs" % k["grid"][0]
                      if k.get("persistent") else "")
        print(f"  {threads} threads, {dynamic} B dynamic shared memory: "
              f"{min(by_regs, by_smem)} CTA(s) per SM on sm_90 (by registers "
              f"{by_regs}, by shared memory {by_smem}){persistent}")
' "$bundle/manifest.json"
