//===- MmaLayoutTest.cpp - mma/ldmatrix/swizzle maps vs the PTX ISA -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Checks the index functions of attn/Target/NVPTX/MmaLayout.h against the
// PTX ISA ("Matrix Fragments for mma.m16n8k16 with floating point type",
// "Warp-level matrix load instruction: ldmatrix"), so that an indexing
// mistake is caught on a machine without a GPU:
//
// - points read by hand off the PTX ISA's formulas and figures;
// - every lane of every fragment against oracles written here independently
//   of the library (the fragments as 8x8 blocks laid out like ldmatrix's
//   Figure 104), inverses, and coverage of each tile exactly once;
// - a simulated ldmatrix, fed the library's per-lane addresses, delivering
//   exactly the mma fragments, also from swizzled shared-memory tiles;
// - bank conflicts of 8-lane, 16-byte phases with and without the swizzle.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/NVPTX/MmaLayout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <map>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

namespace mlir::attn::nvptx {
// For gtest's failure messages.
void PrintTo(const MatrixCoord &c, std::ostream *os) {
  *os << "(" << c.row << ", " << c.col << ")";
}
void PrintTo(const FragmentSlot &s, std::ostream *os) {
  *os << "{lane " << s.lane << ", element " << s.element << "}";
}
void PrintTo(const AccumulatorSource &s, std::ostream *os) {
  *os << "{tile " << s.nTile << ", c" << s.cElement << "}";
}
void PrintTo(const LdmatrixRow &r, std::ostream *os) {
  *os << "{matrix " << r.matrix << ", row " << r.row << "}";
}
} // namespace mlir::attn::nvptx

using namespace mlir::attn::nvptx;

