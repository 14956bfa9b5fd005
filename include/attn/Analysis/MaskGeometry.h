//===- MaskGeometry.h - Which keys a query sees, written once ---*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The masking geometry of attn.attention (causal and sliding-window masks,
// bottom-right aligned, and the end of the keys), written once over an
// arithmetic `A` (see IntegerArith.h): AttentionProblem evaluates it on
// integers for the plan report, schedule selection and the unit tests; the
// CPU decomposition and the GPU kernel build it as IR (IndexArith). So the
// KV block ranges that the plan counts, the loops the CPU runs and the loops
// the kernel runs cannot disagree.
//
// Rows and keys are absolute positions. The diagonal of row i is the key
// i + Sk - Sq (the last query row lines up with the last key). Key k is
// visible from row i when visibleBegin(i) <= k < visibleEnd(i).
//
// With GQA packing (`packedHeads` = p > 1, #attn.fa2's packed_heads), the
// rows a schedule tiles are those of p query heads that share a key/value
// head, head after head: tiled row r of tiled head t is query row r mod Sq
// of query head t p + r / Sq, so tiles run over p Sq rows of Hq / p heads.
// The row arguments of kvBlockRange, needsElementMask and isHidden are tiled
// rows; visibleBegin and visibleEnd take query rows.
//
// An attention with a frame (a part of a larger attention, rows at q0 + i
// and keys at k0 + k of an Sq' x Sk' attention) moves the diagonal of row i
// to the key i + (q0 - k0 + Sk' - Sq') and hides keys from Sk' - k0 on;
// rows and keys stay local positions.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_MASKGEOMETRY_H
#define ATTN_ANALYSIS_MASKGEOMETRY_H

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

