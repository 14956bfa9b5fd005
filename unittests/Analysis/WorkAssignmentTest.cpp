//===- WorkAssignmentTest.cpp - Split-KV and Lean work assignments
//---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Evaluates WorkAssignment's formulas on integers and checks them against
// the schedules' definitions: split-KV's pieces partition each tile's
// blocks; Lean's even split gives every LeanTile to exactly one CTA, the
// pieces of every output tile are its intersections with the CTAs in CTA
// order (host first), and walking each CTA's own range (what a persistent
// kernel does) finds the same pieces, with every output tile merged once by
// its host, each CTA publishing at most one partial and waiting at most once.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/WorkAssignment.h"
#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/IntegerArith.h"
#include "attn/Analysis/MaskGeometry.h"

#include "gtest/gtest.h"

#include <map>
#include <vector>

using namespace mlir::attn;

namespace {

IntegerArith arith;

TEST(SplitKVPiece, PartitionsTheBlocksInOrder) {
  for (int64_t begin : {0, 3})
    for (int64_t count : {0, 1, 5, 16, 17})
      for (int64_t splits : {1, 2, 3, 16, 40}) {
        int64_t next = begin;
        for (int64_t s = 0; s < splits; ++s) {
          auto [b, e] = splitKVPiece(arith, begin, begin + count, s, splits);
          EXPECT_LE(b, e);
          if (b < e) {
            EXPECT_EQ(b, next) << "split " << s;
            next = e;
          }
        }
        EXPECT_EQ(next, begin + count);
      }
}

TEST(LeanAssignment, EvenSplitAsInThePaper) {
  for (int64_t tiles : {0, 1, 7, 48, 100, 257})
    for (int64_t ctas : {1, 2, 5, 48, 132, 264}) {
      auto lean = LeanAssignment<IntegerArith>::create(arith, ctas, tiles);
      EXPECT_EQ(lean.ctaBegin(0), 0);
      EXPECT_EQ(lean.ctaBegin(ctas), tiles);
      int64_t t = (tiles + ctas - 1) / ctas;
      for (int64_t c = 0; c < ctas; ++c) {
        int64_t size = lean.ctaBegin(c + 1) - lean.ctaBegin(c);
        // The first hi CTAs get t LeanTiles, the others t - 1.
        EXPECT_EQ(size, c < lean.hi ? t : t - 1) << tiles << "/" << ctas;
        for (int64_t g = lean.ctaBegin(c); g < lean.ctaBegin(c + 1); ++g)
          EXPECT_EQ(lean.ctaOf(g), c);
      }
    }
}

/// One output tile: its LeanTiles [first, first + count).
struct Tile {
  int64_t first, count;
};

/// Output tiles in Lean's order for `heads` (batch x head) pairs whose query
/// blocks visit `blocks[m]` KV blocks.
std::vector<Tile> tilesOf(int64_t heads, const std::vector<int64_t> &blocks) {
  auto blocksOf = [&](int64_t m) { return blocks[m]; };
  LeanTileOrder<IntegerArith> order{arith, blocksOf};
  int64_t perHead = order.prefix(blocks.size());
  std::vector<Tile> tiles;
  for (int64_t bh = 0; bh < heads; ++bh)
    for (int64_t m = 0; m < static_cast<int64_t>(blocks.size()); ++m)
      tiles.push_back({order.tileFirst(perHead, bh, m), blocks[m]});
  return tiles;
}

/// What a persistent CTA sees when it walks its own range: one segment per
/// output tile it meets.
struct Segment {
  int64_t tile, begin, end;
  bool host() const { return begin == tileFirst; }
  int64_t tileFirst, tileEnd;
};

/// The walk of CTA `cta` as the Lean kernel does it (LeanWork::pieceAt),
/// for (batch x head) pairs whose query blocks visit `blocks[m]` KV blocks.
std::vector<Segment> walk(LeanAssignment<IntegerArith> &lean,
                          const std::vector<int64_t> &blocks, int64_t cta) {
  auto blocksOf = [&](int64_t m) { return blocks[m]; };
  LeanTileOrder<IntegerArith> order{arith, blocksOf};
  int64_t queryBlocks = blocks.size();
  LeanWork<IntegerArith> work{order, order.prefix(queryBlocks), lean};
  LeanWork<IntegerArith>::Piece previous{-1, 0, 0, 0, 0, 0};
  std::vector<Segment> segments;
  int64_t g = lean.ctaBegin(cta), end = lean.ctaBegin(cta + 1);
  while (g < end) {
    LeanWork<IntegerArith>::Piece piece =
        work.pieceAt(g, end, queryBlocks, previous.batchHead,
                     previous.queryBlock, previous.tileOffset);
    EXPECT_LT(piece.queryBlock, queryBlocks) << "LeanTile " << g;
    if (piece.queryBlock >= queryBlocks)
      break;
    EXPECT_LE(piece.tileFirst, g);
    EXPECT_LT(g, piece.tileLast);
    segments.push_back({piece.batchHead * queryBlocks + piece.queryBlock, g,
                        piece.pieceEnd, piece.tileFirst, piece.tileLast});
    g = piece.pieceEnd;
    previous = piece;
  }
  return segments;
}

struct LeanCase {
  const char *name;
  int64_t heads;
  std::vector<int64_t> blocks;
  int64_t ctas;
};

class LeanPieces : public ::testing::TestWithParam<LeanCase> {};

TEST_P(LeanPieces, SlotsAndWalkAgree) {
  const LeanCase &param = GetParam();
  std::vector<Tile> tiles = tilesOf(param.heads, param.blocks);
  int64_t leanTiles = tiles.back().first + tiles.back().count;
  auto lean =
      LeanAssignment<IntegerArith>::create(arith, param.ctas, leanTiles);
  int64_t maxBlocks =
      *std::max_element(param.blocks.begin(), param.blocks.end());
  int64_t slots = lean.slots(maxBlocks);
  ASSERT_GE(slots, 1);

  // The slot view (what the CPU runs): per tile, slots 0..S-1 partition the
  // tile in order, slot 0 starting at the tile's first LeanTile, and slot s
  // is CTA ctaOf(first) + s's share; nothing is left for slot S. The most
  // pieces a tile has is mostPieces'.
  std::map<std::pair<int64_t, int64_t>, int64_t> pieceOf; // (cta, tile)
  std::vector<int64_t> computed(leanTiles, 0);
  int64_t mostPieces = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(tiles.size()); ++i) {
    const Tile &tile = tiles[i];
    int64_t next = tile.first;
    for (int64_t s = 0; s <= slots; ++s) {
      auto [b, e] = lean.piece(tile.first, tile.count, s);
      if (b >= e)
        continue;
      ASSERT_LT(s, slots) << "tile " << i << " needs more than " << slots
                          << " slots";
      mostPieces = std::max(mostPieces, s + 1);
      EXPECT_EQ(b, next);
      next = e;
      int64_t cta = lean.ctaOf(tile.first) + s;
      EXPECT_EQ(lean.ctaOf(b), cta);
      EXPECT_EQ(lean.ctaOf(e - 1), cta);
      pieceOf[{cta, i}] = s;
      for (int64_t g = b; g < e; ++g)
        ++computed[g];
    }
    EXPECT_EQ(next, tile.first + tile.count);
  }
  for (int64_t g = 0; g < leanTiles; ++g)
    EXPECT_EQ(computed[g], 1) << "LeanTile " << g;
  EXPECT_EQ(lean.mostPieces(param.blocks, param.heads), mostPieces);

