// Sizes, counts and tiles from user input are checked before anything is
// allocated or compiled: each case below crashed, hung or answered wrongly.
// RUN: attn-opt %s --split-input-file --verify-diagnostics
//
// Through attn-run's options (each used to crash or run out of memory).
// RUN: not attn-run --batch=4611686018427387904 --heads=4 --seq-q=1 --seq-k=1 --head-dim=1 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: attn-run: error: 'attn.attention' op Q ('tensor<4611686018427387904x4x1x1xf32>') holds more than 2^48 bytes (256 TiB), more than any machine addresses
// RUN: not attn-run --batch=1000000000000 2>&1 | FileCheck %s --check-prefix=BATCH2
// BATCH2: attn-run: error: 'attn.attention' op Q ('tensor<1000000000000x8x128x64xf32>') holds more than 2^48 bytes
// RUN: not attn-run --seq-q=2147483648 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: attn-run: error: the operands and their float64 copies for the check need 49152.0 GiB; this machine has {{[0-9.]+}} GiB of memory
// RUN: not attn-run --block-n=4611686018427387904 2>&1 | FileCheck %s --check-prefix=BLOCK-N
// BLOCK-N: block-m and block-n must be at most 4096, got 0 and 4611686018427387904
// RUN: not attn-run --splits=70000 2>&1 | FileCheck %s --check-prefix=SPLITS
// SPLITS: split_kv splits 70000 exceed the 2 key/value blocks of 64 keys: use at most 2 splits
// RUN: not attn-run --repeat=2147483648 2>&1 | FileCheck %s --check-prefix=REPEAT
// REPEAT: attn-run: error: --repeat must be from 1 to 1000, got 2147483648
// RUN: not attn-run --head-dim=100000 2>&1 | FileCheck %s --check-prefix=HEAD-DIM
// HEAD-DIM: no default tiling for this head dimension (above 256 or dynamic)
//
// A right window edge of INT64_MAX is unbounded: it wrote an all-zero O and
// said PASS, and the plan said "0 of 1 key blocks visited".
// RUN: attn-run --heads=2 --seq-q=8 --head-dim=4 --window=0,9223372036854775807 | FileCheck %s --check-prefix=WINDOW
// RUN: attn-run --heads=2 --seq-q=8 --head-dim=4 --causal --window=9223372036854775807,9223372036854775807 | FileCheck %s --check-prefix=WINDOW
// WINDOW: 1 of 1 key blocks visited
// WINDOW: check O  : {{.*}} PASS
// WINDOW: {{^PASS$}}

func.func @huge(%q: tensor<4611686018427387904x4x1x1xf32>, %k: tensor<4611686018427387904x4x1x1xf32>,
                %v: tensor<4611686018427387904x4x1x1xf32>, %o: tensor<4611686018427387904x4x1x1xf32>) {
  // expected-error @+1 {{Q ('tensor<4611686018427387904x4x1x1xf32>') holds more than 2^48 bytes (256 TiB)}}
  %r = attn.attention ins(%q, %k, %v : tensor<4611686018427387904x4x1x1xf32>, tensor<4611686018427387904x4x1x1xf32>, tensor<4611686018427387904x4x1x1xf32>)
      outs(%o : tensor<4611686018427387904x4x1x1xf32>) -> tensor<4611686018427387904x4x1x1xf32>
  return
}

// -----

func.func @zero_head_dim(%q: tensor<1x2x16x0xf32>, %k: tensor<1x2x16x0xf32>, %v: tensor<1x2x16x4xf32>, %o: tensor<1x2x16x4xf32>) {
  // expected-error @+1 {{Q has a zero size ('tensor<1x2x16x0xf32>'): every size of an attention must be positive}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x16x0xf32>, tensor<1x2x16x0xf32>, tensor<1x2x16x4xf32>)
      outs(%o : tensor<1x2x16x4xf32>) -> tensor<1x2x16x4xf32>
  return
}

// -----

func.func @zero_queries(%q: tensor<1x2x0x4xf32>, %k: tensor<1x2x16x4xf32>, %v: tensor<1x2x16x4xf32>, %o: tensor<1x2x0x4xf32>) {
  // expected-error @+1 {{Q has a zero size}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x2x0x4xf32>, tensor<1x2x16x4xf32>, tensor<1x2x16x4xf32>)
      outs(%o : tensor<1x2x0x4xf32>) -> tensor<1x2x0x4xf32>
  return
}

// -----

// expected-error @+1 {{block_m and block_n must be at most 4096, got 4611686018427387904 and 64}}
#huge_tiles = #attn.fa2<block_m = 4611686018427387904, block_n = 64, warps = 4, stages = 2>

// -----

// expected-error @+1 {{stages must be from 1 to 16, got 9223372036854775807}}
#deep = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 9223372036854775807>

// -----

// expected-error @+1 {{sms must be at most 2147483647, got 4611686018427387904}}
#many_sms = #attn.target<chip = "sm_90a", sms = 4611686018427387904, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>

// -----

// expected-error @+1 {{splits must be at most 2147483647, got 9223372036854775807}}
#many_splits = #attn.split_kv<splits = 9223372036854775807>

// -----

// expected-error @+1 {{q_parts x kv_parts must be at most 2147483647 ranks, got 4294967296 x 4294967296}}
#big_grid = #attn.attention2d<q_parts = 4294967296, kv_parts = 4294967296>
