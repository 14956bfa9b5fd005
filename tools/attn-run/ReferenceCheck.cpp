//===- ReferenceCheck.cpp - Compare an attention with the reference -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "ReferenceCheck.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Support/Npy.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::reference;

/// Whether `format` is a 16-bit float format.
static bool isHalf(ElementFormat format) {
  return format == ElementFormat::F16 || format == ElementFormat::BF16;
}

namespace {
/// What the reference computes for an attention: its sizes, options, and the
/// 16-bit format of its yardstick, if any.
struct ReferenceProblem {
  AttentionSizes shape;
  AttentionOptions options;
  std::optional<HalfFormat> half;
};
} // namespace

static ReferenceProblem referenceProblemOf(AttentionOp op,
                                           AttentionOperands &operands,
                                           const CheckOptions &options) {
  assert((!op.hasScoreModifier() || options.scoreModifier) &&
         "the caller checks that the score region can be evaluated");
  ReferenceProblem problem;
  ArrayRef<int64_t> q = operands.query().buffer.shape;
  ArrayRef<int64_t> v = operands.value().buffer.shape;
  AttentionSizes &shape = problem.shape;
  shape.batch = q[0];
  shape.queryHeads = q[1];
  shape.kvHeads = v[1];
  shape.queryLen = q[2];
  shape.keyLen = v[2];
  shape.headDim = q[3];
  shape.valueDim = v[3];

  AttentionOptions &attention = problem.options;
  attention.scale = op.getEffectiveScale();
  attention.causal = op.getCausal();
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow())
    attention.window = {(*window)[0], (*window)[1]};
  if (std::optional<APFloat> softcap = op.getSoftcap())
    attention.softcap = softcap->convertToDouble();
  if (Operand *mask = operands.mask()) {
    ScoreMask scoreMask;
    scoreMask.kind = mask->format == ElementFormat::I1 ? ScoreMask::Kind::Boolean
                                                       : ScoreMask::Kind::Additive;
    scoreMask.batch = mask->buffer.shape[0];
    scoreMask.heads = mask->buffer.shape[1];
    scoreMask.values = mask->values;
    attention.mask = std::move(scoreMask);
  }
  if (Operand *blocks = operands.blockMask()) {
    BlockMask blockMask;
    std::tie(blockMask.blockRows, blockMask.blockKeys) =
        *op.getBlockMaskBlock();
    blockMask.batch = blocks->buffer.shape[0];
    blockMask.heads = blocks->buffer.shape[1];
    blockMask.values.assign(blocks->values.begin(), blocks->values.end());
    attention.blockMask = std::move(blockMask);
  }
  if (Operand *lengths = operands.keyLengths())
    attention.keyLengths.assign(lengths->values.begin(), lengths->values.end());
  attention.scoreModifier = options.scoreModifier;

  // With 16-bit data the yardstick is a naive attention in the same format:
  // the format of the inputs, else that of the output.
  ElementFormat inputFormat = operands.query().format;
  ElementFormat outFormat = operands.out().format;
  if (isHalf(inputFormat) || isHalf(outFormat)) {
    ElementFormat format = isHalf(inputFormat) ? inputFormat : outFormat;
    problem.half =
        format == ElementFormat::F16 ? HalfFormat::F16 : HalfFormat::BF16;
  }
  return problem;
}

/// The verdict on `output` against the float64 `ref`, with the tolerance
/// from --tolerance, else from the naive 16-bit `naiveValues`, else f32's.
static OutputCheck judge(const Operand &output, const std::vector<double> &ref,
                         const std::vector<double> *naiveValues,
                         std::optional<HalfFormat> half,
                         const CheckOptions &options) {
  OutputCheck result;
  result.name = output.name;
  result.stats = computeErrorStats(output.decode(), ref);
  if (options.tolerance) {
    result.tolerance = *options.tolerance;
    result.toleranceOrigin = "--tolerance";
  } else if (naiveValues) {
    double naiveError = computeErrorStats(*naiveValues, ref).relL2;
    result.tolerance = toleranceFromNaive(naiveError);
    result.toleranceOrigin =
        llvm::formatv("2x naive {0}: {1:e2}",
                      *half == HalfFormat::F16 ? "f16" : "bf16", naiveError)
            .str();
  } else {
    result.tolerance = kF32Tolerance;
    result.toleranceOrigin = "f32";
  }
  result.passed = withinTolerance(result.stats, result.tolerance);
  return result;
}

