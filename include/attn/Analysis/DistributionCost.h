//===- DistributionCost.h - Ring or ATTENTION2D, and which grid -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The cost model of the distribution layer: for an attention over the ranks
// of an #attn.cluster, the communication time of ring attention and of
// ATTENTION2D on every R x C grid, from the bytes each collective moves
// (DistributedLayout's model, exact for our lowering) and the links it
// crosses. Compute is the same for every candidate (balanced by zig-zag
// shards when causal), so the cheapest communication wins.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_DISTRIBUTIONCOST_H
#define ATTN_ANALYSIS_DISTRIBUTIONCOST_H

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/DistributedLayout.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir::attn {

struct DistributionCandidate {
  /// `#attn.ring<...>` or `#attn.attention2d<...>`, zig-zag when causal.
  Attribute partition;
  DistributedLayout layout;
  /// Bytes every rank sends in one run.
  int64_t bytesPerRank = 0;
  /// Predicted communication time of one run, seconds: each collective as
  /// (members - 1) messages of one piece over the slowest link its group
  /// crosses (ring algorithms), collectives one after the other.
  double seconds = 0;
};

/// Ring attention and ATTENTION2D on every R x C = ranks grid for `problem`
/// on `cluster`, cheapest first (ties: the ring, then fewer grid rows).
SmallVector<DistributionCandidate>
rankDistributions(MLIRContext *context, const AttentionProblem &problem,
                  int64_t elementBytes, ClusterAttr cluster);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_DISTRIBUTIONCOST_H
