//===- FragmentLayoutTest.cpp - The kernel's lane arithmetic vs PTX ISA ---===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// FragmentLayout is the index arithmetic the GPU kernel generator emits as
// IR; here it runs on integers (IntegerArith). The expected layouts are
// written out separately from the PTX ISA ("Matrix Fragments for mma.m16n8k16
// with floating point type", Figures 79, 81, 83; "Warp-level matrix load
// instruction: ldmatrix", Figure 104), and ldmatrix and the shared-memory
// banks are simulated, so that an indexing mistake fails here rather than on
// a GPU:
//
// - points read by hand off the PTX ISA's formulas and figures;
// - the formulas against the figures read as 8x8 blocks, for every lane;
// - a simulated ldmatrix, fed FragmentLayout's per-lane addresses,
//   delivering exactly the mma fragments, each tile element once, from plain
//   and from swizzled tiles; the C fragment of S being P's A fragment;
// - the swizzle: a bijection within each row, CuTe's Swizzle<3,3,S>, and
//   free of bank conflicts for cp.async stores and ldmatrix phases (which it
//   is not without it).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"

#include "attn/Analysis/IntegerArith.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>
#include <vector>

using namespace mlir::attn;

namespace {

IntegerArith arith;
FragmentLayout<IntegerArith> layout{arith};

constexpr int64_t kWarpSize = 32;
/// 16-bit elements in a 16-byte chunk.
constexpr int64_t kChunk = 8;
/// The row widths, in 16-bit elements, of the kernel's shared-memory tiles:
/// attn-to-nvgpu takes head dimensions D = Dv that are multiples of 64, and
/// FlashAttention-2 tilings go up to 256.
constexpr std::array<int64_t, 4> kRowWidths = {64, 128, 192, 256};

using Position = std::pair<int64_t, int64_t>; // (row, column)

//===----------------------------------------------------------------------===//
// The PTX ISA, written out independently of FragmentLayout
//===----------------------------------------------------------------------===//

// mma.m16n8k16 .f16/.bf16, the formulas: the (row, column) of a_i (i in
// [0, 8)), b_i (i in [0, 4); (k, n)) and c_i (i in [0, 4)) that lane `lane`
// holds. Element i is half i % 2 of .b32 register i / 2.
Position aElement(int64_t lane, int64_t i) {
  int64_t g = lane / 4, t = lane % 4;
  int64_t row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  int64_t col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}
Position bElement(int64_t lane, int64_t i) {
  int64_t g = lane / 4, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
Position cElement(int64_t lane, int64_t i) {
  int64_t g = lane / 4, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}

/// Figure 104 (ldmatrix, one 8x8 matrix of 16-bit elements): lane l holds
/// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1.
Position figure104(int64_t lane, int64_t half) {
  return {lane / 4, 2 * (lane % 4) + half};
}

/// Figure 79 read as 8x8 blocks: register r = {a_2r, a_2r+1} is laid out
/// like Figure 104 over the block at rows 8 (r % 2), columns 8 (r / 2).
Position aOracle(int64_t lane, int64_t i) {
  int64_t reg = i / 2;
  Position inBlock = figure104(lane, i % 2);
  return {inBlock.first + 8 * (reg % 2), inBlock.second + 8 * (reg / 2)};
}

/// Figure 81 read as 8x8 blocks: register r = {b_2r, b_2r+1} is the
/// transpose of Figure 104 over the block at rows (k) 8r.
Position bOracle(int64_t lane, int64_t i) {
  int64_t reg = i / 2;
  Position inBlock = figure104(lane, i % 2);
  return {inBlock.second + 8 * reg, inBlock.first};
}

/// Figure 83 read as 8x8 blocks: {c0, c1} is Figure 104 over rows 0-7,
/// {c2, c3} over rows 8-15.
Position cOracle(int64_t lane, int64_t i) {
  Position inBlock = figure104(lane, i % 2);
  return {inBlock.first + 8 * (i / 2), inBlock.second};
}

/// ldmatrix.m8n8.b16 of `numTiles` matrices: lanes 8j..8j+7 give the
/// (row, column) where rows 0-7 of matrix j start, 16-byte aligned; lane
/// `lane` receives, in halves 0 and 1 of register j, the elements of matrix
/// j at Figure 104's positions, of the matrix as stored or (.trans) of its
/// transpose. Returns the stored (row, column) of each.
std::array<std::array<Position, 2>, 4>
ldmatrix(const std::array<Position, 32> &addresses, int64_t numTiles,
         bool transpose, int64_t lane) {
  std::array<std::array<Position, 2>, 4> received{};
  for (int64_t j = 0; j < numTiles; ++j)
    for (int64_t h = 0; h < 2; ++h) {
      auto [r, c] = figure104(lane, h);
      if (transpose)
        std::swap(r, c);
      Position start = addresses[8 * j + r];
      EXPECT_EQ(start.second % kChunk, 0) << "row address not 16-byte aligned";
      received[j][h] = {start.first, start.second + c};
    }
  return received;
}

/// The shared-memory bank of a byte offset: 32 banks of 4 bytes.
int64_t sharedMemoryBank(int64_t byteOffset) { return (byteOffset / 4) % 32; }

/// The element offsets of an 8-lane phase, one 16-byte chunk per lane.
using Phase = std::array<int64_t, 8>;

/// The shared-memory wavefronts an 8-lane, 16-byte-per-lane access at the
/// element offsets `phase` takes: the most distinct 4-byte words any one bank
/// holds. 1 means conflict-free.
int64_t wavefronts(const Phase &phase) {
  std::map<int64_t, std::set<int64_t>> wordsOfBank;
  for (int64_t offset : phase)
    for (int64_t word = 0; word < 4; ++word) {
      int64_t byte = offset * 2 + 4 * word;
      wordsOfBank[sharedMemoryBank(byte)].insert(byte / 4);
    }
  size_t most = 0;
  for (auto &[bank, words] : wordsOfBank)
    most = std::max(most, words.size());
  return static_cast<int64_t>(most);
}

/// The distinct banks an 8-lane, 16-byte-per-lane access touches.
int64_t banksTouched(const Phase &phase) {
  std::set<int64_t> banks;
  for (int64_t offset : phase)
    for (int64_t word = 0; word < 4; ++word)
      banks.insert(sharedMemoryBank(offset * 2 + 4 * word));
  return static_cast<int64_t>(banks.size());
}

/// CuTe's Swizzle<B, M, S> on an element offset: XOR bits [M, M+B) with
/// bits [M+S, M+S+B).
int64_t cuteSwizzle(int64_t b, int64_t m, int64_t s, int64_t offset) {
  int64_t yyy = ((int64_t{1} << b) - 1) << (m + s);
  return offset ^ ((offset & yyy) >> s);
}

//===----------------------------------------------------------------------===//
// What the kernel's arithmetic gives
//===----------------------------------------------------------------------===//

template <size_t N>
using Fragment = std::array<std::array<Position, N>, kWarpSize>;

/// The kernel's ldmatrix row addresses in a 16x16 Q block (x4), an 8x16 K
/// block stored [n][k] (x2) and a 16x8 V block stored [k][n] (x2.trans).
std::array<Position, 32> qAddresses() {
  std::array<Position, 32> addresses;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    addresses[lane] = {layout.aRow(lane), kChunk * layout.aChunk(lane)};
  return addresses;
}
std::array<Position, 32> kAddresses() {
  std::array<Position, 32> addresses;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    addresses[lane] = {layout.bRow(lane), kChunk * layout.bChunk(lane)};
  return addresses;
}
std::array<Position, 32> vAddresses() {
  std::array<Position, 32> addresses;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    addresses[lane] = {layout.vRow(lane), kChunk * layout.vChunk(lane)};
  return addresses;
}

/// The A fragment the kernel's Q load delivers: (row, col) of a_i.
Fragment<8> kernelA() {
  Fragment<8> f;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    auto received = ldmatrix(qAddresses(), 4, /*transpose=*/false, lane);
    for (int64_t i = 0; i < 8; ++i)
      f[lane][i] = received[i / 2][i % 2];
  }
  return f;
}

/// The B fragment of S = Q K^T the kernel's K load delivers: (k, n) of b_i,
/// B(k, n) = K(n, k).
Fragment<4> kernelBFromK() {
  Fragment<4> f;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    auto received = ldmatrix(kAddresses(), 2, /*transpose=*/false, lane);
    for (int64_t i = 0; i < 4; ++i) {
      auto [n, k] = received[i / 2][i % 2];
      f[lane][i] = {k, n};
    }
  }
  return f;
}

