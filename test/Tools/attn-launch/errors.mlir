// attn-launch reads and checks bundles without a GPU (--validate), and every
// problem ends in one message and exit 1: a missing or malformed manifest, a
// missing PTX file, bad options, no CUDA driver.

// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s -o %t/good | FileCheck %s --check-prefix=COMPILED
// COMPILED: 1 kernel(s)
// RUN: attn-launch --validate %t/good | FileCheck %s --check-prefix=VALID
// VALID: 1 kernel(s), manifest valid

// RUN: not attn-launch --validate %t/missing 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: attn-launch: error: cannot read {{.*}}missing/manifest.json: No such file or directory (is {{.*}} a kernel bundle written by attn-compile?)

// A manifest that is not JSON: the line and column of the problem.
// RUN: mkdir -p %t/broken && cp %t/good/kernels.ptx %t/broken/
// RUN: echo '{"format": "attn-kernel-bundle", "version": 2,' > %t/broken/manifest.json
// RUN: not attn-launch --validate %t/broken 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: manifest.json: manifest: invalid JSON: parse error at line 2, column 1: syntax error while parsing object key - unexpected end of input; expected string literal

// An older format, a missing field, a wrong type, a grid naming no
// parameter, an alignment that is not a power of two.
// RUN: mkdir -p %t/v1 && cp %t/good/kernels.ptx %t/v1/
// RUN: sed 's/"version": 8/"version": 1/' %t/good/manifest.json > %t/v1/manifest.json
// RUN: not attn-launch --validate %t/v1 2>&1 | FileCheck %s --check-prefix=V1
// V1: manifest: version: this runtime reads versions 2 to 11, not 1 (recompile the bundle with attn-compile)
// RUN: mkdir -p %t/noblock && cp %t/good/kernels.ptx %t/noblock/
// RUN: sed 's/"block"/"blocks"/' %t/good/manifest.json > %t/noblock/manifest.json
// RUN: not attn-launch --validate %t/noblock 2>&1 | FileCheck %s --check-prefix=NOBLOCK
// NOBLOCK: manifest: kernels[0]: missing "block"
// RUN: mkdir -p %t/type && cp %t/good/kernels.ptx %t/type/
// RUN: sed 's/"type": "f16"/"type": "f8"/' %t/good/manifest.json > %t/type/manifest.json
// RUN: not attn-launch --validate %t/type 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: manifest: kernels[0].params[0].type: "f8" is not one of f16, bf16, f32, i32
// RUN: mkdir -p %t/grid && cp %t/good/kernels.ptx %t/grid/
// RUN: sed 's/"param": "Q"/"param": "X"/' %t/good/manifest.json > %t/grid/manifest.json
// RUN: not attn-launch --validate %t/grid 2>&1 | FileCheck %s --check-prefix=GRID
// GRID: manifest: kernels[0].grid[0].param: no parameter "X"
// RUN: mkdir -p %t/align && cp %t/good/kernels.ptx %t/align/
// RUN: sed 's/"alignment": 16/"alignment": 12/' %t/good/manifest.json > %t/align/manifest.json
// RUN: not attn-launch --validate %t/align 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: manifest: kernels[0].params[0].alignment: is not a power of two

// The PTX the manifest names must be there.
// RUN: mkdir -p %t/noptx && cp %t/good/manifest.json %t/noptx/
// RUN: not attn-launch --validate %t/noptx 2>&1 | FileCheck %s --check-prefix=NOPTX
// NOPTX: attn-launch: error: cannot read {{.*}}noptx/kernels.ptx

