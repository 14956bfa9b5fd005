// The backward kernel on the PTX emulator (its race and bounds checks on),
// against the float64 reference gradient: FlashAttention's backward test
// matrix (test_flash_attn.py) where the kernel takes it, head dimensions 32
// to 256 with Dv != D (above 128 dV and dK in a walk each), causal and
// sliding-window masks, softcap, grouped-query heads 2:1, 4:1 and 8:1, one
// and two sequences, per-sequence key lengths, boolean and additive mask
// operands (f16, bf16 and f32; broadcast over the heads or one per query
// head of a group), block masks (a parameter per query head with empty,
// partial and full blocks over a boolean mask; a constant one over an
// additive mask), score regions (an ALiBi bias over a tanh cap, math.exp2
// of the head; max, a square and a select on the positions under a softcap,
// an additive mask and key lengths; sqrt(|s|), whose derivative is infinite
// at the zeros the tiles hold past Sq and Sk, where P = 0 must give dS = 0:
// each differentiated with respect to the score), f16 and bf16. Each
// function holds an attention and its gradient, in a module for an sm_90a
// target: attn-compile builds both kernels twice, for sm_80 (mma.sync) and
// for the module's sm_90a (wgmma, which the PTX of every case's backward
// kernel up to D = 192 shows; mma.sync above, gradWgmmaUnfit; its tiles by
// tensor copies into two stages up to max(D, Dv) = 128 without key lengths,
// by cp.async otherwise, gradTensorCopiesUnfit), attn-run
// runs the forward and the gradient on the CPU and writes the gradient case
// (the inputs, the forward's O and LSE, a seeded dO, and the reference's dQ,
// dK and dV with FlashAttention's tolerance: twice a naive backward pass's
// error in the same format), and attn-launch runs each backward kernel
// twice on the case: the same bits both times, and dQ, dK and dV within the
// tolerance.

