// RUN: attn-opt %s --attn-print-plan --split-input-file --verify-diagnostics --mlir-print-op-on-diagnostic=false | FileCheck %s
// RUN: attn-opt %s --attn-print-plan --split-input-file --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK

// The pass reports and leaves the IR unchanged.
// CHECK-LABEL: func.func @causal_square
// CHECK: attn.attention
// REMARK: remark: attention B=1 Hq=8 Hkv=8 (MHA) Sq=1024 Sk=1024 D=64 Dv=64 f16 causal
// REMARK-NEXT: work: 1.07 GFLOP nominal; an untiled lowering would hold 32.0 MiB of f32 scores
// REMARK-NEXT: tiles: #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2> (FlashAttention-2's default for D=64), 48.0 KiB shared memory per CTA
// REMARK-NEXT: per (batch, head): 8 query blocks, 72 of 128 key blocks visited (56.2%), 16 with an element mask
// REMARK-NEXT: partition: none
func.func @causal_square(%q: tensor<1x8x1024x64xf16>, %o: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  // expected-remark @+1 {{attention B=1 Hq=8}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>)
      outs(%o : tensor<1x8x1024x64xf16>) {causal} -> tensor<1x8x1024x64xf16>
  return %r : tensor<1x8x1024x64xf16>
}

// -----

// Causal decode with Sq < Sk is bottom-right aligned: the single query block
// sees every key block and none needs a mask. GQA packing puts the 4 query
// heads of each key/value head into one query block. The pinned partition is
// named, and its kernel's tiles are split-KV's, as attn-select-schedule
// pins them.
// REMARK: remark: attention B=4 Hq=32 Hkv=8 (GQA 4:1) Sq=1 Sk=4096 D=128 Dv=128 bf16 causal +lse
// REMARK: tiles: #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4> (FlashAttention-2's split-KV default for D=128)
// REMARK-NEXT: per (batch, 4 packed heads): 1 query blocks, 64 of 64 key blocks visited (100.0%), 0 with an element mask
// REMARK-NEXT: partition: #attn.split_kv<splits = 8>
func.func @decode(%q: tensor<4x32x1x128xbf16>, %k: tensor<4x8x4096x128xbf16>, %o: tensor<4x32x1x128xbf16>,
                  %l: tensor<4x32x1xf32>) -> tensor<4x32x1x128xbf16> {
  // expected-remark @+1 {{GQA 4:1}}
  %r:2 = attn.attention ins(%q, %k, %k : tensor<4x32x1x128xbf16>, tensor<4x8x4096x128xbf16>, tensor<4x8x4096x128xbf16>)
      outs(%o, %l : tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>) {causal, partition = #attn.split_kv<splits = 8>}
      -> tensor<4x32x1x128xbf16>, tensor<4x32x1xf32>
  return %r#0 : tensor<4x32x1x128xbf16>
}

// -----

// A sliding window visits a band of blocks. With a target the plan reports
// the tiles attn-select-schedule pins: the first of FlashAttention-2's tilings
// for D=256 whose CTA fits sm_80's shared memory and registers.
// REMARK: remark: attention B=1 Hq=2 Hkv=1 (MQA) Sq=4096 Sk=4096 D=256 Dv=256 bf16 window=[256, 0]
// REMARK: tiles: #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 1> (FlashAttention-2's default for D=256 on sm_80), 128.0 KiB shared memory per CTA
// REMARK-NEXT: CTA body: FlashAttention-2's loop on mma.sync{{$}}
// REMARK-NEXT: per (batch, head): 32 query blocks, 186 of 2048 key blocks visited (9.1%), 124 with an element mask
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @window(%q: tensor<1x2x4096x256xbf16>, %k: tensor<1x1x4096x256xbf16>, %o: tensor<1x2x4096x256xbf16>) -> tensor<1x2x4096x256xbf16> {
    // expected-remark @+1 {{MQA}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x2x4096x256xbf16>, tensor<1x1x4096x256xbf16>, tensor<1x1x4096x256xbf16>)
        outs(%o : tensor<1x2x4096x256xbf16>) {window = array<i64: 256, 0>} -> tensor<1x2x4096x256xbf16>
    return %r : tensor<1x2x4096x256xbf16>
  }
}