namespace {

/// The row widths, in 16-bit elements, of the shared-memory tiles the kernel
/// uses (head dimensions 32, 64, 128, 256).
constexpr std::array<int64_t, 4> kRowWidths = {32, 64, 128, 256};

//===----------------------------------------------------------------------===//
// Oracles written from the PTX ISA, independently of the library
//===----------------------------------------------------------------------===//

/// Figure 104 (ldmatrix, one 8x8 matrix of 16-bit elements): lane l holds
/// row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1.
MatrixCoord figure104(int64_t lane, int64_t half) {
  return {lane / 4, 2 * (lane % 4) + half};
}

/// Figure 79 read as 8x8 blocks: register r = {a_2r, a_2r+1} is laid out
/// like Figure 104 over the block at rows 8 (r % 2), columns 8 (r / 2).
MatrixCoord aOracle(int64_t lane, int64_t element) {
  int64_t reg = element / 2;
  MatrixCoord inBlock = figure104(lane, element % 2);
  return {inBlock.row + 8 * (reg % 2), inBlock.col + 8 * (reg / 2)};
}

/// Figure 81 read as 8x8 blocks: register r = {b_2r, b_2r+1} is the
/// transpose of Figure 104 over the block at rows (k) 8r.
MatrixCoord bOracle(int64_t lane, int64_t element) {
  int64_t reg = element / 2;
  MatrixCoord inBlock = figure104(lane, element % 2);
  return {inBlock.col + 8 * reg, inBlock.row};
}

/// Figure 83 read as 8x8 blocks: {c0, c1} is Figure 104 over rows 0-7,
/// {c2, c3} over rows 8-15.
MatrixCoord cOracle(int64_t lane, int64_t element) {
  MatrixCoord inBlock = figure104(lane, element % 2);
  return {inBlock.row + 8 * (element / 2), inBlock.col};
}

//===----------------------------------------------------------------------===//
// mma.m16n8k16 fragments
//===----------------------------------------------------------------------===//

TEST(MmaFragment, LaneDecomposition) {
  EXPECT_EQ(groupId(0), 0);
  EXPECT_EQ(threadIdInGroup(0), 0);
  EXPECT_EQ(groupId(5), 1);
  EXPECT_EQ(threadIdInGroup(5), 1);
  EXPECT_EQ(groupId(14), 3);
  EXPECT_EQ(threadIdInGroup(14), 2);
  EXPECT_EQ(groupId(31), 7);
  EXPECT_EQ(threadIdInGroup(31), 3);
}

// Hand-computed from the PTX ISA formulas (and the figures they describe).
// Lane 5: groupID 1, threadID_in_group 1. Lane 14: 3, 2. Lane 31: 7, 3.
TEST(MmaFragment, PtxIsaPointsOfA) {
  EXPECT_EQ(mmaAElementCoord(5, 0), (MatrixCoord{1, 2}));
  EXPECT_EQ(mmaAElementCoord(5, 1), (MatrixCoord{1, 3}));
  EXPECT_EQ(mmaAElementCoord(5, 2), (MatrixCoord{9, 2}));
  EXPECT_EQ(mmaAElementCoord(5, 3), (MatrixCoord{9, 3}));
  EXPECT_EQ(mmaAElementCoord(5, 4), (MatrixCoord{1, 10}));
  EXPECT_EQ(mmaAElementCoord(5, 5), (MatrixCoord{1, 11}));
  EXPECT_EQ(mmaAElementCoord(5, 6), (MatrixCoord{9, 10}));
  EXPECT_EQ(mmaAElementCoord(5, 7), (MatrixCoord{9, 11}));
  EXPECT_EQ(mmaAElementCoord(0, 0), (MatrixCoord{0, 0}));
  EXPECT_EQ(mmaAElementCoord(0, 7), (MatrixCoord{8, 9}));
  EXPECT_EQ(mmaAElementCoord(14, 3), (MatrixCoord{11, 5}));
  EXPECT_EQ(mmaAElementCoord(14, 4), (MatrixCoord{3, 12}));
  EXPECT_EQ(mmaAElementCoord(31, 0), (MatrixCoord{7, 6}));
  EXPECT_EQ(mmaAElementCoord(31, 2), (MatrixCoord{15, 6}));
  EXPECT_EQ(mmaAElementCoord(31, 5), (MatrixCoord{7, 15}));
  EXPECT_EQ(mmaAElementCoord(31, 7), (MatrixCoord{15, 15}));

  EXPECT_EQ(mmaAElementOwner(0, 0), (FragmentSlot{0, 0}));
  EXPECT_EQ(mmaAElementOwner(1, 2), (FragmentSlot{5, 0}));
  EXPECT_EQ(mmaAElementOwner(8, 9), (FragmentSlot{0, 7}));
  EXPECT_EQ(mmaAElementOwner(3, 12), (FragmentSlot{14, 4}));
  EXPECT_EQ(mmaAElementOwner(15, 15), (FragmentSlot{31, 7}));
}

TEST(MmaFragment, PtxIsaPointsOfB) {
  // (row, col) = (k, n).
  EXPECT_EQ(mmaBElementCoord(5, 0), (MatrixCoord{2, 1}));
  EXPECT_EQ(mmaBElementCoord(5, 1), (MatrixCoord{3, 1}));
  EXPECT_EQ(mmaBElementCoord(5, 2), (MatrixCoord{10, 1}));
  EXPECT_EQ(mmaBElementCoord(5, 3), (MatrixCoord{11, 1}));
  EXPECT_EQ(mmaBElementCoord(0, 0), (MatrixCoord{0, 0}));
  EXPECT_EQ(mmaBElementCoord(14, 1), (MatrixCoord{5, 3}));
  EXPECT_EQ(mmaBElementCoord(14, 2), (MatrixCoord{12, 3}));
  EXPECT_EQ(mmaBElementCoord(31, 0), (MatrixCoord{6, 7}));
  EXPECT_EQ(mmaBElementCoord(31, 3), (MatrixCoord{15, 7}));

  EXPECT_EQ(mmaBElementOwner(2, 1), (FragmentSlot{5, 0}));
  EXPECT_EQ(mmaBElementOwner(12, 3), (FragmentSlot{14, 2}));
  EXPECT_EQ(mmaBElementOwner(15, 7), (FragmentSlot{31, 3}));
}

TEST(MmaFragment, PtxIsaPointsOfC) {
  EXPECT_EQ(mmaCElementCoord(5, 0), (MatrixCoord{1, 2}));
  EXPECT_EQ(mmaCElementCoord(5, 1), (MatrixCoord{1, 3}));
  EXPECT_EQ(mmaCElementCoord(5, 2), (MatrixCoord{9, 2}));
  EXPECT_EQ(mmaCElementCoord(5, 3), (MatrixCoord{9, 3}));
  EXPECT_EQ(mmaCElementCoord(14, 2), (MatrixCoord{11, 4}));
  EXPECT_EQ(mmaCElementCoord(31, 3), (MatrixCoord{15, 7}));

  EXPECT_EQ(mmaCElementOwner(0, 0), (FragmentSlot{0, 0}));
  EXPECT_EQ(mmaCElementOwner(11, 4), (FragmentSlot{14, 2}));
  EXPECT_EQ(mmaCElementOwner(15, 7), (FragmentSlot{31, 3}));
}

/// Every (lane, element) of a fragment against `oracle`, through the
/// inverse, and covering the rows x cols tile exactly once.
template <typename CoordFn, typename OwnerFn, typename OracleFn>
void checkFragment(CoordFn coord, OwnerFn owner, OracleFn oracle,
                   int64_t elementsPerLane, int64_t rows, int64_t cols) {
  std::set<std::pair<int64_t, int64_t>> covered;
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t e = 0; e < elementsPerLane; ++e) {
      MatrixCoord c = coord(lane, e);
      EXPECT_EQ(c, oracle(lane, e)) << "lane " << lane << " element " << e;
      ASSERT_TRUE(c.row >= 0 && c.row < rows && c.col >= 0 && c.col < cols);
      EXPECT_EQ(owner(c.row, c.col), (FragmentSlot{lane, e}));
      covered.insert({c.row, c.col});
    }
  EXPECT_EQ(static_cast<int64_t>(covered.size()), rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      FragmentSlot s = owner(r, c);
      EXPECT_EQ(coord(s.lane, s.element), (MatrixCoord{r, c}));
    }
}