// RUN: rm -rf %t && split-file %s %t
// RUN: attn-compile %t/d32_causal.mlir -o %t/d32_causal --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d32_causal.mlir -o %t/d32_causal-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d32_causal.mlir --backward --write-reference=%t/d32_causal/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d32_causal/reference %t/d32_causal-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d32_causal --kernel=d32_causal_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d32_causal-sm90a --kernel=d32_causal_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d32_causal-sm90a/kernels.ptx
// RUN: attn-compile %t/d40_window.mlir -o %t/d40_window --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d40_window.mlir -o %t/d40_window-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d40_window.mlir --backward --write-reference=%t/d40_window/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d40_window/reference %t/d40_window-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d40_window --kernel=d40_window_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d40_window-sm90a --kernel=d40_window_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d40_window-sm90a/kernels.ptx
// RUN: attn-compile %t/d64_softcap.mlir -o %t/d64_softcap --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d64_softcap.mlir -o %t/d64_softcap-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d64_softcap.mlir --backward --write-reference=%t/d64_softcap/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d64_softcap/reference %t/d64_softcap-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d64_softcap --kernel=d64_softcap_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d64_softcap-sm90a --kernel=d64_softcap_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d64_softcap-sm90a/kernels.ptx
// RUN: attn-compile %t/d80_gqa_causal.mlir -o %t/d80_gqa_causal --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d80_gqa_causal.mlir -o %t/d80_gqa_causal-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d80_gqa_causal.mlir --backward --write-reference=%t/d80_gqa_causal/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d80_gqa_causal/reference %t/d80_gqa_causal-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d80_gqa_causal --kernel=d80_gqa_causal_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d80_gqa_causal-sm90a --kernel=d80_gqa_causal_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d80_gqa_causal-sm90a/kernels.ptx
// RUN: attn-compile %t/key_lengths.mlir -o %t/key_lengths --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/key_lengths.mlir -o %t/key_lengths-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/key_lengths.mlir --backward --write-reference=%t/key_lengths/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/key_lengths/reference %t/key_lengths-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/key_lengths --kernel=key_lengths_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR,LENGTHS
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/key_lengths-sm90a --kernel=key_lengths_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR,LENGTHS
// RUN: FileCheck %s --check-prefixes=WGMMA,RING,TAIL --input-file=%t/key_lengths-sm90a/kernels.ptx
// RUN: attn-compile %t/key_lengths_window.mlir -o %t/key_lengths_window --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/key_lengths_window.mlir -o %t/key_lengths_window-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/key_lengths_window.mlir --backward --write-reference=%t/key_lengths_window/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/key_lengths_window/reference %t/key_lengths_window-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/key_lengths_window --kernel=key_lengths_window_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR,LENGTHS
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/key_lengths_window-sm90a --kernel=key_lengths_window_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR,LENGTHS
// RUN: FileCheck %s --check-prefixes=WGMMA,RING,TAIL --input-file=%t/key_lengths_window-sm90a/kernels.ptx
// RUN: attn-compile %t/d96_causal_softcap.mlir -o %t/d96_causal_softcap --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d96_causal_softcap.mlir -o %t/d96_causal_softcap-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d96_causal_softcap.mlir --backward --write-reference=%t/d96_causal_softcap/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d96_causal_softcap/reference %t/d96_causal_softcap-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d96_causal_softcap --kernel=d96_causal_softcap_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d96_causal_softcap-sm90a --kernel=d96_causal_softcap_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d96_causal_softcap-sm90a/kernels.ptx
// RUN: attn-compile %t/d128_dv64_causal.mlir -o %t/d128_dv64_causal --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d128_dv64_causal.mlir -o %t/d128_dv64_causal-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d128_dv64_causal.mlir --backward --write-reference=%t/d128_dv64_causal/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d128_dv64_causal/reference %t/d128_dv64_causal-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d128_dv64_causal --kernel=d128_dv64_causal_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d128_dv64_causal-sm90a --kernel=d128_dv64_causal_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d128_dv64_causal-sm90a/kernels.ptx
// RUN: attn-compile %t/mqa_decode.mlir -o %t/mqa_decode --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/mqa_decode.mlir -o %t/mqa_decode-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/mqa_decode.mlir --backward --write-reference=%t/mqa_decode/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/mqa_decode/reference %t/mqa_decode-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/mqa_decode --kernel=mqa_decode_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/mqa_decode-sm90a --kernel=mqa_decode_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/mqa_decode-sm90a/kernels.ptx
// RUN: attn-compile %t/one_key.mlir -o %t/one_key --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/one_key.mlir -o %t/one_key-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/one_key.mlir --backward --write-reference=%t/one_key/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/one_key/reference %t/one_key-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/one_key --kernel=one_key_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/one_key-sm90a --kernel=one_key_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/one_key-sm90a/kernels.ptx
// RUN: attn-compile %t/d128_window_softcap.mlir -o %t/d128_window_softcap --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d128_window_softcap.mlir -o %t/d128_window_softcap-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d128_window_softcap.mlir --backward --write-reference=%t/d128_window_softcap/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d128_window_softcap/reference %t/d128_window_softcap-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d128_window_softcap --kernel=d128_window_softcap_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d128_window_softcap-sm90a --kernel=d128_window_softcap_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d128_window_softcap-sm90a/kernels.ptx
// RUN: attn-compile %t/d64_dv128_gqa.mlir -o %t/d64_dv128_gqa --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d64_dv128_gqa.mlir -o %t/d64_dv128_gqa-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d64_dv128_gqa.mlir --backward --write-reference=%t/d64_dv128_gqa/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d64_dv128_gqa/reference %t/d64_dv128_gqa-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d64_dv128_gqa --kernel=d64_dv128_gqa_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d64_dv128_gqa-sm90a --kernel=d64_dv128_gqa_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/d64_dv128_gqa-sm90a/kernels.ptx
// RUN: attn-compile %t/d160_window.mlir -o %t/d160_window --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d160_window.mlir -o %t/d160_window-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d160_window.mlir --backward --write-reference=%t/d160_window/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d160_window/reference %t/d160_window-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d160_window --kernel=d160_window_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d160_window-sm90a --kernel=d160_window_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,CPASYNC --input-file=%t/d160_window-sm90a/kernels.ptx
// RUN: attn-compile %t/d192_dv128_causal.mlir -o %t/d192_dv128_causal --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d192_dv128_causal.mlir -o %t/d192_dv128_causal-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d192_dv128_causal.mlir --backward --write-reference=%t/d192_dv128_causal/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d192_dv128_causal/reference %t/d192_dv128_causal-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d192_dv128_causal --kernel=d192_dv128_causal_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d192_dv128_causal-sm90a --kernel=d192_dv128_causal_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,CPASYNC --input-file=%t/d192_dv128_causal-sm90a/kernels.ptx
// RUN: attn-compile %t/d256_mqa_decode.mlir -o %t/d256_mqa_decode --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/d256_mqa_decode.mlir -o %t/d256_mqa_decode-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/d256_mqa_decode.mlir --backward --write-reference=%t/d256_mqa_decode/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/d256_mqa_decode/reference %t/d256_mqa_decode-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d256_mqa_decode --kernel=d256_mqa_decode_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/d256_mqa_decode-sm90a --kernel=d256_mqa_decode_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefix=MMASYNC --input-file=%t/d256_mqa_decode-sm90a/kernels.ptx
// RUN: attn-compile %t/bool_mask.mlir -o %t/bool_mask --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/bool_mask.mlir -o %t/bool_mask-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/bool_mask.mlir --backward --write-reference=%t/bool_mask/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/bool_mask/reference %t/bool_mask-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/bool_mask --kernel=bool_mask_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/bool_mask-sm90a --kernel=bool_mask_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/bool_mask-sm90a/kernels.ptx
// RUN: attn-compile %t/additive_gqa.mlir -o %t/additive_gqa --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/additive_gqa.mlir -o %t/additive_gqa-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/additive_gqa.mlir --backward --write-reference=%t/additive_gqa/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/additive_gqa/reference %t/additive_gqa-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/additive_gqa --kernel=additive_gqa_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/additive_gqa-sm90a --kernel=additive_gqa_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING,TAIL --input-file=%t/additive_gqa-sm90a/kernels.ptx
// RUN: attn-compile %t/additive_d160.mlir -o %t/additive_d160 --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/additive_d160.mlir -o %t/additive_d160-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/additive_d160.mlir --backward --write-reference=%t/additive_d160/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/additive_d160/reference %t/additive_d160-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/additive_d160 --kernel=additive_d160_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/additive_d160-sm90a --kernel=additive_d160_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,CPASYNC --input-file=%t/additive_d160-sm90a/kernels.ptx
// RUN: attn-compile %t/blocks_mask.mlir -o %t/blocks_mask --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/blocks_mask.mlir -o %t/blocks_mask-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/blocks_mask.mlir --backward --write-reference=%t/blocks_mask/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/blocks_mask/reference %t/blocks_mask-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/blocks_mask --kernel=blocks_mask_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/blocks_mask-sm90a --kernel=blocks_mask_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/blocks_mask-sm90a/kernels.ptx
// RUN: attn-compile %t/constant_blocks.mlir -o %t/constant_blocks --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/constant_blocks.mlir -o %t/constant_blocks-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/constant_blocks.mlir --backward --write-reference=%t/constant_blocks/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/constant_blocks/reference %t/constant_blocks-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/constant_blocks --kernel=constant_blocks_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/constant_blocks-sm90a --kernel=constant_blocks_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/constant_blocks-sm90a/kernels.ptx
// RUN: attn-compile %t/region_alibi.mlir -o %t/region_alibi --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/region_alibi.mlir -o %t/region_alibi-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/region_alibi.mlir --backward --write-reference=%t/region_alibi/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/region_alibi/reference %t/region_alibi-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/region_alibi --kernel=region_alibi_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/region_alibi-sm90a --kernel=region_alibi_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/region_alibi-sm90a/kernels.ptx
// RUN: attn-compile %t/region_select.mlir -o %t/region_select --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/region_select.mlir -o %t/region_select-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/region_select.mlir --backward --write-reference=%t/region_select/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/region_select/reference %t/region_select-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/region_select --kernel=region_select_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/region_select-sm90a --kernel=region_select_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING,TAIL --input-file=%t/region_select-sm90a/kernels.ptx
// RUN: attn-compile %t/region_sqrt.mlir -o %t/region_sqrt --chip=sm_80 --split-kv=false > /dev/null
// RUN: attn-compile %t/region_sqrt.mlir -o %t/region_sqrt-sm90a --split-kv=false > /dev/null
// RUN: attn-run %t/region_sqrt.mlir --backward --write-reference=%t/region_sqrt/reference | FileCheck %s --check-prefix=CPU
// RUN: cp -r %t/region_sqrt/reference %t/region_sqrt-sm90a/reference
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/region_sqrt --kernel=region_sqrt_attention_grad0 | FileCheck %s --check-prefix=EMULATOR
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/region_sqrt-sm90a --kernel=region_sqrt_attention_grad0 | FileCheck %s --check-prefixes=EMULATOR
// RUN: FileCheck %s --check-prefixes=WGMMA,RING --input-file=%t/region_sqrt-sm90a/kernels.ptx
// A constant block mask is a table in the kernels: neither the gradient's
// case nor the forward's holds block_mask.npy, and the forward's case fits
// its kernel (it named a block mask the kernel does not take before).
// RUN: cp -r %t/constant_blocks %t/constant_forward && rm -r %t/constant_forward/reference
// RUN: attn-run %t/constant_blocks.mlir --write-reference=%t/constant_forward/reference > /dev/null
// RUN: not ls %t/constant_blocks/reference/block_mask.npy %t/constant_forward/reference/block_mask.npy
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/constant_forward --kernel=constant_blocks_attention0 | FileCheck %s --check-prefix=FORWARD
// FORWARD: O {{.*}} (reference case, 2x naive f16: {{.*}}): PASS
// FORWARD-NOT: FAIL
// RUN: attn-compile %t/one_key.mlir -o %t/one_key_plain --chip=sm_80 --split-kv=false > /dev/null

// CPU: check dQ : {{.*}} PASS
// CPU: check dK : {{.*}} PASS
// CPU: check dV : {{.*}} PASS
// CPU: gradient case: {{.*}}/reference (kernel [[KERNEL:.+_attention_grad0]])
// CPU: {{^PASS$}}

// EMULATOR: kernel {{.+}}_attention_grad0 (sm_{{80|90a}})
// Per-sequence key lengths (three sequences: the first full, the second
// empty, the third cut inside a key block): keys past a sequence's length
// get dK = dV = 0, its causal and window masks align to its length.
// LENGTHS: problem {{.*}} key-lengths={{[0-9]+}},0,{{[0-9]+$}}
// EMULATOR: repeat {{.*}} (bitwise, dQ, dK and dV of a second launch): PASS
// EMULATOR: dQ {{.*}} (reference case, 2x naive {{bf16|f16}}: {{.*}}): PASS
// EMULATOR: dK {{.*}}: PASS
// EMULATOR: dV {{.*}}: PASS
// EMULATOR-NOT: FAIL

