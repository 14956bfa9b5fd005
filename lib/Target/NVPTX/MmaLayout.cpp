//===- MmaLayout.cpp - Lane/element maps of mma, ldmatrix, swizzle --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/NVPTX/MmaLayout.h"

#include "llvm/Support/MathExtras.h"

#include <cassert>

using namespace mlir::attn::nvptx;

namespace {
[[maybe_unused]] bool isLane(int64_t lane) { return lane >= 0 && lane < kWarpSize; }
} // namespace

int64_t mlir::attn::nvptx::groupId(int64_t lane) {
  assert(isLane(lane) && "lane out of range");
  return lane >> 2;
}

int64_t mlir::attn::nvptx::threadIdInGroup(int64_t lane) {
  assert(isLane(lane) && "lane out of range");
  return lane % 4;
}

//===----------------------------------------------------------------------===//
// mma.m16n8k16: PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating
// point type".
//===----------------------------------------------------------------------===//

MatrixCoord mlir::attn::nvptx::mmaAElementCoord(int64_t lane, int64_t element) {
  assert(element >= 0 && element < kAElementsPerLane && "no such a_i");
  int64_t g = groupId(lane), t = threadIdInGroup(lane);
  // row = groupID for a_i with 0 <= i < 2 || 4 <= i < 6, groupID + 8
  // otherwise; col = threadID_in_group * 2 + (i & 0x1), + 8 for i >= 4.
  bool lowRows = element < 2 || (element >= 4 && element < 6);
  int64_t row = lowRows ? g : g + 8;
  int64_t col = t * 2 + (element & 1) + (element >= 4 ? 8 : 0);
  return {row, col};
}

FragmentSlot mlir::attn::nvptx::mmaAElementOwner(int64_t row, int64_t col) {
  assert(row >= 0 && row < kMmaM && col >= 0 && col < kMmaK &&
         "outside the A tile");
  int64_t lane = 4 * (row % 8) + (col % 8) / 2;
  int64_t element = (col & 1) + 2 * (row / 8) + 4 * (col / 8);
  return {lane, element};
}

MatrixCoord mlir::attn::nvptx::mmaBElementCoord(int64_t lane, int64_t element) {
  assert(element >= 0 && element < kBElementsPerLane && "no such b_i");
  int64_t g = groupId(lane), t = threadIdInGroup(lane);
  // row = threadID_in_group * 2 + (i & 0x1), + 8 for i >= 2; col = groupID.
  int64_t row = t * 2 + (element & 1) + (element >= 2 ? 8 : 0);
  return {row, g};
}

FragmentSlot mlir::attn::nvptx::mmaBElementOwner(int64_t row, int64_t col) {
  assert(row >= 0 && row < kMmaK && col >= 0 && col < kMmaN &&
         "outside the B tile");
  int64_t lane = 4 * col + (row % 8) / 2;
  int64_t element = (row & 1) + 2 * (row / 8);
  return {lane, element};
}

MatrixCoord mlir::attn::nvptx::mmaCElementCoord(int64_t lane, int64_t element) {
  assert(element >= 0 && element < kCElementsPerLane && "no such c_i");
  int64_t g = groupId(lane), t = threadIdInGroup(lane);
  // row = groupID for c_i with i < 2, groupID + 8 for i >= 2;
  // col = threadID_in_group * 2 + (i & 0x1).
  int64_t row = element < 2 ? g : g + 8;
  int64_t col = t * 2 + (element & 1);
  return {row, col};
}

FragmentSlot mlir::attn::nvptx::mmaCElementOwner(int64_t row, int64_t col) {
  assert(row >= 0 && row < kMmaM && col >= 0 && col < kMmaN &&
         "outside the C tile");
  int64_t lane = 4 * (row % 8) + col / 2;
  int64_t element = (col & 1) + 2 * (row / 8);
  return {lane, element};
}

AccumulatorSource mlir::attn::nvptx::pFragmentSource(int64_t aElement) {
  assert(aElement >= 0 && aElement < kAElementsPerLane && "no such a_i");
  // a_i and c_(i%4) of tile i/4 have the same row (groupID + 8 * ((i/2)%2))
  // and, counting tile i/4's 8 columns, the same column.
  return {aElement / 4, aElement % 4};
}

//===----------------------------------------------------------------------===//
// ldmatrix: PTX ISA, "Warp-level matrix load instruction: ldmatrix".
//===----------------------------------------------------------------------===//