TEST(MmaFragment, AEveryLane) {
  checkFragment(mmaAElementCoord, mmaAElementOwner, aOracle,
                kAElementsPerLane, kMmaM, kMmaK);
}

TEST(MmaFragment, BEveryLane) {
  checkFragment(mmaBElementCoord, mmaBElementOwner, bOracle,
                kBElementsPerLane, kMmaK, kMmaN);
}

TEST(MmaFragment, CEveryLane) {
  checkFragment(mmaCElementCoord, mmaCElementOwner, cOracle,
                kCElementsPerLane, kMmaM, kMmaN);
}

TEST(MmaFragment, RegisterHalvesAreAdjacentColumns) {
  // A .b32 register holds two halves of one row at adjacent columns (A), or
  // of one column at adjacent rows (B): what one 32-bit load or cvt packs.
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    for (int64_t reg = 0; reg < 4; ++reg) {
      MatrixCoord lo = mmaAElementCoord(lane, 2 * reg);
      MatrixCoord hi = mmaAElementCoord(lane, 2 * reg + 1);
      EXPECT_EQ(hi, (MatrixCoord{lo.row, lo.col + 1}));
      EXPECT_EQ(lo.col % 2, 0);
    }
    for (int64_t reg = 0; reg < 2; ++reg) {
      MatrixCoord lo = mmaBElementCoord(lane, 2 * reg);
      MatrixCoord hi = mmaBElementCoord(lane, 2 * reg + 1);
      EXPECT_EQ(hi, (MatrixCoord{lo.row + 1, lo.col}));
    }
  }
}

//===----------------------------------------------------------------------===//
// P in registers
//===----------------------------------------------------------------------===//

TEST(MmaPInRegisters, HandPoints) {
  EXPECT_EQ(pFragmentSource(0), (AccumulatorSource{0, 0}));
  EXPECT_EQ(pFragmentSource(1), (AccumulatorSource{0, 1}));
  EXPECT_EQ(pFragmentSource(2), (AccumulatorSource{0, 2}));
  EXPECT_EQ(pFragmentSource(3), (AccumulatorSource{0, 3}));
  EXPECT_EQ(pFragmentSource(4), (AccumulatorSource{1, 0}));
  EXPECT_EQ(pFragmentSource(7), (AccumulatorSource{1, 3}));
}

TEST(MmaPInRegisters, SAccumulatorsAreTheAFragmentOfP) {
  // S's 16x16 block = n8 tiles 0 (keys 0-7) and 1 (keys 8-15). The element
  // of P that lane l's a_i must hold is the one its own c_j of tile t holds.
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t i = 0; i < kAElementsPerLane; ++i) {
      AccumulatorSource src = pFragmentSource(i);
      ASSERT_TRUE(src.nTile == 0 || src.nTile == 1);
      ASSERT_TRUE(src.cElement >= 0 && src.cElement < kCElementsPerLane);
      MatrixCoord c = mmaCElementCoord(lane, src.cElement);
      MatrixCoord inS = {c.row, c.col + kMmaN * src.nTile};
      EXPECT_EQ(inS, mmaAElementCoord(lane, i)) << "lane " << lane << " a" << i;
      // Through the inverses too: the A owner of that S element is this lane.
      EXPECT_EQ(mmaAElementOwner(inS.row, inS.col), (FragmentSlot{lane, i}));
    }
}

