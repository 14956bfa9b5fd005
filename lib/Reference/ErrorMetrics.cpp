//===- ErrorMetrics.cpp - How far an output is from the reference ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/ErrorMetrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>

using namespace mlir::attn::reference;

template <typename Element>
static ErrorStats errorStats(llvm::ArrayRef<Element> out,
                             llvm::ArrayRef<double> ref) {
  assert(out.size() == ref.size() && "output and reference sizes differ");
  ErrorStats stats;
  double errorSquares = 0, refSquares = 0;
  for (size_t i = 0, e = out.size(); i < e; ++i) {
    double o = out[i], r = ref[i];
    if (!std::isfinite(o) || !std::isfinite(r)) {
      // Only an infinity the reference has too matches (NaN != NaN).
      if (o != r)
        ++stats.nanCount;
      continue;
    }
    double error = std::abs(o - r);
    stats.maxAbs = std::max(stats.maxAbs, error);
    errorSquares += error * error;
    refSquares += r * r;
  }
  stats.relL2 =
      refSquares > 0 ? std::sqrt(errorSquares / refSquares) : stats.maxAbs;
  return stats;
}

ErrorStats
mlir::attn::reference::computeErrorStats(llvm::ArrayRef<float> out,
                                         llvm::ArrayRef<double> ref) {
  return errorStats(out, ref);
}

ErrorStats
mlir::attn::reference::computeErrorStats(llvm::ArrayRef<double> out,
                                         llvm::ArrayRef<double> ref) {
  return errorStats(out, ref);
}

bool mlir::attn::reference::withinTolerance(const ErrorStats &stats,
                                            double tolerance) {
  // Written so that a NaN relL2 or tolerance fails too.
  return stats.nanCount == 0 && stats.relL2 <= tolerance;
}

double mlir::attn::reference::toleranceFromNaive(double naiveRelL2) {
  return std::max(2 * naiveRelL2, kF32Tolerance);
}