/// The B fragment of O = P V the kernel's transposed V load delivers: (k, n)
/// of b_i, B(k, n) = V(k, n).
Fragment<4> kernelBFromV() {
  Fragment<4> f;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    auto received = ldmatrix(vAddresses(), 2, /*transpose=*/true, lane);
    for (int64_t i = 0; i < 4; ++i)
      f[lane][i] = received[i / 2][i % 2];
  }
  return f;
}

/// The C fragment as the kernel indexes it: c_(2i+j) at (cRow(g, i),
/// cCol(t, j)).
Fragment<4> kernelC() {
  Fragment<4> f;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    int64_t g = layout.groupId(lane), t = layout.laneInGroup(lane);
    for (int64_t i = 0; i < 4; ++i)
      f[lane][i] = {layout.cRow(g, i / 2), layout.cCol(t, i % 2)};
  }
  return f;
}

/// The (lane, element) of `f` that holds `pos`, or (-1, -1).
template <size_t N>
std::pair<int64_t, int64_t> ownerOf(const Fragment<N> &f, Position pos) {
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (size_t e = 0; e < N; ++e)
      if (f[lane][e] == pos)
        return {lane, static_cast<int64_t>(e)};
  return {-1, -1};
}

/// Every (lane, element) of `f` against `oracle`, and the rows x cols tile
/// covered exactly once.
template <size_t N, typename Oracle>
void checkFragment(const Fragment<N> &f, Oracle oracle, int64_t rows,
                   int64_t cols) {
  std::set<Position> covered;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (size_t e = 0; e < N; ++e) {
      Position p = f[lane][e];
      EXPECT_EQ(p, oracle(lane, static_cast<int64_t>(e)))
          << "lane " << lane << " element " << e;
      ASSERT_TRUE(p.first >= 0 && p.first < rows && p.second >= 0 &&
                  p.second < cols);
      EXPECT_TRUE(covered.insert(p).second)
          << "(" << p.first << ", " << p.second << ") held twice";
    }
  EXPECT_EQ(static_cast<int64_t>(covered.size()), rows * cols);
}