TEST(MmaPInRegisters, OneConversionPerRegister) {
  // A register {a_2r, a_2r+1} comes from two consecutive accumulators of one
  // tile, {c_2m, c_2m+1}, so one cvt.rn.f16x2.f32 builds it.
  for (int64_t reg = 0; reg < 4; ++reg) {
    AccumulatorSource lo = pFragmentSource(2 * reg);
    AccumulatorSource hi = pFragmentSource(2 * reg + 1);
    EXPECT_EQ(lo.nTile, hi.nTile);
    EXPECT_EQ(lo.cElement % 2, 0);
    EXPECT_EQ(hi.cElement, lo.cElement + 1);
  }
}

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

TEST(Ldmatrix, AddressTable) {
  // .x4: threads 0-7 give addr0-addr7 (matrix 0), 8-15 matrix 1, ...
  EXPECT_EQ(ldmatrixAddressedRow(0), (LdmatrixRow{0, 0}));
  EXPECT_EQ(ldmatrixAddressedRow(7), (LdmatrixRow{0, 7}));
  EXPECT_EQ(ldmatrixAddressedRow(8), (LdmatrixRow{1, 0}));
  EXPECT_EQ(ldmatrixAddressedRow(23), (LdmatrixRow{2, 7}));
  EXPECT_EQ(ldmatrixAddressedRow(31), (LdmatrixRow{3, 7}));
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    LdmatrixRow r = ldmatrixAddressedRow(lane);
    EXPECT_EQ(ldmatrixAddressLane(r.matrix, r.row), lane);
  }
}

TEST(Ldmatrix, Figure104Points) {
  EXPECT_EQ(ldmatrixReceivedElement(0, 0, false), (MatrixCoord{0, 0}));
  EXPECT_EQ(ldmatrixReceivedElement(0, 1, false), (MatrixCoord{0, 1}));
  EXPECT_EQ(ldmatrixReceivedElement(5, 0, false), (MatrixCoord{1, 2}));
  EXPECT_EQ(ldmatrixReceivedElement(5, 1, false), (MatrixCoord{1, 3}));
  EXPECT_EQ(ldmatrixReceivedElement(31, 1, false), (MatrixCoord{7, 7}));
  // .trans: the same positions of the transposed matrix.
  EXPECT_EQ(ldmatrixReceivedElement(5, 0, true), (MatrixCoord{2, 1}));
  EXPECT_EQ(ldmatrixReceivedElement(5, 1, true), (MatrixCoord{3, 1}));
  EXPECT_EQ(ldmatrixReceivedElement(14, 0, true), (MatrixCoord{4, 3}));
  EXPECT_EQ(ldmatrixReceivedElement(31, 0, true), (MatrixCoord{6, 7}));
}

TEST(Ldmatrix, DeliveryEveryLane) {
  for (bool transpose : {false, true}) {
    std::set<std::pair<int64_t, int64_t>> covered;
    for (int64_t lane = 0; lane < kWarpSize; ++lane)
      for (int64_t half = 0; half < 2; ++half) {
        MatrixCoord got = ldmatrixReceivedElement(lane, half, transpose);
        MatrixCoord want = figure104(lane, half);
        if (transpose)
          std::swap(want.row, want.col);
        EXPECT_EQ(got, want) << "lane " << lane << " half " << half;
        covered.insert({got.row, got.col});
      }
    EXPECT_EQ(covered.size(), 64u);
  }
}

/// A simulated ldmatrix.m8n8.b16 of `numMatrices` matrices out of `smem`,
/// lane a's row address being element offset `rowStart[a]`: the value lane
/// `lane` receives in half `half` of register `reg`. Requires each row
/// address to be 16-byte aligned, as the PTX ISA does.
int64_t simulateLdmatrix(const std::vector<int64_t> &smem,
                         llvm::ArrayRef<int64_t> rowStart, bool transpose,
                         int64_t lane, int64_t reg, int64_t half) {
  MatrixCoord e = ldmatrixReceivedElement(lane, half, transpose);
  int64_t start = rowStart[ldmatrixAddressLane(reg, e.row)];
  EXPECT_EQ(start % kChunkElements, 0) << "row address not 16-byte aligned";
  return smem[start + e.col];
}

