//===- AttentionProblemTest.cpp - Masking geometry and work counts ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/AttentionProblem.h"

#include "mlir/IR/BuiltinTypes.h"

#include "gtest/gtest.h"

using namespace mlir::attn;

namespace {

AttentionProblem
makeProblem(int64_t queryLen, int64_t keyLen, bool causal,
            std::optional<std::pair<int64_t, int64_t>> window = std::nullopt) {
  AttentionProblem problem;
  problem.queryLen = queryLen;
  problem.keyLen = keyLen;
  problem.headDim = problem.valueDim = 64;
  problem.causal = causal;
  problem.window = window;
  return problem;
}

/// The definition, written out per element: key k is visible from row i.
bool isVisible(const AttentionProblem &p, int64_t i, int64_t k) {
  int64_t diagonal = i + p.keyLen - p.queryLen;
  if (p.causal && k > diagonal)
    return false;
  if (p.window && (k < diagonal - p.window->first ||
                   k > diagonal + p.window->second))
    return false;
  return k >= 0 && k < p.keyLen;
}

TEST(AttentionProblem, NonCausalSeesEveryKey) {
  AttentionProblem p = makeProblem(17, 33, /*causal=*/false);
  for (int64_t row = 0; row < 17; ++row)
    EXPECT_EQ(p.visibleKeys(row), (IndexRange{0, 33}));
}

TEST(AttentionProblem, CausalIsBottomRightAligned) {
  // Fewer queries than keys: the last query sees every key.
  AttentionProblem shortQ = makeProblem(2, 5, true);
  EXPECT_EQ(shortQ.visibleKeys(0), (IndexRange{0, 4}));
  EXPECT_EQ(shortQ.visibleKeys(1), (IndexRange{0, 5}));
  // More queries than keys: the first rows see nothing at all.
  AttentionProblem longQ = makeProblem(5, 2, true);
  EXPECT_TRUE(longQ.visibleKeys(0).empty());
  EXPECT_TRUE(longQ.visibleKeys(2).empty());
  EXPECT_EQ(longQ.visibleKeys(3), (IndexRange{0, 1}));
  EXPECT_EQ(longQ.visibleKeys(4), (IndexRange{0, 2}));
}

TEST(AttentionProblem, CausalHidesNothingFromOneQuery) {
  // One query's diagonal is the last key: causal or not, it sees them all.
  for (int64_t keyLen : {0, 1, 5, 64, 1000}) {
    AttentionProblem p = makeProblem(1, keyLen, true);
    EXPECT_FALSE(p.causalHidesKeys());
    for (int64_t k = 0; k < keyLen; ++k)
      EXPECT_TRUE(isVisible(p, 0, k));
    EXPECT_EQ(p.visibleKeys(0), (IndexRange{0, keyLen}));
  }
  EXPECT_TRUE(makeProblem(2, 5, true).causalHidesKeys());
  EXPECT_FALSE(makeProblem(2, 5, false).causalHidesKeys());
  // A query length known only at run time may hide keys.
  EXPECT_TRUE(
      makeProblem(mlir::ShapedType::kDynamic, 5, true).causalHidesKeys());
}

TEST(AttentionProblem, SlidingWindow) {
  AttentionProblem p = makeProblem(10, 10, false, std::make_pair(2, 1));
  EXPECT_EQ(p.visibleKeys(5), (IndexRange{3, 7}));
  EXPECT_EQ(p.visibleKeys(0), (IndexRange{0, 2}));
  EXPECT_EQ(p.visibleKeys(9), (IndexRange{7, 10}));
  AttentionProblem causalWindow = makeProblem(10, 10, true, std::make_pair(2, 1));
  EXPECT_EQ(causalWindow.visibleKeys(5), (IndexRange{3, 6}));
}

TEST(AttentionProblem, VisiblePairsAndFlops) {
  AttentionProblem p = makeProblem(1000, 1000, true);
  EXPECT_EQ(p.visiblePairs(), 1000 * 1001 / 2);
  p.batch = 2;
  p.queryHeads = 4;
  EXPECT_DOUBLE_EQ(p.nominalForwardFlops(), 4.0 * 2 * 4 * 1000 * 1000 * 64 / 2);
  p.causal = false;
  EXPECT_DOUBLE_EQ(p.nominalForwardFlops(), 4.0 * 2 * 4 * 1000 * 1000 * 64);
  EXPECT_DOUBLE_EQ(p.naiveScoreBytes(), 4.0 * 2 * 4 * 1000 * 1000);
}

TEST(AttentionProblem, CausalSquareSkipsUpperBlocks) {
  AttentionProblem p = makeProblem(1024, 1024, true);
  for (int64_t m = 0; m < 8; ++m)
    EXPECT_EQ(p.kvBlockRange(m, 128, 128), (IndexRange{0, m + 1}));
  TiledWork work = countTiledWork(p, 128, 128);
  EXPECT_EQ(work.queryBlocks, 8);
  EXPECT_EQ(work.denseBlocks, 64);
  EXPECT_EQ(work.visitedBlocks, 36);
  EXPECT_EQ(work.maskedBlocks, 8); // only the diagonal blocks
}

/// Against the per-element definition, over awkward shapes, with and without
/// GQA packing (tiled row r is query row r mod Sq): the KV block range holds
/// every visible key and no block outside it has one, and a block is called
/// unmasked exactly when every (row, key) in it is visible.
TEST(AttentionProblem, BlockGeometryMatchesDefinition) {
  const int64_t lengths[] = {1, 17, 64, 100, 129};
  const std::optional<std::pair<int64_t, int64_t>> windows[] = {
      std::nullopt, std::make_pair(0, 0), std::make_pair(20, 3),
      std::make_pair(5, 40)};
  const int64_t blocks[][2] = {{16, 16}, {64, 32}, {32, 64}};
  for (int64_t packed : {1, 3})
    for (int64_t sq : lengths)
      for (int64_t sk : lengths)
        for (bool causal : {false, true})
          for (const auto &window : windows)
            for (const auto &block : blocks) {
              AttentionProblem p = makeProblem(sq, sk, causal, window);
              p.queryHeads = p.packedHeads = packed;
              int64_t rows = packed * sq;
              int64_t bm = block[0], bn = block[1];
              int64_t queryBlocks = (rows + bm - 1) / bm;
              EXPECT_EQ(p.queryBlocks(bm), queryBlocks);
              int64_t kvBlocks = (sk + bn - 1) / bn;
              for (int64_t m = 0; m < queryBlocks; ++m) {
                IndexRange range = p.kvBlockRange(m, bm, bn);
                for (int64_t n = 0; n < kvBlocks; ++n) {
                  int64_t visible = 0, total = 0;
                  for (int64_t r = m * bm; r < std::min((m + 1) * bm, rows);
                       ++r)
                    for (int64_t k = n * bn; k < std::min((n + 1) * bn, sk);
                         ++k) {
                      ++total;
                      visible += isVisible(p, r % sq, k);
                    }
                  bool inRange =
                      !range.empty() && n >= range.begin && n < range.end;
                  SCOPED_TRACE(testing::Message()
                               << "packed=" << packed << " Sq=" << sq << " Sk="
                               << sk << " causal=" << causal << " block=" << bm
                               << "x" << bn << " m=" << m << " n=" << n);
                  if (visible > 0) {
                    EXPECT_TRUE(inRange);
                  }
                  EXPECT_EQ(p.isBlockUnmasked(m, n, bm, bn), visible == total);
                }
                // The range is tight: its first and last blocks hold a key.
                if (!range.empty()) {
                  for (int64_t n : {range.begin, range.end - 1}) {
                    bool any = false;
                    for (int64_t r = m * bm; r < std::min((m + 1) * bm, rows);
                         ++r)
                      for (int64_t k = n * bn; k < std::min((n + 1) * bn, sk);
                           ++k)
                        any |= isVisible(p, r % sq, k);
                    EXPECT_TRUE(any) << "Sq=" << sq << " Sk=" << sk
                                     << " m=" << m << " n=" << n;
                  }
                }
              }
            }
}

} // namespace

