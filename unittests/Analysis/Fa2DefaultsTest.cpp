//===- Fa2DefaultsTest.cpp - FlashAttention-2's default tiling -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/MatrixUnit.h"

#include "gtest/gtest.h"

using namespace mlir::attn;
using llvm::SmallVector;

namespace {

TEST(Fa2Defaults, TableByHeadDimension) {
  // The first of the row that fits 255 registers a thread: FlashAttention-2's
  // 128 x 128 (D <= 64) and 128 x 64 (D <= 128) with 4 warps need more (336
  // and 304 estimated; ptxas 13.0 spilled both, causal, sm_80 and sm_90a).
  EXPECT_EQ(defaultFa2Tiling(32, 32, 2, std::nullopt),
            (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(64, 64, 2, std::nullopt),
            (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(80, 80, 2, std::nullopt),
            (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(defaultFa2Tiling(128, 128, 2, std::nullopt),
            (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, std::nullopt),
            (Fa2Tiling{128, 64, 8, 1}));
  // The wider of D and Dv picks the row.
  EXPECT_EQ(defaultFa2Tiling(64, 128, 2, std::nullopt),
            (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(defaultFa2Tiling(512, 512, 2, std::nullopt), std::nullopt);
}

TEST(Fa2Defaults, SharedMemoryBytes) {
  // Q block 128x128 + 2 stages of K and V tiles 64x128, two bytes each.
  EXPECT_EQ(fa2SharedMemoryBytes({128, 64, 4, 2}, 128, 128, 2),
            (128 * 128 + 2 * 64 * 256) * 2);
  // Rows padded to 64 elements: D = 96 is stored as 128, D = 40 as 64.
  EXPECT_EQ(fa2SharedRowElements(96), 128);
  EXPECT_EQ(fa2SharedRowElements(40), 64);
  EXPECT_EQ(fa2SharedRowElements(192), 192);
  EXPECT_EQ(fa2SharedMemoryBytes({128, 64, 4, 2}, 96, 96, 2),
            fa2SharedMemoryBytes({128, 64, 4, 2}, 128, 128, 2));
  // D != Dv: the Q block also stages O, so it is as wide as the wider row;
  // K rows are D wide, V rows Dv.
  EXPECT_EQ(fa2SharedMemoryBytes({128, 64, 4, 2}, 64, 128, 2),
            (128 * 128 + 2 * 64 * (64 + 128)) * 2);
  EXPECT_EQ(fa2SharedMemoryBytes({64, 64, 4, 1}, 192, 128, 2),
            (64 * 192 + 64 * (192 + 128)) * 2);
}

TEST(Fa2Defaults, FallsBackWhenSharedMemoryIsShort) {
  // D=256 in bf16: 128x64 with 8 warps (one stage) needs 128 KiB, which an
  // A100 block may use (163 KiB) and an sm_86 block (99 KiB) may not, so the
  // 64x64 tiling (96 KiB) is chosen there.
  const int64_t a100 = 166912, h100 = 232448, rtx = 101376;
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, h100), (Fa2Tiling{128, 64, 8, 1}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, a100), (Fa2Tiling{128, 64, 8, 1}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, rtx), (Fa2Tiling{64, 64, 4, 1}));
  // f32 D=256: only the last, 64x32 (128 KiB), fits an A100 block.
  EXPECT_EQ(defaultFa2Tiling(256, 256, 4, a100), (Fa2Tiling{64, 32, 4, 1}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 4, rtx), std::nullopt);
  EXPECT_EQ(defaultFa2Tiling(64, 64, 2, 1024), std::nullopt);
}

} // namespace

TEST(Fa2Defaults, RegistersPerThreadCountTheAccumulators) {
  // D = 128, 128 x 64, 4 warps: O 128 x 128 and S 128 x 64 f32 over 128
  // threads = 128 + 64, P 128 x 64 16-bit = 32, plus 64 and 8 for each of a
  // warp's two m16 row tiles: above 255 (the kernel spills there).
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 4, 2}, 128), 304);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 32, 4, 2}, 128), 256);
  // D = 96 and 80 with the same tiles: 272 and 256, above what a thread has
  // (ptxas spills 24 to 44 bytes for D = 96, and for D = 80 with a window
  // on sm_90a); D = 64 fits (240).
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 4, 2}, 96), 272);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 4, 2}, 80), 256);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 4, 2}, 64), 240);
  // Dv counts in multiples of 16: D = 72 as 80 (ptxas took 255 registers
  // and spilled 4 bytes with 248 estimated).
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 4, 2}, 72), 256);
  // D = 256, 128 x 64, 8 warps (one row tile a warp):
  // (128 * 256 + 128 * 64) / 256 + 128 * 64 / 2 / 256 + 64 + 8.
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 8, 2}, 256), 248);
  // Stages do not change it; rounding is up (Dv = 1 counts as 16).
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{16, 16, 1, 1}, 1), 64 + 8 + 16 + 4);
}