// On wgmma with two walks (D = 160) the tiles the threads' cp.async wrote
// (the generic proxy) are read by wgmma (the async proxy): without the
// fence after each block's copies the emulator reports the read. So it does
// with key lengths, where thread 0's zeros past a sequence's end are
// generic writes too.
// RUN: cp -r %t/d160_window-sm90a %t/no-proxy-fence
// RUN: sed '/fence.proxy.async.shared::cta;/d' %t/d160_window-sm90a/kernels.ptx > %t/no-proxy-fence/kernels.ptx
// RUN: not diff -q %t/d160_window-sm90a/kernels.ptx %t/no-proxy-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-proxy-fence --kernel=d160_window_attention_grad0 2>&1 | FileCheck %s --check-prefix=NO-PROXY-FENCE -DKERNEL=d160_window
// RUN: cp -r %t/key_lengths-sm90a %t/no-tail-fence
// RUN: sed '/fence.proxy.async.shared::cta;/d' %t/key_lengths-sm90a/kernels.ptx > %t/no-tail-fence/kernels.ptx
// RUN: not diff -q %t/key_lengths-sm90a/kernels.ptx %t/no-tail-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-tail-fence --kernel=key_lengths_attention_grad0 2>&1 | FileCheck %s --check-prefix=NO-PROXY-FENCE -DKERNEL=key_lengths
// NO-PROXY-FENCE: PTX emulator: kernel [[KERNEL]]_attention_grad0: reads shared offset {{[0-9]+}} through the async proxy, which warp {{[0-9]+}} wrote (line {{[0-9]+}}) through the generic proxy with no fence.proxy.async of that warp after the write and ordered before this read; CTA {{.*}}: wgmma.mma_async

// With key lengths, the zeros past a sequence's end removed: the padding
// (NaN in the check) reaches dQ.
// RUN: cp -r %t/key_lengths-sm90a %t/no-tail-zeros
// RUN: sed '/st.shared.v4.b32.*{0, 0, 0, 0};/d' %t/key_lengths-sm90a/kernels.ptx > %t/no-tail-zeros/kernels.ptx
// RUN: not diff -q %t/key_lengths-sm90a/kernels.ptx %t/no-tail-zeros/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-tail-zeros --kernel=key_lengths_attention_grad0 2>&1 | FileCheck %s --check-prefix=NO-TAIL-ZEROS
// NO-TAIL-ZEROS: dQ {{.*}} elements NaN or mismatched infinities: FAIL

// With tensor copies, the barrier at the top of a query CTA's walk removed
// (the one before thread 0 issues the next group into the stage the
// previous block used): thread 0 runs ahead, refilling stages and
// completing their mbarriers' phases before the other warps waited for
// them, which then wait for a phase that has passed.
// RUN: cp -r %t/d32_causal-sm90a %t/no-ring-barrier
// RUN: awk 'NR == FNR { if (/\.entry .*_attention_grad0/) g = 1; if (g && /bar.sync/) last = FNR; if (g && /mbarrier.arrive.expect_tx.shared.b64 %rd[0-9]+, \[%rd/ && ++n == 2) drop = last; next } FNR != drop' %t/d32_causal-sm90a/kernels.ptx %t/d32_causal-sm90a/kernels.ptx > %t/no-ring-barrier/kernels.ptx
// RUN: not diff -q %t/d32_causal-sm90a/kernels.ptx %t/no-ring-barrier/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-ring-barrier --kernel=d32_causal_attention_grad0 2>&1 | FileCheck %s --check-prefix=NO-RING-BARRIER
// NO-RING-BARRIER: PTX emulator: kernel d32_causal_attention_grad0: deadlock: {{.*}}
// NO-RING-BARRIER: waits on the mbarrier at shared offset {{[0-9]+}} (phase {{[0-9]+}}, parity

// The backward kernel's PTX follows the forward's in each bundle: from its
// entry to the file's end. With the prefix RING its tiles come by tensor
// copies (no cp.async) into stages its threads wait for on mbarriers; with
// CPASYNC by cp.async. With TAIL (key lengths) thread 0 lands the streamed
// K and V block that holds a sequence's end on its own mbarrier, zeroes
// the keys past the end, fences them for the async proxy and only then
// arrives on the stage's mbarrier.
// WGMMA-LABEL: .entry {{.+}}_attention_grad0(
// RING-NOT: cp.async.cg
// RING: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// RING-NOT: cp.async.cg
// RING: mbarrier.try_wait.parity
// TAIL: st.shared.v4.b32 {{.*}}, {0, 0, 0, 0};
// TAIL: fence.proxy.async.shared::cta;
// TAIL-NEXT: mbarrier.inval.shared.b64
// TAIL-NEXT: mbarrier.arrive.shared.b64
// CPASYNC-NOT: cp.async.bulk.tensor
// CPASYNC: cp.async.cg.shared.global
// CPASYNC-NOT: cp.async.bulk.tensor
// WGMMA-NOT: .entry
// WGMMA: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// WGMMA-NOT: .entry
// RING-NOT: cp.async.cg
// CPASYNC-NOT: cp.async.bulk.tensor
// MMASYNC-LABEL: .entry {{.+}}_attention_grad0(
// MMASYNC-NOT: wgmma.mma_async
// MMASYNC: mma.sync.aligned.m16n8k16
// MMASYNC-NOT: wgmma.mma_async
// MMASYNC-NOT: .entry

// RUN: attn-launch --validate %t/d32_causal | FileCheck %s --check-prefix=VALID
// VALID: 2 kernel(s), manifest valid; gradient case of d32_causal_attention_grad0 read (matched to the kernel when it runs)

// A backward kernel has no GPU reference: without its case, attn-launch says
// how to write one.
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/one_key_plain 2>&1 | FileCheck %s --check-prefix=NOCASE
// NOCASE: attn-launch: error: {{.*}}one_key_plain: one_key_attention_grad0 is a backward kernel: check it against its gradient case (attn-run --backward --write-reference={{.*}}one_key_plain/reference), or time it alone (--bench --no-check)

// Timed alone, it needs no case: seeded inputs rotated among sets, and the
// FLOPs of a backward pass (2.5 times the forward's) in the rate.
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/one_key_plain --kernel=one_key_attention_grad0 --bench --no-check --warmup=1 --iterations=2 --csv=%t/bench.csv | FileCheck %s --check-prefix=BENCH
// RUN: FileCheck %s --check-prefix=BENCHCSV < %t/bench.csv
// BENCH: kernel one_key_attention_grad0 (sm_80)
// BENCH-NEXT: problem f16 B=1 Hq=2 Hkv=2 Sq=239 Sk=1 D=32 Dv=32 scale={{.*}} causal
// BENCH: time {{[0-9.]+}} ms median (min {{[0-9.]+}}) of 2 launches over {{[0-9]+}} input set(s)
// BENCH-NOT: PASS
// BENCHCSV: one_key_attention_grad0,sm_80,f16,1,2,2,239,1,32,1,

