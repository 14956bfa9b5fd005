//===- AttentionSizes.h - The sizes of one attention ------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The one type for an attention's sizes, and the one for its masks by
// position, shared by the compiler (AttentionProblem), the float64 reference,
// attn-run's and the C API's attention specification (AttentionSpec) and the
// GPU check. They depend on nothing, so that the reference, which shares no
// code with the compiler's lowering, can use them too.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_ATTENTIONSIZES_H
#define ATTN_SUPPORT_ATTENTIONSIZES_H

#include <cstdint>
#include <optional>
#include <utility>

namespace mlir::attn {

/// Q [batch, queryHeads, queryLen, headDim], K [batch, kvHeads, keyLen,
/// headDim], V [batch, kvHeads, keyLen, valueDim], O [batch, queryHeads,
/// queryLen, valueDim]. In prose and diagnostics: B, Hq, Hkv, Sq, Sk, D, Dv.
struct AttentionSizes {
  int64_t batch = 1;
  int64_t queryHeads = 1;
  /// Divides queryHeads.
  int64_t kvHeads = 1;
  int64_t queryLen = 1;
  int64_t keyLen = 1;
  int64_t headDim = 1;
  int64_t valueDim = 1;

  /// Query heads that share one key/value head.
  int64_t groupSize() const { return queryHeads / kvHeads; }
};

/// The keys a query sees by position, aligned to the bottom-right corner as
/// in FlashAttention-2: with d = i + Sk - Sq the diagonal of query i, a causal
/// mask keeps keys k <= d, a window (left, right) keys d - left <= k <=
/// d + right. The one type for them in the compiler (AttentionProblem), the
/// reference (its AttentionOptions) and AttentionSpec.
struct PositionMask {
  bool causal = false;
  /// (left, right), both >= 0.
  std::optional<std::pair<int64_t, int64_t>> window;
};

} // namespace mlir::attn

#endif // ATTN_SUPPORT_ATTENTIONSIZES_H
