//===- ScoreDerivative.h - d/dscore of a score region ----------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The backward pass needs the derivative of a score region's result with
// respect to its score argument. It is built by forward-mode
// differentiation of the region's body: each op that depends on the score
// gets a tangent from its operands' tangents (the rules of calculus for the
// arith and math ops a region uses); ops that do not read the score (the
// index arithmetic of ALiBi, say) need none, and comparisons and conversions
// to integers are piecewise constant in it. A region that reads the score in
// any other op without a rule is refused, naming the op.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_SCOREDERIVATIVE_H
#define ATTN_ANALYSIS_SCOREDERIVATIVE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Region.h"

namespace mlir::attn {

/// The first op of `score`'s body that reads the score (or a value computed
/// from it), as an operand or inside its regions, and has no derivative rule,
/// or null when the region can be differentiated. Comparisons and
/// conversions to integers are piecewise constant (derivative 0); any other
/// op needs a rule, whatever its result type.
Operation *findUndifferentiableOp(Region &score);

/// Builds one op of a score region's body where its derivative is built,
/// mapping its results in `mapping` (an op whose results it leaves unmapped
/// is one no other op reads as a float, a constant tensor say).
using ScoreOpBuilder =
    llvm::function_ref<void(Operation &op, IRMapping &mapping)>;

/// Builds the body of `score` at `b`'s insertion point with its arguments
/// bound to `args` (score, b, h, q, k), op by op with `buildOp` (by default
/// a clone, as inlineScoreRegion does; a GPU kernel lowers math ops to the
/// hardware's approximations), and returns d(result)/d(score) there (0 when
/// the result does not depend on the score); `value`, when given, receives
/// the result itself. The region must pass findUndifferentiableOp.
Value buildScoreDerivative(OpBuilder &b, Location loc, Region &score,
                           ValueRange args, ScoreOpBuilder buildOp = {},
                           Value *value = nullptr);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_SCOREDERIVATIVE_H