/// A tile of `rows` x `cols` 16-bit elements stored row-major (no swizzle) in
/// simulated shared memory; element (r, c) holds the value r * cols + c.
std::vector<int64_t> plainTile(int64_t rows, int64_t cols) {
  std::vector<int64_t> smem(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    smem[i] = i;
  return smem;
}

MatrixCoord decode(int64_t value, int64_t cols) {
  return {value / cols, value % cols};
}

TEST(Ldmatrix, X4AddressPoints) {
  EXPECT_EQ(ldmatrixX4AAddress(0), (MatrixCoord{0, 0}));
  EXPECT_EQ(ldmatrixX4AAddress(9), (MatrixCoord{9, 0}));
  EXPECT_EQ(ldmatrixX4AAddress(17), (MatrixCoord{1, 8}));
  EXPECT_EQ(ldmatrixX4AAddress(31), (MatrixCoord{15, 8}));
  // K stored [n][k]: (n, k).
  EXPECT_EQ(ldmatrixX4KAddress(0), (MatrixCoord{0, 0}));
  EXPECT_EQ(ldmatrixX4KAddress(9), (MatrixCoord{1, 8}));
  EXPECT_EQ(ldmatrixX4KAddress(17), (MatrixCoord{9, 0}));
  EXPECT_EQ(ldmatrixX4KAddress(31), (MatrixCoord{15, 8}));
  // V stored [k][n]: (k, n).
  EXPECT_EQ(ldmatrixX4TransVAddress(9), (MatrixCoord{9, 0}));
  EXPECT_EQ(ldmatrixX4TransVAddress(17), (MatrixCoord{1, 8}));
  EXPECT_EQ(ldmatrixX4TransVAddress(31), (MatrixCoord{15, 8}));
  EXPECT_EQ(ldmatrixX4BRegister(0).nTile, 0);
  EXPECT_EQ(ldmatrixX4BRegister(1).bRegister, 1);
  EXPECT_EQ(ldmatrixX4BRegister(2).nTile, 1);
  EXPECT_EQ(ldmatrixX4BRegister(2).bRegister, 0);
}

TEST(Ldmatrix, X4OfQGivesTheAFragment) {
  std::vector<int64_t> smem = plainTile(16, 16);
  std::array<int64_t, kWarpSize> rowStart;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    MatrixCoord a = ldmatrixX4AAddress(lane);
    rowStart[lane] = a.row * 16 + a.col;
  }
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t half = 0; half < 2; ++half)
        EXPECT_EQ(decode(simulateLdmatrix(smem, rowStart, false, lane, reg,
                                          half),
                         16),
                  mmaAElementCoord(lane, 2 * reg + half))
            << "lane " << lane << " a" << 2 * reg + half;
}

TEST(Ldmatrix, X4OfKGivesTheBFragmentsOfQKt) {
  // K's 16 keys x 16 head-dimension columns stored [n][k]; B(k, n) = K(n, k).
  std::vector<int64_t> smem = plainTile(16, 16);
  std::array<int64_t, kWarpSize> rowStart;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    MatrixCoord a = ldmatrixX4KAddress(lane);
    rowStart[lane] = a.row * 16 + a.col;
  }
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t half = 0; half < 2; ++half) {
        MatrixCoord nk = decode(
            simulateLdmatrix(smem, rowStart, false, lane, reg, half), 16);
        BRegisterSlot slot = ldmatrixX4BRegister(reg);
        EXPECT_EQ((MatrixCoord{nk.col, nk.row - kMmaN * slot.nTile}),
                  mmaBElementCoord(lane, 2 * slot.bRegister + half))
            << "lane " << lane << " register " << reg << " half " << half;
      }
}

TEST(Ldmatrix, X4TransOfVGivesTheBFragmentsOfPV) {
  // V's 16 keys x 16 head-dimension columns stored [k][n]; B(k, n) = V(k, n).
  std::vector<int64_t> smem = plainTile(16, 16);
  std::array<int64_t, kWarpSize> rowStart;
  for (int64_t lane = 0; lane < kWarpSize; ++lane) {
    MatrixCoord a = ldmatrixX4TransVAddress(lane);
    rowStart[lane] = a.row * 16 + a.col;
  }
  for (int64_t lane = 0; lane < kWarpSize; ++lane)
    for (int64_t reg = 0; reg < 4; ++reg)
      for (int64_t half = 0; half < 2; ++half) {
        MatrixCoord kn = decode(
            simulateLdmatrix(smem, rowStart, true, lane, reg, half), 16);
        BRegisterSlot slot = ldmatrixX4BRegister(reg);
        EXPECT_EQ((MatrixCoord{kn.row, kn.col - kMmaN * slot.nTile}),
                  mmaBElementCoord(lane, 2 * slot.bRegister + half))
            << "lane " << lane << " register " << reg << " half " << half;
      }
}