  // The CTA view (what a persistent kernel runs).
  std::vector<int64_t> hosts(tiles.size(), 0);
  for (int64_t c = 0; c < param.ctas; ++c) {
    std::vector<Segment> segments = walk(lean, param.blocks, c);
    int64_t published = 0, waits = 0;
    for (size_t j = 0; j < segments.size(); ++j) {
      const Segment &seg = segments[j];
      // The same piece as the slot view's.
      auto found = pieceOf.find({c, seg.tile});
      ASSERT_NE(found, pieceOf.end());
      auto [b, e] =
          lean.piece(seg.tileFirst, seg.tileEnd - seg.tileFirst, found->second);
      EXPECT_EQ(b, seg.begin);
      EXPECT_EQ(e, seg.end);
      EXPECT_EQ(found->second == 0, seg.host());
      if (seg.host()) {
        ++hosts[seg.tile];
        if (seg.end < seg.tileEnd) {
          // A host that waits for contributors: its last segment.
          EXPECT_EQ(j, segments.size() - 1);
          ++waits;
        }
      } else {
        // A contributor publishes its tile's partial: its first segment,
        // and the tile's host is a lower CTA.
        EXPECT_EQ(j, 0u);
        EXPECT_LT(lean.ctaOf(seg.tileFirst), c);
        ++published;
      }
    }
    EXPECT_LE(published, 1);
    EXPECT_LE(waits, 1);
  }
  for (size_t i = 0; i < tiles.size(); ++i)
    EXPECT_EQ(hosts[i], tiles[i].count ? 1 : 0) << "tile " << i;
}