/// A fragment built from one of the formula tables.
template <size_t N> Fragment<N> table(Position (*element)(int64_t, int64_t)) {
  Fragment<N> f;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (size_t e = 0; e < N; ++e)
      f[lane][e] = element(lane, static_cast<int64_t>(e));
  return f;
}

/// Where element (row, col) of a swizzled row-major tile with `width`
/// columns is stored: its column within its row (Fa2CtaBody::swizzle), and
/// its
/// offset in elements from the tile's start.
int64_t swizzledColumn(int64_t row, int64_t col, int64_t width) {
  int64_t chunk = layout.swizzledChunk(col / kChunk, row);
  EXPECT_TRUE(chunk >= 0 && chunk < width / kChunk) << "chunk left its row";
  return chunk * kChunk + col % kChunk;
}
int64_t swizzledOffset(int64_t row, int64_t col, int64_t width) {
  return row * width + swizzledColumn(row, col, width);
}

//===----------------------------------------------------------------------===//
// mma.m16n8k16 fragments
//===----------------------------------------------------------------------===//

struct Point {
  int64_t lane, element;
  Position pos;
};

TEST(FragmentLayout, PtxIsaPoints) {
  // Hand-computed from the PTX ISA formulas and figures. Lane 5: groupID 1,
  // threadID_in_group 1; lane 14: 3, 2; lane 31: 7, 3. Each point holds in
  // the formula table, in what the kernel's loads deliver (A: Q load; B: K
  // and V loads; C: cRow/cCol), and the position is held by no other slot.
  Fragment<8> a = kernelA();
  for (Point p : std::vector<Point>{{5, 0, {1, 2}},
                                    {5, 1, {1, 3}},
                                    {5, 2, {9, 2}},
                                    {5, 3, {9, 3}},
                                    {5, 4, {1, 10}},
                                    {5, 5, {1, 11}},
                                    {5, 6, {9, 10}},
                                    {5, 7, {9, 11}},
                                    {0, 0, {0, 0}},
                                    {0, 7, {8, 9}},
                                    {14, 3, {11, 5}},
                                    {14, 4, {3, 12}},
                                    {31, 0, {7, 6}},
                                    {31, 2, {15, 6}},
                                    {31, 5, {7, 15}},
                                    {31, 7, {15, 15}}}) {
    EXPECT_EQ(aElement(p.lane, p.element), p.pos) << "a" << p.element;
    EXPECT_EQ(a[p.lane][p.element], p.pos) << "a" << p.element;
    EXPECT_EQ(ownerOf(a, p.pos), std::make_pair(p.lane, p.element));
  }
  // B: (row, col) = (k, n).
  Fragment<4> bK = kernelBFromK(), bV = kernelBFromV();
  for (Point p : std::vector<Point>{{5, 0, {2, 1}},
                                    {5, 1, {3, 1}},
                                    {5, 2, {10, 1}},
                                    {5, 3, {11, 1}},
                                    {0, 0, {0, 0}},
                                    {14, 1, {5, 3}},
                                    {14, 2, {12, 3}},
                                    {31, 0, {6, 7}},
                                    {31, 3, {15, 7}}}) {
    EXPECT_EQ(bElement(p.lane, p.element), p.pos) << "b" << p.element;
    EXPECT_EQ(bK[p.lane][p.element], p.pos) << "K, b" << p.element;
    EXPECT_EQ(bV[p.lane][p.element], p.pos) << "V, b" << p.element;
    EXPECT_EQ(ownerOf(bK, p.pos), std::make_pair(p.lane, p.element));
    EXPECT_EQ(ownerOf(bV, p.pos), std::make_pair(p.lane, p.element));
  }
  Fragment<4> c = kernelC();
  for (Point p : std::vector<Point>{{5, 0, {1, 2}},
                                    {5, 1, {1, 3}},
                                    {5, 2, {9, 2}},
                                    {5, 3, {9, 3}},
                                    {0, 0, {0, 0}},
                                    {14, 2, {11, 4}},
                                    {31, 3, {15, 7}}}) {
    EXPECT_EQ(cElement(p.lane, p.element), p.pos) << "c" << p.element;
    EXPECT_EQ(c[p.lane][p.element], p.pos) << "c" << p.element;
    EXPECT_EQ(ownerOf(c, p.pos), std::make_pair(p.lane, p.element));
  }
}

