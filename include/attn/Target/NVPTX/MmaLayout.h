//===- MmaLayout.h - Lane/element maps of mma, ldmatrix, swizzle -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The index functions the FlashAttention-2 GPU kernel generator uses to place
// 16-bit (f16/bf16) operands and f32 accumulators of the tensor-core
// instructions, as plain integer functions so that unit tests check them
// against NVIDIA's PTX ISA on a machine without a GPU. See
// docs/gpu-fragments.md for tables and diagrams.
//
// What each group models:
//
// - mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32: which
//   lane holds which element of the A (16x16), B (16x8) and C/D (16x8 f32)
//   fragments. PTX ISA, section "Matrix Fragments for mma.m16n8k16 with
//   floating point type" (9.7.14.5.8), Figures 79, 81 and 83. With
//   groupID = %laneid >> 2 and threadID_in_group = %laneid % 4:
//     A: row = groupID for a_i, i in {0,1,4,5}, groupID + 8 otherwise;
//        col = threadID_in_group * 2 + (i & 1), + 8 for i >= 4.
//     B: row = threadID_in_group * 2 + (i & 1), + 8 for i >= 2;
//        col = groupID.
//     C: row = groupID for c0, c1, groupID + 8 for c2, c3;
//        col = threadID_in_group * 2 + (i & 1).
//   Element i of A or B is half (i & 1) of .b32 register i / 2, the low half
//   first ("Elements (low to high)").
// - The FlashAttention-2 identity that keeps P in registers: the C fragments
//   of two adjacent n8 tiles of S = Q K^T, rounded to 16 bits, are the A
//   fragment of the next mma (P V) with no data movement between lanes.
// - ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{,.trans}.shared.b16: which lane
//   gives the row address of which 8x8 matrix, and which elements each lane
//   receives. PTX ISA, "Warp-level matrix load instruction: ldmatrix"
//   (9.7.14.5.15), its address table and Figure 104; plus the per-lane
//   addresses that make an x4 load deliver exactly the mma A fragment (Q),
//   the B fragments of S = Q K^T (K stored [key][d]) and, with .trans, the B
//   fragments of O = P V (V stored [key][d]).
// - The XOR swizzle of 16-byte chunks in shared-memory tiles of 16-bit
//   elements that keeps the 8-lane phases of ldmatrix and of 16-byte
//   cp.async.cg.shared.global stores free of bank conflicts.
//
// Coordinates are relative to the tile or fragment they name; a `lane` is the
// PTX %laneid, 0-31. Arguments out of range are programming errors and are
// asserted.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_NVPTX_MMALAYOUT_H
#define ATTN_TARGET_NVPTX_MMALAYOUT_H

#include <cstdint>

namespace mlir::attn::nvptx {

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Threads in a warp.
constexpr int64_t kWarpSize = 32;
/// M, N and K of mma.m16n8k16.
constexpr int64_t kMmaM = 16;
constexpr int64_t kMmaN = 8;
constexpr int64_t kMmaK = 16;
/// 16-bit elements of the A fragment each lane holds (a0..a7, in four .b32
/// registers).
constexpr int64_t kAElementsPerLane = 8;
/// 16-bit elements of the B fragment each lane holds (b0..b3, in two .b32
/// registers).
constexpr int64_t kBElementsPerLane = 4;
/// f32 elements of the C/D fragment each lane holds (c0..c3).
constexpr int64_t kCElementsPerLane = 4;
/// Rows and columns of the matrices ldmatrix.m8n8 loads.
constexpr int64_t kLdmatrixDim = 8;
/// Bytes in one shared-memory chunk: one ldmatrix row address, one cp.async
/// of 16 bytes.
constexpr int64_t kChunkBytes = 16;
/// 16-bit elements in one chunk.
constexpr int64_t kChunkElements = 8;
/// Shared-memory banks, each 4 bytes wide.
constexpr int64_t kSharedMemoryBanks = 32;

//===----------------------------------------------------------------------===//
// mma.m16n8k16 fragments
//===----------------------------------------------------------------------===//

/// A position in a matrix or tile: row and column, from 0.
struct MatrixCoord {
  int64_t row;
  int64_t col;

  /// Both coordinates equal.
  bool operator==(const MatrixCoord &other) const {
    return row == other.row && col == other.col;
  }
  /// Some coordinate differs.
  bool operator!=(const MatrixCoord &other) const { return !(*this == other); }
};

/// One element of a distributed fragment: the lane that holds it and its
/// index among that lane's elements (a_i, b_i or c_i).
struct FragmentSlot {
  int64_t lane;
  int64_t element;

