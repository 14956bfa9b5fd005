// Block-sparse attention: attn-run's block mask has empty, partial and full
// blocks (and an all-empty first query block row), checked against the
// float64 reference, which applies the block mask element by element.
//
// Alone, with a boolean and with an additive mask operand (full blocks drop
// it), with causal and window masks, GQA and every schedule.
// RUN: attn-run --heads=2 --seq-q=100 --seq-k=130 --head-dim=16 --block-mask=32,32 --lse | FileCheck %s --check-prefixes=CHECK,ALONE
// RUN: attn-run --batch=2 --heads=2 --seq-q=100 --seq-k=130 --head-dim=32 --block-mask=32,64 --mask=bool --causal --lse | FileCheck %s
// RUN: attn-run --heads=4 --kv-heads=2 --seq-q=97 --seq-k=300 --head-dim=64 --block-mask=48,80 --mask=additive --window=60,20 --dtype=bf16 --lse | FileCheck %s
// RUN: attn-run --heads=4 --kv-heads=1 --seq-q=1 --seq-k=1000 --head-dim=64 --block-mask=16,64 --mask=bool --splits=4 --dtype=f16 --lse | FileCheck %s
// RUN: attn-run --heads=3 --seq-q=40 --seq-k=500 --head-dim=32 --block-mask=16,64 --mask=bool --lean=5 --alibi --softcap=20 --lse | FileCheck %s
// Tiles pinned inside the blocks: each tile reads its block's element.
// RUN: attn-run --heads=2 --seq-q=128 --seq-k=256 --head-dim=32 --block-mask=64,128 --mask=bool --block-m=16 --block-n=32 --lse | FileCheck %s
// A module's block mask: the random one replaced by one read from .npy.
// RUN: %python %S/Inputs/write-block-mask.py %t.npy
// RUN: attn-run %s --block-mask-npy=%t.npy | FileCheck %s --check-prefix=NPY
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=16 --block-mask-npy=%t.npy 2>&1 | FileCheck %s --check-prefix=NO-BLOCK-MASK
// A constant block mask keeps its values: one empty, two partial, one full.
// RUN: attn-run %S/Inputs/constant-block-mask.mlir | FileCheck %s --check-prefix=CONSTANT
// CONSTANT: block mask: 32x32 blocks, 1 empty, 2 partial, 1 full of 4
// CONSTANT: check O  : {{.*}} PASS
// Tiles that cannot nest in the blocks are an error.
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=16 --block-mask=32,32 --block-m=64 2>&1 | FileCheck %s --check-prefix=STRADDLE
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=16 --block-mask=20,20 --splits=2 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not attn-run --heads=2 --seq-q=64 --head-dim=16 --block-mask=32 2>&1 | FileCheck %s --check-prefix=OPTION

// ALONE: block mask: 32x32 blocks, {{[0-9]+}} empty, {{[0-9]+}} partial, {{[0-9]+}} full of 40
// ALONE: schedule: tiles 32x32
// CHECK: check O  : {{.*}} PASS
// CHECK: check LSE: {{.*}} PASS
// CHECK: {{^PASS$}}

// NPY: @documents: B=1 Hq=2 Hkv=2 (MHA) Sq=96 Sk=96 D=32 Dv=32 f32 causal boolean-mask block-mask=32x32
// NPY: block mask: 32x32 blocks, 5 empty, 3 partial, 1 full of 9
// NPY: schedule: tiles 32x32
// NPY: check O  : {{.*}} PASS
// NPY: {{^PASS$}}

// NO-BLOCK-MASK: error: --block-mask-npy given, but the attention has no block mask
// STRADDLE: tiles 64x32 do not nest in the block mask's 32x32 blocks: block_m must divide Bq and block_n Bk
// SPLIT: the pieces of #attn.split_kv<splits = 2> take #attn.fa2 tiles, whose sides are multiples of 16; tiles nest in the block mask's 20x20 blocks, which leaves 20x20: use blocks that are multiples of 16
// OPTION: error: --block-mask takes the block's rows and keys (e.g. --block-mask=64,64)

// Causal over three chunks of 32 tokens, with the block mask of
// write-block-mask.py: each chunk sees itself (partial: causal and the mask
// operand apply), and the last chunk also sees the first in full (the mask
// operand is dropped there) but not the second (empty).
func.func @documents(%q: tensor<1x2x96x32xf32>, %k: tensor<1x2x96x32xf32>,
                     %v: tensor<1x2x96x32xf32>, %mask: tensor<1x1x96x96xi1>,
                     %blocks: tensor<1x1x3x3xi8>) -> tensor<1x2x96x32xf32> {
  %o0 = tensor.empty() : tensor<1x2x96x32xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x96x32xf32>,
      tensor<1x2x96x32xf32>, tensor<1x2x96x32xf32>)
      mask(%mask : tensor<1x1x96x96xi1>)
      block_mask(%blocks : tensor<1x1x3x3xi8> blocks [32, 32])
      outs(%o0 : tensor<1x2x96x32xf32>) {causal} -> tensor<1x2x96x32xf32>
  return %o : tensor<1x2x96x32xf32>
}
