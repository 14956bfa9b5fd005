//===- ReferenceRules.h - What the references share -------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What the forward and backward references share: the precisions they
// compute in, which keys a row takes part with, and the NaN rule. Private to
// lib/Reference.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_REFERENCE_REFERENCERULES_H
#define ATTN_LIB_REFERENCE_REFERENCERULES_H

#include "attn/Reference/ReferenceAttention.h"
#include "attn/Support/HalfFloat.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace mlir::attn::reference {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Keeps every intermediate in double.
struct ExactPrecision {
  using Accumulator = double;
  double round(double value) const { return value; }
};

/// Rounds every intermediate to a 16-bit format and accumulates in float, as
/// a naive attention on 16-bit tensors (and autograd of it) does.
struct HalfPrecision {
  using Accumulator = float;
  HalfFormat format;
  double round(double value) const {
    return roundToHalf(static_cast<float>(value), format);
  }
};

/// `values` rounded to `format`, element by element.
inline std::vector<double> roundAll(llvm::ArrayRef<double> values,
                                    HalfFormat format) {
  std::vector<double> rounded(values.size());
  for (size_t i = 0, e = values.size(); i < e; ++i)
    rounded[i] = roundToHalf(static_cast<float>(values[i]), format);
  return rounded;
}

/// A NaN score must show in the results rather than be passed over as if
/// its key were masked.
inline double maxKeepingNaN(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
}

/// The [batch, head] plane of batch b and head h in a tensor whose batch
/// and head dimensions may be 1 (broadcast).
inline int64_t broadcastPlane(int64_t batches, int64_t heads, int64_t b,
                              int64_t h) {
  return (batches == 1 ? 0 : b) * heads + (heads == 1 ? 0 : h);
}

/// Which keys of one (batch, query head) a row takes part with, by the rules
/// of ReferenceAttention.h (key lengths, causal and window masks, the block
/// mask, a boolean mask), and which element of an additive mask applies.
class KeyRules {
public:
  KeyRules(const AttentionSizes &shape, const AttentionOptions &options)
      : options(options), queryLen(shape.queryLen), keyLen(shape.keyLen),
        mask(options.mask ? &*options.mask : nullptr),
        blocks(options.blockMask ? &*options.blockMask : nullptr),
        blockColumns(blocks ? llvm::divideCeil(keyLen, blocks->blockKeys) : 0),
        blockRowCount(blocks ? llvm::divideCeil(queryLen, blocks->blockRows)
                             : 0) {}

  /// Selects batch `b` and query head `h`; returns the keys the sequence
  /// attends to (its key length, else Sk).
  int64_t select(int64_t b, int64_t h) {
    maskPlane = mask ? broadcastPlane(mask->batch, mask->heads, b, h) *
                           queryLen * keyLen
                     : 0;
    blockPlane = blocks ? broadcastPlane(blocks->batch, blocks->heads, b, h) *
                              blockRowCount * blockColumns
                        : 0;
    keyEnd = options.keyLengths.empty() ? keyLen : options.keyLengths[b];
    return keyEnd;
  }

  /// For row `i` and key `k` (below select's end): nothing when the key takes
  /// no part; else the index of the additive mask's element added to its
  /// score, or -1 when none is.
  std::optional<int64_t> take(int64_t i, int64_t k) const {
    const int64_t diagonal = i + keyEnd - queryLen;
    if (options.causal && k > diagonal)
      return std::nullopt;
    // Distances, not edges: diagonal + a side near INT64_MAX would overflow.
    if (options.window && (diagonal - k > options.window->first ||
                           k - diagonal > options.window->second))
      return std::nullopt;
    // A block of the block mask is empty (0), full (2: the mask operand
    // does not apply) or partial.
    int8_t block = blocks ? blocks->values[blockPlane +
                                           i / blocks->blockRows * blockColumns +
                                           k / blocks->blockKeys]
                          : 1;
    if (block == 0)
      return std::nullopt;
    if (!mask || block == 2)
      return -1;
    const int64_t index = maskPlane + i * keyLen + k;
    if (mask->kind == ScoreMask::Kind::Boolean)
      return mask->values[index] == 0.0 ? std::nullopt
                                        : std::optional<int64_t>(-1);
    return index;
  }

private:
  const AttentionOptions &options;
  int64_t queryLen, keyLen;
  const ScoreMask *mask;
  const BlockMask *blocks;
  int64_t blockColumns, blockRowCount;
  int64_t maskPlane = 0, blockPlane = 0, keyEnd = 0;
};

} // namespace mlir::attn::reference

#endif // ATTN_LIB_REFERENCE_REFERENCERULES_H