int64_t maxPieces(const LeanCase &param) {
  std::vector<Tile> tiles = tilesOf(param.heads, param.blocks);
  auto lean = LeanAssignment<IntegerArith>::create(
      arith, param.ctas, tiles.back().first + tiles.back().count);
  int64_t most = 0;
  for (const Tile &tile : tiles) {
    int64_t pieces = 0;
    for (int64_t s = 0; s < param.ctas; ++s) {
      auto [b, e] = lean.piece(tile.first, tile.count, s);
      pieces += b < e;
    }
    most = std::max(most, pieces);
  }
  return most;
}

// The cases of the stream-K assignment the suite must meet.
INSTANTIATE_TEST_SUITE_P(
    Cases, LeanPieces,
    ::testing::Values(
        // One CTA: hosts that do their whole tile alone, 4 tiles per CTA.
        LeanCase{"alone", 4, {16}, 1},
        // 48 LeanTiles over 5 CTAs (10, 10, 10, 9, 9): one contributor.
        LeanCase{"one_contributor", 3, {16}, 5},
        // More CTAs than LeanTiles: 16 pieces per tile, 15 contributors.
        LeanCase{"many_contributors", 3, {16}, 64},
        // 96 LeanTiles over 7 CTAs, 14 or 13 each: CTA 4 ([55, 69)) spans
        // five tiles of 4.
        LeanCase{"spans_several_tiles", 24, {4}, 7},
        // Causal prefill: query blocks visit 1, 2, 3, 4 blocks; some tiles
        // are empty when a window hides them.
        LeanCase{"causal", 2, {1, 2, 3, 4}, 3},
        LeanCase{"empty_tiles", 2, {0, 3, 0, 5}, 4},
        LeanCase{"decode_gqa", 32, {64}, 132}),
    [](const ::testing::TestParamInfo<LeanCase> &info) {
      return std::string(info.param.name);
    });

TEST(LeanAssignment, SlotsMatchTheMostPiecesOfAnyTile) {
  // The bound is exact on these cases (no slot is wasted).
  EXPECT_EQ(maxPieces({"", 4, {16}, 1}), 1);
  EXPECT_EQ(maxPieces({"", 3, {16}, 5}), 3);
  EXPECT_EQ(maxPieces({"", 3, {16}, 64}), 16);
  EXPECT_EQ(maxPieces({"", 24, {4}, 7}), 2);
  IntegerArith a;
  EXPECT_EQ(LeanAssignment<IntegerArith>::create(a, 5, 48).slots(16), 3);
  EXPECT_EQ(LeanAssignment<IntegerArith>::create(a, 64, 48).slots(16), 16);
  EXPECT_EQ(LeanAssignment<IntegerArith>::create(a, 1, 64).slots(16), 1);
  EXPECT_EQ(LeanAssignment<IntegerArith>::create(a, 7, 96).slots(4), 2);
}

TEST(LeanTileOrder, UsesTheProblemsVisibleBlocks) {
  // Causal prefill, Sq = Sk = 256, 64 x 64 tiles: query block m visits m + 1
  // blocks, so a head has 1 + 2 + 3 + 4 = 10 LeanTiles.
  AttentionProblem problem;
  problem.queryLen = problem.keyLen = 256;
  problem.causal = true;
  auto blocksOf = [&](int64_t m) {
    return problem.kvBlockRange(m, 64, 64).size();
  };
  LeanTileOrder<IntegerArith> order{arith, blocksOf};
  EXPECT_EQ(order.prefix(4), 10);
  EXPECT_EQ(order.tileFirst(10, 3, 2), 33);
}

TEST(LeanTileOrder, LocatesEveryLeanTileFromAnyEarlierQueryBlock) {
  // Causal, Sq = 1000 > Sk = 300, 64 x 64 tiles: the first 10 query blocks
  // see no key (row i sees keys up to i - 700), the others 1 to 5 blocks.
  AttentionProblem problem;
  problem.queryLen = 1000;
  problem.keyLen = 300;
  problem.causal = true;
  auto blocksOf = [&](int64_t m) {
    return problem.kvBlockRange(m, 64, 64).size();
  };
  LeanTileOrder<IntegerArith> order{arith, blocksOf};
  int64_t queryBlocks = problem.queryBlocks(64);
  ASSERT_EQ(blocksOf(9), 0);
  ASSERT_GT(blocksOf(10), 0);
  int64_t perHead = order.prefix(queryBlocks);
  for (int64_t offset = 0; offset < perHead; ++offset)
    for (int64_t from = 0; from < queryBlocks; ++from) {
      if (order.prefix(from) > offset)
        break;
      auto [m, prefix] =
          order.locate(queryBlocks, offset, from, order.prefix(from));
      EXPECT_EQ(prefix, order.prefix(m)) << offset << " from " << from;
      EXPECT_LE(prefix, offset);
      EXPECT_LT(offset, prefix + blocksOf(m)) << offset << " from " << from;
    }
  // Past the last LeanTile: the number of query blocks and every LeanTile.
  EXPECT_EQ(order.locate(queryBlocks, perHead, 0, 0),
            std::make_pair(queryBlocks, perHead));
}