// The runtime checks a backward kernel's manifest entry against its own
// tiles: a grid of one CTA less, or shared memory without the statistics
// arrays, is refused before any launch.
// RUN: cp -r %t/one_key_plain %t/bad_grid && %python -c "import json, sys; p = sys.argv[1]; m = json.load(open(p)); m['kernels'][1]['grid'][0] -= 1; json.dump(m, open(p, 'w'))" %t/bad_grid/manifest.json
// RUN: not attn-launch --validate %t/bad_grid 2>&1 | FileCheck %s --check-prefix=BADGRID
// BADGRID: kernel one_key_attention_grad0: a backward kernel's grid is [10, 1, 1] (a CTA per key/value block of each key/value head and per query block of each query head, block_m 64), not [9, 1, 1]
// RUN: cp -r %t/one_key_plain %t/bad_shared && %python -c "import json, sys; p = sys.argv[1]; m = json.load(open(p)); m['kernels'][1]['dynamic_shared_memory'] -= 4; json.dump(m, open(p, 'w'))" %t/bad_shared/manifest.json
// RUN: not attn-launch --validate %t/bad_shared 2>&1 | FileCheck %s --check-prefix=BADSHARED
// BADSHARED: kernel one_key_attention_grad0: dynamic_shared_memory 33276 is less than the 33280 bytes a backward kernel's tiles stage
// RUN: cp -r %t/key_lengths %t/bad_lengths && %python -c "import json, sys; p = sys.argv[1]; m = json.load(open(p)); m['kernels'][1]['params'][9]['shape'] = [2]; json.dump(m, open(p, 'w'))" %t/bad_lengths/manifest.json
// RUN: not attn-launch --validate %t/bad_lengths 2>&1 | FileCheck %s --check-prefix=BADLENGTHS
// BADLENGTHS: kernel key_lengths_attention_grad0: a backward kernel's parameters are Q, K, V, O, LSE, dO, dQ, dK and dV, of static shapes, then those it has of the mask ([B or 1, Hq or 1, Sq, Sk] of i1, f16, bf16 or f32), the block mask ([B or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)] i8) and key_lengths ([B] i32)
// A mask of another attention's rows, or after the key lengths, is refused
// the same way.
// RUN: cp -r %t/additive_gqa %t/bad_mask && %python -c "import json, sys; p = sys.argv[1]; m = json.load(open(p)); m['kernels'][1]['params'][9]['shape'][2] = 91; json.dump(m, open(p, 'w'))" %t/bad_mask/manifest.json
// RUN: not attn-launch --validate %t/bad_mask 2>&1 | FileCheck %s --check-prefix=BADMASK
// RUN: cp -r %t/additive_gqa %t/mask_last && %python -c "import json, sys; p = sys.argv[1]; m = json.load(open(p)); ps = m['kernels'][1]['params']; ps[9], ps[10] = ps[10], ps[9]; json.dump(m, open(p, 'w'))" %t/mask_last/manifest.json
// RUN: not attn-launch --validate %t/mask_last 2>&1 | FileCheck %s --check-prefix=BADMASK
// BADMASK: kernel additive_gqa_attention_grad0: a backward kernel's parameters are Q, K, V, O, LSE, dO, dQ, dK and dV, of static shapes, then those it has of the mask
// A block mask whose blocks do not cover the attention is refused too.
// RUN: cp -r %t/blocks_mask %t/bad_blocks && %python -c "import json, sys; p = sys.argv[1]; m = json.load(open(p)); m['kernels'][1]['params'][10]['shape'][3] = 2; json.dump(m, open(p, 'w'))" %t/bad_blocks/manifest.json
// RUN: not attn-launch --validate %t/bad_blocks 2>&1 | FileCheck %s --check-prefix=BADMASK-BLOCKS
// BADMASK-BLOCKS: kernel blocks_mask_attention_grad0: a backward kernel's parameters are {{.*}} the block mask ([B or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)] i8)

//--- d32_causal.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d32_causal(%q: tensor<1x2x113x32xbf16>, %k: tensor<1x2x203x32xbf16>, %v: tensor<1x2x203x32xbf16>, %do: tensor<1x2x113x32xbf16>) -> (tensor<1x2x113x32xbf16>, tensor<1x2x203x32xbf16>, tensor<1x2x203x32xbf16>) {
  %o0 = tensor.empty() : tensor<1x2x113x32xbf16>
  %l0 = tensor.empty() : tensor<1x2x113xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x113x32xbf16>, tensor<1x2x203x32xbf16>, tensor<1x2x203x32xbf16>)
      outs(%o0, %l0 : tensor<1x2x113x32xbf16>, tensor<1x2x113xf32>) {causal} -> tensor<1x2x113x32xbf16>, tensor<1x2x113xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x113x32xbf16>, tensor<1x2x203x32xbf16>, tensor<1x2x203x32xbf16>)
      out(%o, %lse : tensor<1x2x113x32xbf16>, tensor<1x2x113xf32>) grad(%do : tensor<1x2x113x32xbf16>)
      outs(%q, %k, %v : tensor<1x2x113x32xbf16>, tensor<1x2x203x32xbf16>, tensor<1x2x203x32xbf16>) {causal} -> tensor<1x2x113x32xbf16>, tensor<1x2x203x32xbf16>, tensor<1x2x203x32xbf16>
  return %dq, %dk, %dv : tensor<1x2x113x32xbf16>, tensor<1x2x203x32xbf16>, tensor<1x2x203x32xbf16>
}
}

//--- d40_window.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d40_window(%q: tensor<1x2x128x40xf16>, %k: tensor<1x2x217x40xf16>, %v: tensor<1x2x217x24xf16>, %do: tensor<1x2x128x24xf16>) -> (tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x24xf16>) {
  %o0 = tensor.empty() : tensor<1x2x128x24xf16>
  %l0 = tensor.empty() : tensor<1x2x128xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x24xf16>)
      outs(%o0, %l0 : tensor<1x2x128x24xf16>, tensor<1x2x128xf32>) {window = array<i64: 32, 8>} -> tensor<1x2x128x24xf16>, tensor<1x2x128xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x24xf16>)
      out(%o, %lse : tensor<1x2x128x24xf16>, tensor<1x2x128xf32>) grad(%do : tensor<1x2x128x24xf16>)
      outs(%q, %k, %v : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x24xf16>) {window = array<i64: 32, 8>} -> tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x24xf16>
  return %dq, %dk, %dv : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x24xf16>
}
}

//--- d64_softcap.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d64_softcap(%q: tensor<1x2x113x64xbf16>, %k: tensor<1x2x211x64xbf16>, %v: tensor<1x2x211x64xbf16>, %do: tensor<1x2x113x64xbf16>) -> (tensor<1x2x113x64xbf16>, tensor<1x2x211x64xbf16>, tensor<1x2x211x64xbf16>) {
  %o0 = tensor.empty() : tensor<1x2x113x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x113xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x113x64xbf16>, tensor<1x2x211x64xbf16>, tensor<1x2x211x64xbf16>)
      outs(%o0, %l0 : tensor<1x2x113x64xbf16>, tensor<1x2x113xf32>) {softcap = 30.0 : f32} -> tensor<1x2x113x64xbf16>, tensor<1x2x113xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x113x64xbf16>, tensor<1x2x211x64xbf16>, tensor<1x2x211x64xbf16>)
      out(%o, %lse : tensor<1x2x113x64xbf16>, tensor<1x2x113xf32>) grad(%do : tensor<1x2x113x64xbf16>)
      outs(%q, %k, %v : tensor<1x2x113x64xbf16>, tensor<1x2x211x64xbf16>, tensor<1x2x211x64xbf16>) {softcap = 30.0 : f32} -> tensor<1x2x113x64xbf16>, tensor<1x2x211x64xbf16>, tensor<1x2x211x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x113x64xbf16>, tensor<1x2x211x64xbf16>, tensor<1x2x211x64xbf16>
}
}

