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
// most twice the error of a naive attention computed in that format. The
// gradients of attn.attention_grad are judged the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_REFERENCECHECK_H
#define ATTN_RUN_REFERENCECHECK_H

#include "AttentionOperands.h"

#include "attn/GpuCheck/ReferenceCase.h"
#include "attn/Reference/ErrorMetrics.h"
#include "attn/Reference/ReferenceAttention.h"
#include "attn/Reference/ReferenceAttentionGrad.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

struct CheckOptions {
  /// Replaces the tolerance of every output when set.
  std::optional<double> tolerance;
  /// What the op's score region computes; required when it has one.
  reference::ScoreModifier scoreModifier;
  /// Its derivative with respect to the score, for the gradient's check
  /// (the reference takes a central difference in float64 without it).
  reference::ScoreModifierDerivative scoreModifierDerivative;
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

struct GradientVerdict {
  std::vector<OutputCheck> checks;
  reference::AttentionGradResult exact;
};

/// Checks the outputs in `operands` (after a run of `op` on its inputs).
/// Fails only when the reference rejects the problem.
llvm::Expected<ReferenceVerdict>
checkAgainstReference(AttentionOp op, AttentionOperands &operands,
                      const CheckOptions &options);

/// The outputs of an attn.attention_grad run.
struct GradientOperands {
  const Operand &query;
  const Operand &key;
  const Operand &value;
  /// The additive mask's, when it was computed.
  const Operand *mask = nullptr;
};

/// Checks the gradients of `op` (dQ, dK and dV, computed from the inputs in
/// `operands` and `gradOut`) against the float64 reference gradient, with
/// the same tolerances as the forward's outputs: f32's, or twice the error
/// of a naive backward pass in the 16-bit format. Fails only when the
/// reference rejects the problem.
llvm::Expected<GradientVerdict> checkGradientAgainstReference(
    AttentionOp op, AttentionOperands &operands, const Operand &gradOut,
    const GradientOperands &gradients, const CheckOptions &options);

/// An output of a reference case: the reference's `exact` values of
/// `operand`, rounded to f32, with the tolerance `check` judged it by.
::attn::gpucheck::ReferenceOutput
referenceOutput(const Operand &operand, const std::vector<double> &exact,
                const OutputCheck &check);

/// One line per check on stdout ("  check O  : max abs .., rel ..
/// (tolerance .., origin) PASS"); whether all passed.
bool reportChecks(const std::vector<OutputCheck> &checks);

/// checkAgainstReference, then reportChecks.
llvm::Expected<bool> checkAndReport(AttentionOp op, AttentionOperands &operands,
                                    const CheckOptions &options);

} // namespace mlir::attn

#endif // ATTN_RUN_REFERENCECHECK_H