TEST(LeanTileOrder, UniformBlocksGiveTheScansAnswers) {
  // Without a causal or window mask every query block sees the same blocks:
  // prefix and locate become a product and a division, which must agree
  // with the sum and the scan for every LeanTile, from any earlier query
  // block, with GQA packing, a tail block, one key, and no key at all.
  struct Case {
    int64_t queryLen, keyLen, packedHeads;
  };
  for (Case c : {Case{100, 300, 1}, Case{1, 8192, 4}, Case{3, 57, 2},
                 Case{40, 1, 1}, Case{40, 0, 1}})
    for (int64_t blockN : {16, 64}) {
      MaskGeometry<IntegerArith> geometry{arith, c.queryLen, c.keyLen,
                                          /*causal=*/false, std::nullopt};
      geometry.packedHeads = c.packedHeads;
      const int64_t blockM = 16;
      auto closed =
          LeanTileOrder<IntegerArith>::of(arith, geometry, blockM, blockN);
      ASSERT_TRUE(closed.uniformBlocks.has_value());
      LeanTileOrder<IntegerArith> scan{arith, closed.blocksOf};
      int64_t queryBlocks = arith.ceilDiv(geometry.tiledRows(), blockM);
      for (int64_t m = 0; m <= queryBlocks; ++m)
        ASSERT_EQ(closed.prefix(m), scan.prefix(m)) << c.keyLen << " " << m;
      int64_t perHead = scan.prefix(queryBlocks);
      for (int64_t offset = 0; offset <= perHead; ++offset)
        for (int64_t from = 0; from < queryBlocks; ++from) {
          if (scan.prefix(from) > offset)
            break;
          EXPECT_EQ(closed.locate(queryBlocks, offset, from, scan.prefix(from)),
                    scan.locate(queryBlocks, offset, from, scan.prefix(from)))
              << "Sk " << c.keyLen << ", LeanTile " << offset << " from "
              << from;
        }
    }
  // A causal or window mask gives query blocks different counts.
  MaskGeometry<IntegerArith> causal{arith, 100, 300, /*causal=*/true,
                                    std::nullopt};
  EXPECT_FALSE(causal.uniformKvBlocks(64).has_value());
  MaskGeometry<IntegerArith> window{arith, 100, 300, /*causal=*/false,
                                    std::make_pair(int64_t(32), int64_t(0))};
  EXPECT_FALSE(window.uniformKvBlocks(64).has_value());
}

TEST(LeanTileOrder, OneQueryBlockGivesTheScansAnswers) {
  // One query block a head (a causal or windowed decode step, packed or
  // not): its count is every query block's, and the product and division
  // agree with the sum and scan for every LeanTile.
  struct Case {
    int64_t queryLen, keyLen, packedHeads;
    bool causal;
    std::optional<std::pair<int64_t, int64_t>> window;
  };
  for (Case c : {Case{4, 300, 4, true, std::nullopt},
                 Case{16, 57, 1, true, std::nullopt},
                 Case{1, 8192, 8, false, std::make_pair(int64_t(100), 0)},
                 Case{3, 2, 2, true, std::nullopt}}) {
    MaskGeometry<IntegerArith> geometry{arith, c.queryLen, c.keyLen, c.causal,
                                        c.window};
    geometry.packedHeads = c.packedHeads;
    const int64_t blockM = 16, blockN = 32;
    ASSERT_EQ(arith.ceilDiv(geometry.tiledRows(), blockM), 1);
    auto closed = LeanTileOrder<IntegerArith>::of(
        arith, geometry, blockM, blockN, /*oneQueryBlock=*/true);
    ASSERT_TRUE(closed.uniformBlocks.has_value());
    LeanTileOrder<IntegerArith> scan{arith, closed.blocksOf};
    EXPECT_EQ(closed.prefix(1), scan.prefix(1));
    for (int64_t offset = 0; offset <= scan.prefix(1); ++offset)
      EXPECT_EQ(closed.locate(1, offset, 0, 0), scan.locate(1, offset, 0, 0))
          << "Sk " << c.keyLen << ", LeanTile " << offset;
  }
}

} // namespace
