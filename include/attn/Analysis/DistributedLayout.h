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

#include <cstdint>
#include <optional>

namespace mlir::attn {

struct DistributedLayout {
  /// Grid rows (query parts) and columns (key/value parts); a ring is one
  /// row of `devices` columns for the query shards, and passes K and V.
  int64_t rows = 1, cols = 1;
  bool ring = false;

  /// The layout of `partition`, if it distributes the attention.
  static std::optional<DistributedLayout> of(Attribute partition) {
    if (auto twoD = dyn_cast_or_null<Attention2DAttr>(partition))
      return DistributedLayout{twoD.getQParts(), twoD.getKvParts(), false};
    if (auto ringAttr = dyn_cast_or_null<RingAttr>(partition))
      return DistributedLayout{1, ringAttr.getDevices(), true};
    return std::nullopt;
  }

  int64_t devices() const { return rows * cols; }
  /// Tokens per shard of a sequence of `length` (the last shards padded).
  int64_t shardLength(int64_t length) const {
    return (length + devices() - 1) / devices();
  }
  /// The query (O, LSE) shard `rank` holds: row-major over the grid.
  int64_t queryShard(int64_t rank) const { return rank; }
  /// The key/value shard `rank` holds (before any ring step): column-major
  /// over the grid for ATTENTION2D, so that a column holds one chunk.
  int64_t keyShard(int64_t rank) const {
    return ring ? rank : (rank % cols) * rows + rank / cols;
  }

  /// Bytes every rank sends to other ranks in one run: ATTENTION2D gathers
  /// Q over its row (cols - 1 shards), K and V over its column (rows - 1
  /// shards each) and sends cols - 1 pieces of its f32 partial O and LSE;
  /// a ring passes its K and V shards on devices - 1 times.
  int64_t bytesSent(const AttentionProblem &problem,
                    int64_t elementBytes) const {
    int64_t queryShardLen = shardLength(problem.queryLen);
    int64_t keyShardLen = shardLength(problem.kvLen);
    int64_t kvShardBytes = problem.batch * problem.kvHeads * keyShardLen *
                           (problem.headDim + problem.valueDim) * elementBytes;
    if (ring)
      return (devices() - 1) * kvShardBytes;
    int64_t rowsOfQuery = problem.batch * problem.queryHeads * queryShardLen;
    return (cols - 1) * rowsOfQuery * problem.headDim * elementBytes +
           (rows - 1) * kvShardBytes +
           (cols - 1) * rowsOfQuery * (problem.valueDim + 1) * 4;
  }
};

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_DISTRIBUTEDLAYOUT_H