TEST(FragmentLayout, LaneDecompositionAndCFragment) {
  EXPECT_EQ(layout.groupId(0), 0);
  EXPECT_EQ(layout.laneInGroup(0), 0);
  EXPECT_EQ(layout.groupId(5), 1);
  EXPECT_EQ(layout.laneInGroup(5), 1);
  EXPECT_EQ(layout.groupId(14), 3);
  EXPECT_EQ(layout.laneInGroup(14), 2);
  EXPECT_EQ(layout.groupId(31), 7);
  EXPECT_EQ(layout.laneInGroup(31), 3);
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    int64_t g = layout.groupId(lane), t = layout.laneInGroup(lane);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        EXPECT_EQ((Position{layout.cRow(g, i), layout.cCol(t, j)}),
                  cElement(lane, 2 * i + j))
            << "lane " << lane;
  }
}

// The formulas against the figures, and what the kernel's loads deliver
// against the figures, each covering its tile exactly once.
TEST(FragmentLayout, AEveryLane) {
  checkFragment(table<8>(aElement), aOracle, 16, 16);
  checkFragment(kernelA(), aOracle, 16, 16);
}

TEST(FragmentLayout, BEveryLane) {
  checkFragment(table<4>(bElement), bOracle, 16, 8);
  checkFragment(kernelBFromK(), bOracle, 16, 8);
  checkFragment(kernelBFromV(), bOracle, 16, 8);
}

TEST(FragmentLayout, CEveryLane) {
  checkFragment(table<4>(cElement), cOracle, 16, 8);
  checkFragment(kernelC(), cOracle, 16, 8);
}

