//===- WorkAssignment.h - Which program computes which KV range -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The work assignments of the schedules that split the key/value range of an
// output tile (one query block of one batch and head), written once over an
// arithmetic `A` (see IntegerArith.h) like MaskGeometry: the CPU
// decomposition builds them as IR, the GPU kernels will map them onto CTAs,
// and the unit tests evaluate them on integers.
//
// Every such schedule cuts the visible KV blocks of each output tile into
// pieces numbered 0, 1, ...: piece s is computed by some program instance
// into partial slot s (O normalised by its own row sum, and its LSE; an empty
// piece gives O = 0, LSE = -inf), and the slots are combined with attn.merge
// in slot order. The assignments differ in how the pieces are cut and which
// instance computes them:
//
// - split-KV (flash-decoding): S equal runs of blocks; instance (s, tile).
// - Lean attention (stream-K): the visible blocks of all output tiles, in
//   the order of the tiles, form one sequence of LeanTiles divided evenly
//   over G persistent CTAs; piece s of a tile is its intersection with the
//   s-th CTA whose range meets the tile. Piece 0 belongs to the tile's host
//   (the CTA computing its first LeanTile), the others to its contributors,
//   in increasing CTA order.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_WORKASSIGNMENT_H
#define ATTN_ANALYSIS_WORKASSIGNMENT_H

#include "attn/Analysis/MaskGeometry.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::attn {

/// Piece `slot` of split-KV's `splits` equal runs of the blocks
/// [begin, end): runs of ceil((end - begin) / splits) blocks, the last ones
/// shorter or empty.
template <typename A>
std::pair<typename A::Value, typename A::Value>
splitKVPiece(A &a, typename A::Value begin, typename A::Value end,
             typename A::Value slot, int64_t splits) {
  auto perSplit = a.ceilDiv(a.sub(end, begin), a.constant(splits));
  auto pieceBegin = a.min(a.add(begin, a.mul(slot, perSplit)), end);
  auto pieceEnd = a.min(a.add(pieceBegin, perSplit), end);
  return {pieceBegin, pieceEnd};
}

/// Lean attention's even split of `leanTiles` LeanTiles over `ctas` CTAs:
/// with t = ceil(T / G), the first hi = T - (t - 1) G CTAs get t LeanTiles
/// and the others t - 1, in CTA order.
template <typename A> struct LeanAssignment {
  using V = typename A::Value;
  using C = typename A::Cond;

  A &a;
  V ctas;
  V leanTiles;
  /// LeanTiles of the CTAs 0 .. hi-1 (the others get one fewer).
  V perCta;
  V hi;

  static LeanAssignment create(A &a, V ctas, V leanTiles) {
    V perCta = a.ceilDiv(leanTiles, ctas);
    V hi = a.sub(leanTiles, a.mul(a.sub(perCta, a.constant(1)), ctas));
    return {a, ctas, leanTiles, perCta, hi};
  }

  /// The first LeanTile of CTA `cta`: T for cta = G, at least T beyond.
  V ctaBegin(V cta) {
    V shortCtas = a.sub(cta, hi);
    V longEnd = a.mul(hi, perCta);
    return a.select(
        a.lt(cta, hi), a.mul(cta, perCta),
        a.add(longEnd, a.mul(shortCtas, a.sub(perCta, a.constant(1)))));
  }

  /// The CTA that computes LeanTile `tile` (< T).
  V ctaOf(V tile) {
    V longEnd = a.mul(hi, perCta);
    // The divisors are clamped to 1 where their branch is not taken.
    V one = a.constant(1);
    V inLong = a.div(tile, a.max(perCta, one));
    V inShort =
        a.add(hi, a.div(a.sub(tile, longEnd), a.max(a.sub(perCta, one), one)));
    return a.select(a.lt(tile, longEnd), inLong, inShort);
  }

  /// Piece `slot` of the output tile whose LeanTiles are
  /// [first, first + count), as a range of LeanTiles (empty when its begin
  /// is not below its end): the part computed by CTA ctaOf(first) + slot.
  std::pair<V, V> piece(V first, V count, V slot) {
    V end = a.add(first, count);
    V cta = a.add(ctaOf(first), slot);
    V pieceBegin = a.max(first, ctaBegin(cta));
    V pieceEnd = a.min(end, ctaBegin(a.add(cta, a.constant(1))));
    return {pieceBegin, a.max(pieceEnd, pieceBegin)};
  }

  /// The most pieces one output tile is cut into (at least 1), counted tile
  /// by tile over `batchHeads` (batch, head) pairs whose query blocks see
  /// `blocks[m]` LeanTiles each, in Lean's order: the partial slots the
  /// schedule fills, exactly (slots() bounds it without the walk). On plain
  /// integers (IntegerArith) only.
  int64_t mostPieces(const std::vector<int64_t> &blocks, int64_t batchHeads) {
    int64_t most = 1, first = 0;
    for (int64_t bh = 0; bh < batchHeads; ++bh)
      for (int64_t count : blocks) {
        if (count > 0)
          most = std::max(most, ctaOf(first + count - 1) - ctaOf(first) + 1);
        first += count;
      }
    return most;
  }

  /// How many pieces an output tile of at most `maxBlocks` LeanTiles can be
  /// cut into, at least 1: the partial slots a schedule needs. A tile of n
  /// LeanTiles meets at most ceil((n - 1) / (t - 1)) + 1 CTAs when every
  /// CTA has at least t - 1 >= 1 of them, and at most n when t = 1.
  V slots(V maxBlocks) {
    V one = a.constant(1);
    V single = a.min(ctas, maxBlocks);
    V several =
        a.min(ctas, a.add(a.ceilDiv(a.max(a.sub(maxBlocks, one), a.constant(0)),
                                    a.max(a.sub(perCta, one), one)),
                          one));
    return a.max(a.select(a.gt(perCta, one), several, single), one);
  }
};

