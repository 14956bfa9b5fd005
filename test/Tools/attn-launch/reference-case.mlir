// A reference case carries the check of a kernel the GPU reference cannot
// evaluate (here a score region, ALiBi, with softcap and a run-time block
// mask) to a GPU machine without LLVM: attn-run writes the inputs and the
// float64 reference's outputs into the bundle's reference/, and attn-launch
// reads the case with the bundle (on a GPU it runs the kernel on the case's
// inputs and compares with its outputs).

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s -o %t/bundle --chip=sm_90a | FileCheck %s --check-prefix=COMPILED
// COMPILED: 1 kernel(s)
// RUN: attn-run %s --write-reference=%t/bundle/reference --o-npy=%t/cpu-o.npy | FileCheck %s --check-prefix=WRITTEN
// WRITTEN: check O  : {{.*}} PASS
// WRITTEN: check LSE: {{.*}} PASS
// WRITTEN: reference case: {{.*}}bundle/reference (kernel alibi_blocks_attention0)
// WRITTEN: PASS
// RUN: attn-launch --validate %t/bundle | FileCheck %s --check-prefix=VALID
// VALID: 1 kernel(s), manifest valid; reference case of alibi_blocks_attention0 read (matched to the kernel when it runs)
// The case names the kernel attn-compile wrote for the same attention.
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/bundle/manifest.json
// MANIFEST: "name": "alibi_blocks_attention0"

// The files: the inputs in the kernel's types, the reference's outputs in
// f32, which the CPU kernel matches within the recorded tolerance.
// RUN: %python %S/Inputs/describe_reference_case.py %t/bundle/reference %t/cpu-o.npy | FileCheck %s --check-prefix=FILES
// FILES: q bfloat16-as-V2 (2, 4, 200, 64)
// FILES: k bfloat16-as-V2 (2, 2, 130, 64)
// FILES: v bfloat16-as-V2 (2, 2, 130, 64)
// FILES: block_mask int8 (2, 1, 2, 3)
// FILES: o float32 (2, 4, 200, 64)
// FILES: lse float32 (2, 4, 200)
// FILES: kernel alibi_blocks_attention0, O tolerance 2x naive bf16
// FILES: the CPU kernel's O is within the O tolerance of o.npy

// attn-launch on the fake CUDA driver of the runtime's tests (device memory
// is host memory, kernels run nothing): the case's kernel runs once at the
// case's lengths whatever --lengths says, and is compared with the case's
// outputs, which the NaN it leaves in O and LSE fails. A case that does not
// fit its kernel (a block mask of one query block instead of two) fails that
// kernel's check, and the other bundles are still checked.
// RUN: attn-compile %s -o %t/sm80 --chip=sm_80 > /dev/null
// RUN: attn-run %s --write-reference=%t/sm80/reference > /dev/null
// RUN: not env ATTNRT_LIBCUDA=%attn_obj_root/lib/libAttnFakeCudaDriver.so attn-launch %t/sm80 --lengths=1,1,1 2>&1 | FileCheck %s --check-prefix=FAKE
// FAKE: problem  bf16 B=2 Hq=4 Hkv=2 Sq=200 Sk=130 D=64
// FAKE: repeat {{.*}}: PASS
// FAKE: O {{.*}}(reference case, 2x naive bf16: {{.*}}), 102400 elements NaN or mismatched infinities: FAIL
// FAKE: LSE {{.*}}(reference case, 2x naive bf16: {{.*}}), 1600 elements NaN or mismatched infinities: FAIL
// FAKE: attn-launch: error: 1 kernel(s) FAILED the check
// RUN: cp -r %t/sm80 %t/misfit
// RUN: %python -c "import numpy, sys; numpy.save(sys.argv[1], numpy.ones((2, 1, 1, 3), numpy.int8))" %t/misfit/reference/block_mask.npy
// RUN: not env ATTNRT_LIBCUDA=%attn_obj_root/lib/libAttnFakeCudaDriver.so attn-launch %t/misfit %t/sm80 2>&1 | FileCheck %s --check-prefix=MISFIT
// MISFIT: attn-launch: error: {{.*}}misfit: alibi_blocks_attention0: the reference case of kernel alibi_blocks_attention0 does not fit kernel alibi_blocks_attention0: block_mask has shape [2, 1, 1, 3], the kernel's is [2, 1, 2, 3]
// MISFIT: sm80: kernel alibi_blocks_attention0 (sm_80)
// MISFIT: attn-launch: error: 2 kernel(s) FAILED the check