TEST(FragmentLayout, RegisterHalvesAreAdjacent) {
  // A .b32 register holds two halves of one row at adjacent columns (A), or
  // of one column at adjacent rows (B): what one 32-bit load or cvt packs.
  // The kernel also reads c_2i, c_2i+1 as a pair at cCol(t, 0).
  Fragment<8> a = kernelA();
  Fragment<4> bK = kernelBFromK(), bV = kernelBFromV(), c = kernelC();
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    for (int64_t reg = 0; reg < 4; ++reg) {
      Position lo = a[lane][2 * reg], hi = a[lane][2 * reg + 1];
      EXPECT_EQ(hi, (Position{lo.first, lo.second + 1}));
      EXPECT_EQ(lo.second % 2, 0);
    }
    for (int64_t reg = 0; reg < 2; ++reg) {
      for (const Fragment<4> *b : {&bK, &bV}) {
        Position lo = (*b)[lane][2 * reg], hi = (*b)[lane][2 * reg + 1];
        EXPECT_EQ(hi, (Position{lo.first + 1, lo.second}));
      }
      Position lo = c[lane][2 * reg], hi = c[lane][2 * reg + 1];
      EXPECT_EQ(hi, (Position{lo.first, lo.second + 1}));
    }
  }
}

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

TEST(FragmentLayout, LdmatrixModelIsFigure104) {
  // The simulator itself: four 8x8 matrices stacked, matrix j at rows 8j.
  std::array<Position, 32> stacked;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    stacked[lane] = {lane, 0};
  auto at = [&](int64_t lane, int64_t half, bool transpose) {
    return ldmatrix(stacked, 1, transpose, lane)[0][half];
  };
  EXPECT_EQ(at(0, 0, false), (Position{0, 0}));
  EXPECT_EQ(at(0, 1, false), (Position{0, 1}));
  EXPECT_EQ(at(5, 0, false), (Position{1, 2}));
  EXPECT_EQ(at(5, 1, false), (Position{1, 3}));
  EXPECT_EQ(at(31, 1, false), (Position{7, 7}));
  // .trans: the same positions of the transposed matrix.
  EXPECT_EQ(at(5, 0, true), (Position{2, 1}));
  EXPECT_EQ(at(5, 1, true), (Position{3, 1}));
  EXPECT_EQ(at(14, 0, true), (Position{4, 3}));
  EXPECT_EQ(at(31, 0, true), (Position{6, 7}));
  for (bool transpose : {false, true})
    for (int64_t j = 0; j < 4; ++j) {
      std::set<Position> covered;
      for (int64_t lane = 0; lane < kWarpSize; ++lane)
        for (int64_t half = 0; half < 2; ++half) {
          Position got = ldmatrix(stacked, 4, transpose, lane)[j][half];
          Position want = figure104(lane, half);
          if (transpose)
            std::swap(want.first, want.second);
          EXPECT_EQ(got, (Position{want.first + 8 * j, want.second}))
              << "lane " << lane << " half " << half;
          covered.insert(got);
        }
      EXPECT_EQ(covered.size(), 64u);
    }
}

TEST(FragmentLayout, LdmatrixAddressPoints) {
  // Q, x4: lane l passes (l % 16, 8 (l / 16)).
  std::array<Position, 32> q = qAddresses(), k = kAddresses(), v = vAddresses();
  EXPECT_EQ(q[0], (Position{0, 0}));
  EXPECT_EQ(q[9], (Position{9, 0}));
  EXPECT_EQ(q[17], (Position{1, 8}));
  EXPECT_EQ(q[31], (Position{15, 8}));
  // K stored [n][k], x2: lanes 0-7 keys 0-7 at k 0, lanes 8-15 at k 8.
  EXPECT_EQ(k[0], (Position{0, 0}));
  EXPECT_EQ(k[7], (Position{7, 0}));
  EXPECT_EQ(k[9], (Position{1, 8}));
  EXPECT_EQ(k[15], (Position{7, 8}));
  // V stored [k][n], x2.trans: lanes 0-15 keys 0-15 at n 0.
  EXPECT_EQ(v[0], (Position{0, 0}));
  EXPECT_EQ(v[9], (Position{9, 0}));
  EXPECT_EQ(v[15], (Position{15, 0}));
}