//--- d80_gqa_causal.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d80_gqa_causal(%q: tensor<2x4x108x80xbf16>, %k: tensor<2x2x256x80xbf16>, %v: tensor<2x2x256x80xbf16>, %do: tensor<2x4x108x80xbf16>) -> (tensor<2x4x108x80xbf16>, tensor<2x2x256x80xbf16>, tensor<2x2x256x80xbf16>) {
  %o0 = tensor.empty() : tensor<2x4x108x80xbf16>
  %l0 = tensor.empty() : tensor<2x4x108xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<2x4x108x80xbf16>, tensor<2x2x256x80xbf16>, tensor<2x2x256x80xbf16>)
      outs(%o0, %l0 : tensor<2x4x108x80xbf16>, tensor<2x4x108xf32>) {causal} -> tensor<2x4x108x80xbf16>, tensor<2x4x108xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<2x4x108x80xbf16>, tensor<2x2x256x80xbf16>, tensor<2x2x256x80xbf16>)
      out(%o, %lse : tensor<2x4x108x80xbf16>, tensor<2x4x108xf32>) grad(%do : tensor<2x4x108x80xbf16>)
      outs(%q, %k, %v : tensor<2x4x108x80xbf16>, tensor<2x2x256x80xbf16>, tensor<2x2x256x80xbf16>) {causal} -> tensor<2x4x108x80xbf16>, tensor<2x2x256x80xbf16>, tensor<2x2x256x80xbf16>
  return %dq, %dk, %dv : tensor<2x4x108x80xbf16>, tensor<2x2x256x80xbf16>, tensor<2x2x256x80xbf16>
}
}

//--- key_lengths.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @key_lengths(%q: tensor<3x4x100x64xbf16>, %k: tensor<3x2x200x64xbf16>, %v: tensor<3x2x200x64xbf16>, %n: tensor<3xi32>, %do: tensor<3x4x100x64xbf16>) -> (tensor<3x4x100x64xbf16>, tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>) {
  %o0 = tensor.empty() : tensor<3x4x100x64xbf16>
  %l0 = tensor.empty() : tensor<3x4x100xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<3x4x100x64xbf16>, tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>)
      key_lengths(%n : tensor<3xi32>)
      outs(%o0, %l0 : tensor<3x4x100x64xbf16>, tensor<3x4x100xf32>) {causal} -> tensor<3x4x100x64xbf16>, tensor<3x4x100xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<3x4x100x64xbf16>, tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>)
      out(%o, %lse : tensor<3x4x100x64xbf16>, tensor<3x4x100xf32>) grad(%do : tensor<3x4x100x64xbf16>)
      key_lengths(%n : tensor<3xi32>)
      outs(%q, %k, %v : tensor<3x4x100x64xbf16>, tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>) {causal} -> tensor<3x4x100x64xbf16>, tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>
  return %dq, %dk, %dv : tensor<3x4x100x64xbf16>, tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>
}
}

//--- key_lengths_window.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @key_lengths_window(%q: tensor<3x2x70x96xf16>, %k: tensor<3x2x150x96xf16>, %v: tensor<3x2x150x96xf16>, %n: tensor<3xi32>, %do: tensor<3x2x70x96xf16>) -> (tensor<3x2x70x96xf16>, tensor<3x2x150x96xf16>, tensor<3x2x150x96xf16>) {
  %o0 = tensor.empty() : tensor<3x2x70x96xf16>
  %l0 = tensor.empty() : tensor<3x2x70xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<3x2x70x96xf16>, tensor<3x2x150x96xf16>, tensor<3x2x150x96xf16>)
      key_lengths(%n : tensor<3xi32>)
      outs(%o0, %l0 : tensor<3x2x70x96xf16>, tensor<3x2x70xf32>) {window = array<i64: 40, 10>, softcap = 20.0 : f32} -> tensor<3x2x70x96xf16>, tensor<3x2x70xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<3x2x70x96xf16>, tensor<3x2x150x96xf16>, tensor<3x2x150x96xf16>)
      out(%o, %lse : tensor<3x2x70x96xf16>, tensor<3x2x70xf32>) grad(%do : tensor<3x2x70x96xf16>)
      key_lengths(%n : tensor<3xi32>)
      outs(%q, %k, %v : tensor<3x2x70x96xf16>, tensor<3x2x150x96xf16>, tensor<3x2x150x96xf16>) {window = array<i64: 40, 10>, softcap = 20.0 : f32} -> tensor<3x2x70x96xf16>, tensor<3x2x150x96xf16>, tensor<3x2x150x96xf16>
  return %dq, %dk, %dv : tensor<3x2x70x96xf16>, tensor<3x2x150x96xf16>, tensor<3x2x150x96xf16>
}
}

//--- d96_causal_softcap.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d96_causal_softcap(%q: tensor<1x2x256x96xf16>, %k: tensor<1x2x160x96xf16>, %v: tensor<1x2x160x96xf16>, %do: tensor<1x2x256x96xf16>) -> (tensor<1x2x256x96xf16>, tensor<1x2x160x96xf16>, tensor<1x2x160x96xf16>) {
  %o0 = tensor.empty() : tensor<1x2x256x96xf16>
  %l0 = tensor.empty() : tensor<1x2x256xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x256x96xf16>, tensor<1x2x160x96xf16>, tensor<1x2x160x96xf16>)
      outs(%o0, %l0 : tensor<1x2x256x96xf16>, tensor<1x2x256xf32>) {causal, softcap = 50.0 : f32} -> tensor<1x2x256x96xf16>, tensor<1x2x256xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x256x96xf16>, tensor<1x2x160x96xf16>, tensor<1x2x160x96xf16>)
      out(%o, %lse : tensor<1x2x256x96xf16>, tensor<1x2x256xf32>) grad(%do : tensor<1x2x256x96xf16>)
      outs(%q, %k, %v : tensor<1x2x256x96xf16>, tensor<1x2x160x96xf16>, tensor<1x2x160x96xf16>) {causal, softcap = 50.0 : f32} -> tensor<1x2x256x96xf16>, tensor<1x2x160x96xf16>, tensor<1x2x160x96xf16>
  return %dq, %dk, %dv : tensor<1x2x256x96xf16>, tensor<1x2x160x96xf16>, tensor<1x2x160x96xf16>
}
}

//--- d128_dv64_causal.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d128_dv64_causal(%q: tensor<1x2x200x128xbf16>, %k: tensor<1x2x128x128xbf16>, %v: tensor<1x2x128x64xbf16>, %do: tensor<1x2x200x64xbf16>) -> (tensor<1x2x200x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128x64xbf16>) {
  %o0 = tensor.empty() : tensor<1x2x200x64xbf16>
  %l0 = tensor.empty() : tensor<1x2x200xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x200x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128x64xbf16>)
      outs(%o0, %l0 : tensor<1x2x200x64xbf16>, tensor<1x2x200xf32>) {causal} -> tensor<1x2x200x64xbf16>, tensor<1x2x200xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x200x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128x64xbf16>)
      out(%o, %lse : tensor<1x2x200x64xbf16>, tensor<1x2x200xf32>) grad(%do : tensor<1x2x200x64xbf16>)
      outs(%q, %k, %v : tensor<1x2x200x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128x64xbf16>) {causal} -> tensor<1x2x200x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x200x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128x64xbf16>
}
}