/// The backward pass's transposed question against the per-element
/// definition: the query blocks of a KV block are exactly those holding a row
/// that sees one of its keys (none missing, none extra, so the range is tight
/// at both ends as well).
TEST(AttentionProblem, QueryBlocksOfKvBlockMatchDefinition) {
  const int64_t lengths[] = {1, 17, 64, 100, 129};
  const std::optional<std::pair<int64_t, int64_t>> windows[] = {
      std::nullopt, std::make_pair(0, 0), std::make_pair(20, 3),
      std::make_pair(5, 40), std::make_pair(int64_t(1) << 40, 2)};
  const int64_t blocks[][2] = {{16, 16}, {64, 32}, {32, 64}};
  for (int64_t sq : lengths)
    for (int64_t sk : lengths)
      for (bool causal : {false, true})
        for (const auto &window : windows)
          for (const auto &block : blocks) {
            AttentionProblem p = makeProblem(sq, sk, causal, window);
            int64_t bm = block[0], bn = block[1];
            // Both directions visit the same tiles: the forward's ranges
            // hold exactly the tiles with a visible (row, key).
            int64_t forward = 0, backward = 0;
            for (int64_t m = 0; m < (sq + bm - 1) / bm; ++m)
              forward += p.kvBlockRange(m, bm, bn).size();
            for (int64_t n = 0; n < (sk + bn - 1) / bn; ++n)
              backward += p.queryBlockRange(n, bm, bn).size();
            EXPECT_EQ(forward, backward);
            for (int64_t n = 0; n < (sk + bn - 1) / bn; ++n) {
              IndexRange range = p.queryBlockRange(n, bm, bn);
              for (int64_t m = 0; m < (sq + bm - 1) / bm; ++m) {
                bool sees = false;
                for (int64_t r = m * bm; r < std::min((m + 1) * bm, sq); ++r)
                  for (int64_t k = n * bn; k < std::min((n + 1) * bn, sk); ++k)
                    sees |= isVisible(p, r, k);
                bool inRange =
                    !range.empty() && m >= range.begin && m < range.end;
                EXPECT_EQ(inRange, sees)
                    << "Sq=" << sq << " Sk=" << sk << " causal=" << causal
                    << " block=" << bm << "x" << bn << " m=" << m
                    << " n=" << n;
              }
            }
          }
}