TEST(FragmentLayout, X2LoadsRepeatTheirAddressesInLanes16To31) {
  // .x2 reads lanes 0-15's addresses; lanes 16-31 must still hold valid
  // ones on sm_75, which they do by repeating lanes 0-15's.
  std::array<Position, 32> k = kAddresses(), v = vAddresses();
  for (int64_t lane = 16; lane < kWarpSize; ++lane) {
    EXPECT_EQ(k[lane], k[lane - 16]) << "K, lane " << lane;
    EXPECT_EQ(v[lane], v[lane - 16]) << "V, lane " << lane;
  }
}

TEST(FragmentLayout, QLoadGivesTheAFragment) {
  // A 16x16 tile of Q stored row-major: lane l addresses row aRow(l) at
  // column 8 * aChunk(l).
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    auto received = ldmatrix(qAddresses(), 4, /*transpose=*/false, lane);
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t h = 0; h < 2; ++h)
        EXPECT_EQ(received[reg][h], aElement(lane, 2 * reg + h))
            << "lane " << lane << " a" << 2 * reg + h;
  }
}

TEST(FragmentLayout, KLoadGivesTheBFragmentOfQKt) {
  // K stored [n][k] (row n = key); B(k, n) = K(n, k). Lanes 0-15 address.
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    auto received = ldmatrix(kAddresses(), 2, /*transpose=*/false, lane);
    for (int64_t reg = 0; reg < 2; ++reg)
      for (int64_t h = 0; h < 2; ++h) {
        auto [n, k] = received[reg][h]; // stored (row, column) = (n, k)
        EXPECT_EQ((Position{k, n}), bElement(lane, 2 * reg + h))
            << "lane " << lane << " b" << 2 * reg + h;
      }
  }
}

TEST(FragmentLayout, TransposedVLoadGivesTheBFragmentOfPV) {
  // V stored [k][n] (row k = key); B(k, n) = V(k, n), read transposed.
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    auto received = ldmatrix(vAddresses(), 2, /*transpose=*/true, lane);
    for (int64_t reg = 0; reg < 2; ++reg)
      for (int64_t h = 0; h < 2; ++h)
        EXPECT_EQ(received[reg][h], bElement(lane, 2 * reg + h))
            << "lane " << lane << " b" << 2 * reg + h;
  }
}

//===----------------------------------------------------------------------===//
// P in registers
//===----------------------------------------------------------------------===//

TEST(FragmentLayout, SAccumulatorsAreTheAFragmentOfP) {
  // P's A fragment for keys [16 kk, 16 kk + 16) is built from the C
  // fragments of S's n8 tiles 2 kk and 2 kk + 1: a0a1 = C(2kk)[0], a2a3 =
  // C(2kk)[1], a4a5 = C(2kk + 1)[0], a6a7 = C(2kk + 1)[1], i.e. a_i = c_(i%4)
  // of tile i / 4 in the same lane, one register from one pair of
  // accumulators. Both in the formula tables and in the kernel's C indexing
  // against what its Q load delivers as A.
  Fragment<8> a = kernelA();
  Fragment<4> c = kernelC();
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t h = 0; h < 2; ++h) {
        int64_t tile = reg / 2, i = reg % 2;
        Position fromTable = cElement(lane, 2 * i + h);
        EXPECT_EQ((Position{fromTable.first, fromTable.second + 8 * tile}),
                  aElement(lane, 2 * reg + h))
            << "lane " << lane;
        Position fromKernel = c[lane][2 * i + h];
        EXPECT_EQ((Position{fromKernel.first, fromKernel.second + 8 * tile}),
                  a[lane][2 * reg + h])
            << "lane " << lane;
      }
}

//===----------------------------------------------------------------------===//
// Swizzle
//===----------------------------------------------------------------------===//

TEST(FragmentLayout, SwizzleHandPoints) {
  // Chunk c of row r is stored at chunk c ^ (r % 8).
  EXPECT_EQ(layout.swizzledChunk(3, 0), 3);
  EXPECT_EQ(layout.swizzledChunk(0, 1), 1);
  EXPECT_EQ(layout.swizzledChunk(2, 5), 7);
  EXPECT_EQ(layout.swizzledChunk(7, 7), 0);
  EXPECT_EQ(layout.swizzledChunk(1, 9), 0);
  EXPECT_EQ(swizzledOffset(1, 0, 64), 72);
  EXPECT_EQ(swizzledOffset(5, 19, 64), 379); // 5*64 + 7*8 + 3
  // Wider rows: still r % 8, within each group of 8 chunks.
  EXPECT_EQ(swizzledOffset(3, 9, 128), 401);     // 3*128 + 2*8 + 1
  EXPECT_EQ(swizzledOffset(3, 75, 128), 467);    // chunk 9 ^ 3 = 10
  EXPECT_EQ(swizzledOffset(10, 130, 192), 2066); // 10*192 + (16^2)*8 + 2
  // The bank model.
  EXPECT_EQ(sharedMemoryBank(0), 0);
  EXPECT_EQ(sharedMemoryBank(132), 1);
  EXPECT_EQ(sharedMemoryBank(127), 31);
}