//--- mqa_decode.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @mqa_decode(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x1x239x64xbf16>, %v: tensor<1x1x239x64xbf16>, %do: tensor<1x8x1x64xbf16>) -> (tensor<1x8x1x64xbf16>, tensor<1x1x239x64xbf16>, tensor<1x1x239x64xbf16>) {
  %o0 = tensor.empty() : tensor<1x8x1x64xbf16>
  %l0 = tensor.empty() : tensor<1x8x1xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x1x239x64xbf16>, tensor<1x1x239x64xbf16>)
      outs(%o0, %l0 : tensor<1x8x1x64xbf16>, tensor<1x8x1xf32>) {softcap = 30.0 : f32} -> tensor<1x8x1x64xbf16>, tensor<1x8x1xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x1x239x64xbf16>, tensor<1x1x239x64xbf16>)
      out(%o, %lse : tensor<1x8x1x64xbf16>, tensor<1x8x1xf32>) grad(%do : tensor<1x8x1x64xbf16>)
      outs(%q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x1x239x64xbf16>, tensor<1x1x239x64xbf16>) {softcap = 30.0 : f32} -> tensor<1x8x1x64xbf16>, tensor<1x1x239x64xbf16>, tensor<1x1x239x64xbf16>
  return %dq, %dk, %dv : tensor<1x8x1x64xbf16>, tensor<1x1x239x64xbf16>, tensor<1x1x239x64xbf16>
}
}

//--- one_key.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @one_key(%q: tensor<1x2x239x32xf16>, %k: tensor<1x2x1x32xf16>, %v: tensor<1x2x1x32xf16>, %do: tensor<1x2x239x32xf16>) -> (tensor<1x2x239x32xf16>, tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>) {
  %o0 = tensor.empty() : tensor<1x2x239x32xf16>
  %l0 = tensor.empty() : tensor<1x2x239xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x239x32xf16>, tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>)
      outs(%o0, %l0 : tensor<1x2x239x32xf16>, tensor<1x2x239xf32>) {causal} -> tensor<1x2x239x32xf16>, tensor<1x2x239xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x239x32xf16>, tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>)
      out(%o, %lse : tensor<1x2x239x32xf16>, tensor<1x2x239xf32>) grad(%do : tensor<1x2x239x32xf16>)
      outs(%q, %k, %v : tensor<1x2x239x32xf16>, tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>) {causal} -> tensor<1x2x239x32xf16>, tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>
  return %dq, %dk, %dv : tensor<1x2x239x32xf16>, tensor<1x2x1x32xf16>, tensor<1x2x1x32xf16>
}
}

//--- d128_window_softcap.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d128_window_softcap(%q: tensor<1x2x100x128xf16>, %k: tensor<1x2x150x128xf16>, %v: tensor<1x2x150x128xf16>, %do: tensor<1x2x100x128xf16>) -> (tensor<1x2x100x128xf16>, tensor<1x2x150x128xf16>, tensor<1x2x150x128xf16>) {
  %o0 = tensor.empty() : tensor<1x2x100x128xf16>
  %l0 = tensor.empty() : tensor<1x2x100xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x100x128xf16>, tensor<1x2x150x128xf16>, tensor<1x2x150x128xf16>)
      outs(%o0, %l0 : tensor<1x2x100x128xf16>, tensor<1x2x100xf32>) {window = array<i64: 40, 40>, softcap = 20.0 : f32} -> tensor<1x2x100x128xf16>, tensor<1x2x100xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x100x128xf16>, tensor<1x2x150x128xf16>, tensor<1x2x150x128xf16>)
      out(%o, %lse : tensor<1x2x100x128xf16>, tensor<1x2x100xf32>) grad(%do : tensor<1x2x100x128xf16>)
      outs(%q, %k, %v : tensor<1x2x100x128xf16>, tensor<1x2x150x128xf16>, tensor<1x2x150x128xf16>) {window = array<i64: 40, 40>, softcap = 20.0 : f32} -> tensor<1x2x100x128xf16>, tensor<1x2x150x128xf16>, tensor<1x2x150x128xf16>
  return %dq, %dk, %dv : tensor<1x2x100x128xf16>, tensor<1x2x150x128xf16>, tensor<1x2x150x128xf16>
}
}

//--- d64_dv128_gqa.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d64_dv128_gqa(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x128x64xf16>, %v: tensor<1x2x128x128xf16>, %do: tensor<1x8x128x128xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x128xf16>) {
  %o0 = tensor.empty() : tensor<1x8x128x128xf16>
  %l0 = tensor.empty() : tensor<1x8x128xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x128xf16>)
      outs(%o0, %l0 : tensor<1x8x128x128xf16>, tensor<1x8x128xf32>) {causal} -> tensor<1x8x128x128xf16>, tensor<1x8x128xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x128xf16>)
      out(%o, %lse : tensor<1x8x128x128xf16>, tensor<1x8x128xf32>) grad(%do : tensor<1x8x128x128xf16>)
      outs(%q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x128xf16>) {causal} -> tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x128xf16>
  return %dq, %dk, %dv : tensor<1x8x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x128xf16>
}
}

//--- d160_window.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d160_window(%q: tensor<1x1x128x160xbf16>, %k: tensor<1x1x217x160xbf16>, %v: tensor<1x1x217x160xbf16>, %do: tensor<1x1x128x160xbf16>) -> (tensor<1x1x128x160xbf16>, tensor<1x1x217x160xbf16>, tensor<1x1x217x160xbf16>) {
  %o0 = tensor.empty() : tensor<1x1x128x160xbf16>
  %l0 = tensor.empty() : tensor<1x1x128xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x1x128x160xbf16>, tensor<1x1x217x160xbf16>, tensor<1x1x217x160xbf16>)
      outs(%o0, %l0 : tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>) {window = array<i64: 64, 0>} -> tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x1x128x160xbf16>, tensor<1x1x217x160xbf16>, tensor<1x1x217x160xbf16>)
      out(%o, %lse : tensor<1x1x128x160xbf16>, tensor<1x1x128xf32>) grad(%do : tensor<1x1x128x160xbf16>)
      outs(%q, %k, %v : tensor<1x1x128x160xbf16>, tensor<1x1x217x160xbf16>, tensor<1x1x217x160xbf16>) {window = array<i64: 64, 0>} -> tensor<1x1x128x160xbf16>, tensor<1x1x217x160xbf16>, tensor<1x1x217x160xbf16>
  return %dq, %dk, %dv : tensor<1x1x128x160xbf16>, tensor<1x1x217x160xbf16>, tensor<1x1x217x160xbf16>
}
}

//--- d192_dv128_causal.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d192_dv128_causal(%q: tensor<1x2x113x192xf16>, %k: tensor<1x1x203x192xf16>, %v: tensor<1x1x203x128xf16>, %do: tensor<1x2x113x128xf16>) -> (tensor<1x2x113x192xf16>, tensor<1x1x203x192xf16>, tensor<1x1x203x128xf16>) {
  %o0 = tensor.empty() : tensor<1x2x113x128xf16>
  %l0 = tensor.empty() : tensor<1x2x113xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x113x192xf16>, tensor<1x1x203x192xf16>, tensor<1x1x203x128xf16>)
      outs(%o0, %l0 : tensor<1x2x113x128xf16>, tensor<1x2x113xf32>) {causal} -> tensor<1x2x113x128xf16>, tensor<1x2x113xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x113x192xf16>, tensor<1x1x203x192xf16>, tensor<1x1x203x128xf16>)
      out(%o, %lse : tensor<1x2x113x128xf16>, tensor<1x2x113xf32>) grad(%do : tensor<1x2x113x128xf16>)
      outs(%q, %k, %v : tensor<1x2x113x192xf16>, tensor<1x1x203x192xf16>, tensor<1x1x203x128xf16>) {causal} -> tensor<1x2x113x192xf16>, tensor<1x1x203x192xf16>, tensor<1x1x203x128xf16>
  return %dq, %dk, %dv : tensor<1x2x113x192xf16>, tensor<1x1x203x192xf16>, tensor<1x1x203x128xf16>
}
}