  /// Both fields equal.
  bool operator==(const FragmentSlot &other) const {
    return lane == other.lane && element == other.element;
  }
  /// Some field differs.
  bool operator!=(const FragmentSlot &other) const { return !(*this == other); }
};

/// PTX ISA's groupID = %laneid >> 2: the fragment row (mod 8) of A and C and
/// the fragment column of B that the lane holds.
int64_t groupId(int64_t lane);

/// PTX ISA's threadID_in_group = %laneid % 4: the lane's place in its group
/// of four, which picks its pair of columns (A, C) or rows (B).
int64_t threadIdInGroup(int64_t lane);

/// mma.m16n8k16 A (16x16, .row, f16/bf16): the (row, col) of element a_i,
/// i = `element` in [0, 8), held by `lane`.
MatrixCoord mmaAElementCoord(int64_t lane, int64_t element);

/// The inverse of mmaAElementCoord: the lane and a_i that hold A(row, col),
/// row and col in [0, 16).
FragmentSlot mmaAElementOwner(int64_t row, int64_t col);

/// mma.m16n8k16 B (16x8, .col, f16/bf16): the (row, col) = (k, n) of element
/// b_i, i = `element` in [0, 4), held by `lane`.
MatrixCoord mmaBElementCoord(int64_t lane, int64_t element);

/// The inverse of mmaBElementCoord: the lane and b_i that hold B(row, col),
/// row (k) in [0, 16), col (n) in [0, 8).
FragmentSlot mmaBElementOwner(int64_t row, int64_t col);

/// mma.m16n8k16 C/D (16x8, f32): the (row, col) of element c_i, i =
/// `element` in [0, 4), held by `lane`.
MatrixCoord mmaCElementCoord(int64_t lane, int64_t element);

/// The inverse of mmaCElementCoord: the lane and c_i that hold C(row, col),
/// row in [0, 16), col in [0, 8).
FragmentSlot mmaCElementOwner(int64_t row, int64_t col);

//===----------------------------------------------------------------------===//
// P in registers
//===----------------------------------------------------------------------===//

/// Where an element of P's A fragment comes from: accumulator c_`cElement`
/// of n8 tile `nTile` (0 or 1) of the 16x16 block of S, in the same lane.
struct AccumulatorSource {
  int64_t nTile;
  int64_t cElement;

  /// Both fields equal.
  bool operator==(const AccumulatorSource &other) const {
    return nTile == other.nTile && cElement == other.cElement;
  }
};

/// For O = P V, where P's 16x16 A operand (rows = queries, cols = 16 keys)
/// is the 16x16 block of S = Q K^T computed as two m16n8k16 accumulators
/// (n8 tiles 0 and 1, keys 0-7 and 8-15): the accumulator element that a_i,
/// i = `aElement` in [0, 8), is, in the same lane. It is c_(i % 4) of tile
/// i / 4, so A register r (a_2r, a_2r+1) packs c_(2(r%2)), c_(2(r%2)+1) of
/// tile r / 2, converted to 16 bits (cvt.rn.{f16x2,bf16x2}.f32).
AccumulatorSource pFragmentSource(int64_t aElement);

//===----------------------------------------------------------------------===//
// ldmatrix.m8n8 .b16
//===----------------------------------------------------------------------===//

/// A row of one of the 8x8 matrices of an ldmatrix.
struct LdmatrixRow {
  int64_t matrix;
  int64_t row;

