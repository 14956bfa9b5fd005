// One choice of tiles (chooseTiles) for every pass, the plan report and the
// tools: 48 x 80 block-mask blocks at D = 128 take FlashAttention-2's table
// cut down to the blocks, 16 x 16, on the CPU (attn-decompose's loops,
// attn-partition-kv's pieces, attn-run's schedule) as on the GPU
// (attn-select-schedule, attn-to-nvgpu) and in the plan report. The CPU alone
// also takes blocks whose sides are not multiples of 16 (24 x 40), in which no
// #attn.fa2 tiling nests.
//
// RUN: attn-opt %s --split-input-file --attn-print-plan 2>&1 | FileCheck %s --check-prefix=PLAN
// RUN: not attn-opt %s --split-input-file --attn-select-schedule 2>/dev/null | FileCheck %s --check-prefix=GPU
// RUN: attn-opt %s --split-input-file --attn-partition-kv | FileCheck %s --check-prefix=PIECES
// RUN: attn-opt %s --split-input-file --attn-partition-kv --attn-decompose --canonicalize | FileCheck %s --check-prefix=LOOPS
// RUN: attn-run --heads=4 --kv-heads=2 --seq-q=97 --seq-k=300 --head-dim=128 --block-mask=48,80 --mask=additive --dtype=bf16 | FileCheck %s --check-prefix=TOOL
// RUN: attn-run --heads=2 --seq-q=50 --seq-k=90 --head-dim=32 --block-mask=24,40 --mask=bool | FileCheck %s --check-prefix=TOOL-ODD
// RUN: not attn-compile %s -o %t 2>&1 | FileCheck %s --check-prefix=GPU-ODD

// PLAN: tiles: #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 2> (FlashAttention-2's default for D=128 on sm_90a)
// PLAN: tiles: #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 2> (FlashAttention-2's split-KV default for D=128 on sm_90a)
// PLAN: tiles: no FlashAttention-2 tiling nests in the block mask's 24x40 blocks

// GPU-LABEL: func.func @blocks
// GPU: tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 2>
// GPU-LABEL: func.func @split_blocks
// GPU: tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 2>

// PIECES-LABEL: func.func @split_blocks
// PIECES: attn.partial_attention
// PIECES-SAME: tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 2>

// The loops: 7 query blocks of 16 rows (Sq = 97) per head, 19 key blocks of
// 16 keys (Sk = 300); 3 of 24 rows (Sq = 50) and 3 of 40 keys (Sk = 90) in
// the blocks no #attn.fa2 tiling nests in.
// LOOPS-LABEL: func.func @blocks
// LOOPS: scf.forall ({{.*}}) in (4, 7)
// LOOPS: scf.for {{.*}} = %c0 to %c19 step %c1
// LOOPS-LABEL: func.func @split_blocks
// LOOPS: scf.forall ({{.*}}) in (2, 4, 7)
// LOOPS-LABEL: func.func @odd_blocks
// LOOPS: scf.forall ({{.*}}) in (2, 3)
// LOOPS: scf.for {{.*}} = %c0 to %c3 step %c1

// TOOL: schedule: tiles 16x16 (FlashAttention-2's default for D=128)
// TOOL: PASS
// TOOL-ODD: schedule: tiles 24x40 (FlashAttention-2's default for D=32)
// TOOL-ODD: PASS

// GPU-ODD: error: no FlashAttention-2 tiling nests in the block mask's 24x40 blocks

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536,
    regs_per_thread = 255>} {
func.func @blocks(%q: tensor<1x4x97x128xbf16>, %k: tensor<1x2x300x128xbf16>,
                  %mask: tensor<1x4x97x300xbf16>, %bm: tensor<1x1x3x4xi8>,
                  %o: tensor<1x4x97x128xbf16>) -> tensor<1x4x97x128xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x97x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>)
      mask(%mask : tensor<1x4x97x300xbf16>)
      block_mask(%bm : tensor<1x1x3x4xi8> blocks [48, 80])
      outs(%o : tensor<1x4x97x128xbf16>) -> tensor<1x4x97x128xbf16>
  return %r : tensor<1x4x97x128xbf16>
}

func.func @split_blocks(%q: tensor<1x4x97x128xbf16>, %k: tensor<1x2x300x128xbf16>,
                        %mask: tensor<1x4x97x300xbf16>, %bm: tensor<1x1x3x4xi8>,
                        %o: tensor<1x4x97x128xbf16>) -> tensor<1x4x97x128xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x97x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>)
      mask(%mask : tensor<1x4x97x300xbf16>)
      block_mask(%bm : tensor<1x1x3x4xi8> blocks [48, 80])
      outs(%o : tensor<1x4x97x128xbf16>) {partition = #attn.split_kv<splits = 2>}
      -> tensor<1x4x97x128xbf16>
  return %r : tensor<1x4x97x128xbf16>
}
}

// -----

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536,
    regs_per_thread = 255>} {
func.func @odd_blocks(%q: tensor<1x2x50x32xf16>, %k: tensor<1x2x90x32xf16>,
                      %bm: tensor<1x1x3x3xi8>,
                      %o: tensor<1x2x50x32xf16>) -> tensor<1x2x50x32xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x2x50x32xf16>, tensor<1x2x90x32xf16>, tensor<1x2x90x32xf16>)
      block_mask(%bm : tensor<1x1x3x3xi8> blocks [24, 40])
      outs(%o : tensor<1x2x50x32xf16>) -> tensor<1x2x50x32xf16>
  return %r : tensor<1x2x50x32xf16>
}
}
