//===- ReferenceCheck.h - Compare an attention with the reference -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Reads what an attn.attention asks for (sizes, scale, causal, window,
// softcap, mask) off the op, computes it with the float64 reference on the
// same input values, and judges the outputs with the project's tolerances:
// relative L2 error under 1e-5 when everything is f32; with f16 or bf16, at
// most twice the error of a naive attention computed in that format.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_REFERENCECHECK_H
#define ATTN_RUN_REFERENCECHECK_H

#include "AttentionOperands.h"

#include "attn/Reference/ErrorMetrics.h"
#include "attn/Reference/ReferenceAttention.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

struct CheckOptions {
  /// Replaces the tolerance of every output when set.
  std::optional<double> tolerance;
  /// What the op's score region computes; required when it has one.
  reference::ScoreModifier scoreModifier;
};

/// The verdict on one output.
struct OutputCheck {
  /// "O" or "LSE".
  std::string name;
  reference::ErrorStats stats;
  double tolerance = 0;
  /// Where the tolerance comes from, for the report.
  std::string toleranceOrigin;
  bool passed = false;
};

/// The verdict on every output, and the reference's outputs it was made
/// against.
struct ReferenceVerdict {
  std::vector<OutputCheck> checks;
  reference::AttentionResult exact;
};

/// Checks the outputs in `operands` (after a run of `op` on its inputs).
/// Fails only when the reference rejects the problem.
llvm::Expected<ReferenceVerdict>
checkAgainstReference(AttentionOp op, AttentionOperands &operands,
                      const CheckOptions &options);

/// One line per check on stdout ("  check O  : max abs .., rel ..
/// (tolerance .., origin) PASS"); whether all passed.
bool reportChecks(const std::vector<OutputCheck> &checks);

/// checkAgainstReference, then reportChecks.
llvm::Expected<bool> checkAndReport(AttentionOp op, AttentionOperands &operands,
                                    const CheckOptions &options);

} // namespace mlir::attn

#endif // ATTN_RUN_REFERENCECHECK_H
