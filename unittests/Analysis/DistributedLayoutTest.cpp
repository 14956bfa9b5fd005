//===- DistributedLayoutTest.cpp - Shards of a distributed attention ------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/DistributedLayout.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Every position of [0, shards * shard length) belongs to exactly one run
/// of one rank, and every run fits its shard.
void expectPartition(const DistributedLayout &layout, int64_t length,
                     bool keys) {
  int64_t shard = layout.shardLength(length);
  std::vector<int> owners(layout.devices() * shard, 0);
  for (int64_t rank = 0; rank < layout.devices(); ++rank) {
    int64_t covered = 0;
    for (const TokenRun &run :
         keys ? layout.keyRuns(rank, length) : layout.queryRuns(rank, length)) {
      EXPECT_EQ(run.localStart, covered);
      covered += run.length;
      for (int64_t t = 0; t < run.length; ++t)
        ++owners[run.globalStart + t];
    }
    EXPECT_EQ(covered, shard);
  }
  for (int owner : owners)
    EXPECT_EQ(owner, 1);
  EXPECT_GE(static_cast<int64_t>(owners.size()), length);
}

TEST(DistributedLayout, ShardsPartitionTheSequence) {
  MLIRContext context;
  context.loadDialect<AttnDialect>();
  for (bool zigzag : {false, true})
    for (Attribute partition :
         {Attribute(Attention2DAttr::get(&context, 2, 3, zigzag)),
          Attribute(Attention2DAttr::get(&context, 3, 3, zigzag)),
          Attribute(RingAttr::get(&context, 5, zigzag))})
      for (int64_t length : {1, 17, 36, 100}) {
        DistributedLayout layout = *DistributedLayout::of(partition);
        expectPartition(layout, length, /*keys=*/false);
        expectPartition(layout, length, /*keys=*/true);
      }
}

TEST(DistributedLayout, GridRowsAndColumnsHoldChunks) {
  MLIRContext context;
  context.loadDialect<AttnDialect>();
  // Contiguous 2 x 3, S = 12 (shards of 2): row 1 holds queries 6 .. 11,
  // column 2 holds keys 8 .. 11 (ranks 2 and 5).
  auto layout =
      *DistributedLayout::of(Attention2DAttr::get(&context, 2, 3, false));
  EXPECT_EQ(layout.queryRuns(3, 12)[0].globalStart, 6);
  EXPECT_EQ(layout.queryRuns(5, 12)[0].globalStart, 10);
  EXPECT_EQ(layout.keyRuns(2, 12)[0].globalStart, 8);
  EXPECT_EQ(layout.keyRuns(5, 12)[0].globalStart, 10);
  // Zig-zag 2 x 2, S = 16 (blocks of 4): row 0 holds blocks 0 and 3, rank
  // (0, 1) the second half of each.
  auto zigzag =
      *DistributedLayout::of(Attention2DAttr::get(&context, 2, 2, true));
  SmallVector<TokenRun, 2> runs = zigzag.queryRuns(1, 16);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].globalStart, 2);
  EXPECT_EQ(runs[1].globalStart, 14);
  // A zig-zag ring of 4, S = 16: rank 1 holds blocks 1 and 6 of 8.
  auto ring = *DistributedLayout::of(RingAttr::get(&context, 4, true));
  runs = ring.keyRuns(1, 16);
  EXPECT_EQ(runs[0].globalStart, 2);
  EXPECT_EQ(runs[1].globalStart, 12);
}

TEST(DistributedLayout, BytesSentFollowThePaperForMhaInF32) {
  MLIRContext context;
  context.loadDialect<AttnDialect>();
  AttentionProblem problem;
  problem.batch = 1;
  problem.queryHeads = problem.kvHeads = 4;
  problem.queryLen = problem.keyLen = 2304;
  problem.headDim = problem.valueDim = 64;
  for (int64_t r : {2, 3, 4}) {
    int64_t p = r * r, s = 2304, d = 64, h = 4;
    auto grid =
        *DistributedLayout::of(Attention2DAttr::get(&context, r, r, false));
    // (C-1)Sd/P + 2(R-1)Sd/P + (C-1)S(d+1)/P elements per head, f32.
    EXPECT_EQ(grid.bytesSent(problem, 4),
              4 * h * (r - 1) * (s / p) * (3 * d + d + 1));
    auto ring = *DistributedLayout::of(RingAttr::get(&context, p, false));
    EXPECT_EQ(ring.bytesSent(problem, 4), 4 * h * 2 * (s / p) * d * (p - 1));
  }
}

} // namespace