TEST(FragmentLayout, SwizzleIsCuteSwizzle) {
  // Swizzle<3, 3, log2 W> for W chunks a row (a power of two): for 64
  // elements a row the familiar Swizzle<3,3,3>.
  for (int64_t width : {64, 128, 256}) {
    int64_t logChunks = 0;
    while ((int64_t{1} << logChunks) < width / kChunk)
      ++logChunks;
    for (int64_t row = 0; row < 64; ++row)
      for (int64_t col = 0; col < width; ++col)
        EXPECT_EQ(swizzledOffset(row, col, width),
                  cuteSwizzle(3, 3, logChunks, row * width + col))
            << "width " << width << " (" << row << ", " << col << ")";
  }
}

TEST(FragmentLayout, SwizzleIsABijectionPerRow) {
  for (int64_t width : kRowWidths) {
    int64_t rows = 64, rowChunks = width / kChunk;
    std::vector<int> hits(rows * width, 0);
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t col = 0; col < width; ++col) {
        int64_t offset = swizzledOffset(row, col, width);
        ASSERT_TRUE(offset >= row * width && offset < (row + 1) * width)
            << "width " << width << ": (" << row << ", " << col
            << ") left its row";
        EXPECT_EQ(offset % kChunk, col % kChunk);
        ++hits[offset];
      }
    EXPECT_TRUE(
        std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }))
        << "width " << width;
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t chunk = 0; chunk < rowChunks; ++chunk) {
        int64_t stored = layout.swizzledChunk(chunk, row);
        // Its own inverse; within the chunk's aligned group of 8; depending
        // on the row mod 8 only (the kernel swizzles with the lane's phase).
        EXPECT_EQ(layout.swizzledChunk(stored, row), chunk);
        EXPECT_EQ(stored / 8, chunk / 8);
        EXPECT_EQ(stored, layout.swizzledChunk(chunk, row % 8));
      }
  }
}

TEST(FragmentLayout, CpAsyncStoresAreConflictFree) {
  // The kernel's copy: thread tid stores chunk tid % chunksPerRow of row
  // tid / chunksPerRow, so 8 lanes store consecutive chunks of one row from
  // a multiple of 8.
  for (int64_t width : kRowWidths) {
    int64_t chunksPerRow = width / kChunk;
    for (int64_t first = 0; first < 64 * chunksPerRow; first += 8) {
      Phase phase;
      for (int64_t lane = 0; lane < 8; ++lane) {
        int64_t q = first + lane;
        phase[lane] = swizzledOffset(q / chunksPerRow,
                                     kChunk * (q % chunksPerRow), width);
      }
      EXPECT_EQ(banksTouched(phase), 32) << "width " << width;
      EXPECT_EQ(wavefronts(phase), 1) << "width " << width;
    }
  }
}

TEST(FragmentLayout, LdmatrixPhasesAreConflictFree) {
  // Each 8-lane phase of an ldmatrix reads one 16-byte chunk of 8
  // consecutive rows: with the swizzle the 8 rows cover all 32 banks in one
  // wavefront, from any start row; stored plainly (rows of 128 bytes or
  // more, the same chunk) they all hit the same 4 banks, 8 wavefronts, so
  // the swizzle is what makes the first check pass.
  for (int64_t width : kRowWidths)
    for (int64_t chunk = 0; chunk < width / kChunk; ++chunk) {
      for (int64_t firstRow = 0; firstRow < 56; ++firstRow) {
        Phase phase;
        for (int64_t r = 0; r < 8; ++r)
          phase[r] = swizzledOffset(firstRow + r, kChunk * chunk, width);
        EXPECT_EQ(banksTouched(phase), 32)
            << "width " << width << " rows " << firstRow << "+ chunk " << chunk;
        EXPECT_EQ(wavefronts(phase), 1);
      }
      Phase plain;
      for (int64_t r = 0; r < 8; ++r)
        plain[r] = r * width + kChunk * chunk;
      EXPECT_EQ(banksTouched(plain), 4) << "width " << width;
      EXPECT_EQ(wavefronts(plain), 8) << "width " << width;
    }
}

