//===- Fa2DefaultsTest.cpp - FlashAttention-2's default tiling -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/Fa2Defaults.h"

#include "gtest/gtest.h"

using namespace mlir::attn;

namespace {

TEST(Fa2Defaults, TableByHeadDimension) {
  EXPECT_EQ(defaultFa2Tiling(32, 32, 2, std::nullopt),
            (Fa2Tiling{128, 128, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(64, 64, 2, std::nullopt),
            (Fa2Tiling{128, 128, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(80, 80, 2, std::nullopt),
            (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(128, 128, 2, std::nullopt),
            (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(256, 256, 2, std::nullopt),
            (Fa2Tiling{128, 64, 8, 1}));
  // The wider of D and Dv picks the row.
  EXPECT_EQ(defaultFa2Tiling(64, 128, 2, std::nullopt),
            (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(defaultFa2Tiling(512, 512, 2, std::nullopt), std::nullopt);
}

TEST(Fa2Defaults, SharedMemoryBytes) {
  // Q block 128x128 + 2 stages of K and V tiles 64x128, two bytes each.
  EXPECT_EQ(fa2SharedMemoryBytes({128, 64, 4, 2}, 128, 128, 2),
            (128 * 128 + 2 * 64 * 256) * 2);
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
  // threads = 128 + 64, plus 64: above 255 (the kernel spills there).
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 4, 2}, 128), 256);
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 32, 4, 2}, 128), 224);
  // D = 256, 128 x 64, 8 warps: (128 * 256 + 128 * 64) / 256 + 64.
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{128, 64, 8, 2}, 256), 224);
  // Stages do not change it; rounding is up.
  EXPECT_EQ(fa2RegistersPerThread(Fa2Tiling{16, 16, 1, 1}, 1), 64 + 9);
}

TEST(Fa2Defaults, CandidatesAreTheTable) {
  EXPECT_EQ(fa2Candidates(64).front(), (Fa2Tiling{128, 128, 4, 2}));
  EXPECT_EQ(fa2Candidates(128).front(), (Fa2Tiling{128, 64, 4, 2}));
  EXPECT_EQ(fa2Candidates(256).front(), (Fa2Tiling{128, 64, 8, 1}));
  EXPECT_TRUE(fa2Candidates(257).empty());
}