LdmatrixRow mlir::attn::nvptx::ldmatrixAddressedRow(int64_t lane) {
  assert(isLane(lane) && "lane out of range");
  return {lane / kLdmatrixDim, lane % kLdmatrixDim};
}

int64_t mlir::attn::nvptx::ldmatrixAddressLane(int64_t matrix, int64_t row) {
  assert(matrix >= 0 && matrix < 4 && "ldmatrix loads at most 4 matrices");
  assert(row >= 0 && row < kLdmatrixDim && "an 8x8 matrix has 8 rows");
  return kLdmatrixDim * matrix + row;
}

MatrixCoord mlir::attn::nvptx::ldmatrixReceivedElement(int64_t lane,
                                                       int64_t half,
                                                       bool transpose) {
  assert(isLane(lane) && "lane out of range");
  assert((half == 0 || half == 1) && "a .b32 register holds two halves");
  int64_t row = lane / 4, col = 2 * (lane % 4) + half;
  if (transpose)
    return {col, row};
  return {row, col};
}

MatrixCoord mlir::attn::nvptx::ldmatrixX4AAddress(int64_t lane) {
  LdmatrixRow slot = ldmatrixAddressedRow(lane);
  // Matrix j = {a_2j, a_2j+1}: rows 8 * (j % 2) .., columns 8 * (j / 2) ..
  return {slot.row + 8 * (slot.matrix % 2), 8 * (slot.matrix / 2)};
}

MatrixCoord mlir::attn::nvptx::ldmatrixX4KAddress(int64_t lane) {
  LdmatrixRow slot = ldmatrixAddressedRow(lane);
  BRegisterSlot b = ldmatrixX4BRegister(slot.matrix);
  // B(k, n) = K(n, k). B register r of a tile covers k in [8r, 8r + 8) and
  // the tile's 8 keys: matrix row i is key 8 * nTile + i, read from k = 8r.
  return {slot.row + 8 * b.nTile, 8 * b.bRegister};
}

MatrixCoord mlir::attn::nvptx::ldmatrixX4TransVAddress(int64_t lane) {
  LdmatrixRow slot = ldmatrixAddressedRow(lane);
  BRegisterSlot b = ldmatrixX4BRegister(slot.matrix);
  // B(k, n) = V(k, n), read transposed: matrix row i is key 8 * bRegister + i,
  // read from column n = 8 * nTile.
  return {slot.row + 8 * b.bRegister, 8 * b.nTile};
}

BRegisterSlot mlir::attn::nvptx::ldmatrixX4BRegister(int64_t reg) {
  assert(reg >= 0 && reg < 4 && "ldmatrix.x4 has 4 destination registers");
  return {reg / 2, reg % 2};
}

//===----------------------------------------------------------------------===//
// Swizzle
//===----------------------------------------------------------------------===//

bool mlir::attn::nvptx::isSwizzleRowWidth(int64_t rowElements) {
  return rowElements >= kChunkElements &&
         llvm::isPowerOf2_64(static_cast<uint64_t>(rowElements));
}

int64_t mlir::attn::nvptx::swizzleMask(int64_t row, int64_t rowElements) {
  assert(isSwizzleRowWidth(rowElements) && "unsupported row width");
  assert(row >= 0 && "negative row");
  int64_t chunksPerRow = rowElements / kChunkElements;
  if (chunksPerRow >= 8)
    return row % 8;
  int64_t rowsPerLine = 8 / chunksPerRow;
  return (row / rowsPerLine) % chunksPerRow;
}

int64_t mlir::attn::nvptx::swizzleChunk(int64_t row, int64_t chunk,
                                        int64_t rowElements) {
  assert(chunk >= 0 && chunk < rowElements / kChunkElements &&
         "chunk outside the row");
  return chunk ^ swizzleMask(row, rowElements);
}

int64_t mlir::attn::nvptx::swizzledElementOffset(int64_t row, int64_t col,
                                                 int64_t rowElements) {
  assert(col >= 0 && col < rowElements && "column outside the row");
  int64_t chunk = swizzleChunk(row, col / kChunkElements, rowElements);
  return row * rowElements + chunk * kChunkElements + col % kChunkElements;
}

int64_t mlir::attn::nvptx::linearElementOffset(int64_t row, int64_t col,
                                               int64_t rowElements) {
  assert(row >= 0 && col >= 0 && col < rowElements && "outside the tile");
  return row * rowElements + col;
}

int64_t mlir::attn::nvptx::sharedMemoryBank(int64_t byteOffset) {
  assert(byteOffset >= 0 && "negative offset");
  return (byteOffset / 4) % kSharedMemoryBanks;
}
