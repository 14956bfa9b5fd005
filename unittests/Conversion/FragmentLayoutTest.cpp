//===- FragmentLayoutTest.cpp - The kernel's lane arithmetic vs PTX ISA ---===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// FragmentLayout is the index arithmetic the GPU kernel generator emits as
// IR; here it runs on integers. The expected layouts are written out
// separately from the PTX ISA ("Matrix Fragments for mma.m16n8k16 with
// floating point type", "Warp-level matrix load instruction: ldmatrix"), and
// ldmatrix is simulated, so that an indexing mistake fails here rather than
// on a GPU.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"

#include "gtest/gtest.h"

#include <array>
#include <set>
#include <utility>

using namespace mlir::attn;

namespace {

struct IntArith {
  using Value = int64_t;
  Value constant(int64_t v) { return v; }
  Value rem(Value x, int64_t y) { return x % y; }
  Value div(Value x, int64_t y) { return x / y; }
  Value add(Value x, int64_t y) { return x + y; }
  Value mul(Value x, int64_t y) { return x * y; }
  Value xorOp(Value x, Value y) { return x ^ y; }
};

using Position = std::pair<int64_t, int64_t>; // (row, column)

// PTX ISA, mma.m16n8k16 .f16/.bf16: the element of register pair `reg`
// (0-3 for A, 0-1 for B), half `h`, that lane `lane` holds.
Position aElement(int64_t lane, int64_t reg, int64_t h) {
  int64_t g = lane / 4, t = lane % 4;
  int64_t i = 2 * reg + h; // a0..a7
  int64_t row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  int64_t col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}
Position bElement(int64_t lane, int64_t reg, int64_t h) {
  int64_t g = lane / 4, t = lane % 4;
  int64_t i = 2 * reg + h; // b0..b3
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
Position cElement(int64_t lane, int64_t i) { // c0..c3
  int64_t g = lane / 4, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

/// ldmatrix.m8n8: lanes 8j..8j+7 give the start (row, column) of the rows
/// of matrix j; lane l receives, of matrix j, the elements (l/4, 2(l%4)) and
/// (l/4, 2(l%4)+1) of the matrix as stored, or of its transpose.
std::array<std::array<Position, 2>, 4>
ldmatrix(const std::array<Position, 32> &addresses, int64_t numTiles,
         bool transpose, int64_t lane) {
  std::array<std::array<Position, 2>, 4> received{};
  for (int64_t j = 0; j < numTiles; ++j)
    for (int64_t h = 0; h < 2; ++h) {
      int64_t r = lane / 4, c = 2 * (lane % 4) + h;
      if (transpose)
        std::swap(r, c);
      Position start = addresses[8 * j + r];
      received[j][h] = {start.first, start.second + c};
    }
  return received;
}

IntArith arith;
FragmentLayout<IntArith> layout{arith};

TEST(FragmentLayout, PtxIsaPoints) {
  // Hand-read from the PTX ISA figures: lane 5 (g = 1, t = 1).
  EXPECT_EQ(aElement(5, 0, 0), (Position{1, 2}));
  EXPECT_EQ(aElement(5, 1, 1), (Position{9, 3}));
  EXPECT_EQ(aElement(5, 2, 0), (Position{1, 10}));
  EXPECT_EQ(bElement(5, 1, 0), (Position{10, 1}));
  EXPECT_EQ(cElement(5, 3), (Position{9, 3}));
}

TEST(FragmentLayout, LaneDecompositionAndCFragment) {
  for (int64_t lane = 0; lane < 32; ++lane) {
    int64_t g = layout.groupId(lane), t = layout.laneInGroup(lane);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        EXPECT_EQ((Position{layout.cRow(g, i), layout.cCol(t, j)}),
                  cElement(lane, 2 * i + j))
            << "lane " << lane;
  }
}

TEST(FragmentLayout, QLoadGivesTheAFragment) {
  // A 16x16 tile of Q stored row-major: lane l addresses row aRow(l) at
  // column 8 * aChunk(l).
  std::array<Position, 32> addresses;
  for (int64_t lane = 0; lane < 32; ++lane)
    addresses[lane] = {layout.aRow(lane), 8 * layout.aChunk(lane)};
  for (int64_t lane = 0; lane < 32; ++lane) {
    auto received = ldmatrix(addresses, 4, /*transpose=*/false, lane);
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t h = 0; h < 2; ++h)
        EXPECT_EQ(received[reg][h], aElement(lane, reg, h))
            << "lane " << lane << " a" << 2 * reg + h;
  }
}

TEST(FragmentLayout, KLoadGivesTheBFragmentOfQKt) {
  // K stored [n][k] (row n = key); B(k, n) = K(n, k). Lanes 0-15 address.
  std::array<Position, 32> addresses;
  for (int64_t lane = 0; lane < 32; ++lane)
    addresses[lane] = {layout.bRow(lane), 8 * layout.bChunk(lane)};
  for (int64_t lane = 0; lane < 32; ++lane) {
    auto received = ldmatrix(addresses, 2, /*transpose=*/false, lane);
    for (int64_t reg = 0; reg < 2; ++reg)
      for (int64_t h = 0; h < 2; ++h) {
        auto [n, k] = received[reg][h]; // stored (row, column) = (n, k)
        EXPECT_EQ((Position{k, n}), bElement(lane, reg, h))
            << "lane " << lane << " b" << 2 * reg + h;
      }
  }
}

TEST(FragmentLayout, TransposedVLoadGivesTheBFragmentOfPV) {
  // V stored [k][n] (row k = key); B(k, n) = V(k, n), read transposed.
  std::array<Position, 32> addresses;
  for (int64_t lane = 0; lane < 32; ++lane)
    addresses[lane] = {layout.vRow(lane), 8 * layout.vChunk(lane)};
  for (int64_t lane = 0; lane < 32; ++lane) {
    auto received = ldmatrix(addresses, 2, /*transpose=*/true, lane);
    for (int64_t reg = 0; reg < 2; ++reg)
      for (int64_t h = 0; h < 2; ++h)
        EXPECT_EQ(received[reg][h], bElement(lane, reg, h))
            << "lane " << lane << " b" << 2 * reg + h;
  }
}

TEST(FragmentLayout, SAccumulatorsAreTheAFragmentOfP) {
  // P's A fragment for keys [16 kk, 16 kk + 16) is built from the C
  // fragments of S's n8 tiles 2 kk and 2 kk + 1: a0a1 = C(2kk)[0], a2a3 =
  // C(2kk)[1], a4a5 = C(2kk + 1)[0], a6a7 = C(2kk + 1)[1].
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t h = 0; h < 2; ++h) {
        int64_t tile = reg / 2, i = reg % 2;
        Position c = cElement(lane, 2 * i + h);
        EXPECT_EQ((Position{c.first, c.second + 8 * tile}),
                  aElement(lane, reg, h))
            << "lane " << lane;
      }
}

/// The shared-memory bank (4-byte words, 32 banks) of element (row, col)
/// of a swizzled tile of 16-bit elements with `rowChunks` 16-byte chunks a
/// row.
int64_t bank(int64_t row, int64_t col, int64_t rowChunks) {
  int64_t chunk = layout.swizzledChunk(col / 8, row);
  int64_t byte = row * rowChunks * 16 + chunk * 16 + (col % 8) * 2;
  return (byte / 4) % 32;
}

TEST(FragmentLayout, SwizzleIsABijectionPerRow) {
  for (int64_t rowChunks : {8, 16, 32})
    for (int64_t row = 0; row < 64; ++row) {
      std::set<int64_t> chunks;
      for (int64_t chunk = 0; chunk < rowChunks; ++chunk)
        chunks.insert(layout.swizzledChunk(chunk, row));
      EXPECT_EQ(static_cast<int64_t>(chunks.size()), rowChunks);
      EXPECT_EQ(*chunks.rbegin(), rowChunks - 1);
    }
}

TEST(FragmentLayout, LdmatrixPhasesAreConflictFree) {
  // Each 8-lane phase of an ldmatrix reads one 16-byte row of 8 matrix rows:
  // with the swizzle the 8 rows cover all 32 banks; stored plainly (rows of
  // 128 bytes or more, the same chunk) they all hit the same 4 banks.
  for (int64_t rowChunks : {8, 16, 32})
    for (int64_t chunk = 0; chunk < rowChunks; ++chunk) {
      std::set<int64_t> banks, plainBanks;
      for (int64_t r = 0; r < 8; ++r)
        for (int64_t word = 0; word < 4; ++word) {
          banks.insert(bank(r, chunk * 8 + 2 * word, rowChunks));
          int64_t plain = r * rowChunks * 16 + chunk * 16 + word * 4;
          plainBanks.insert((plain / 4) % 32);
        }
      EXPECT_EQ(banks.size(), 32u) << rowChunks << " chunks, chunk " << chunk;
      EXPECT_EQ(plainBanks.size(), 4u);
    }
}

} // namespace
