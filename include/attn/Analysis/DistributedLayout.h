//===- DistributedLayout.h - Shards of a distributed attention -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The shard layout attn-distribute gives an #attn.attention2d or #attn.ring
// attention (see the attributes' descriptions) and the bytes each rank sends
// in its collectives: what attn-run needs to cut the global tensors into
// shards and put the results back, and the traffic model that attn-run and
// the benchmark set against the bytes libattnmpi counts.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_DISTRIBUTEDLAYOUT_H
#define ATTN_ANALYSIS_DISTRIBUTEDLAYOUT_H

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::attn {

/// A run of consecutive tokens of a shard: `length` tokens from position
/// `globalStart` of the sequence, at `localStart` in the shard.
struct TokenRun {
  int64_t globalStart, localStart, length;
};

struct DistributedLayout {
  /// Grid rows (query parts) and columns (key/value parts); a ring is one
  /// row of `devices` columns.
  int64_t rows = 1, cols = 1;
  bool ring = false;
  /// Zig-zag shards: two blocks per chunk (ATTENTION2D) or per rank (ring),
  /// one early and one late, for balanced causal work.
  bool zigzag = false;

  /// The layout of `partition`, if it distributes the attention.
  static std::optional<DistributedLayout> of(Attribute partition) {
    if (auto twoD = dyn_cast_or_null<Attention2DAttr>(partition))
      return DistributedLayout{twoD.getQParts(), twoD.getKvParts(), false,
                               twoD.getZigzag()};
    if (auto ringAttr = dyn_cast_or_null<RingAttr>(partition))
      return DistributedLayout{1, ringAttr.getDevices(), true,
                               ringAttr.getZigzag()};
    return std::nullopt;
  }

  int64_t devices() const { return rows * cols; }
  /// Tokens per shard of a sequence of `length` (the last shards padded):
  /// ceil(S / P), or two halves of ceil(S / 2P) with zigzag.
  int64_t shardLength(int64_t length) const {
    if (zigzag)
      return 2 * ((length + 2 * devices() - 1) / (2 * devices()));
    return (length + devices() - 1) / devices();
  }

  /// Where the query (O, LSE) shard of `rank` comes from in a sequence of
  /// `length`. Contiguous: shard `rank` (row-major over the grid, so a grid
  /// row holds one chunk). Zig-zag: ATTENTION2D's row i holds blocks i and
  /// 2 rows - 1 - i of 2 rows blocks, rank (i, j) piece j of each; a ring's
  /// rank r holds blocks r and 2P - 1 - r.
  SmallVector<TokenRun, 2> queryRuns(int64_t rank, int64_t length) const {
    if (ring)
      return ringRuns(rank, length);
    return gridRuns(rank / cols, rank % cols, rows, cols, length);
  }
  /// The same for the key/value shard `rank` holds (before any ring step):
  /// column-major over the grid for ATTENTION2D, so that a grid column
  /// holds one chunk.
  SmallVector<TokenRun, 2> keyRuns(int64_t rank, int64_t length) const {
    if (ring)
      return ringRuns(rank, length);
    return gridRuns(rank % cols, rank / cols, cols, rows, length);
  }

  /// ATTENTION2D: the query tokens grid row `row` gathers (its ranks' query
  /// runs) and the key tokens grid column `col` gathers.
  SmallVector<TokenRun> queryChunkRuns(int64_t row, int64_t length) const {
    SmallVector<TokenRun> runs;
    for (int64_t j = 0; j < cols; ++j)
      llvm::append_range(runs, queryRuns(row * cols + j, length));
    return runs;
  }
  SmallVector<TokenRun> keyChunkRuns(int64_t col, int64_t length) const {
    SmallVector<TokenRun> runs;
    for (int64_t i = 0; i < rows; ++i)
      llvm::append_range(runs, keyRuns(i * cols + col, length));
    return runs;
  }

  /// Bytes every rank sends to other ranks in one run: ATTENTION2D gathers
  /// Q over its row (cols - 1 shards), K and V over its column (rows - 1
  /// shards each) and sends cols - 1 pieces of its f32 partial O and LSE;
  /// a ring passes its K and V shards on devices - 1 times.
  int64_t bytesSent(const AttentionProblem &problem,
                    int64_t elementBytes) const {
    int64_t queryShardLen = shardLength(problem.queryLen);
    int64_t keyShardLen = shardLength(problem.keyLen);
    int64_t kvShardBytes = problem.batch * problem.kvHeads * keyShardLen *
                           (problem.headDim + problem.valueDim) * elementBytes;
    if (ring)
      return (devices() - 1) * kvShardBytes;
    int64_t rowsOfQuery = problem.batch * problem.queryHeads * queryShardLen;
    return (cols - 1) * rowsOfQuery * problem.headDim * elementBytes +
           (rows - 1) * kvShardBytes +
           (cols - 1) * rowsOfQuery * (problem.valueDim + 1) * 4;
  }

private:
  /// ATTENTION2D: piece `piece` (of `pieces`) of chunk `chunk` (of
  /// `chunks`).
  SmallVector<TokenRun, 2> gridRuns(int64_t chunk, int64_t piece,
                                    int64_t chunks, int64_t pieces,
                                    int64_t length) const {
    int64_t shard = shardLength(length);
    if (!zigzag)
      return {{(chunk * pieces + piece) * shard, 0, shard}};
    int64_t half = shard / 2, block = pieces * half;
    return {{chunk * block + piece * half, 0, half},
            {(2 * chunks - 1 - chunk) * block + piece * half, half, half}};
  }

  /// A ring: shard `rank`, or blocks rank and 2P - 1 - rank.
  SmallVector<TokenRun, 2> ringRuns(int64_t rank, int64_t length) const {
    int64_t shard = shardLength(length);
    if (!zigzag)
      return {{rank * shard, 0, shard}};
    int64_t half = shard / 2;
    return {{rank * half, 0, half},
            {(2 * devices() - 1 - rank) * half, half, half}};
  }
};

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_DISTRIBUTEDLAYOUT_H
