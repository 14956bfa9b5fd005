// The positive control: kernels of the generator that passed the GPU check
// on an H100 on 2026-11-22 (commit f76c881, at the emulator's sizes; how they
// were made: Inputs/h100-2026-11-22/README.md) must pass on the PTX emulator.
// A failure here is the emulator's bug, not the generator's.
//
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %S/Inputs/h100-2026-11-22/c_bf16_d64_causal %S/Inputs/h100-2026-11-22/c_f16_d128_causal %S/Inputs/h100-2026-11-22/c_bf16_d256_causal %S/Inputs/h100-2026-11-22/c_decode %S/Inputs/h100-2026-11-22/c_tail_q_gt_k %S/Inputs/h100-2026-11-22/c_window | FileCheck %s
// CHECK-COUNT-18: {{repeat|O|LSE}} {{.*}}: PASS
// CHECK-NOT: FAIL
