//===- DistributionCost.cpp - Ring or ATTENTION2D, and which grid ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/DistributionCost.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The links of a cluster, and which one a group of ranks crosses.
struct Links {
  ClusterAttr cluster;

  int64_t node(int64_t rank) const { return rank / cluster.getRanksPerNode(); }

  /// Bytes per second and seconds per message of the slowest link between
  /// ranks first, first + stride, ..., first + (members - 1) * stride, for
  /// every group of `groups` (group g starts at firstOf(g)).
  template <typename FirstOf>
  std::pair<double, double> slowest(int64_t groups, FirstOf firstOf,
                                    int64_t members, int64_t stride) const {
    bool crossesNodes = false;
    for (int64_t g = 0; g < groups; ++g) {
      int64_t first = firstOf(g);
      crossesNodes |= node(first) != node(first + (members - 1) * stride);
    }
    if (crossesNodes)
      return {cluster.getNetworkGbps() * 1e9,
              cluster.getNetworkLatencyNs() * 1e-9};
    return {cluster.getNodeGbps() * 1e9, cluster.getNodeLatencyNs() * 1e-9};
  }
};

/// (members - 1) messages of `pieceBytes` over a link.
double rounds(int64_t members, int64_t pieceBytes,
              std::pair<double, double> link) {
  return (members - 1) * (link.second + pieceBytes / link.first);
}

} // namespace

SmallVector<DistributionCandidate>
mlir::attn::rankDistributions(MLIRContext *context,
                              const AttentionProblem &problem,
                              int64_t elementBytes, ClusterAttr cluster) {
  Links links{cluster};
  int64_t ranks = cluster.getRanks();
  bool zigzag = problem.causal;
  SmallVector<DistributionCandidate> candidates;

  // Ring: P - 1 steps, each passing the K and the V shard to the next rank.
  {
    DistributionCandidate ring;
    ring.partition = RingAttr::get(context, ranks, zigzag);
    ring.layout = *DistributedLayout::of(ring.partition);
    int64_t keys = ring.layout.shardLength(problem.keyLen);
    int64_t base = problem.batch * problem.kvHeads * keys * elementBytes;
    auto link = links.slowest(
        1, [](int64_t) { return 0; }, ranks, 1);
    ring.bytesPerRank = ring.layout.bytesSent(problem, elementBytes);
    ring.seconds = rounds(ranks, base * problem.headDim, link) +
                   rounds(ranks, base * problem.valueDim, link);
    candidates.push_back(ring);
  }

  // ATTENTION2D on every R x C grid: rows gather Q and scatter the partials
  // (consecutive ranks), columns gather K and V (ranks C apart).
  for (int64_t rows = 1; rows <= ranks; ++rows) {
    if (ranks % rows)
      continue;
    int64_t cols = ranks / rows;
    DistributionCandidate grid;
    grid.partition = Attention2DAttr::get(context, rows, cols, zigzag);
    grid.layout = *DistributedLayout::of(grid.partition);
    int64_t queries = grid.layout.shardLength(problem.queryLen);
    int64_t keys = grid.layout.shardLength(problem.keyLen);
    auto rowLink = links.slowest(
        rows, [&](int64_t i) { return i * cols; }, cols, 1);
    auto colLink = links.slowest(
        cols, [](int64_t j) { return j; }, rows, cols);
    int64_t queryRows = problem.batch * problem.queryHeads * queries;
    int64_t keyRows = problem.batch * problem.kvHeads * keys;
    grid.bytesPerRank = grid.layout.bytesSent(problem, elementBytes);
    grid.seconds =
        rounds(cols, queryRows * problem.headDim * elementBytes, rowLink) +
        rounds(rows, keyRows * problem.headDim * elementBytes, colLink) +
        rounds(rows, keyRows * problem.valueDim * elementBytes, colLink) +
        rounds(cols, queryRows * problem.valueDim * 4, rowLink) +
        rounds(cols, queryRows * 4, rowLink);
    candidates.push_back(grid);
  }
  std::stable_sort(
      candidates.begin(), candidates.end(),
      [](const DistributionCandidate &a, const DistributionCandidate &b) {
        return a.seconds < b.seconds;
      });
  return candidates;
}