// Options.
// RUN: not attn-launch 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: attn-launch: error: no bundle given (see --help)
// RUN: not attn-launch %t/good --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: attn-launch: error: unknown option '--frobnicate' (see --help)
// RUN: not attn-launch %t/good --tolerance=-1 2>&1 | FileCheck %s --check-prefix=TOL
// TOL: attn-launch: error: --tolerance wants a positive number, not '-1'
// RUN: not attn-launch %t/good --reference=gpu 2>&1 | FileCheck %s --check-prefix=SIDE
// SIDE: attn-launch: error: --reference wants device or host, not 'gpu'
// RUN: not attn-launch %t/good --lengths=1,0,4096 2>&1 | FileCheck %s --check-prefix=LENGTHS
// LENGTHS: attn-launch: error: --lengths wants three integers B,SQ,SK from 1 to 2147483647, not '1,0,4096'
// RUN: not attn-launch %t/good --lengths=1,1 2>&1 | FileCheck %s --check-prefix=LENGTHS2
// LENGTHS2: attn-launch: error: --lengths wants three integers B,SQ,SK from 1 to 2147483647, not '1,1'
// Lengths that the int32s of the GPU reference and the key lengths do not
// hold are refused as they are read (Sk = 2^31 became -2^31 there), and so
// are integers that no int64 holds.
// RUN: not attn-launch %t/good --lengths=1,1,2147483648 2>&1 | FileCheck %s --check-prefix=LENGTHS-INT32
// LENGTHS-INT32: attn-launch: error: --lengths wants three integers B,SQ,SK from 1 to 2147483647, not '1,1,2147483648'
// RUN: not attn-launch %t/good --lengths=1,1,4,4 2>&1 | FileCheck %s --check-prefix=LENGTHS-FOUR
// LENGTHS-FOUR: attn-launch: error: --lengths wants three integers B,SQ,SK from 1 to 2147483647, not '1,1,4,4'
// RUN: not attn-launch %t/good --lengths=18446744073709551617,1,1 2>&1 | FileCheck %s --check-prefix=LENGTHS-INT64
// LENGTHS-INT64: attn-launch: error: --lengths wants three integers B,SQ,SK from 1 to 2147483647, not '18446744073709551617,1,1'
// Lengths within range whose tensors no machine holds, refused before
// anything multiplies them further or allocates.
// RUN: attn-compile %S/Inputs/run-time-lengths.mlir -o %t/dyn > /dev/null
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/dyn --lengths=2147483647,2147483647,1 2>&1 | FileCheck %s --check-prefix=LENGTHS-BYTES
// LENGTHS-BYTES: attn-launch: error: {{.*}}dyn: prefill_attention0: kernel prefill_attention0: --lengths=2147483647,2147483647,1 make parameter Q hold more than 2^48 bytes (256 TiB)
// A device ordinal is an int: 2^32 ran on device 0.
// RUN: not attn-launch --emulator --probe --device=4294967296 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: attn-launch: error: --device wants a device index from 0 to 2147483647, not '4294967296'
// RUN: not attn-launch %t/good --iterations=0 2>&1 | FileCheck %s --check-prefix=ITER
// ITER: attn-launch: error: --iterations wants an integer in [1, 100000], not '0'
// RUN: attn-launch --help | FileCheck %s --check-prefix=HELP
// HELP: usage: attn-launch BUNDLE... [options]

// Without a CUDA driver (here, one that cannot be opened): one message.
// RUN: env ATTNRT_LIBCUDA=%t/no-libcuda.so not attn-launch %t/good 2>&1 | FileCheck %s --check-prefix=NODRIVER
// RUN: env ATTNRT_LIBCUDA=%t/no-libcuda.so not attn-launch --probe 2>&1 | FileCheck %s --check-prefix=NODRIVER
// NODRIVER: attn-launch: error: cannot open the CUDA driver ({{.*}}no-libcuda.so): {{.*}}; is an NVIDIA driver installed?

// attn-launch runs where only the CUDA driver is: it needs neither LLVM nor
// MLIR.
// RUN: ldd %attn_tools_dir/attn-launch | FileCheck %s --check-prefix=LIBS --implicit-check-not=libLLVM --implicit-check-not=libMLIR
// LIBS: libattnrt.so

module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @prefill(%q: tensor<1x2x100x64xf16>, %k: tensor<1x2x100x64xf16>, %v: tensor<1x2x100x64xf16>,
                     %o: tensor<1x2x100x64xf16>) -> tensor<1x2x100x64xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16>)
        outs(%o : tensor<1x2x100x64xf16>) {causal} -> tensor<1x2x100x64xf16>
    return %r : tensor<1x2x100x64xf16>
  }
}