enum class Operand { Q, K, V };

/// Loads every block of a 64 x `width` swizzled tile as the kernel does for
/// `operand` (Q: 16x16 blocks, x4; K: 8 keys x 16, x2; V: 16 keys x 8,
/// x2.trans), and checks what each lane receives, that every phase is
/// conflict-free, and that the row each lane addresses swizzles like the
/// lane itself (the kernel's per-lane phase).
void checkSwizzledLoads(Operand operand, int64_t width) {
  const int64_t rows = 64;
  // stored[row][column] = the logical (row, column) stored there.
  std::vector<std::vector<Position>> stored(rows, std::vector<Position>(width));
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t col = 0; col < width; ++col)
      stored[row][swizzledColumn(row, col, width)] = {row, col};
  int64_t blockRows = operand == Operand::K ? 8 : 16;
  int64_t blockCols = operand == Operand::V ? 8 : 16;
  int64_t numTiles = operand == Operand::Q ? 4 : 2;
  bool transpose = operand == Operand::V;
  std::array<Position, 32> local = operand == Operand::Q   ? qAddresses()
                                   : operand == Operand::K ? kAddresses()
                                                           : vAddresses();
  for (int64_t rowBlock = 0; rowBlock < rows; rowBlock += blockRows)
    for (int64_t colBlock = 0; colBlock < width; colBlock += blockCols) {
      std::array<Position, 32> addresses;
      for (int64_t lane = 0; lane < kWarpSize; ++lane) {
        int64_t row = rowBlock + local[lane].first;
        int64_t col = colBlock + local[lane].second;
        addresses[lane] = {row, swizzledColumn(row, col, width)};
        EXPECT_EQ(layout.swizzledChunk(col / kChunk, row),
                  layout.swizzledChunk(col / kChunk, lane));
      }
      for (int64_t matrix = 0; matrix < numTiles; ++matrix) {
        Phase phase;
        for (int64_t r = 0; r < 8; ++r) {
          Position a = addresses[8 * matrix + r];
          phase[r] = a.first * width + a.second;
        }
        EXPECT_EQ(wavefronts(phase), 1) << "width " << width << " matrix "
                                        << matrix << " at row " << rowBlock;
      }
      for (int64_t lane = 0; lane < kWarpSize; ++lane) {
        auto received = ldmatrix(addresses, numTiles, transpose, lane);
        for (int64_t reg = 0; reg < numTiles; ++reg)
          for (int64_t h = 0; h < 2; ++h) {
            auto [r, c] = received[reg][h];
            Position logical = stored[r][c];
            Position got = {logical.first - rowBlock,
                            logical.second - colBlock};
            Position want = operand == Operand::Q ? aElement(lane, 2 * reg + h)
                                                  : bElement(lane, 2 * reg + h);
            // K is stored [n][k]: B(k, n) = K(n, k).
            if (operand == Operand::K)
              std::swap(got.first, got.second);
            EXPECT_EQ(got, want) << "width " << width << " block (" << rowBlock
                                 << ", " << colBlock << ") lane " << lane
                                 << " register " << reg << " half " << h;
          }
      }
    }
}

TEST(FragmentLayout, LdmatrixOfSwizzledQGivesTheAFragment) {
  for (int64_t width : kRowWidths)
    checkSwizzledLoads(Operand::Q, width);
}

TEST(FragmentLayout, LdmatrixOfSwizzledKGivesTheBFragment) {
  for (int64_t width : kRowWidths)
    checkSwizzledLoads(Operand::K, width);
}

TEST(FragmentLayout, LdmatrixTransOfSwizzledVGivesTheBFragment) {
  for (int64_t width : kRowWidths)
    checkSwizzledLoads(Operand::V, width);
}

} // namespace
