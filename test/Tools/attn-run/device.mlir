// attn-run --device=gpu runs on a GPU or fails with the reason; --device=auto
// falls back to the CPU when there is no GPU (here: a CUDA driver that
// cannot be opened) and says so. The attention reads one value as Q, K and
// V: the CPU backend still gives each its own operand, or the check fails.
// RUN: env ATTNRT_LIBCUDA=%t.no-libcuda.so not attn-run %s --device=gpu 2>&1 | FileCheck %s --check-prefix=ONGPU
// ONGPU: attn-run: error: cannot open the CUDA driver ({{.*}}no-libcuda.so): {{.*}}; is an NVIDIA driver installed?
// RUN: env ATTNRT_LIBCUDA=%t.no-libcuda.so attn-run %s --device=auto | FileCheck %s --check-prefix=AUTO
// AUTO: device: the CPU (no GPU: cannot open the CUDA driver
// AUTO: @prefill: B=1 Hq=2 Hkv=2 (MHA) Sq=64 Sk=64 D=64 Dv=64 bf16 causal
// AUTO: schedule: tiles
// AUTO: check O  : {{.*}} PASS
// AUTO: PASS
// --device=emulator compiles the attention for the GPU in-process and runs
// it on the PTX emulator (docs/emulator.md), checked against the GPU
// reference as on a GPU.
// RUN: attn-run %s --device=emulator | FileCheck %s --check-prefix=EMULATOR
// EMULATOR: device: NVIDIA H100 (PTX emulator)
// EMULATOR: compile {{.*}} (attn-to-ptx), kernel prefill_attention0 (sm_90)
// EMULATOR: O {{.*}}: PASS
// EMULATOR: PASS
// RUN: not attn-run %s --device=tpu 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: Cannot find option named 'tpu'!

func.func @prefill(%q: tensor<1x2x64x64xbf16>, %o: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      outs(%o : tensor<1x2x64x64xbf16>) {causal} -> tensor<1x2x64x64xbf16>
  return %r : tensor<1x2x64x64xbf16>
}
