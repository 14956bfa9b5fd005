//===- Fa2ResourcesTest.cpp - CTA resources, fit and split-KV choice ------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/Fa2Resources.h"

#include "gtest/gtest.h"

using namespace mlir::attn;

namespace {

// The limits of #attn.target for the GPUs the lit tests use.
const GpuLimits a100{108, 166912, 167936, 65536, 255}; // sm_80
const GpuLimits rtx{84, 101376, 102400, 65536, 255};   // sm_86
const GpuLimits h100{132, 232448, 233472, 65536, 255}; // sm_90a

TEST(Fa2Resources, OneCta) {
  // D = 64, 128 x 128, 4 warps, two stages: Q 128 x 64 and two K and V
  // tiles of 128 x 64 in 16 bits; (128 * 64 + 128 * 128) / 128 f32
  // accumulators a thread, 128 * 128 / 2 / 128 registers of P, plus 64 and
  // 8 for each of a warp's two m16 row tiles.
  Fa2Resources r = fa2Resources({128, 128, 4, 2}, 64, 64, 2);
  EXPECT_EQ(r.threads, 128);
  EXPECT_EQ(r.sharedBytes, (128 * 64 + 2 * 128 * 128) * 2);
  EXPECT_EQ(r.registersPerThread, 64 + 128 + 64 + 64 + 16);
  // 8 warps halve a thread's share.
  r = fa2Resources({128, 128, 8, 2}, 128, 128, 2);
  EXPECT_EQ(r.threads, 256);
  EXPECT_EQ(r.sharedBytes, 163840);
  EXPECT_EQ(r.registersPerThread, 64 + 64 + 32 + 64 + 8);
  // f32 operands count 4 bytes.
  EXPECT_EQ(fa2Resources({128, 32, 4, 1}, 128, 128, 4).sharedBytes,
            (128 * 128 + 32 * 256) * 4);
}

TEST(Fa2Resources, AllowedRegistersPerThread) {
  // 128 threads could have 512 of the SM's 65536: regs_per_thread decides.
  EXPECT_EQ(allowedRegistersPerThread(128, h100), 255);
  EXPECT_EQ(allowedRegistersPerThread(256, h100), 255);
  // 16 warps: 65536 / 512.
  EXPECT_EQ(allowedRegistersPerThread(512, h100), 128);
  // Rounded down to the allocation unit: 60000 / 256 = 234.4 -> 232.
  GpuLimits small = h100;
  small.regsPerSm = 60000;
  EXPECT_EQ(allowedRegistersPerThread(256, small), 232);
}

TEST(Fa2Resources, CtasPerSm) {
  // D = 64, 128 x 64, 4 warps, two stages on an H100: 48 KiB (4 by shared
  // memory), 240 registers x 128 threads (2 by registers), 16 by threads.
  EXPECT_EQ(fa2CtasPerSm(fa2Resources({128, 64, 4, 2}, 64, 64, 2), h100), 2);
  // D = 128, 128 x 128, 8 warps: 160 KiB and 232 x 256 registers: one.
  EXPECT_EQ(fa2CtasPerSm(fa2Resources({128, 128, 8, 2}, 128, 128, 2), h100), 1);
  // D = 256, 128 x 64, 8 warps, one stage on an A100: 128 KiB, 248 x 256.
  EXPECT_EQ(fa2CtasPerSm(fa2Resources({128, 64, 8, 1}, 256, 256, 2), a100), 1);
  // D = 64, 64 x 64, 4 warps, one stage: 24 KiB (9 by shared memory with the
  // 1 KiB reserved each), 152 registers x 128 threads (3 by registers).
  EXPECT_EQ(fa2CtasPerSm(fa2Resources({64, 64, 4, 1}, 64, 64, 2), h100), 3);
  // Registers are allocated 8 a thread: 73 counts as 80, 65536 / (80 x 32)
  // = 25 (not 28).
  EXPECT_EQ(fa2CtasPerSm({32, 1000, 73}, h100), 25);
  // Tiny CTAs: 32 per SM at most.
  EXPECT_EQ(fa2CtasPerSm({32, 0, 16}, h100), 32);
  // Threads: 2048 / 512 = 4.
  EXPECT_EQ(fa2CtasPerSm({512, 0, 16}, h100), 4);
  // Nothing fits: too many registers a thread, too much shared memory.
  EXPECT_EQ(fa2CtasPerSm(fa2Resources({128, 128, 4, 2}, 64, 64, 2), h100), 0);
  EXPECT_EQ(fa2CtasPerSm({128, 232449, 64}, h100), 0);
}

TEST(Fa2Resources, Misfit) {
  using Limit = Fa2Misfit::Limit;
  std::optional<Fa2Misfit> misfit =
      findFa2Misfit(fa2Resources({128, 128, 8, 2}, 256, 256, 2), a100);
  ASSERT_TRUE(misfit);
  EXPECT_EQ(misfit->limit, Limit::SharedMemoryPerBlock);
  EXPECT_EQ(misfit->needed, 327680);
  EXPECT_EQ(misfit->allowed, 166912);

  misfit = findFa2Misfit(fa2Resources({128, 128, 4, 2}, 64, 64, 2), h100);
  ASSERT_TRUE(misfit);
  EXPECT_EQ(misfit->limit, Limit::RegistersPerThread);
  EXPECT_EQ(misfit->needed, 336);
  EXPECT_EQ(misfit->allowed, 255);

  // 16 warps of 192 registers each need 98304 > 65536 of the SM.
  misfit = findFa2Misfit({512, 1024, 192}, h100);
  ASSERT_TRUE(misfit);
  EXPECT_EQ(misfit->limit, Limit::RegistersPerThread);
  EXPECT_EQ(misfit->allowed, 128);

  // Within the block's limit but not, with the reserved 1 KiB, the SM's.
  GpuLimits tight = a100;
  tight.smemPerSm = 164000;
  misfit = findFa2Misfit(fa2Resources({128, 128, 8, 2}, 128, 128, 2), tight);
  ASSERT_TRUE(misfit);
  EXPECT_EQ(misfit->limit, Limit::SharedMemoryPerSm);
  EXPECT_EQ(misfit->needed, 163840 + 1024);
  EXPECT_EQ(misfit->allowed, 164000);

  EXPECT_FALSE(findFa2Misfit(fa2Resources({128, 64, 4, 2}, 64, 64, 2), a100));
}

TEST(Fa2Resources, FitsExactlyWhenOneCtaDoes) {
  for (const GpuLimits &limits : {a100, rtx, h100})
    for (int64_t d : {32, 64, 96, 128, 192, 256})
      for (const Fa2Tiling &candidate : fa2Candidates(d))
        for (int64_t stages : {1, 2, 3})
          for (int64_t bytes : {2, 4}) {
            Fa2Tiling tiling = candidate;
            tiling.stages = stages;
            Fa2Resources r = fa2Resources(tiling, d, d, bytes);
            EXPECT_EQ(!findFa2Misfit(r, limits), fa2CtasPerSm(r, limits) >= 1)
                << "D=" << d << " " << tiling.blockM << "x" << tiling.blockN
                << " stages " << stages << " bytes " << bytes;
          }
}

TEST(Fa2Resources, SelectedTilesPerTarget) {
  // sm_80 (A100, 163 KiB a block). D = 32 and 64: 128 x 128 needs 304 and
  // 336 registers. D = 80 to 128: 128 x 64 with 4 warps needs 256 to 304
  // registers; 128 x 128 with 8 fits (in 160 KiB for D = 128). D = 256:
  // 128 x 64 with 8 warps needs 192 KiB with two stages, 128 KiB with one.
  EXPECT_EQ(selectFa2Tiling(32, 32, 2, a100), (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(selectFa2Tiling(64, 64, 2, a100), (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(selectFa2Tiling(80, 80, 2, a100), (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(selectFa2Tiling(96, 96, 2, a100), (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(selectFa2Tiling(128, 128, 2, a100), (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(selectFa2Tiling(256, 256, 2, a100), (Fa2Tiling{128, 64, 8, 1}));
  // sm_86 (99 KiB): D = 128 with one stage (96 KiB); D = 256 falls back to
  // 64 x 64 with one stage (96 KiB).
  EXPECT_EQ(selectFa2Tiling(64, 64, 2, rtx), (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(selectFa2Tiling(128, 128, 2, rtx), (Fa2Tiling{128, 128, 8, 1}));
  EXPECT_EQ(selectFa2Tiling(256, 256, 2, rtx), (Fa2Tiling{64, 64, 4, 1}));
  // sm_90a (227 KiB): two stages up to D = 128; D = 256 has one stage in
  // the table (two spill).
  EXPECT_EQ(selectFa2Tiling(64, 64, 2, h100), (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(selectFa2Tiling(128, 128, 2, h100), (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(selectFa2Tiling(256, 256, 2, h100), (Fa2Tiling{128, 64, 8, 1}));
  // f32 D = 128 on sm_86: 128 x 32 needs 256 registers; 64 x 64 with one
  // stage fits (96 KiB).
  EXPECT_EQ(selectFa2Tiling(128, 128, 4, rtx), (Fa2Tiling{64, 64, 4, 1}));
}

TEST(Fa2Resources, ScoreModificationCostsRegisters) {
  // A softcap or score region adds kScoreModificationRegisters (12): on
  // sm_80 and sm_90a D = 64 and 128 keep their tiles (252 and 244
  // estimated), D = 256 falls past 128 x 64 and 64 x 64 (260) to 64 x 32
  // (236), the tilings ptxas compiles without spills
  // (ptxas-score-mods.mlir).
  EXPECT_EQ(fa2RegistersPerThread({128, 64, 4, 2}, 64, {true}),
            fa2RegistersPerThread({128, 64, 4, 2}, 64) +
                kScoreModificationRegisters);
  for (const GpuLimits &limits : {a100, h100}) {
    auto select = [&](int64_t d) {
      return selectFa2Tiling(d, d, 2, limits, nullptr, {true});
    };
    EXPECT_EQ(select(64), (Fa2Tiling{128, 64, 4, 2}));
    EXPECT_EQ(select(128), (Fa2Tiling{128, 128, 8, 2}));
    EXPECT_EQ(select(256), (Fa2Tiling{64, 32, 4, 1}));
  }
  // Without a target the default keeps within 255 registers too.
  EXPECT_EQ(defaultFa2Tiling(64, 64, 2, std::nullopt, {true}),
            (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, std::nullopt, {true}),
            (Fa2Tiling{64, 32, 4, 1}));
}

TEST(Fa2Resources, NothingSelected) {
  std::optional<Fa2Misfit> last;
  GpuLimits small = a100;
  small.smemPerBlock = 49152;
  EXPECT_EQ(selectFa2Tiling(256, 256, 2, small, &last), std::nullopt);
  ASSERT_TRUE(last);
  // The last candidate tried: 64 x 32, one stage.
  EXPECT_EQ(last->limit, Fa2Misfit::Limit::SharedMemoryPerBlock);
  EXPECT_EQ(last->needed, 65536);
  // Beyond the table: no candidate, no misfit.
  EXPECT_EQ(selectFa2Tiling(512, 512, 2, h100, &last), std::nullopt);
  EXPECT_FALSE(last);
}

TEST(Fa2Resources, SplitKvEnoughCtas) {
  // 0.8 x 216 = 172.8: 173 CTAs fill the GPU, 172 do not (S = 5 gives
  // 860 / 216 = 3.98 waves, 99.5%; S = 1 to 4 stay at 79.6%).
  EXPECT_EQ(fa2SplitKvSplits(173, 216, 100), 1);
  EXPECT_EQ(fa2SplitKvSplits(172, 216, 100), 5);
  EXPECT_EQ(fa2SplitKvSplits(4096, 264, 64), 1);
}

TEST(Fa2Resources, SplitKvDecode) {
  // sm_80 (2 x 108 = 216 slots), B = 2, H = 8, one query block, 32 KV
  // blocks. Eligible S (each gives fewer blocks a split than S - 1): 1-8,
  // 11, 16, 32. Efficiencies 16 S / 216 over whole waves: S = 8: 59%;
  // S = 11: 176 / 216 = 81% (the best); S = 16: 256 / 432 = 59%; S = 32:
  // 512 / 648 = 79%. 85% of 81% is 69%: S = 11. (Counting S = 12 .. 15,
  // which leave a split empty, S = 27 would be best at 100% and S = 12 the
  // answer.)
  EXPECT_EQ(fa2SplitKvSplits(16, 216, 32), 11);
  // sm_90a (264 slots), B = 1, Hq = 32, one query block, 64 KV blocks:
  // S = 8 gives 256 / 264 = 97% (the best); S = 7 gives 224 / 264 = 84.8%
  // >= 0.85 x 97% = 82.4%; S = 6 gives 72.7%.
  EXPECT_EQ(fa2SplitKvSplits(32, 264, 64), 7);
  // 64 CTAs on 216 slots, 32 blocks: S = 3 gives 192 / 216 = 89% >= 0.85 x
  // 94.8% (S = 16 or 32).
  EXPECT_EQ(fa2SplitKvSplits(64, 216, 32), 3);
  // 3 CTAs on 10 slots, 7 KV blocks (eligible S: 1, 2, 3, 4, 7): 30%, 60%,
  // 90%, 60%, 70%; the best, S = 3, is also the first above 85% of it.
  EXPECT_EQ(fa2SplitKvSplits(3, 10, 7), 3);
}

TEST(Fa2Resources, SplitKvCaps) {
  // No more splits than KV blocks.
  EXPECT_EQ(fa2SplitKvSplits(8, 216, 1), 1);
  EXPECT_EQ(fa2SplitKvSplits(8, 264, 8), 8);
  // No more than the slots: 1 CTA on 4 slots.
  EXPECT_EQ(fa2SplitKvSplits(1, 4, 1000), 4);
  // No more than 128: 1 CTA on 264 slots with 1000 blocks. The best
  // eligible S <= 128 is 125 (47.3%); 85% of it needs S >= 107, and the
  // first eligible from there is 112 (ceil(1000/112) = 9, ceil(1000/111)
  // = 10).
  EXPECT_EQ(fa2SplitKvSplits(1, 264, 1000), 112);
  // A run-time Sk (std::nullopt) bounds S by 128 and the slots only, and
  // skips no S: 8 CTAs on 264 slots, S = 33 fills them, S = 29 is the first
  // within 85% (232 / 264); 16 CTAs on 216 slots: S = 27 fills whole waves,
  // S = 12 gives 89% (S = 11: 81%); enough CTAs still keep one split.
  EXPECT_EQ(fa2SplitKvSplits(8, 264, std::nullopt), 29);
  EXPECT_EQ(fa2SplitKvSplits(16, 216, std::nullopt), 12);
  EXPECT_EQ(fa2SplitKvSplits(1, 264, std::nullopt), 109);
  EXPECT_EQ(fa2SplitKvSplits(300, 264, std::nullopt), 1);
  // Degenerate sizes keep one split.
  EXPECT_EQ(fa2SplitKvSplits(0, 264, 10), 1);
  EXPECT_EQ(fa2SplitKvSplits(4, 264, 0), 1);
}

TEST(Fa2Resources, LeanCtasCountAMaskThatHidesKeys) {
  // D = 64 over 64 x 64 tiles, 4 warps: 152 registers, 3 CTAs per SM; a
  // Lean kernel whose mask hides keys needs 24 more, 2 per SM. One causal
  // query hides nothing.
  AttentionProblem p;
  p.queryLen = 4;
  p.keyLen = 4096;
  p.headDim = p.valueDim = 64;
  Fa2Tiling tiles{64, 64, 4, 2};
  EXPECT_EQ(leanCtasPerSm(p, tiles, 2, {}, h100), 3);
  p.causal = true;
  EXPECT_EQ(leanCtasPerSm(p, tiles, 2, {}, h100), 2);
  p.queryLen = 1;
  EXPECT_EQ(leanCtasPerSm(p, tiles, 2, {}, h100), 3);
  p.causal = false;
  p.window = std::make_pair(int64_t(256), int64_t(0));
  EXPECT_EQ(leanCtasPerSm(p, tiles, 2, {}, h100), 2);
}

TEST(Fa2Resources, LeanCtaCount) {
  // Many LeanTiles: every resident CTA (132 SMs x 1).
  EXPECT_EQ(leanCtaCount(2048, 132, 132), 132);
  // At most 4 per SM: about two LeanTiles a CTA.
  EXPECT_EQ(leanCtaCount(40, 324, 108), 20);
  EXPECT_EQ(leanCtaCount(41, 324, 108), 21);
  // Never more CTAs than residency allows, nor fewer than one.
  EXPECT_EQ(leanCtaCount(400, 100, 108), 100);
  EXPECT_EQ(leanCtaCount(1, 132, 132), 1);
  EXPECT_EQ(leanCtaCount(0, 132, 132), 1);
}

} // namespace

TEST(Fa2Resources, TheWgmmaBodyPlanKeepsTheCtasAnSmAndTheOverlap) {
  // 128 x 128 at D = 128: the overlap needs 248 with tensor copies, 240
  // with warp roles, what two consumer warpgroups have at one CTA an SM.
  Fa2Tiling wide{128, 128, 8, 2};
  WgmmaKernel prefill{wide, 128, 128, ScoreWork{},
                      fa2SharedMemoryBytes(wide, 128, 128, 2)};
  WgmmaBodyPlan plan = planWgmmaBody(prefill, h100);
  EXPECT_TRUE(plan.tensorCopies());
  EXPECT_TRUE(plan.warpRoles());
  EXPECT_EQ(plan.ctasPerSm, 1);
  EXPECT_EQ(plan.roleRegisters.entry, 168);
  EXPECT_EQ(plan.consumerRegisters, 240);
  EXPECT_TRUE(plan.overlap());
  EXPECT_TRUE(plan.pingPong());
  // Q by a tensor copy, O by tensor stores; with GQA packing neither.
  EXPECT_TRUE(plan.queryTensorCopy());
  EXPECT_TRUE(plan.outputTensorStore());
  WgmmaKernel packed = prefill;
  packed.tiling.packedHeads = 4;
  plan = planWgmmaBody(packed, h100);
  EXPECT_EQ(plan.noQueryTensorCopy,
            "GQA packing interleaves 4 heads in the tile's rows");
  EXPECT_EQ(plan.noOutputTensorStore, plan.noQueryTensorCopy);
  // A score region's 24 more (128 x 128 at D = 64): its overlap needs 244
  // with warp roles, more than their 240, and 252 without, which a thread
  // has: thread 0 issues the copies and the overlap stays.
  WgmmaKernel region = prefill;
  region.valueDim = region.headDim = 64;
  region.tileBytes = fa2SharedMemoryBytes(wide, 64, 64, 2);
  region.work = ScoreWork{/*modifies=*/true, /*readsMask=*/false,
                          /*region=*/true};
  plan = planWgmmaBody(region, h100);
  EXPECT_EQ(plan.noWarpRoles, "the producer warpgroup's threads leave a "
                              "consumer fewer than the 244 registers it "
                              "needs at 1 CTA an SM");
  EXPECT_TRUE(plan.overlap());
  EXPECT_EQ(plan.noPingPong, "no warp roles");
  // One consumer warpgroup (64 x 64 at D = 64, 40 KiB): two CTAs an SM,
  // 128 registers at entry and 216 a consumer. Without warp roles the
  // estimate puts its 128 threads at three: at three, warp roles would
  // leave a consumer fewer registers than the overlap needs.
  Fa2Tiling narrow{64, 64, 4, 2};
  WgmmaKernel decode{narrow, 64, 64, ScoreWork{},
                     fa2SharedMemoryBytes(narrow, 64, 64, 2)};
  decode.splitsKv = true;
  plan = planWgmmaBody(decode, h100);
  EXPECT_TRUE(plan.warpRoles());
  EXPECT_EQ(plan.ctasPerSm, 2);
  Fa2Resources alone =
      fa2Resources(narrow, 64, 64, 2, ScoreWork{}, /*kernelSplitsKv=*/true);
  EXPECT_EQ(alone.registersPerThread, 152);
  EXPECT_EQ(fa2CtasPerSm(alone, h100), 3);
  EXPECT_TRUE(plan.roleRegisters.reallocates());
  EXPECT_EQ(plan.noPingPong, "one consumer warpgroup");
  // A persistent kernel alone on an SM keeps every register; one that
  // must share an SM keeps thread 0 issuing, and the CTAs share the
  // registers as before.
  decode.persistentCtasPerSm = 1;
  plan = planWgmmaBody(decode, h100);
  EXPECT_TRUE(plan.warpRoles());
  EXPECT_EQ(plan.ctasPerSm, 1);
  EXPECT_FALSE(plan.roleRegisters.reallocates());
  // Its CTAs load each tile's Q by a tensor copy too, on an mbarrier
  // initialised for each tile.
  EXPECT_TRUE(plan.queryTensorCopy());
  EXPECT_TRUE(plan.outputTensorStore());
  decode.persistentCtasPerSm = 2;
  plan = planWgmmaBody(decode, h100);
  EXPECT_EQ(plan.noWarpRoles, "a persistent kernel with 2 CTAs an SM");
  EXPECT_EQ(plan.consumerRegisters, allowedRegistersPerThread(2 * 128, h100));
  // D = 256 on 64 x 32, alone on an SM: two CTAs would leave 128
  // registers at entry, and its P V (m64n256k16) needs 160; no
  // reallocation.
  Fa2Tiling deep{64, 32, 4, 1};
  WgmmaKernel wide256{deep, 256, 256, ScoreWork{},
                      fa2SharedMemoryBytes(deep, 256, 256, 2)};
  EXPECT_EQ(wgmmaEntryRegisters(deep, 256), 160);
  plan = planWgmmaBody(wide256, h100);
  EXPECT_TRUE(plan.warpRoles());
  EXPECT_FALSE(plan.roleRegisters.reallocates());
  // Key lengths: tensor copies all the same. In the overlapped loop the
  // consumers zero V's keys past a sequence's end, so the producer keeps
  // 24 registers and the two consumer warpgroups the 240 the overlap
  // needs.
  WgmmaKernel ragged = prefill;
  ragged.keyLengths = true;
  plan = planWgmmaBody(ragged, h100);
  EXPECT_TRUE(plan.tensorCopies());
  EXPECT_EQ(plan.noQueryTensorCopy, "");
  EXPECT_TRUE(plan.warpRoles());
  EXPECT_EQ(plan.roleRegisters.producer, 24);
  EXPECT_EQ(plan.roleRegisters.consumer, 240);
  EXPECT_TRUE(plan.overlap());
  // A block mask keeps the sequential loop, where the producer zeroes K's
  // and V's keys past the end itself: 40 registers, 232 left to the
  // consumers, which the sequential loop's estimate fits.
  ragged.blockMask = true;
  plan = planWgmmaBody(ragged, h100);
  EXPECT_FALSE(plan.overlap());
  EXPECT_TRUE(plan.warpRoles());
  EXPECT_EQ(plan.roleRegisters.producer, 40);
  EXPECT_EQ(plan.roleRegisters.consumer, 232);
}