// A split-KV kernel that modifies scores keeps one more register per score
// of its S tile (ptxas 13.0 spilled 64 x 128 at D = 40 with ALiBi, and
// 64 x 64 at D = 192, not 64 x 64 at D = 160 nor 64 x 32 at D = 256).
TEST(Fa2Defaults, SplitKernelsThatModifyScoresCountTheirScores) {
  auto splitRegion = [](Fa2Tiling tiling, int64_t d) {
    return fa2RegistersPerThread(tiling, d, ScoreWork{/*modifies=*/true},
                                 /*kernelSplitsKv=*/true);
  };
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{64, 128, 4, 2}, 40, {true}), 204);
  EXPECT_EQ(splitRegion(Fa2Tiling{64, 128, 4, 2}, 40), 268);
  EXPECT_EQ(splitRegion(Fa2Tiling{64, 64, 4, 1}, 160), 244);
  EXPECT_EQ(splitRegion(Fa2Tiling{64, 64, 4, 1}, 192), 260);
  EXPECT_EQ(splitRegion(Fa2Tiling{64, 32, 4, 1}, 256), 252);
  // Without a score modification the split kernel costs nothing more.
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{64, 128, 4, 2}, 40, {}, true), 192);
}

// A kernel that reads a mask operand holds one element per score of its S
// tile (ptxas 13.0 spilled 128 x 128 with 8 warps at D = 64 and 80, estimated
// 200 and 208 without the term, and 64 x 64 at D = 256; not 128 x 64 with 8
// warps at D = 192, 216 + 32).
TEST(Fa2Defaults, MaskOperandsCountTheirScores) {
  ScoreWork mask{/*modifies=*/false, /*readsMask=*/true};
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 128, 8, 2}, 64, mask), 264);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 128, 8, 2}, 80, mask), 272);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{64, 64, 4, 1}, 256, mask), 280);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 8, 1}, 192, mask), 248);
  // With a softcap too, both terms.
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 8, 1}, 192,
                                  ScoreWork{true, true}),
            248 + kScoreModificationRegisters);
  // The defaults leave room for them: 64 x 64 tiles at D = 128 instead of
  // 128 x 64 (368 with the term), 64 x 32 at D = 256.
  EXPECT_EQ(defaultFa2Tiling(128, 128, 2, std::nullopt, mask),
            (Fa2Tiling{64, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, std::nullopt, mask),
            (Fa2Tiling{64, 32, 4, 1}));
}

TEST(Fa2Defaults, TensorCopiesFreeRegistersForTheOverlap) {
  // 128 x 128 with 8 warps at D = 128: 232 registers, 32 more to hold the
  // previous block's P (264), less the 16 tensor copies leave (248).
  Fa2Tiling tiling{128, 128, 8, 2};
  EXPECT_EQ(fa2RegistersPerThread(tiling, 128, ScoreWork{}, false), 232);
  EXPECT_EQ(softmaxOverlapUnfit(tiling, 128, ScoreWork{}, /*blockMask=*/false,
                                /*kernelSplitsKv=*/false,
                                /*tensorCopies=*/true, /*warpRoles=*/false,
                                255),
            "");
  EXPECT_EQ(softmaxOverlapUnfit(tiling, 128, ScoreWork{}, false, false,
                                /*tensorCopies=*/false, false, 255),
            "holding the previous block's P needs about 264 registers a "
            "thread, more than 255");
  // A score modification's 12 (the ALiBi region spilled with the overlap).
  EXPECT_NE(softmaxOverlapUnfit(tiling, 128, ScoreWork{/*modifies=*/true},
                                false, false, true, false, 255),
            "");
  // A block mask keeps the sequential loop whatever the registers.
  EXPECT_NE(softmaxOverlapUnfit({64, 64, 4, 2}, 64, ScoreWork{},
                                /*blockMask=*/true, false, true, false, 255),
            "");
}