//--- d256_mqa_decode.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @d256_mqa_decode(%q: tensor<1x8x1x256xbf16>, %k: tensor<1x1x239x256xbf16>, %v: tensor<1x1x239x256xbf16>, %do: tensor<1x8x1x256xbf16>) -> (tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>) {
  %o0 = tensor.empty() : tensor<1x8x1x256xbf16>
  %l0 = tensor.empty() : tensor<1x8x1xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>)
      outs(%o0, %l0 : tensor<1x8x1x256xbf16>, tensor<1x8x1xf32>) {softcap = 30.0 : f32} -> tensor<1x8x1x256xbf16>, tensor<1x8x1xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>)
      out(%o, %lse : tensor<1x8x1x256xbf16>, tensor<1x8x1xf32>) grad(%do : tensor<1x8x1x256xbf16>)
      outs(%q, %k, %v : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>) {softcap = 30.0 : f32} -> tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>
  return %dq, %dk, %dv : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>
}
}

//--- bool_mask.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @bool_mask(%q: tensor<1x4x100x64xbf16>, %k: tensor<1x2x200x64xbf16>, %v: tensor<1x2x200x64xbf16>, %m: tensor<1x1x100x200xi1>, %do: tensor<1x4x100x64xbf16>) -> (tensor<1x4x100x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>) {
  %o0 = tensor.empty() : tensor<1x4x100x64xbf16>
  %l0 = tensor.empty() : tensor<1x4x100xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x4x100x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>)
      mask(%m : tensor<1x1x100x200xi1>)
      outs(%o0, %l0 : tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>) {causal} -> tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x4x100x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>)
      out(%o, %lse : tensor<1x4x100x64xbf16>, tensor<1x4x100xf32>) grad(%do : tensor<1x4x100x64xbf16>)
      mask(%m : tensor<1x1x100x200xi1>)
      outs(%q, %k, %v : tensor<1x4x100x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>) {causal} -> tensor<1x4x100x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>
  return %dq, %dk, %dv : tensor<1x4x100x64xbf16>, tensor<1x2x200x64xbf16>, tensor<1x2x200x64xbf16>
}
}

//--- additive_gqa.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @additive_gqa(%q: tensor<2x4x90x128xf16>, %k: tensor<2x2x150x128xf16>, %v: tensor<2x2x150x128xf16>, %m: tensor<2x4x90x150xf16>, %n: tensor<2xi32>, %do: tensor<2x4x90x128xf16>) -> (tensor<2x4x90x128xf16>, tensor<2x2x150x128xf16>, tensor<2x2x150x128xf16>) {
  %o0 = tensor.empty() : tensor<2x4x90x128xf16>
  %l0 = tensor.empty() : tensor<2x4x90xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<2x4x90x128xf16>, tensor<2x2x150x128xf16>, tensor<2x2x150x128xf16>)
      mask(%m : tensor<2x4x90x150xf16>)
      key_lengths(%n : tensor<2xi32>)
      outs(%o0, %l0 : tensor<2x4x90x128xf16>, tensor<2x4x90xf32>) {window = array<i64: 40, 0>, softcap = 30.0 : f32} -> tensor<2x4x90x128xf16>, tensor<2x4x90xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<2x4x90x128xf16>, tensor<2x2x150x128xf16>, tensor<2x2x150x128xf16>)
      out(%o, %lse : tensor<2x4x90x128xf16>, tensor<2x4x90xf32>) grad(%do : tensor<2x4x90x128xf16>)
      mask(%m : tensor<2x4x90x150xf16>)
      key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %v : tensor<2x4x90x128xf16>, tensor<2x2x150x128xf16>, tensor<2x2x150x128xf16>) {window = array<i64: 40, 0>, softcap = 30.0 : f32} -> tensor<2x4x90x128xf16>, tensor<2x2x150x128xf16>, tensor<2x2x150x128xf16>
  return %dq, %dk, %dv : tensor<2x4x90x128xf16>, tensor<2x2x150x128xf16>, tensor<2x2x150x128xf16>
}
}

//--- additive_d160.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @additive_d160(%q: tensor<1x2x70x160xbf16>, %k: tensor<1x1x130x160xbf16>, %v: tensor<1x1x130x96xbf16>, %m: tensor<1x2x70x130xf32>, %do: tensor<1x2x70x96xbf16>) -> (tensor<1x2x70x160xbf16>, tensor<1x1x130x160xbf16>, tensor<1x1x130x96xbf16>) {
  %o0 = tensor.empty() : tensor<1x2x70x96xbf16>
  %l0 = tensor.empty() : tensor<1x2x70xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x70x160xbf16>, tensor<1x1x130x160xbf16>, tensor<1x1x130x96xbf16>)
      mask(%m : tensor<1x2x70x130xf32>)
      outs(%o0, %l0 : tensor<1x2x70x96xbf16>, tensor<1x2x70xf32>) {causal} -> tensor<1x2x70x96xbf16>, tensor<1x2x70xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x70x160xbf16>, tensor<1x1x130x160xbf16>, tensor<1x1x130x96xbf16>)
      out(%o, %lse : tensor<1x2x70x96xbf16>, tensor<1x2x70xf32>) grad(%do : tensor<1x2x70x96xbf16>)
      mask(%m : tensor<1x2x70x130xf32>)
      outs(%q, %k, %v : tensor<1x2x70x160xbf16>, tensor<1x1x130x160xbf16>, tensor<1x1x130x96xbf16>) {causal} -> tensor<1x2x70x160xbf16>, tensor<1x1x130x160xbf16>, tensor<1x1x130x96xbf16>
  return %dq, %dk, %dv : tensor<1x2x70x160xbf16>, tensor<1x1x130x160xbf16>, tensor<1x1x130x96xbf16>
}
}

//--- blocks_mask.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @blocks_mask(%q: tensor<2x4x200x64xbf16>, %k: tensor<2x2x300x64xbf16>, %v: tensor<2x2x300x64xbf16>, %m: tensor<2x1x200x300xi1>, %bm: tensor<2x4x4x3xi8>, %do: tensor<2x4x200x64xbf16>) -> (tensor<2x4x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>) {
  %o0 = tensor.empty() : tensor<2x4x200x64xbf16>
  %l0 = tensor.empty() : tensor<2x4x200xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<2x4x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>)
      mask(%m : tensor<2x1x200x300xi1>) block_mask(%bm : tensor<2x4x4x3xi8> blocks [64, 128])
      outs(%o0, %l0 : tensor<2x4x200x64xbf16>, tensor<2x4x200xf32>) -> tensor<2x4x200x64xbf16>, tensor<2x4x200xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<2x4x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>)
      out(%o, %lse : tensor<2x4x200x64xbf16>, tensor<2x4x200xf32>) grad(%do : tensor<2x4x200x64xbf16>)
      mask(%m : tensor<2x1x200x300xi1>) block_mask(%bm : tensor<2x4x4x3xi8> blocks [64, 128])
      outs(%q, %k, %v : tensor<2x4x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>) -> tensor<2x4x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
  return %dq, %dk, %dv : tensor<2x4x200x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16>
}
}

