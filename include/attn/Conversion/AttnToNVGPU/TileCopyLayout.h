//===- TileCopyLayout.h - Which thread copies which chunk -------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The kernel moves tiles between global and shared memory in 16-byte chunks
// (cp.async of Q, K and V; the O block's stores), `threads` threads at a time
// over several rounds. Each row of the tile gets `lanesPerRow` consecutive
// threads, the power of two at or above the row's chunks, so that a thread
// copies the same chunk of a row in every round and its row advances by a
// constant: its addresses are one per-thread base plus a constant per round.
// Dividing the chunks evenly instead (chunk tid + threads * round) needs a
// division per round whenever a row's chunks do not divide the threads (D =
// 80, 96, 112, 160, 192, 224), and the compiler keeps every round's
// thread-dependent address live across the key/value loop. The threads past
// a row's chunks (chunksPerRow < lanesPerRow) and past the tile's rows in a
// last round copy nothing.
//
// Written over an arithmetic `A` (see FragmentLayout.h): the kernel generator
// builds it as IR, the unit tests evaluate it on integers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTONVGPU_TILECOPYLAYOUT_H
#define ATTN_CONVERSION_ATTNTONVGPU_TILECOPYLAYOUT_H

#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <cstdint>

namespace mlir::attn {

/// `A` provides `Value`, `Cond`, and `div`, `rem`, `add` of a Value and an
/// int64_t constant, `constant`, `lt` and `andOp`.
template <typename A> struct TileCopyLayout {
  using V = typename A::Value;
  using C = typename A::Cond;

  /// `threads` is a power of two at least the row's chunks.
  TileCopyLayout(A &a, int64_t rows, int64_t chunksPerRow, int64_t threads)
      : a(a), rows(rows), chunksPerRow(chunksPerRow), threads(threads),
        lanesPerRow(static_cast<int64_t>(llvm::PowerOf2Ceil(chunksPerRow))) {
    assert(llvm::isPowerOf2_64(threads) && lanesPerRow <= threads &&
           "a row's chunks must fit in the threads");
  }

  /// Rows copied per round, and the rounds of the tile.
  int64_t rowsPerRound() const { return threads / lanesPerRow; }
  int64_t rounds() const { return llvm::divideCeil(rows, rowsPerRound()); }

  /// The thread's row in round 0 and its chunk in every round.
  V laneRow(V tid) { return a.div(tid, lanesPerRow); }
  V chunk(V tid) { return a.rem(tid, lanesPerRow); }
  /// The thread's row in `round`, from its laneRow.
  V row(V laneRow, int64_t round) {
    return a.add(laneRow, round * rowsPerRound());
  }
  /// The same row and chunk from the thread's slot in `round`, tid + round
  /// x threads, for code that should keep no per-thread value across the
  /// rounds.
  V slotRow(V tid, int64_t round) {
    return a.div(a.add(tid, round * threads), lanesPerRow);
  }
  V slotChunk(V tid, int64_t round) {
    return a.rem(a.add(tid, round * threads), lanesPerRow);
  }

  /// Whether some thread copies nothing in `round`: past the row's chunks,
  /// or past the tile's rows in a last round.
  bool hasIdleThreads(int64_t round) const {
    return lanesPerRow != chunksPerRow || (round + 1) * rowsPerRound() > rows;
  }
  /// In a round with idle threads, whether the thread with this chunk and
  /// row (of `round`) copies.
  C copies(V chunk, V row, int64_t round) {
    assert(hasIdleThreads(round));
    if ((round + 1) * rowsPerRound() <= rows)
      return a.lt(chunk, a.constant(chunksPerRow));
    C inTile = a.lt(row, a.constant(rows));
    if (lanesPerRow == chunksPerRow)
      return inTile;
    return a.andOp(a.lt(chunk, a.constant(chunksPerRow)), inTile);
  }

  A &a;
  int64_t rows, chunksPerRow, threads, lanesPerRow;
};

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTONVGPU_TILECOPYLAYOUT_H
