//===- ReferencePrecision.h - What the references share ---------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The precisions the forward and backward references compute in, and the
// small index and NaN rules they share. Private to lib/Reference.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_REFERENCE_REFERENCEPRECISION_H
#define ATTN_LIB_REFERENCE_REFERENCEPRECISION_H

#include "attn/Support/HalfFloat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

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

} // namespace mlir::attn::reference

#endif // ATTN_LIB_REFERENCE_REFERENCEPRECISION_H