/// Output tiles in Lean's order: tile (bh, m), bh = b * Hq + h, m the
/// query block, starts at LeanTile bh * perHead + prefix(m), where
/// prefix(m) sums the visible KV blocks of the query blocks before m (all
/// heads see the same blocks). When every query block sees the same
/// number n of blocks (MaskGeometry::uniformKvBlocks), prefix(m) = m n and
/// LeanTile g lies in query block g / n: no sum or scan is built.
template <typename A> struct LeanTileOrder {
  using V = typename A::Value;

  A &a;
  /// The visible KV blocks of query block m.
  std::function<V(V)> blocksOf;
  /// blocksOf(m) for every m, when it is known to be the same.
  std::optional<V> uniformBlocks = std::nullopt;

  /// The order of `geometry`'s query blocks of `blockM` tiled rows over
  /// blocks of `blockN` keys (kvBlockRange), with uniformBlocks when no mask
  /// cuts the rows' key ranges or, `oneQueryBlock`, when a head has a single
  /// query block (known where the lengths are static; a decode step).
  static LeanTileOrder of(A &a, MaskGeometry<A> geometry, int64_t blockM,
                          int64_t blockN, bool oneQueryBlock = false) {
    auto blocksOf = [geometry, blockM, blockN](V m) mutable {
      auto [begin, end] = geometry.queryBlockKvRange(m, blockM, blockN);
      return geometry.a.sub(end, begin);
    };
    std::optional<V> uniform = geometry.uniformKvBlocks(blockN);
    if (!uniform && oneQueryBlock)
      uniform = blocksOf(a.constant(0));
    return {a, blocksOf, uniform};
  }

  V prefix(V queryBlock) {
    if (uniformBlocks)
      return a.mul(queryBlock, *uniformBlocks);
    return a.sum(queryBlock, blocksOf);
  }
  /// The query block m holding LeanTile `offset` of a (batch, head) (below
  /// prefix(queryBlocks)), and prefix(m): a scan from query block `from`,
  /// with prefix(from) = `fromPrefix` <= offset, so that a walk through the
  /// LeanTiles in order resumes where it stopped. Query blocks without a
  /// LeanTile are passed over. Past the last LeanTile: (queryBlocks,
  /// prefix(queryBlocks)).
  std::pair<V, V> locate(V queryBlocks, V offset, V from, V fromPrefix) {
    if (!uniformBlocks)
      return a.scanPast(from, fromPrefix, queryBlocks, blocksOf, offset);
    // With no LeanTile, every offset is past the last one.
    V n = *uniformBlocks;
    V m = a.select(a.gt(n, a.constant(0)),
                   a.min(a.div(offset, a.max(n, a.constant(1))), queryBlocks),
                   queryBlocks);
    return {m, prefix(m)};
  }
  V tileFirst(V perHead, V batchHead, V queryBlock) {
    return a.add(a.mul(batchHead, perHead), prefix(queryBlock));
  }
};