  /// Both fields equal.
  bool operator==(const LdmatrixRow &other) const {
    return matrix == other.matrix && row == other.row;
  }
};

/// ldmatrix.m8n8.{x1,x2,x4}: the matrix and row whose 16-byte start address
/// `lane` supplies: lanes 8j..8j+7 give rows 0-7 of matrix j (with .x1 only
/// lanes 0-7 are read, with .x2 lanes 0-15).
LdmatrixRow ldmatrixAddressedRow(int64_t lane);

/// The inverse of ldmatrixAddressedRow: the lane that supplies row `row` of
/// matrix `matrix`.
int64_t ldmatrixAddressLane(int64_t matrix, int64_t row);

/// ldmatrix.m8n8.b16: the element, as stored (row = the matrix row whose
/// address was supplied, col = the 16-bit element within that 16-byte row),
/// that `lane` receives in half `half` (0 = low 16 bits) of its destination
/// register for each matrix. Without .trans lane l receives row l/4, columns
/// 2(l%4) + half (Figure 104); with .trans it receives that element of the
/// transposed matrix, i.e. stored row 2(l%4) + half, column l/4.
MatrixCoord ldmatrixReceivedElement(int64_t lane, int64_t half,
                                    bool transpose);

/// ldmatrix.sync.aligned.m8n8.x4.shared.b16 of a 16x16 A tile (Q) stored
/// row-major: the (row, col) of the tile whose address `lane` passes, so
/// that destination registers 0-3 are the mma A registers {a0,a1}, {a2,a3},
/// {a4,a5}, {a6,a7}. Matrices: rows 0-7 / 8-15 of cols 0-7, then of cols
/// 8-15; lane l passes (l % 16, 8 * (l / 16)).
MatrixCoord ldmatrixX4AAddress(int64_t lane);

/// ldmatrix.sync.aligned.m8n8.x4.shared.b16 (no .trans) of the B operand of
/// S = Q K^T from a 16x16 block of K stored [n][k] (row = key n, col = head
/// dimension k): the (n, k) whose address `lane` passes, so that destination
/// register r is B register r % 2 ({b0,b1} or {b2,b3}) of n8 tile r / 2
/// (keys 0-7, 8-15; see ldmatrixX4BRegister). Lane l passes
/// (l % 8 + 8 * (l / 16), 8 * ((l / 8) % 2)). Lanes 0-15 alone are the
/// .x2 load of n8 tile 0.
MatrixCoord ldmatrixX4KAddress(int64_t lane);

/// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 of the B operand of
/// O = P V from a 16x16 block of V stored [k][n] (row = key k, col = head
/// dimension n): the (k, n) whose address `lane` passes, so that destination
/// register r is B register r % 2 of n8 tile r / 2 (head-dimension columns
/// 0-7, 8-15). Lane l passes (l % 16, 8 * (l / 16)). Lanes 0-15 alone are the
/// .x2.trans load of n8 tile 0.
MatrixCoord ldmatrixX4TransVAddress(int64_t lane);

/// What destination register `reg` (0-3) of ldmatrixX4KAddress's and
/// ldmatrixX4TransVAddress's loads holds.
struct BRegisterSlot {
  /// The n8 tile, 0 or 1.
  int64_t nTile;
  /// The mma B register of that tile: 0 = {b0,b1}, 1 = {b2,b3}.
  int64_t bRegister;
};

/// The n8 tile and B register that x4 destination register `reg` holds for
/// the K and V loads: {reg / 2, reg % 2}.
BRegisterSlot ldmatrixX4BRegister(int64_t reg);

//===----------------------------------------------------------------------===//
// Shared-memory swizzle
//===----------------------------------------------------------------------===//

/// Whether `rowElements` 16-bit elements a row is a row width the swizzle
/// supports: a power of two, at least one chunk (8 elements).
bool isSwizzleRowWidth(int64_t rowElements);

/// The mask XORed into the chunk index of row `row` of a tile of
/// `rowElements` 16-bit elements a row. For rows of 64 or more elements (8+
/// chunks, 128+ bytes) it is row % 8: the "Swizzle<3,3,3>" layout, permuting
/// chunks within each aligned group of 8 (128 bytes). Narrower rows share a
/// 128-byte line between 8 / chunksPerRow rows, so the mask is taken from the
/// line index instead: (row / (8 / chunksPerRow)) % chunksPerRow (rows of 32
/// elements: (row / 2) % 4, "Swizzle<2,3,3>"); the chunk stays in its row.
int64_t swizzleMask(int64_t row, int64_t rowElements);

/// The stored chunk of logical 16-byte chunk `chunk` (columns 8*chunk to
/// 8*chunk+7) of row `row`: chunk XOR swizzleMask(row, rowElements). Being an
/// XOR, it is its own inverse: the logical chunk stored at chunk p is
/// swizzleChunk(row, p, rowElements).
int64_t swizzleChunk(int64_t row, int64_t chunk, int64_t rowElements);

/// The offset, in 16-bit elements from the tile's start, where element
/// (row, col) of a swizzled row-major tile of `rowElements` elements a row is
/// stored. The 8 elements of a chunk stay contiguous and in order, so a
/// 16-byte cp.async or an ldmatrix row address of a chunk-aligned column
/// points at the whole chunk. The tile should start on a 128-byte boundary.
int64_t swizzledElementOffset(int64_t row, int64_t col, int64_t rowElements);

/// The same offset without the swizzle: row * rowElements + col.
int64_t linearElementOffset(int64_t row, int64_t col, int64_t rowElements);

/// The shared-memory bank of byte offset `byteOffset` (4-byte banks, 32 of
/// them): (byteOffset / 4) % 32.
int64_t sharedMemoryBank(int64_t byteOffset);

} // namespace mlir::attn::nvptx

#endif // ATTN_TARGET_NVPTX_MMALAYOUT_H
