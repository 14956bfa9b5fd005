//===- FragmentLayout.h - Who holds what in an m16n8k16 mma ------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The index arithmetic of the FlashAttention-2 kernel's tensor-core code,
// written once over an arithmetic `A` so that the kernel generator builds it
// as IR (A = index ops on mlir::Value) and the unit tests evaluate it on
// integers (A = int64_t arithmetic) against the PTX ISA's layouts:
//
// - mma.m16n8k16 fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16
//   with floating point type"), for lane l, g = l / 4, t = l % 4:
//     A 16x16 (4 registers of 2 halves): a0,a1 (row g, cols 2t, 2t+1),
//       a2,a3 (row g+8), a4,a5 (row g, cols 2t+8, 2t+9), a6,a7 (row g+8);
//     B 16x8 (2 registers): b0,b1 (rows 2t, 2t+1, col g), b2,b3 (rows +8);
//     C 16x8 (4 f32): c0,c1 (row g, cols 2t, 2t+1), c2,c3 (row g+8).
// - ldmatrix.m8n8.x{2,4}: lanes 8j..8j+7 give the row addresses of matrix
//   j; lane l receives, of each matrix, row l/4, columns 2(l%4), 2(l%4)+1
//   (.trans: the transposed matrix). `*Row` / `*Chunk` below are the row and
//   16-byte chunk each lane addresses, relative to the tile's corner.
// - the shared-memory swizzle: 16-byte chunk c of row r is stored at chunk
//   c XOR (r mod 8).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTONVGPU_FRAGMENTLAYOUT_H
#define ATTN_CONVERSION_ATTNTONVGPU_FRAGMENTLAYOUT_H

#include <cstdint>

namespace mlir::attn {

/// `A` provides `Value`, and `rem`, `div`, `add`, `mul`, `xorOp` of a Value
/// and a Value or an int64_t constant, and `constant`.
template <typename A>
struct FragmentLayout {
  using V = typename A::Value;
  A &a;

  /// The lane's quad (the rows it holds) and its place in the quad.
  V groupId(V lane) { return a.div(lane, 4); }
  V laneInGroup(V lane) { return a.rem(lane, 4); }

  /// ldmatrix.x4 of a 16x16 A tile stored row-major: lanes 0-15 address
  /// rows 0-15 at chunk 0, lanes 16-31 the same rows at chunk 1, so that the
  /// matrices are a0a1 | a2a3 | a4a5 | a6a7.
  V aRow(V lane) { return a.rem(lane, 16); }
  V aChunk(V lane) { return a.div(lane, 16); }

  /// ldmatrix.x2 of the B operand of S = Q K^T from K stored [n][k]: lanes
  /// 0-7 address rows (keys) 0-7 at chunk 0, lanes 8-15 at chunk 1 (lanes
  /// 16-31 repeat them), giving b0b1 | b2b3.
  V bRow(V lane) { return a.rem(lane, 8); }
  V bChunk(V lane) { return a.div(a.rem(lane, 16), 8); }

  /// ldmatrix.x2.trans of the B operand of O = P V from V stored [k][n]:
  /// lanes 0-15 address rows (keys) 0-15 at chunk 0.
  V vRow(V lane) { return a.rem(lane, 16); }
  V vChunk(V lane) { return a.constant(0); }

  /// Row and column of element (i, j) of a lane's C fragment
  /// (vector<2x2xf32>: i = 0 for c0,c1, 1 for c2,c3), from the lane's
  /// groupId and laneInGroup.
  V cRow(V group, int64_t i) { return a.add(group, 8 * i); }
  V cCol(V inGroup, int64_t j) { return a.add(a.mul(inGroup, 2), j); }

  /// The stored chunk of chunk `chunk` of row `row`.
  V swizzledChunk(V chunk, V row) { return a.xorOp(chunk, a.rem(row, 8)); }
};

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTONVGPU_FRAGMENTLAYOUT_H