// -----

// A pinned tiling that does not fit the target is reported as such, and
// why its products are not wgmma's.
// REMARK: tiles: #attn.fa2<block_m = 256, block_n = 128, warps = 8, stages = 3> (pinned), 256.0 KiB shared memory per CTA, more than the 232448 bytes a block may use on sm_90a
// REMARK-NEXT: CTA body: FlashAttention-2's loop on mma.sync (wgmma needs warps in warpgroups of 4, each warp owning 16 rows (block_m = 16 x warps); the tiles are 256 x 128 with 8 warps)
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @pinned(%q: tensor<1x1x512x128xf16>, %o: tensor<1x1x512x128xf16>) -> tensor<1x1x512x128xf16> {
    // expected-remark @+1 {{pinned}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x1x512x128xf16>, tensor<1x1x512x128xf16>, tensor<1x1x512x128xf16>)
        outs(%o : tensor<1x1x512x128xf16>) {tiles = #attn.fa2<block_m = 256, block_n = 128, warps = 8, stages = 3>}
        -> tensor<1x1x512x128xf16>
    return %r : tensor<1x1x512x128xf16>
  }
}

// -----

// Lengths taken at run time: the tiles and the partition are still the
// compiler's. The 128 x 128 tiles' two consumer warpgroups get a producer
// warpgroup and its registers and take turns at the products; the split-KV
// kernel's one consumer warpgroup keeps two CTAs an SM. A decode step for any batch and cache length gets
// FlashAttention-2's rule for B = 1 and a cache too long to bound S (8
// packed output tiles: S = 29 fills 232 of 264 slots, 88%); a run-time Sq
// leaves the grid over query blocks unknown: no partition.
// REMARK: remark: attention B=? Hq=32 Hkv=8 (GQA 4:1) Sq=1 Sk=? D=128 Dv=128 bf16
// REMARK-NEXT: work: counted at launch from the lengths (one kernel for every B, Sq and Sk marked ?)
// REMARK-NEXT: tiles: #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2, packed_heads = 4> (FlashAttention-2's default for D=128 on sm_90a), 160.0 KiB shared memory per CTA
// REMARK-NEXT: CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages, issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 240 a consumer's, 1 CTA(s) an SM), its two consumer warpgroups taking turns at the products, Q by cp.async (GQA packing interleaves 4 heads in the tile's rows), O by every lane's 16-byte stores (GQA packing interleaves 4 heads in the tile's rows){{$}}
// REMARK-NEXT: partition: none; attn-to-ptx splits it (FlashAttention-2's rule, split-KV by default): #attn.split_kv<splits = 29> over #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>; its CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages, issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 232 a consumer's, 2 CTA(s) an SM), Q by cp.async (GQA packing interleaves 4 heads in the tile's rows), O by every lane's 16-byte stores (GQA packing interleaves 4 heads in the tile's rows){{$}}
// REMARK: remark: attention B=1 Hq=8 Hkv=8 (MHA) Sq=? Sk=? D=64 Dv=64 f16
// REMARK-NEXT: work: counted at launch
// REMARK-NEXT: tiles: #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2> (FlashAttention-2's default for D=64 on sm_90a)
// REMARK-NEXT: CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages, issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 240 a consumer's, 1 CTA(s) an SM), its two consumer warpgroups taking turns at the products, Q by a tensor copy, O by tensor stores{{$}}
// REMARK-NEXT: partition: none{{$}}
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @decode(%q: tensor<?x32x1x128xbf16>, %kv: tensor<?x8x?x128xbf16>, %o: tensor<?x32x1x128xbf16>) -> tensor<?x32x1x128xbf16> {
    // expected-remark @+1 {{Sq=1 Sk=?}}
    %r = attn.attention ins(%q, %kv, %kv : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
        outs(%o : tensor<?x32x1x128xbf16>) -> tensor<?x32x1x128xbf16>
    return %r : tensor<?x32x1x128xbf16>
  }
  func.func @dynamic(%q: tensor<1x8x?x64xf16>, %o: tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16> {
    // expected-remark @+1 {{Sq=? Sk=?}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>)
        outs(%o : tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16>
    return %r : tensor<1x8x?x64xf16>
  }
}

// -----

// Per-sequence key lengths take tensor copies too. In the overlapped loop
// the consumers zero V's keys past each sequence's length before the last
// P V, so the producer keeps 24 registers: at D = 128 on 128 x 128 tiles
// the two consumer warpgroups get the 240 the overlap needs.
// REMARK: remark: attention B=4 Hq=8 Hkv=8 (MHA) Sq=64 Sk=1024 D=64 Dv=64 f16 key-lengths
// REMARK: CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages (V's keys past a sequence's length zeroed in shared memory by the consumers before the last P V), issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 240 a consumer's, 1 CTA(s) an SM), its two consumer warpgroups taking turns at the products, Q by a tensor copy, O by tensor stores
// REMARK: remark: attention B=4 Hq=8 Hkv=8 (MHA) Sq=128 Sk=1024 D=128 Dv=128 bf16 key-lengths
// REMARK: CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages (V's keys past a sequence's length zeroed in shared memory by the consumers before the last P V), issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 240 a consumer's, 1 CTA(s) an SM), its two consumer warpgroups taking turns at the products, Q by a tensor copy, O by tensor stores
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @ragged(%q: tensor<4x8x64x64xf16>, %k: tensor<4x8x1024x64xf16>, %lengths: tensor<4xi32>, %o: tensor<4x8x64x64xf16>) -> tensor<4x8x64x64xf16> {
    // expected-remark @+1 {{key-lengths}}
    %r = attn.attention ins(%q, %k, %k : tensor<4x8x64x64xf16>, tensor<4x8x1024x64xf16>, tensor<4x8x1024x64xf16>)
        key_lengths(%lengths : tensor<4xi32>)
        outs(%o : tensor<4x8x64x64xf16>) -> tensor<4x8x64x64xf16>
    return %r : tensor<4x8x64x64xf16>
  }
  func.func @ragged_d128(%q: tensor<4x8x128x128xbf16>, %k: tensor<4x8x1024x128xbf16>, %lengths: tensor<4xi32>, %o: tensor<4x8x128x128xbf16>) -> tensor<4x8x128x128xbf16> {
    // expected-remark @+1 {{key-lengths}}
    %r = attn.attention ins(%q, %k, %k : tensor<4x8x128x128xbf16>, tensor<4x8x1024x128xbf16>, tensor<4x8x1024x128xbf16>)
        key_lengths(%lengths : tensor<4xi32>)
        outs(%o : tensor<4x8x128x128xbf16>) -> tensor<4x8x128x128xbf16>
    return %r : tensor<4x8x128x128xbf16>
  }
}

// -----

// REMARK: remark: attention B=1 Hq=1 Hkv=1 (MHA) Sq=16 Sk=16 D=512 Dv=512 f32
// REMARK-NEXT: work
// REMARK-NEXT: tiles: no default tiling for this head dimension (above 256 or dynamic): pin one with the tiles attribute or the block-m/block-n options
func.func @huge_head(%q: tensor<1x1x16x512xf32>, %o: tensor<1x1x16x512xf32>) -> tensor<1x1x16x512xf32> {
  // expected-remark @+1 {{D=512}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>)
      outs(%o : tensor<1x1x16x512xf32>) {scale = 0.5 : f32} -> tensor<1x1x16x512xf32>
  return %r : tensor<1x1x16x512xf32>
}

// -----

// A distributed attention: its shards and the bytes every rank sends (2x3
// grid, S = 1000 in shards of 167 tokens, MHA bf16: 2 x 85504 (Q) +
// 1 x 171008 (K, V) + 2 x 173680 (f32 O and LSE) = 689376 bytes).
// REMARK: partition: #attn.attention2d<q_parts = 2, kv_parts = 3>
// REMARK-NEXT: distribution: 6 ranks, shards of 167 query and 167 key/value tokens, 673.2 KiB sent by every rank
func.func @distributed(%q: tensor<1x4x1000x64xbf16>, %o: tensor<1x4x1000x64xbf16>) -> tensor<1x4x1000x64xbf16> {
  // expected-remark @+1 {{MHA}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x4x1000x64xbf16>, tensor<1x4x1000x64xbf16>, tensor<1x4x1000x64xbf16>)
      outs(%o : tensor<1x4x1000x64xbf16>) {causal, partition = #attn.attention2d<q_parts = 2, kv_parts = 3>}
      -> tensor<1x4x1000x64xbf16>
  return %r : tensor<1x4x1000x64xbf16>
}

// -----

// Per-sequence key lengths: the counts are those of a full cache.
// REMARK: remark: attention B=3 Hq=2 Hkv=2 (MHA) Sq=1 Sk=100 D=16 Dv=16 f32 key-lengths
// REMARK: 4 of 4 key blocks visited (100.0%), 0 with an element mask (for a full cache of Sk keys; each sequence visits the blocks of its own key length)
func.func @key_lengths(%q: tensor<3x2x1x16xf32>, %k: tensor<3x2x100x16xf32>, %lengths: tensor<3xi32>,
                       %o: tensor<3x2x1x16xf32>) -> tensor<3x2x1x16xf32> {
  // expected-remark @+1 {{key-lengths}}
  %r = attn.attention ins(%q, %k, %k : tensor<3x2x1x16xf32>, tensor<3x2x100x16xf32>, tensor<3x2x100x16xf32>)
      key_lengths(%lengths : tensor<3xi32>) outs(%o : tensor<3x2x1x16xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 1>} -> tensor<3x2x1x16xf32>
  return %r : tensor<3x2x1x16xf32>
}

// -----

// A block mask keeps the wgmma body's loop sequential (softmaxOverlapUnfit).
// REMARK: remark: attention B=1 Hq=2 Hkv=2 (MHA) Sq=256 Sk=256 D=64 Dv=64 bf16
// REMARK: CTA body: FlashAttention-2's loop on wgmma, K and V by tensor copies into mbarrier-guarded stages, issued by a producer warpgroup (setmaxnreg: 24 registers a producer thread, 240 a consumer's, 1 CTA(s) an SM), Q by a tensor copy, O by tensor stores (softmax not overlapped: a block mask's branches around and inside a step would make ptxas serialise the products)
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @block_mask(%q: tensor<1x2x256x64xbf16>, %bm: tensor<1x2x2x2xi8>, %o: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
    // expected-remark @+1 {{MHA}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>)
        block_mask(%bm : tensor<1x2x2x2xi8> blocks [128, 128])
        outs(%o : tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16>
    return %r : tensor<1x2x256x64xbf16>
  }
}

// -----

// A target whose blocks hold the tiles, the full mbarriers and Q's but not
// the empty ones: thread 0 issues the copies.
// REMARK: remark: attention B=1 Hq=8 Hkv=8 (MHA) Sq=64 Sk=256 D=64 Dv=64 f16
// REMARK: CTA body: FlashAttention-3's overlapped loop (softmax beside P V) on wgmma, K and V by tensor copies into mbarrier-guarded stages, issued by thread 0 (no warp roles: the stages' empty mbarriers do not fit the shared memory the tiles leave), Q by a tensor copy, O by tensor stores{{$}}
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 40984, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @tight(%q: tensor<1x8x64x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x64x64xf16>) -> tensor<1x8x64x64xf16> {
    // expected-remark @+1 {{Sq=64 Sk=256}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x64x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x64x64xf16>
    return %r : tensor<1x8x64x64xf16>
  }
}