TEST(Ldmatrix, X2IsTheFirstHalfOfX4) {
  // .x2 reads lanes 0-15's addresses; lanes 16-31 repeat them (the PTX ISA
  // asks for valid addresses in all lanes on sm_75). Registers 0 and 1 are
  // then n8 tile 0's B fragment, for K and (.trans) for V.
  std::vector<int64_t> smem = plainTile(16, 16);
  for (bool transpose : {false, true}) {
    std::array<int64_t, kWarpSize> rowStart;
    for (int64_t lane = 0; lane < kWarpSize; ++lane) {
      MatrixCoord a = transpose ? ldmatrixX4TransVAddress(lane % 16)
                                : ldmatrixX4KAddress(lane % 16);
      rowStart[lane] = a.row * 16 + a.col;
    }
    for (int64_t lane = 0; lane < kWarpSize; ++lane)
      for (int64_t reg = 0; reg < 2; ++reg)
        for (int64_t half = 0; half < 2; ++half) {
          MatrixCoord got = decode(
              simulateLdmatrix(smem, rowStart, transpose, lane, reg, half),
              16);
          MatrixCoord kn = transpose ? got : MatrixCoord{got.col, got.row};
          EXPECT_EQ(kn, mmaBElementCoord(lane, 2 * reg + half))
              << (transpose ? "V" : "K") << " lane " << lane;
        }
  }
}

//===----------------------------------------------------------------------===//
// Swizzle
//===----------------------------------------------------------------------===//

/// The element offsets of an 8-lane phase, one 16-byte chunk per lane.
using Phase = std::array<int64_t, 8>;