TEST(Fa2Defaults, WarpRolesReallocateRegistersToTheConsumers) {
  // FlashAttention-3's numbers: 384 threads share 65536 registers, 168 a
  // thread at entry; the producer keeps 24 and each consumer gets 240.
  WarpRoleRegisters two = warpRoleRegisters(8, 1, 65536, 255, false);
  EXPECT_EQ(two.entry, 168);
  EXPECT_EQ(two.producer, 24);
  EXPECT_EQ(two.consumer, 240);
  // A persistent kernel's producer keeps 40 (Lean's walk needs them):
  // (168 x 384 - 40 x 128) / 256 = 232.
  WarpRoleRegisters lean = warpRoleRegisters(8, 1, 65536, 255, true);
  EXPECT_EQ(lean.producer, 40);
  EXPECT_EQ(lean.consumer, 232);
  // One consumer warpgroup alone on an SM: 256 threads have 255 registers
  // each already; two such CTAs: 128 at entry, 24 the producer, 232 a
  // consumer.
  EXPECT_FALSE(warpRoleRegisters(4, 1, 65536, 255, false).reallocates());
  WarpRoleRegisters shared = warpRoleRegisters(4, 2, 65536, 255, false);
  EXPECT_EQ(shared.entry, 128);
  EXPECT_EQ(shared.producer, 24);
  EXPECT_EQ(shared.consumer, 232);
  // Three consumer warpgroups: 512 threads, 128 at entry,
  // (65536 - 24 x 128) / 384 = 162 -> 160.
  EXPECT_EQ(warpRoleRegisters(12, 1, 65536, 255, false).consumer, 160);
}

TEST(Fa2Defaults, WarpRolesNeedTensorCopiesAndTheEmptyMbarriers) {
  Fa2Tiling tiling{128, 128, 8, 2};
  int64_t tiles = fa2SharedMemoryBytes(tiling, 128, 128, 2);
  // Full and empty mbarriers of two stages, then Q's: 40 bytes.
  EXPECT_EQ(warpRolesUnfit(tiling, /*tensorCopies=*/true, tiles, tiles + 40,
                           /*keyLengths=*/false),
            "");
  EXPECT_EQ(warpRolesUnfit(tiling, true, tiles, tiles + 39, false),
            "the stages' empty mbarriers do not fit the shared memory the "
            "tiles leave");
  // With key lengths the issuing thread's mbarrier too: 48 bytes.
  EXPECT_EQ(warpRolesUnfit(tiling, true, tiles, tiles + 48, true), "");
  EXPECT_NE(warpRolesUnfit(tiling, true, tiles, tiles + 47, true), "");
  EXPECT_EQ(
      warpRolesUnfit(tiling, /*tensorCopies=*/false, tiles, tiles + 40, false),
      "K and V come by cp.async from every thread");
}

TEST(Fa2Defaults, PingPongIsForTwoOverlappedWarpgroupsUpToD128) {
  EXPECT_EQ(pingPongUnfit({128, 128, 8, 2}, 128, /*warpRoles=*/true,
                          /*overlap=*/true),
            "");
  EXPECT_EQ(pingPongUnfit({128, 128, 8, 2}, 128, true, /*overlap=*/false),
            "the sequential loop");
  EXPECT_EQ(pingPongUnfit({64, 64, 4, 2}, 64, true, true),
            "one consumer warpgroup");
  EXPECT_EQ(pingPongUnfit({128, 64, 8, 1}, 256, true, true),
            "D = 256 (beyond 128 the products hide the softmax)");
  EXPECT_EQ(pingPongUnfit({128, 128, 8, 2}, 128, /*warpRoles=*/false, true),
            "no warp roles");
}