/// Lean attention's work, where every target starts: the LeanTiles of
/// `batchHeads` (batch, tiled head) pairs of `queryBlocks` query blocks each
/// (`oneQueryBlock`: known to be 1) in LeanTileOrder over `geometry`, split
/// evenly over `ctas` CTAs.
template <typename A> struct LeanWork {
  using V = typename A::Value;

  LeanTileOrder<A> order;
  /// LeanTiles per (batch, tiled head).
  V perHead;
  LeanAssignment<A> assignment;

  static LeanWork create(A &a, MaskGeometry<A> geometry, int64_t blockM,
                         int64_t blockN, V queryBlocks, V batchHeads, V ctas,
                         bool oneQueryBlock = false) {
    auto order =
        LeanTileOrder<A>::of(a, geometry, blockM, blockN, oneQueryBlock);
    V perHead = order.prefix(queryBlocks);
    return {order, perHead,
            LeanAssignment<A>::create(a, ctas, a.mul(batchHeads, perHead))};
  }

  /// A piece of a persistent CTA's walk: the output tile holding its first
  /// LeanTile (its (batch, tiled head) pair, its query block, the offset of
  /// its first LeanTile in the pair's, its LeanTiles [tileFirst, tileLast))
  /// and the end of the piece, the CTA's end or the tile's.
  struct Piece {
    V batchHead, queryBlock, tileOffset, tileFirst, tileLast, pieceEnd;
  };

  /// The piece of a CTA whose LeanTiles end at `end` that starts at
  /// LeanTile `g`. The query block is searched from the CTA's previous
  /// piece's (`previousBatchHead`, `previousQueryBlock`,
  /// `previousOffset`: its batchHead, queryBlock and tileOffset; a
  /// batchHead of -1 before the first) when it is of the same pair, so that
  /// the walk g = ctaBegin(cta), then each piece's pieceEnd until `end`,
  /// scans each pair's query blocks once. Lean's kernel walks this way.
  Piece pieceAt(V g, V end, V queryBlocks, V previousBatchHead,
                V previousQueryBlock, V previousOffset) {
    A &a = order.a;
    V batchHead = a.div(g, perHead);
    V offset = a.sub(g, a.mul(batchHead, perHead));
    auto resume = a.eq(batchHead, previousBatchHead);
    auto [queryBlock, tileOffset] = order.locate(
        queryBlocks, offset, a.select(resume, previousQueryBlock, a.constant(0)),
        a.select(resume, previousOffset, a.constant(0)));
    V tileFirst = a.add(a.mul(batchHead, perHead), tileOffset);
    V tileLast = a.add(tileFirst, order.blocksOf(queryBlock));
    return {batchHead, queryBlock,         tileOffset,
            tileFirst, tileLast, a.min(end, tileLast)};
  }

  /// LeanAssignment::mostPieces of the `batchHeads` pairs of `queryBlocks`
  /// query blocks the work was created with.
  int64_t mostPieces(int64_t batchHeads, int64_t queryBlocks) {
    std::vector<int64_t> blocks;
    for (int64_t m = 0; m < queryBlocks; ++m)
      blocks.push_back(order.blocksOf(m));
    return assignment.mostPieces(blocks, batchHeads);
  }
};

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_WORKASSIGNMENT_H