/// The shared-memory wavefronts an 8-lane, 16-byte-per-lane access at the
/// element offsets `phase` takes: the most distinct 4-byte words any one bank
/// holds. 1 means conflict-free.
int64_t wavefronts(const Phase &phase) {
  std::map<int64_t, std::set<int64_t>> wordsOfBank;
  for (int64_t offset : phase)
    for (int64_t word = 0; word < kChunkBytes / 4; ++word) {
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
    for (int64_t word = 0; word < kChunkBytes / 4; ++word)
      banks.insert(sharedMemoryBank(offset * 2 + 4 * word));
  return static_cast<int64_t>(banks.size());
}

int64_t log2Of(int64_t x) {
  int64_t n = 0;
  while ((int64_t{1} << n) < x)
    ++n;
  return n;
}

/// CuTe's Swizzle<B, M, S> on an element offset: XOR bits [M, M+B) with
/// bits [M+S, M+S+B).
int64_t cuteSwizzle(int64_t b, int64_t m, int64_t s, int64_t offset) {
  int64_t yyy = ((int64_t{1} << b) - 1) << (m + s);
  return offset ^ ((offset & yyy) >> s);
}

TEST(Swizzle, HandPoints) {
  // Rows of 64 elements: chunk ^ (row % 8).
  EXPECT_EQ(swizzleChunk(0, 3, 64), 3);
  EXPECT_EQ(swizzleChunk(1, 0, 64), 1);
  EXPECT_EQ(swizzleChunk(5, 2, 64), 7);
  EXPECT_EQ(swizzleChunk(7, 7, 64), 0);
  EXPECT_EQ(swizzleChunk(9, 1, 64), 0);
  EXPECT_EQ(swizzledElementOffset(1, 0, 64), 72);
  EXPECT_EQ(swizzledElementOffset(5, 19, 64), 379); // 5*64 + 7*8 + 3
  // Rows of 128: still row % 8, within each group of 8 chunks.
  EXPECT_EQ(swizzledElementOffset(3, 9, 128), 401);  // 3*128 + 2*8 + 1
  EXPECT_EQ(swizzledElementOffset(3, 75, 128), 467); // chunk 9 ^ 3 = 10
  // Rows of 32: two rows a 128-byte line, mask (row / 2) % 4.
  EXPECT_EQ(swizzleMask(1, 32), 0);
  EXPECT_EQ(swizzleMask(5, 32), 2);
  EXPECT_EQ(swizzledElementOffset(1, 8, 32), 40);
  EXPECT_EQ(swizzledElementOffset(5, 8, 32), 184); // 5*32 + (1^2)*8
  EXPECT_EQ(linearElementOffset(5, 8, 32), 168);
  EXPECT_EQ(sharedMemoryBank(0), 0);
  EXPECT_EQ(sharedMemoryBank(132), 1);
  EXPECT_EQ(sharedMemoryBank(127), 31);
}

TEST(Swizzle, SupportedWidths) {
  EXPECT_TRUE(isSwizzleRowWidth(8));
  EXPECT_TRUE(isSwizzleRowWidth(32));
  EXPECT_TRUE(isSwizzleRowWidth(256));
  EXPECT_FALSE(isSwizzleRowWidth(4));
  EXPECT_FALSE(isSwizzleRowWidth(48));
}

TEST(Swizzle, IsCuteSwizzle) {
  // Swizzle<min(3, log2 W), 3, max(3, log2 W)> for W chunks a row: for 64
  // elements a row the familiar Swizzle<3,3,3>.
  for (int64_t width : {8, 16, 32, 64, 128, 256}) {
    int64_t logChunks = log2Of(width / kChunkElements);
    int64_t b = std::min<int64_t>(3, logChunks);
    int64_t s = std::max<int64_t>(3, logChunks);
    for (int64_t row = 0; row < 64; ++row)
      for (int64_t col = 0; col < width; ++col)
        EXPECT_EQ(swizzledElementOffset(row, col, width),
                  cuteSwizzle(b, 3, s, linearElementOffset(row, col, width)))
            << "width " << width << " (" << row << ", " << col << ")";
  }
}

TEST(Swizzle, BijectiveWithinTileAndRow) {
  for (int64_t width : {8, 16, 32, 64, 128, 256}) {
    int64_t rows = 64;
    std::vector<int> hits(rows * width, 0);
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t col = 0; col < width; ++col) {
        int64_t offset = swizzledElementOffset(row, col, width);
        ASSERT_TRUE(offset >= row * width && offset < (row + 1) * width)
            << "width " << width << ": (" << row << ", " << col
            << ") left its row";
        EXPECT_EQ(offset % kChunkElements, col % kChunkElements);
        ++hits[offset];
      }
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(),
                            [](int h) { return h == 1; }))
        << "width " << width;
    // The XOR is its own inverse.
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t chunk = 0; chunk < width / kChunkElements; ++chunk)
        EXPECT_EQ(swizzleChunk(row, swizzleChunk(row, chunk, width), width),
                  chunk);
  }
}

TEST(Swizzle, CpAsyncStoresAreConflictFree) {
  // 8 lanes each store 16 bytes of the row-major tile, consecutive chunks
  // from a multiple of 8 (one row's 128 bytes, or two rows of 64 bytes).
  for (int64_t width : kRowWidths) {
    int64_t chunksPerRow = width / kChunkElements;
    for (int64_t first = 0; first < 64 * chunksPerRow; first += 8) {
      Phase phase;
      for (int64_t lane = 0; lane < 8; ++lane) {
        int64_t q = first + lane;
        phase[lane] = swizzledElementOffset(q / chunksPerRow,
                                            kChunkElements * (q % chunksPerRow),
                                            width);
      }
      EXPECT_EQ(banksTouched(phase), 32) << "width " << width;
      EXPECT_EQ(wavefronts(phase), 1) << "width " << width;
    }
  }
}

TEST(Swizzle, LdmatrixPhasesAreConflictFree) {
  // An ldmatrix phase: 8 lanes read 8 consecutive rows at one logical chunk.
  for (int64_t width : kRowWidths)
    for (int64_t firstRow = 0; firstRow < 56; ++firstRow)
      for (int64_t chunk = 0; chunk < width / kChunkElements; ++chunk) {
        Phase phase;
        for (int64_t r = 0; r < 8; ++r)
          phase[r] = swizzledElementOffset(firstRow + r,
                                           kChunkElements * chunk, width);
        EXPECT_EQ(banksTouched(phase), 32)
            << "width " << width << " rows " << firstRow << "+ chunk " << chunk;
        EXPECT_EQ(wavefronts(phase), 1);
      }
}