TEST(Fa2Defaults, TensorCopiesNeedRoomForTheMbarriers) {
  Fa2Tiling tiling{128, 128, 8, 2};
  int64_t tiles = fa2SharedMemoryBytes(tiling, 128, 128, 2);
  // The full mbarriers of two stages, then Q's: 24 bytes.
  EXPECT_EQ(kvTensorCopiesUnfit(tiling, tiles, tiles + 24,
                                /*keyLengths=*/false),
            "");
  EXPECT_EQ(kvTensorCopiesUnfit(tiling, tiles, tiles + 23, false),
            "the stages' mbarriers do not fit the shared memory the tiles "
            "leave");
  // Key lengths add the issuing thread's mbarrier, on which a block past a
  // sequence's end lands before its keys past the end are zeroed.
  EXPECT_EQ(wgmmaSharedBytes(tiles, 2, /*tensorCopies=*/true,
                             /*warpRoles=*/false, /*keyLengths=*/true),
            tiles + 32);
  EXPECT_EQ(kvTensorCopiesUnfit(tiling, tiles, tiles + 32, /*keyLengths=*/true),
            "");
  EXPECT_NE(kvTensorCopiesUnfit(tiling, tiles, tiles + 31, true), "");
}

TEST(Fa2Defaults, CandidatesAreTheTable) {
  EXPECT_EQ(fa2Candidates(64).front(), (Fa2Tiling{128, 128, 4, 2}));
  EXPECT_EQ(fa2Candidates(128).front(), (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(fa2Candidates(256).front(), (Fa2Tiling{128, 64, 8, 1}));
  EXPECT_TRUE(fa2Candidates(257).empty());
}

// Warpgroup-MMA kernels' tilings: whole warpgroups, 16 rows a warp (a
// warpgroup's 64 rows are one wgmma product), tried before
// FlashAttention-2's on a chip with wgmma; what does not nest in a block
// mask as whole warpgroups is left to FlashAttention-2's table.
TEST(Fa2Defaults, WarpgroupTilingsComeFirst) {
  for (int64_t d : {32, 64, 128, 192, 256}) {
    ASSERT_FALSE(warpgroupCandidates(d).empty()) << d;
    for (const Fa2Tiling &tiling : warpgroupCandidates(d)) {
      EXPECT_EQ(tiling.warps % 4, 0) << d;
      EXPECT_EQ(tiling.blockM, 16 * tiling.warps) << d;
    }
  }
  EXPECT_EQ(warpgroupCandidates(64).front(), (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(warpgroupCandidates(256).front(), (Fa2Tiling{64, 64, 4, 1}));
  EXPECT_TRUE(warpgroupCandidates(257).empty());

  SmallVector<Fa2Tiling> hopper = fa2Tilings(128, false, std::nullopt, true);
  size_t first = warpgroupCandidates(128).size();
  EXPECT_EQ(SmallVector<Fa2Tiling>(hopper.begin(), hopper.begin() + first),
            SmallVector<Fa2Tiling>(warpgroupCandidates(128)));
  for (const Fa2Tiling &tiling : fa2Candidates(128))
    EXPECT_EQ(llvm::count(hopper, tiling), 1);
  // Split-KV's tilings are whole warpgroups already.
  EXPECT_EQ(fa2Tilings(128, true, std::nullopt, true),
            fa2Tilings(128, true, std::nullopt));
  // 256-row blocks keep 128 x 128 in two warpgroups; 48-row blocks nest no
  // warpgroup, 192-row blocks none at 128 rows (96 is no multiple of 64).
  EXPECT_EQ(fa2Tilings(128, false, {{256, 256}}, true).front(),
            (Fa2Tiling{128, 128, 8, 2}));
  EXPECT_EQ(fa2Tilings(128, false, {{48, 80}}, true),
            fa2Tilings(128, false, {{48, 80}}));
  EXPECT_EQ(fa2Tilings(64, false, {{64, 32}}, true).front(),
            (Fa2Tiling{64, 32, 4, 2}));
  EXPECT_TRUE(fa2Tilings(64, false, {{100, 64}}, true).empty());
}

// FlashAttention-2's split-KV kernels' 64-row blocks with 4 warps, and
// 64 or 32 keys (with 128, and with 64 beyond D = 128, causal split kernels
// spilled under ptxas 13.0).
TEST(Fa2Defaults, SplitKvCandidatesHave64RowBlocks) {
  EXPECT_EQ(fa2SplitKvCandidates(64).front(), (Fa2Tiling{64, 64, 4, 2}));
  EXPECT_EQ(fa2SplitKvCandidates(128).front(), (Fa2Tiling{64, 64, 4, 2}));
  EXPECT_EQ(fa2SplitKvCandidates(256).front(), (Fa2Tiling{64, 32, 4, 1}));
  for (int64_t d : {32, 128, 192, 256})
    for (const Fa2Tiling &tiling : fa2SplitKvCandidates(d))
      EXPECT_EQ(tiling.blockM, 64);
  EXPECT_TRUE(fa2SplitKvCandidates(257).empty());
}

TEST(Fa2Defaults, NestedSideIsTheLargestMultipleOf16ThatDivides) {
  EXPECT_EQ(fa2NestedSide(128, 64), 64);
  EXPECT_EQ(fa2NestedSide(48, 128), 48);
  EXPECT_EQ(fa2NestedSide(80, 64), 16);
  EXPECT_EQ(fa2NestedSide(96, 64), 48);
  EXPECT_EQ(fa2NestedSide(16, 8), std::nullopt);
  EXPECT_EQ(fa2NestedSide(100, 128), std::nullopt);
}

// Tiles nest in a block mask's blocks: the table cut down to them, warps
// halved until each owns whole m16 row tiles, never more rows a warp than
// the table's tiling had; none when a side is not a multiple of 16.
TEST(Fa2Defaults, TilingsNestInBlockMaskBlocks) {
  EXPECT_EQ(fa2Tilings(64, false, std::nullopt),
            SmallVector<Fa2Tiling>(fa2Candidates(64)));
  SmallVector<Fa2Tiling> blocks32 = fa2Tilings(64, false, {{32, 32}});
  EXPECT_EQ(blocks32.front(), (Fa2Tiling{32, 32, 2, 2}));
  SmallVector<Fa2Tiling> blocks256 = fa2Tilings(128, false, {{256, 256}});
  EXPECT_EQ(
      SmallVector<Fa2Tiling>(blocks256.begin(),
                             blocks256.begin() + fa2Candidates(128).size()),
      SmallVector<Fa2Tiling>(fa2Candidates(128)));
  // 48 rows: one warp would own 48 rows (the table's own at most 32), so
  // 16-row tiles; keys cut to 16 from 64 (80 = 5 x 16).
  EXPECT_EQ(fa2Tilings(128, false, {{48, 80}}).front(),
            (Fa2Tiling{16, 16, 1, 2}));
  EXPECT_EQ(fa2Tilings(64, false, {{48, 80}}).front(),
            (Fa2Tiling{16, 80, 1, 2}));
  for (auto [d, splitKv] :
       {std::pair(64, false), std::pair(128, true), std::pair(256, false)})
    for (const Fa2Tiling &tiling : fa2Tilings(d, splitKv, {{96, 64}})) {
      EXPECT_EQ(96 % tiling.blockM, 0);
      EXPECT_EQ(64 % tiling.blockN, 0);
      EXPECT_EQ(tiling.blockM % (16 * tiling.warps), 0);
      EXPECT_EQ(llvm::count(fa2Tilings(d, splitKv, {{96, 64}}), tiling), 1);
    }
  EXPECT_TRUE(fa2Tilings(64, false, {{100, 64}}).empty());
  EXPECT_TRUE(fa2Tilings(64, false, {{64, 8}}).empty());
  // The defaults take them: 32 x 32 blocks give 32 x 32 tiles of 2 warps.
  EXPECT_EQ(defaultFa2Tiling(64, 64, 2, std::nullopt, {}, false, {{32, 32}}),
            (Fa2Tiling{32, 32, 2, 2}));
}

TEST(Fa2Defaults, GradKernelTilingAndMatrixUnit) {
  // 64 own rows in one warpgroup; 32 streamed rows past D = 64.
  EXPECT_EQ(fa2GradKernelTiling(64, 64), (Fa2Tiling{64, 64, 4, 1}));
  EXPECT_EQ(fa2GradKernelTiling(64, 128), (Fa2Tiling{64, 32, 4, 1}));
  EXPECT_EQ(fa2GradKernelTiling(256, 256), (Fa2Tiling{64, 32, 4, 1}));
  // wgmma on sm_90a up to max(D, Dv) = 192.
  EXPECT_EQ(chooseGradMatrixUnit(MatrixUnitRequest::Auto, "sm_90a", 192, 128),
            MatrixUnit::Wgmma);
  EXPECT_EQ(chooseGradMatrixUnit(MatrixUnitRequest::Auto, "sm_90a", 64, 256),
            MatrixUnit::MmaSync);
  EXPECT_EQ(chooseGradMatrixUnit(MatrixUnitRequest::Auto, "sm_80", 64, 64),
            MatrixUnit::MmaSync);
  EXPECT_EQ(chooseGradMatrixUnit(MatrixUnitRequest::MmaSync, "sm_90a", 64, 64),
            MatrixUnit::MmaSync);
  EXPECT_EQ(chooseGradMatrixUnit(MatrixUnitRequest::Wgmma, "sm_90a", 256, 64),
            std::nullopt);
  EXPECT_NE(gradWgmmaUnfit("sm_90a", 256, 256).find("wider than wgmma's 192"),
            std::string::npos);
  EXPECT_NE(gradWgmmaUnfit("sm_80", 64, 64).find("needs sm_90a"),
            std::string::npos);
  EXPECT_EQ(gradWgmmaUnfit("sm_90a", 96, 160), "");
}

TEST(Fa2Defaults, GradTensorCopies) {
  // Two stages of streamed tiles with tensor copies.
  EXPECT_EQ(fa2GradKernelTiling(64, 64, /*tensorCopies=*/true),
            (Fa2Tiling{64, 64, 4, 2}));
  EXPECT_EQ(fa2GradKernelTiling(128, 64, /*tensorCopies=*/true),
            (Fa2Tiling{64, 32, 4, 2}));
  // D = Dv = 64, one stage: 64 own rows and 64 streamed ones of 128 + 128
  // bytes, then LSE and Dsum of 64 floats each.
  EXPECT_EQ(fa2GradSharedBytes(fa2GradKernelTiling(64, 64), 64, 64,
                               /*tensorCopies=*/false, /*keyLengths=*/false),
            (64 + 64) * 256 + 512);
  // Two stages, then an mbarrier a stage and the own rows' one.
  EXPECT_EQ(fa2GradSharedBytes(fa2GradKernelTiling(64, 64, true), 64, 64,
                               /*tensorCopies=*/true, /*keyLengths=*/false),
            (64 + 2 * 64) * 256 + 512 + 3 * 8);
  // With key lengths, thread 0's own one after them.
  EXPECT_EQ(fa2GradSharedBytes(fa2GradKernelTiling(64, 64, true), 64, 64,
                               /*tensorCopies=*/true, /*keyLengths=*/true),
            (64 + 2 * 64) * 256 + 512 + 4 * 8);
  // D = 96 rows are padded to 128 columns; Dv = 32 to 64.
  EXPECT_EQ(fa2GradSharedBytes(fa2GradKernelTiling(96, 32, true), 96, 32,
                               /*tensorCopies=*/true, /*keyLengths=*/false),
            (64 + 2 * 32) * (256 + 128) + 512 + 3 * 8);
  EXPECT_EQ(gradTensorCopiesUnfit(128, 128, /*keyLengths=*/false, 232448), "");
  EXPECT_EQ(gradTensorCopiesUnfit(64, 128, /*keyLengths=*/false, 232448), "");
  EXPECT_EQ(gradTensorCopiesUnfit(64, 64, /*keyLengths=*/true, 232448), "");
  // Two walks (max(D, Dv) above 128) keep cp.async.
  EXPECT_NE(gradTensorCopiesUnfit(160, 64, /*keyLengths=*/false, 232448)
                .find("a walk each (max(D, Dv) = 160)"),
            std::string::npos);
  // 66072 bytes for D = Dv = 128: not in a 48 KiB block.
  EXPECT_NE(gradTensorCopiesUnfit(128, 128, /*keyLengths=*/false, 49152)
                .find("need 66072 bytes"),
            std::string::npos);
}
