// Bad options and bad modules end in one clear message and a non-zero exit,
// never a crash.
// RUN: not attn-run --dtype=f64 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: attn-run: error: unsupported input type 'f64' (expected f16, bf16 or f32)
// RUN: not attn-run --out-dtype=i8 2>&1 | FileCheck %s --check-prefix=OUT-DTYPE
// OUT-DTYPE: attn-run: error: unsupported output type 'i8' (expected f16, bf16 or f32)
// RUN: not attn-run --window=5 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: attn-run: error: --window takes two sizes, left,right (e.g. --window=128,0)
// RUN: not attn-run --window=-1,4 2>&1 | FileCheck %s --check-prefix=NEGATIVE-WINDOW
// NEGATIVE-WINDOW: attn-run: error: 'attn.attention' op window sizes must be non-negative
// RUN: not attn-run --heads=6 --kv-heads=4 2>&1 | FileCheck %s --check-prefix=GQA
// GQA: attn-run: error: 'attn.attention' op query heads (Hq = 6) must be a multiple of key/value heads (Hkv = 4)
// RUN: not attn-run --seq-q=0 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: attn-run: error: seq-q must be positive, got 0
// RUN: not attn-run --splits=0 2>&1 | FileCheck %s --check-prefix=SPLITS
// SPLITS: attn-run: error: splits must be positive, got 0
// RUN: not attn-run --mask=dense 2>&1 | FileCheck %s --check-prefix=MASK
// MASK: for the --mask option: Cannot find option named 'dense'!
// RUN: not attn-run --tolerance=-1 2>&1 | FileCheck %s --check-prefix=TOLERANCE
// RUN: not attn-run --tolerance= 2>&1 | FileCheck %s --check-prefix=NO-VALUE
// TOLERANCE: attn-run: error: --tolerance must be a non-negative number, got '-1'
// NO-VALUE: attn-run: error: --tolerance must be a non-negative number, got 
// RUN: not attn-run --mask-npy=%t.npy 2>&1 | FileCheck %s --check-prefix=NO-MASK
// NO-MASK: attn-run: error: --mask-npy given, but the attention has no mask
// RUN: not attn-run --lse-npy=%t.npy 2>&1 | FileCheck %s --check-prefix=NO-LSE
// NO-LSE: attn-run: error: --lse-npy given, but the attention writes no LSE (add --lse)
// RUN: not attn-run --head-dim=512 2>&1 | FileCheck %s --check-prefix=NO-TILES
// NO-TILES: attn-run: error: lowering with attn-to-cpu failed:
// NO-TILES-NEXT: no default tiling for this head dimension (above 256 or dynamic): pin one with the tiles attribute or the block-m/block-n options
// A key length is checked as the integer given: 2^63 - 1 was checked as the
// double 2^63 and reported as -2^63.
// RUN: not attn-run --key-lengths=9223372036854775807 2>&1 | FileCheck %s --check-prefix=KEY-LENGTH
// KEY-LENGTH: attn-run: error: key length 9223372036854775807 of sequence 0 is outside [0, 128] (Sk, the keys K and V hold)
//
// Modules.
// RUN: not attn-run %s --causal 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: attn-run: error: --causal describes the attention, which the module {{.*}}bad-input.mlir already does
// RUN: not attn-run %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=NO-FILE
// NO-FILE: attn-run: error: cannot read {{.*}}missing.mlir: No such file or directory
// RUN: not attn-run %S/../attn-opt/Inputs/garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: garbage.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// RUN: not attn-run %S/../attn-opt/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// RUN: not attn-run %s --q-npy=%t.npy 2>&1 | FileCheck %s --check-prefix=WHICH
// WHICH: attn-run: error: the .npy options and --write-reference name the operands of one attention, but the module has 3
// RUN: not attn-run --lse %S/Inputs/no-attention.mlir 2>&1 | FileCheck %s --check-prefix=BOTH-LSE
// BOTH-LSE: attn-run: error: --lse describes the attention
// RUN: not attn-run %S/Inputs/no-attention.mlir 2>&1 | FileCheck %s --check-prefix=NONE
// NONE: attn-run: error: no attn.attention in {{.*}}no-attention.mlir
// The first attention below has a dynamic length, the third a partition the
// CPU decomposition does not implement.
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: attn-run: error: @dynamic: attn-run needs static sizes
// RUN: not attn-run --lean=-3 2>&1 | FileCheck %s --check-prefix=LEAN
// LEAN: attn-run: error: lean CTAs must be positive, got -3
// RUN: not attn-run --lean=4 --splits=2 2>&1 | FileCheck %s --check-prefix=TWO-PARTITIONS
// TWO-PARTITIONS: attn-run: error: choose one partition: split-KV (splits), Lean (lean), ATTENTION2D (attention2d) or ring (ring)
// Split-KV and Lean pieces are made of #attn.fa2 tiles: block sizes the
// partition cannot pin are refused, with the rule.
// RUN: not attn-run --seq-q=50 --block-m=24 --block-n=16 --splits=2 2>&1 | FileCheck %s --check-prefix=PARTITION-TILES
// PARTITION-TILES: block_m must be a positive multiple of 16 * warps = 16 (each warp owns a multiple of 16 query rows), got 24

func.func @dynamic(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                   %v: tensor<1x2x?x32xf32>, %o: tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>)
      outs(%o : tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32>
  return %r : tensor<1x2x?x32xf32>
}

func.func @fine(%q: tensor<1x2x8x32xf32>, %k: tensor<1x2x8x32xf32>,
                %v: tensor<1x2x8x32xf32>, %o: tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>)
      outs(%o : tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32>
  return %r : tensor<1x2x8x32xf32>
}

func.func @fine_too(%q: tensor<1x2x8x32xf32>, %k: tensor<1x2x8x32xf32>,
                    %v: tensor<1x2x8x32xf32>, %o: tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>, tensor<1x2x8x32xf32>)
      outs(%o : tensor<1x2x8x32xf32>) -> tensor<1x2x8x32xf32>
  return %r : tensor<1x2x8x32xf32>
}

// More splits than key/value blocks is refused before anything is allocated
// (it used to allocate a slot per split and crash).
// RUN: not attn-run --splits=1000000000 2>&1 | FileCheck %s --check-prefix=HUGE-SPLITS
// HUGE-SPLITS: split_kv splits 1000000000 exceed the 2 key/value blocks of 64 keys: use at most 2 splits
