//===- ErrorMetrics.h - How far an output is from the reference -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The error of an attention output against the float64 reference, and the
// pass/fail decision on it. A NaN, or an infinity where the reference is
// finite, always fails: no tolerance can excuse it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_ERRORMETRICS_H
#define ATTN_REFERENCE_ERRORMETRICS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir::attn::reference {

struct ErrorStats {
  /// max |out - ref| over the elements where both are finite.
  double maxAbs = 0;
  /// ||out - ref||_2 / ||ref||_2 over the elements where both are finite.
  /// When ||ref||_2 is 0 there is no scale to be relative to, and this is
  /// maxAbs instead: 0 exactly when the output matches.
  double relL2 = 0;
  /// Elements that cannot be compared: NaN in the output or the reference,
  /// or non-finite in just one of them, or infinities of opposite signs. An
  /// infinity equal to the reference's (the -inf LSE of a fully masked row)
  /// matches.
  int64_t nanCount = 0;
};

/// The error of `out` against `ref`, which have the same size.
ErrorStats computeErrorStats(llvm::ArrayRef<float> out,
                             llvm::ArrayRef<double> ref);
ErrorStats computeErrorStats(llvm::ArrayRef<double> out,
                             llvm::ArrayRef<double> ref);

/// Whether `stats` pass: no element that cannot be compared, and relL2 at
/// most `tolerance`.
bool withinTolerance(const ErrorStats &stats, double tolerance);

/// The relative L2 tolerance of f32 data, on every backend.
constexpr double kF32Tolerance = 1e-5;

/// The tolerance of 16-bit data, on every backend: twice the relative L2
/// error of a naive attention in the same format, and at least the f32 one.
double toleranceFromNaive(double naiveRelL2);

} // namespace mlir::attn::reference

#endif // ATTN_REFERENCE_ERRORMETRICS_H