TEST(Swizzle, UnswizzledLdmatrixPhasesConflict) {
  // Without the swizzle the 8 rows of a phase fall on the same 16-byte
  // column of 128-byte lines: rows of 128+ bytes hit 4 banks, 8 wavefronts;
  // rows of 64 bytes 8 banks, 4 wavefronts. So the swizzle is what the
  // previous test checks.
  for (int64_t width : kRowWidths)
    for (int64_t chunk = 0; chunk < width / kChunkElements; ++chunk) {
      Phase phase;
      for (int64_t r = 0; r < 8; ++r)
        phase[r] = linearElementOffset(r, kChunkElements * chunk, width);
      EXPECT_LT(banksTouched(phase), 32);
      EXPECT_EQ(wavefronts(phase), width >= 64 ? 8 : 4) << "width " << width;
    }
}

/// Element (row, col) of a tile with `width` columns stored swizzled; the
/// value at (row, col) is row * width + col.
std::vector<int64_t> swizzledTile(int64_t rows, int64_t width) {
  std::vector<int64_t> smem(rows * width, -1);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t col = 0; col < width; ++col)
      smem[swizzledElementOffset(row, col, width)] = row * width + col;
  return smem;
}

enum class Operand { Q, K, V };

/// Loads every 16x16 block of a 64 x `width` swizzled tile with
/// ldmatrix.x4 as `operand` and checks what each lane receives, and that
/// every phase is conflict-free.
void checkSwizzledLoads(Operand operand, int64_t width) {
  const int64_t rows = 64;
  std::vector<int64_t> smem = swizzledTile(rows, width);
  bool transpose = operand == Operand::V;
  for (int64_t rowBlock = 0; rowBlock < rows; rowBlock += 16)
    for (int64_t colBlock = 0; colBlock < width; colBlock += 16) {
      std::array<int64_t, kWarpSize> rowStart;
      for (int64_t lane = 0; lane < kWarpSize; ++lane) {
        MatrixCoord a = operand == Operand::Q   ? ldmatrixX4AAddress(lane)
                        : operand == Operand::K ? ldmatrixX4KAddress(lane)
                                                : ldmatrixX4TransVAddress(lane);
        rowStart[lane] =
            swizzledElementOffset(rowBlock + a.row, colBlock + a.col, width);
      }
      for (int64_t matrix = 0; matrix < 4; ++matrix) {
        Phase phase;
        for (int64_t r = 0; r < 8; ++r)
          phase[r] = rowStart[8 * matrix + r];
        EXPECT_EQ(wavefronts(phase), 1) << "width " << width << " matrix "
                                        << matrix << " at row " << rowBlock;
      }
      for (int64_t lane = 0; lane < kWarpSize; ++lane)
        for (int64_t reg = 0; reg < 4; ++reg)
          for (int64_t half = 0; half < 2; ++half) {
            MatrixCoord got = decode(
                simulateLdmatrix(smem, rowStart, transpose, lane, reg, half),
                width);
            MatrixCoord local = {got.row - rowBlock, got.col - colBlock};
            MatrixCoord want;
            if (operand == Operand::Q) {
              want = mmaAElementCoord(lane, 2 * reg + half);
            } else {
              BRegisterSlot slot = ldmatrixX4BRegister(reg);
              MatrixCoord kn = mmaBElementCoord(lane, 2 * slot.bRegister + half);
              // K stored [n][k], V stored [k][n]; n within the 16 of the block.
              want = operand == Operand::K
                         ? MatrixCoord{kn.col + kMmaN * slot.nTile, kn.row}
                         : MatrixCoord{kn.row, kn.col + kMmaN * slot.nTile};
            }
            EXPECT_EQ(local, want)
                << "width " << width << " block (" << rowBlock << ", "
                << colBlock << ") lane " << lane << " register " << reg
                << " half " << half;
          }
    }
}

TEST(Swizzle, LdmatrixOfSwizzledQGivesTheAFragment) {
  for (int64_t width : kRowWidths)
    checkSwizzledLoads(Operand::Q, width);
}

TEST(Swizzle, LdmatrixOfSwizzledKGivesTheBFragments) {
  for (int64_t width : kRowWidths)
    checkSwizzledLoads(Operand::K, width);
}

TEST(Swizzle, LdmatrixTransOfSwizzledVGivesTheBFragments) {
  for (int64_t width : kRowWidths)
    checkSwizzledLoads(Operand::V, width);
}

} // namespace