namespace mlir::attn {

/// A window side of this many keys or more reaches every key of any attention
/// that fits in memory (sizes are at most 2^48, SizeLimits.h). The geometry
/// clamps sides to it, so that a position plus a side never overflows: a
/// side of INT64_MAX means "unbounded".
constexpr int64_t kUnboundedWindowSide = int64_t(1) << 62;

template <typename A> struct MaskGeometry {
  using V = typename A::Value;
  using C = typename A::Cond;

  A &a;
  V queryLen, keyLen;
  bool causal;
  /// Sliding window sizes (left, right), if any.
  std::optional<std::pair<int64_t, int64_t>> window;

  /// Where a part of a larger attention sits in it (see above).
  struct Frame {
    /// The diagonal's offset: q0 - k0 + Sk' - Sq'.
    V shift;
    /// The first local key past the larger attention's keys: Sk' - k0.
    V keyEnd;
  };
  std::optional<Frame> frame;
  /// Query heads packed into the tiled rows (above); 1 without packing.
  int64_t packedHeads = 1;

  /// The frame of rows at `queryOffset` and keys at `keyOffset` of an
  /// attention of `queryTotal` queries and `keyTotal` keys.
  static Frame frameOf(A &a, V queryOffset, V keyOffset, V queryTotal,
                       V keyTotal) {
    V shift = a.add(a.sub(queryOffset, keyOffset), a.sub(keyTotal, queryTotal));
    return {shift, a.sub(keyTotal, keyOffset)};
  }

  /// The keys a sequence of key_lengths entry `length` attends to, out of
  /// the `capacity` keys K and V hold: the entry clamped to [0, capacity],
  /// so that no key past the capacity is read. Every lowering takes it as
  /// the sequence's Sk.
  static V sequenceKeys(A &a, V length, V capacity) {
    return a.min(a.max(length, a.constant(0)), capacity);
  }

  /// The rows a tile of one tiled head runs over: p Sq.
  V tiledRows() { return a.mul(queryLen, a.constant(packedHeads)); }
  /// The query row of tiled row `row`.
  V queryRow(V row) { return packedHeads == 1 ? row : a.rem(row, queryLen); }
  /// The query head of tiled row `row` of tiled head `tiledHead`.
  V queryHead(V tiledHead, V row) {
    if (packedHeads == 1)
      return tiledHead;
    return a.add(a.mul(tiledHead, a.constant(packedHeads)),
                 a.div(row, queryLen));
  }

  /// The first and the last query row of the tiled rows [row0, last]:
  /// all query rows when they span two heads.
  std::pair<V, V> queryRowHull(V row0, V last) {
    if (packedHeads == 1)
      return {row0, last};
    V spans = a.lt(a.div(row0, queryLen), a.div(last, queryLen));
    return {a.select(spans, a.constant(0), queryRow(row0)),
            a.select(spans, a.sub(queryLen, a.constant(1)), queryRow(last))};
  }

  V windowSide(int64_t side) {
    return a.constant(std::min(side, kUnboundedWindowSide));
  }

  V diagonal(V row) {
    return a.add(row, frame ? frame->shift : a.sub(keyLen, queryLen));
  }

  /// The first key visible from `row`; may be negative (nothing is hidden on
  /// the left).
  V visibleBegin(V row) {
    if (!window)
      return a.constant(0);
    return a.sub(diagonal(row), windowSide(window->first));
  }

  /// One past the last key visible from `row`, at most Sk (and the frame's
  /// key end); may be below visibleBegin (the row sees nothing).
  V visibleEnd(V row) {
    V end = frame ? a.min(keyLen, frame->keyEnd) : keyLen;
    if (!causal && !window)
      return end;
    V next = a.add(diagonal(row), a.constant(1));
    if (causal)
      end = a.min(end, next);
    if (window)
      end = a.min(end, a.add(next, windowSide(window->second)));
    return end;
  }

  /// The blocks of `blockN` keys that tiled rows [row0, row0 + rows) must
  /// visit, as [begin, end): every block outside is hidden from every one
  /// of the rows. Both edges of the visible range move right (or stay) from
  /// query row to query row, so the first query row bounds the start and
  /// the last the end.
  std::pair<V, V> kvBlockRange(V row0, V rows, int64_t blockN) {
    V last = a.sub(a.add(row0, rows), a.constant(1));
    auto [firstRow, lastRow] = queryRowHull(row0, last);
    V keyBegin = a.max(visibleBegin(firstRow), a.constant(0));
    if (packedHeads != 1) {
      // A tile that wraps once into the next head's first rows, which see
      // no key (Sq > Sk with a causal mask, say): its keys start where its
      // own first row's do.
      V headsCrossed = a.sub(a.div(last, queryLen), a.div(row0, queryLen));
      C tailBlind =
          a.lt(visibleEnd(queryRow(last)), a.add(keyBegin, a.constant(1)));
      V ownBegin = a.max(visibleBegin(queryRow(row0)), a.constant(0));
      keyBegin = a.select(a.gt(headsCrossed, a.constant(1)), keyBegin,
                          a.select(tailBlind, ownBegin, keyBegin));
    }
    V keyEnd = a.max(visibleEnd(lastRow), keyBegin);
    V bn = a.constant(blockN);
    V begin = a.div(keyBegin, bn);
    V end = a.select(a.gt(keyEnd, keyBegin), a.ceilDiv(keyEnd, bn), begin);
    return {begin, end};
  }

  /// The first tiled row of query block `queryBlock` and its number of rows:
  /// tiled rows [queryBlock * blockM, min((queryBlock + 1) * blockM, p Sq)).
  std::pair<V, V> queryBlockRows(V queryBlock, int64_t blockM) {
    V row0 = a.mul(queryBlock, a.constant(blockM));
    return {row0, a.min(a.constant(blockM), a.sub(tiledRows(), row0))};
  }

  /// The key/value blocks every query block visits when no mask cuts the
  /// rows' key ranges (neither causal nor a window): all of them, the same
  /// for every row. None when they differ from query block to query block.
  std::optional<V> uniformKvBlocks(int64_t blockN) {
    if (causal || window)
      return std::nullopt;
    auto [begin, end] = kvBlockRange(a.constant(0), a.constant(1), blockN);
    return a.sub(end, begin);
  }

  /// kvBlockRange of query block `queryBlock` (queryBlockRows).
  std::pair<V, V> queryBlockKvRange(V queryBlock, int64_t blockM,
                                    int64_t blockN) {
    auto [row0, rows] = queryBlockRows(queryBlock, blockM);
    return kvBlockRange(row0, rows, blockN);
  }

  /// The transposed question, for the backward pass: the query rows
  /// [begin, end) that see some key of [key0, key0 + keys), keys before Sk
  /// (and the frame's key end); begin = end when none does. Both edges of
  /// the visible range move right (or stay) from row to row, so the rows
  /// that see a key of the range are those whose range ends after key0 and
  /// begins before the range's end. Rows are query rows: the gradient does
  /// not pack heads.
  std::pair<V, V> queryRowRange(V key0, V keys) {
    V zero = a.constant(0);
    V begin = zero, end = queryLen;
    V shift = frame ? frame->shift : a.sub(keyLen, queryLen);
    if (causal || window) {
      // visibleEnd(row) = diagonal(row) + 1 + right > key0, right = 0 when
      // causal (the causal edge is the nearer one).
      V right = causal ? zero : windowSide(window->second);
      begin = a.max(a.sub(a.sub(key0, shift), right), zero);
    }
    if (window) {
      // visibleBegin(row) = diagonal(row) - left < key0 + keys.
      V pastEnd = a.add(a.sub(a.add(key0, keys), shift),
                        windowSide(window->first));
      end = a.min(a.max(pastEnd, zero), queryLen);
    }
    begin = a.min(begin, queryLen);
    return {begin, a.max(end, begin)};
  }

  /// The query blocks of `blockM` rows that some row of which sees a key of
  /// [key0, key0 + keys), as [begin, end): kvBlockRange's transpose.
  std::pair<V, V> queryBlockRange(V key0, V keys, int64_t blockM) {
    auto [rowBegin, rowEnd] = queryRowRange(key0, keys);
    V begin = a.div(rowBegin, a.constant(blockM));
    V end = a.select(a.gt(rowEnd, rowBegin), a.ceilDiv(rowEnd, blockM), begin);
    return {begin, end};
  }

  /// Whether some tiled row of [row0, row0 + rows) cannot see some key of
  /// [key0, keyEnd), so that the block needs an element mask: the last
  /// query row starts latest, the first ends earliest. Keys at or past Sk
  /// count as hidden, so a block that runs past the end needs the mask too.
  C needsElementMask(V row0, V rows, V key0, V keyEnd) {
    auto [firstRow, lastRow] =
        queryRowHull(row0, a.sub(a.add(row0, rows), a.constant(1)));
    C masked = a.lt(visibleEnd(firstRow), keyEnd);
    if (window)
      masked = a.orOp(masked, a.gt(visibleBegin(lastRow), key0));
    return masked;
  }

  /// Whether `key` is hidden from tiled row `tiledRow` by the causal or
  /// window mask, or is at or past Sk.
  C isHidden(V tiledRow, V key) {
    V row = queryRow(tiledRow);
    C hidden = a.lt(a.sub(visibleEnd(row), a.constant(1)), key);
    if (window)
      hidden = a.orOp(hidden, a.lt(key, visibleBegin(row)));
    return hidden;
  }
};

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_MASKGEOMETRY_H