//--- constant_blocks.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @constant_blocks(%q: tensor<1x2x200x128xf16>, %k: tensor<1x1x256x128xf16>, %v: tensor<1x1x256x128xf16>, %m: tensor<1x2x200x256xf16>, %do: tensor<1x2x200x128xf16>) -> (tensor<1x2x200x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>) {
  %bm = arith.constant dense<[[[[2, 0], [1, 2]]]]> : tensor<1x1x2x2xi8>
  %o0 = tensor.empty() : tensor<1x2x200x128xf16>
  %l0 = tensor.empty() : tensor<1x2x200xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x200x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>)
      mask(%m : tensor<1x2x200x256xf16>) block_mask(%bm : tensor<1x1x2x2xi8> blocks [128, 128])
      outs(%o0, %l0 : tensor<1x2x200x128xf16>, tensor<1x2x200xf32>) {softcap = 25.0 : f32} -> tensor<1x2x200x128xf16>, tensor<1x2x200xf32>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x200x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>)
      out(%o, %lse : tensor<1x2x200x128xf16>, tensor<1x2x200xf32>) grad(%do : tensor<1x2x200x128xf16>)
      mask(%m : tensor<1x2x200x256xf16>) block_mask(%bm : tensor<1x1x2x2xi8> blocks [128, 128])
      outs(%q, %k, %v : tensor<1x2x200x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>) {softcap = 25.0 : f32} -> tensor<1x2x200x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>
  return %dq, %dk, %dv : tensor<1x2x200x128xf16>, tensor<1x1x256x128xf16>, tensor<1x1x256x128xf16>
}
}

//--- region_alibi.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @region_alibi(%q: tensor<1x4x150x64xbf16>, %k: tensor<1x2x230x64xbf16>, %v: tensor<1x2x230x64xbf16>, %do: tensor<1x4x150x64xbf16>) -> (tensor<1x4x150x64xbf16>, tensor<1x2x230x64xbf16>, tensor<1x2x230x64xbf16>) {
  %o0 = tensor.empty() : tensor<1x4x150x64xbf16>
  %l0 = tensor.empty() : tensor<1x4x150xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x4x150x64xbf16>, tensor<1x2x230x64xbf16>, tensor<1x2x230x64xbf16>)
      outs(%o0, %l0 : tensor<1x4x150x64xbf16>, tensor<1x4x150xf32>) {causal} -> tensor<1x4x150x64xbf16>, tensor<1x4x150xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 2.0 : f32
        %inv = arith.constant 0.5 : f32
        %sc = arith.mulf %s, %inv : f32
        %t = math.tanh %sc : f32
        %capped = arith.mulf %t, %cap : f32
        %hi = arith.index_cast %h : index to i64
        %hf = arith.sitofp %hi : i64 to f32
        %one = arith.constant 1.0 : f32
        %m2 = arith.constant -2.0 : f32
        %h1 = arith.addf %hf, %one : f32
        %e = arith.mulf %h1, %m2 : f32
        %slope = math.exp2 %e : f32
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %r = arith.addf %capped, %bias : f32
        attn.yield %r : f32
      }
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x4x150x64xbf16>, tensor<1x2x230x64xbf16>, tensor<1x2x230x64xbf16>)
      out(%o, %lse : tensor<1x4x150x64xbf16>, tensor<1x4x150xf32>) grad(%do : tensor<1x4x150x64xbf16>)
      outs(%q, %k, %v : tensor<1x4x150x64xbf16>, tensor<1x2x230x64xbf16>, tensor<1x2x230x64xbf16>) {causal} -> tensor<1x4x150x64xbf16>, tensor<1x2x230x64xbf16>, tensor<1x2x230x64xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 2.0 : f32
        %inv = arith.constant 0.5 : f32
        %sc = arith.mulf %s, %inv : f32
        %t = math.tanh %sc : f32
        %capped = arith.mulf %t, %cap : f32
        %hi = arith.index_cast %h : index to i64
        %hf = arith.sitofp %hi : i64 to f32
        %one = arith.constant 1.0 : f32
        %m2 = arith.constant -2.0 : f32
        %h1 = arith.addf %hf, %one : f32
        %e = arith.mulf %h1, %m2 : f32
        %slope = math.exp2 %e : f32
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %r = arith.addf %capped, %bias : f32
        attn.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x4x150x64xbf16>, tensor<1x2x230x64xbf16>, tensor<1x2x230x64xbf16>
}
}

//--- region_select.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @region_select(%q: tensor<2x2x90x128xf16>, %k: tensor<2x2x170x128xf16>, %v: tensor<2x2x170x128xf16>, %m: tensor<2x1x90x170xf16>, %n: tensor<2xi32>, %do: tensor<2x2x90x128xf16>) -> (tensor<2x2x90x128xf16>, tensor<2x2x170x128xf16>, tensor<2x2x170x128xf16>) {
  %o0 = tensor.empty() : tensor<2x2x90x128xf16>
  %l0 = tensor.empty() : tensor<2x2x90xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<2x2x90x128xf16>, tensor<2x2x170x128xf16>, tensor<2x2x170x128xf16>)
      mask(%m : tensor<2x1x90x170xf16>) key_lengths(%n : tensor<2xi32>)
      outs(%o0, %l0 : tensor<2x2x90x128xf16>, tensor<2x2x90xf32>) {softcap = 20.0 : f32} -> tensor<2x2x90x128xf16>, tensor<2x2x90xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %floor = arith.constant -1.5 : f32
        %half = arith.constant 0.5 : f32
        %low = arith.maximumf %s, %floor : f32
        %c = arith.cmpi ugt, %j, %i : index
        %squared = arith.mulf %low, %low : f32
        %pen = arith.mulf %squared, %half : f32
        %r = arith.select %c, %pen, %low : f32
        attn.yield %r : f32
      }
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<2x2x90x128xf16>, tensor<2x2x170x128xf16>, tensor<2x2x170x128xf16>)
      out(%o, %lse : tensor<2x2x90x128xf16>, tensor<2x2x90xf32>) grad(%do : tensor<2x2x90x128xf16>)
      mask(%m : tensor<2x1x90x170xf16>) key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %v : tensor<2x2x90x128xf16>, tensor<2x2x170x128xf16>, tensor<2x2x170x128xf16>) {softcap = 20.0 : f32} -> tensor<2x2x90x128xf16>, tensor<2x2x170x128xf16>, tensor<2x2x170x128xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %floor = arith.constant -1.5 : f32
        %half = arith.constant 0.5 : f32
        %low = arith.maximumf %s, %floor : f32
        %c = arith.cmpi ugt, %j, %i : index
        %squared = arith.mulf %low, %low : f32
        %pen = arith.mulf %squared, %half : f32
        %r = arith.select %c, %pen, %low : f32
        attn.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<2x2x90x128xf16>, tensor<2x2x170x128xf16>, tensor<2x2x170x128xf16>
}
}

//--- region_sqrt.mlir
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @region_sqrt(%q: tensor<1x2x100x64xf16>, %k: tensor<1x2x150x64xf16>, %v: tensor<1x2x150x64xf16>, %do: tensor<1x2x100x64xf16>) -> (tensor<1x2x100x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>) {
  %o0 = tensor.empty() : tensor<1x2x100x64xf16>
  %l0 = tensor.empty() : tensor<1x2x100xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x100x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>)
      outs(%o0, %l0 : tensor<1x2x100x64xf16>, tensor<1x2x100xf32>) {causal} -> tensor<1x2x100x64xf16>, tensor<1x2x100xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %a = math.absf %s : f32
        %r = math.sqrt %a : f32
        attn.yield %r : f32
      }
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x100x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>)
      out(%o, %lse : tensor<1x2x100x64xf16>, tensor<1x2x100xf32>) grad(%do : tensor<1x2x100x64xf16>)
      outs(%q, %k, %v : tensor<1x2x100x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>) {causal} -> tensor<1x2x100x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %a = math.absf %s : f32
        %r = math.sqrt %a : f32
        attn.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x2x100x64xf16>, tensor<1x2x150x64xf16>, tensor<1x2x150x64xf16>
}
}