llvm::Expected<ReferenceVerdict>
mlir::attn::checkAgainstReference(AttentionOp op, AttentionOperands &operands,
                                  const CheckOptions &options) {
  ReferenceProblem problem = referenceProblemOf(op, operands, options);
  llvm::Expected<AttentionResult> exact = referenceAttention(
      problem.shape, operands.query().values, operands.key().values,
      operands.value().values, problem.options);
  if (!exact)
    return exact.takeError();
  std::optional<AttentionResult> naive;
  if (problem.half && !options.tolerance) {
    llvm::Expected<AttentionResult> result = naiveHalfAttention(
        problem.shape, operands.query().values, operands.key().values,
        operands.value().values, problem.options, *problem.half);
    if (!result)
      return result.takeError();
    naive = std::move(*result);
  }

  ReferenceVerdict verdict;
  verdict.checks.push_back(judge(operands.out(), exact->out,
                                 naive ? &naive->out : nullptr, problem.half,
                                 options));
  if (Operand *lse = operands.lse())
    verdict.checks.push_back(judge(*lse, exact->lse,
                                   naive ? &naive->lse : nullptr, problem.half,
                                   options));
  verdict.exact = std::move(*exact);
  return verdict;
}

llvm::Expected<GradientVerdict> mlir::attn::checkGradientAgainstReference(
    AttentionOp op, AttentionOperands &operands, const Operand &gradOut,
    const GradientOperands &gradients, const CheckOptions &options) {
  ReferenceProblem problem = referenceProblemOf(op, operands, options);
  llvm::Expected<AttentionGradResult> exact = referenceAttentionGrad(
      problem.shape, operands.query().values, operands.key().values,
      operands.value().values, gradOut.values, problem.options,
      options.scoreModifierDerivative);
  if (!exact)
    return exact.takeError();
  std::optional<AttentionGradResult> naive;
  if (problem.half && !options.tolerance) {
    llvm::Expected<AttentionGradResult> result = naiveHalfAttentionGrad(
        problem.shape, operands.query().values, operands.key().values,
        operands.value().values, gradOut.values, problem.options,
        *problem.half, options.scoreModifierDerivative);
    if (!result)
      return result.takeError();
    naive = std::move(*result);
  }
  GradientVerdict verdict;
  std::vector<OutputCheck> &checks = verdict.checks;
  checks = {judge(gradients.query, exact->dQuery,
                  naive ? &naive->dQuery : nullptr, problem.half, options),
            judge(gradients.key, exact->dKey, naive ? &naive->dKey : nullptr,
                  problem.half, options),
            judge(gradients.value, exact->dValue,
                  naive ? &naive->dValue : nullptr, problem.half, options)};
  if (gradients.mask)
    checks.push_back(judge(*gradients.mask, exact->dMask,
                           naive ? &naive->dMask : nullptr, problem.half,
                           options));
  verdict.exact = std::move(*exact);
  return verdict;
}

llvm::Expected<bool> mlir::attn::checkAndReport(AttentionOp op,
                                                AttentionOperands &operands,
                                                const CheckOptions &options) {
  llvm::Expected<ReferenceVerdict> verdict =
      checkAgainstReference(op, operands, options);
  if (!verdict)
    return verdict.takeError();
  return reportChecks(verdict->checks);
}

::attn::gpucheck::ReferenceOutput
mlir::attn::referenceOutput(const Operand &operand,
                            const std::vector<double> &exact,
                            const OutputCheck &check) {
  ::attn::gpucheck::ReferenceOutput result;
  result.values = npyFromFloats(NpyElementType::F32, operand.buffer.shape,
                                std::vector<float>(exact.begin(), exact.end()));
  result.tolerance = check.tolerance;
  result.toleranceOrigin = check.toleranceOrigin;
  return result;
}

bool mlir::attn::reportChecks(const std::vector<OutputCheck> &checks) {
  bool passed = true;
  for (const OutputCheck &check : checks) {
    llvm::outs() << llvm::formatv(
        "  check {0,-3}: max abs {1:e2}, rel {2:e2} (tolerance {3:e2}, {4})",
        check.name, check.stats.maxAbs, check.stats.relL2, check.tolerance,
        check.toleranceOrigin);
    if (check.stats.nanCount)
      llvm::outs() << ", " << check.stats.nanCount
                   << " elements NaN or wrongly infinite";
    llvm::outs() << (check.passed ? " PASS\n" : " FAIL\n");
    passed &= check.passed;
  }
  return passed;
}