// Bad cases end in one message: one that names no kernel, a missing input,
// and the options attn-run refuses with --write-reference.
// RUN: cp -r %t/bundle %t/nameless
// RUN: sed -i 's/"kernel": "alibi_blocks_attention0"/"kernel": ""/' %t/nameless/reference/reference.json
// RUN: not attn-launch --validate %t/nameless 2>&1 | FileCheck %s --check-prefix=NAMELESS
// NAMELESS: attn-launch: error: {{.*}}nameless/reference/reference.json: "kernel" must name the kernel the case checks
// RUN: cp -r %t/bundle %t/keyless && rm %t/keyless/reference/k.npy
// RUN: not attn-launch --validate %t/keyless 2>&1 | FileCheck %s --check-prefix=KEYLESS
// KEYLESS: attn-launch: error: cannot read {{.*}}keyless/reference/k.npy: No such file or directory
// RUN: not attn-run --write-reference=%t/x 2>&1 | FileCheck %s --check-prefix=NO-MODULE
// NO-MODULE: attn-run: error: --write-reference writes the case of a module's attention (attn-compile the same module for the GPU): give the module
// RUN: not attn-run %s --write-reference=%t/x --no-check 2>&1 | FileCheck %s --check-prefix=NO-CHECK
// NO-CHECK: attn-run: error: --write-reference writes the reference's outputs: drop --no-check
// RUN: not attn-run %s --write-reference=%t/x --device=gpu 2>&1 | FileCheck %s --check-prefix=GPU
// GPU: attn-run: error: --write-reference computes the reference on the CPU: drop --device
// RUN: not attn-run %s --write-reference= 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-run: error: --write-reference needs a directory
// RUN: not attn-run %s --write-reference=%t/no/such/dir 2>&1 | FileCheck %s --check-prefix=NO-PARENT
// NO-PARENT: attn-run: error: cannot create {{.*}}no/such/dir: No such file or directory

func.func @alibi_blocks(%q: tensor<2x4x200x64xbf16>, %k: tensor<2x2x130x64xbf16>,
                        %v: tensor<2x2x130x64xbf16>, %bm: tensor<2x1x2x3xi8>,
                        %o: tensor<2x4x200x64xbf16>, %l: tensor<2x4x200xf32>)
    -> (tensor<2x4x200x64xbf16>, tensor<2x4x200xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x4x200x64xbf16>, tensor<2x2x130x64xbf16>, tensor<2x2x130x64xbf16>)
      block_mask(%bm : tensor<2x1x2x3xi8> blocks [128, 64])
      outs(%o, %l : tensor<2x4x200x64xbf16>, tensor<2x4x200xf32>) {causal, softcap = 30.0 : f32}
      -> tensor<2x4x200x64xbf16>, tensor<2x4x200xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %hi = arith.index_cast %h : index to i32
    %hf = arith.sitofp %hi : i32 to f32
    %minus = arith.constant -1.0 : f32
    %e = arith.mulf %hf, %minus : f32
    %slope = math.exp2 %e : f32
    %bias = arith.mulf %df, %slope : f32
    %sum = arith.addf %s, %bias : f32
    attn.yield %sum : f32
  }
  return %r#0, %r#1 : tensor<2x4x200x64xbf16>, tensor<2x4x200xf32>
}
