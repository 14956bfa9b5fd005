//===- AttentionProblem.h - Shape and masking geometry of an attention -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The sizes of one attention and which keys each query can see. Everything a
// schedule needs to count work or bound a KV loop, without IR: the
// decomposition, schedule selection and the tools all ask this one place.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_ATTENTIONPROBLEM_H
#define ATTN_ANALYSIS_ATTENTIONPROBLEM_H

#include "attn/Analysis/MaskGeometry.h"
#include "attn/Support/AttentionSizes.h"

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace mlir::attn {

class AttentionOp;
class AttentionGradOp;
struct IntegerArith;

/// A half-open range [begin, end); empty when begin >= end.
struct IndexRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool empty() const { return begin >= end; }
  int64_t size() const { return empty() ? 0 : end - begin; }
  bool operator==(const IndexRange &other) const {
    return (empty() && other.empty()) ||
           (begin == other.begin && end == other.end);
  }
};

/// An attention's sizes and what decides which keys each query sees: what
/// the compiler's schedules count with.
struct AttentionProblem : AttentionSizes, PositionMask {
  /// Query heads whose rows share a tile (GQA packing, #attn.fa2's
  /// packed_heads; MaskGeometry.h): tiles run over tiledRows() rows of
  /// tiledHeads() heads.
  int64_t packedHeads = 1;

  /// The problem of a verified op, with the packing of its tiles; std::nullopt
  /// when a size is dynamic or the op has a frame (its positions are run-time
  /// values). With `dynamicLengths`, batch, queryLen and keyLen may be
  /// ShapedType::kDynamic (a kernel that takes them at run time); head
  /// counts and head dimensions must still be static.
  static std::optional<AttentionProblem> fromOp(AttentionOp op,
                                                bool dynamicLengths = false);
  /// The problem whose gradient `op` computes, as fromOp.
  static std::optional<AttentionProblem> fromOp(AttentionGradOp op,
                                                bool dynamicLengths = false);

  /// Whether batch, queryLen and keyLen are known (not ShapedType::kDynamic).
  bool hasStaticLengths() const;

  /// Whether the causal mask hides any key: not from a single query row,
  /// whose diagonal is the last key (bottom-right alignment), as in a decode
  /// step. Lowerings that would otherwise pay for a causal mask ask this.
  bool causalHidesKeys() const { return causal && queryLen != 1; }
  /// Whether a mask cuts the rows' key ranges by position: causalHidesKeys
  /// or a sliding window.
  bool masksByPosition() const { return causalHidesKeys() || window; }

  /// The heads and the rows per head that tiles cover (packedHeads).
  int64_t tiledHeads() const { return queryHeads / packedHeads; }
  int64_t tiledRows() const { return queryLen * packedHeads; }
  /// Query blocks of `blockM` tiled rows per tiled head (static lengths).
  int64_t queryBlocks(int64_t blockM) const;
  /// What a tile's rows belong to, for reports: "head", or "4 packed
  /// heads".
  std::string tiledHeadName() const;

  /// The masking geometry on integers.
  MaskGeometry<IntegerArith> geometry() const;

  /// The keys visible from query row `row` (bottom-right aligned masking).
  IndexRange visibleKeys(int64_t row) const;

  /// The KV blocks of `blockN` keys that query block `queryBlock` (tiled
  /// rows [queryBlock * blockM, ...)) must visit: every block outside is fully
  /// masked for every row of the query block.
  IndexRange kvBlockRange(int64_t queryBlock, int64_t blockM,
                          int64_t blockN) const;

  /// The query blocks of `blockM` rows some row of which sees a key of KV
  /// block `kvBlock` (of `blockN` keys): the blocks the backward pass visits
  /// for it. Needs packedHeads = 1.
  IndexRange queryBlockRange(int64_t kvBlock, int64_t blockM,
                             int64_t blockN) const;

  /// The number of KV blocks each query block visits (kvBlockRange's size),
  /// query block by query block.
  SmallVector<int64_t> kvBlockCounts(int64_t blockM, int64_t blockN) const;

  /// Whether every row of the query block sees every key of the KV block, so
  /// that the block needs no masking.
  bool isBlockUnmasked(int64_t queryBlock, int64_t kvBlock, int64_t blockM,
                       int64_t blockN) const;

  /// Visible (query, key) pairs of one (batch, query head).
  int64_t visiblePairs() const;

  /// Forward FLOPs as FlashAttention counts them: 2 * B * Hq * Sq * Sk *
  /// (D + Dv), halved when causal.
  double nominalForwardFlops() const;

  /// Bytes of the f32 B x Hq x Sq x Sk score tensor an untiled lowering
  /// materialises.
  double naiveScoreBytes() const;
};

/// Block counts of a tiled traversal of one (batch, tiled head).
struct TiledWork {
  int64_t queryBlocks = 0;
  /// Query-block x KV-block pairs of the full rectangle.
  int64_t denseBlocks = 0;
  /// Pairs actually visited after masked-block skipping.
  int64_t visitedBlocks = 0;
  /// Visited pairs that straddle the mask boundary and need an element mask.
  int64_t maskedBlocks = 0;
};

TiledWork countTiledWork(const AttentionProblem &problem, int64_t blockM,
                         int64_t blockN);

/// Whether split-KV's `splits` fit `op` with KV blocks of `blockN` keys:
/// more splits than blocks only add empty partials (each a slot of O and
/// LSE), so a static Sk bounds them; an error on `op` naming the bound
/// otherwise. Any count fits a run-time Sk (its empty splits are merged
/// away).
LogicalResult checkSplitCount(AttentionOp op, int64_t splits, int64_t blockN);

/// GQA packing's rule (FlashAttention-3's PackGQA heuristic): the group
/// size Hq / Hkv when packing a group's rows fills query blocks of `blockM`
/// rows better (the useful share of the padded rows below 90% of the packed
/// share: decode and short speculative steps), else 1. Also 1 where packing
/// cannot apply: no GQA, a mask operand, a block mask, a frame, or a
/// run-time Sq.
int64_t selectPackedHeads(AttentionOp op, int64_t blockM);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_ATTENTIONPROBLEM_H
