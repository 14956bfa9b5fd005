// Inputs must be regular files of a bounded size, and outputs are written
// through a temporary file and renamed, never over a device; every failure
// names the path and the reason and exits non-zero.
// RUN: rm -rf %t && mkdir -p %t
//
// A device or a FIFO as an input was read until memory ran out.
// RUN: not attn-run --q-npy=/dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO-NPY
// ZERO-NPY: attn-run: error: cannot read /dev/zero: it is a character device, not a regular file
// RUN: mkfifo %t/fifo
// RUN: not attn-run --k-npy=%t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: attn-run: error: cannot read {{.*}}fifo: it is a FIFO, not a regular file
// RUN: not attn-run /dev/urandom 2>&1 | FileCheck %s --check-prefix=ZERO-MODULE
// ZERO-MODULE: attn-run: error: cannot read /dev/urandom: it is a character device, not a regular file
// RUN: not attn-compile /dev/zero -o %t/bundle 2>&1 | FileCheck %s --check-prefix=ZERO-COMPILE
// ZERO-COMPILE: attn-compile: error: cannot read /dev/zero: it is a character device, not a regular file
// RUN: mkdir -p %t/zero-bundle && ln -s /dev/zero %t/zero-bundle/manifest.json
// RUN: not attn-launch --validate %t/zero-bundle 2>&1 | FileCheck %s --check-prefix=ZERO-MANIFEST
// ZERO-MANIFEST: attn-launch: error: cannot read {{.*}}zero-bundle/manifest.json: it is a character device, not a regular file
// RUN: attn-compile %s -o %t/bundle
// RUN: mkdir -p %t/zero-ptx && cp %t/bundle/manifest.json %t/zero-ptx/ && ln -s /dev/zero %t/zero-ptx/kernels.ptx
// RUN: not attn-launch --validate %t/zero-ptx 2>&1 | FileCheck %s --check-prefix=ZERO-PTX
// ZERO-PTX: attn-launch: error: cannot read {{.*}}zero-ptx/kernels.ptx: it is a character device, not a regular file
// attn-launch --csv reads the rows it appends to before it takes the GPU, so
// a CSV path that is a device fails at once (without a GPU too).
// RUN: not attn-launch %t/bundle --csv=/dev/full 2>&1 | FileCheck %s --check-prefix=CSV-DEVICE
// CSV-DEVICE: attn-launch: error: cannot read /dev/full: it is a character device, not a regular file
//
// A .npy header that claims gigabytes is refused before reading on.
// RUN: %python -c "import struct,sys; sys.stdout.buffer.write(b'\x93NUMPY\x02\x00' + struct.pack('<I', 0xffffffff))" > %t/huge-header.npy
// RUN: not attn-run --q-npy=%t/huge-header.npy 2>&1 | FileCheck %s --check-prefix=HEADER
// HEADER: attn-run: error: {{.*}}huge-header.npy: the header claims 4294967295 bytes; a .npy header has at most 1048576
//
// Outputs. /dev/full stays a device (it used to be renamed over) and its
// write error is reported; a directory or a missing directory is refused.
// RUN: not attn-run --heads=2 --seq-q=8 --head-dim=4 --o-npy=/dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: attn-run: error: cannot write /dev/full: No space left on device
// RUN: test -c /dev/full
// RUN: not attn-run --heads=2 --seq-q=8 --head-dim=4 --o-npy=%t 2>&1 | FileCheck %s --check-prefix=DIR
// DIR: attn-run: error: cannot write {{.*}}: it is a directory
// RUN: not attn-run --heads=2 --seq-q=8 --head-dim=4 --o-npy=%t/missing/o.npy 2>&1 | FileCheck %s --check-prefix=NO-DIR
// NO-DIR: attn-run: error: cannot write {{.*}}missing/o.npy: No such file or directory
// A FIFO no process reads is an error, not a wait forever.
// RUN: not attn-run --heads=2 --seq-q=8 --head-dim=4 --o-npy=%t/fifo 2>&1 | FileCheck %s --check-prefix=NO-READER
// NO-READER: attn-run: error: cannot write {{.*}}fifo: it is a FIFO that no process reads
// RUN: not attn-compile %s -o /dev/full 2>&1 | FileCheck %s --check-prefix=COMPILE-DEV
// COMPILE-DEV: attn-compile: error: cannot {{.*}}/dev/full{{.*}}: Not a directory
//
// A regular output replaces the old file whole and leaves no temporary file;
// /dev/null is written in place.
// RUN: attn-run --heads=2 --seq-q=8 --head-dim=4 --o-npy=%t/o.npy --lse --lse-npy=%t/lse.npy | FileCheck %s --check-prefix=PASS
// RUN: attn-run --heads=2 --seq-q=8 --head-dim=4 --o-npy=/dev/null | FileCheck %s --check-prefix=PASS
// RUN: ls %t | FileCheck %s --check-prefix=NO-TEMPORARY
// PASS: {{^PASS$}}
// NO-TEMPORARY-NOT: tmp-

func.func @f(%q: tensor<1x2x16x64xf16>, %k: tensor<1x2x16x64xf16>, %v: tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16> {
  %o0 = tensor.empty() : tensor<1x2x16x64xf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>)
      outs(%o0 : tensor<1x2x16x64xf16>) -> tensor<1x2x16x64xf16>
  return %o : tensor<1x2x16x64xf16>
}
