//===- AttentionSummary.cpp - One line that says which attention it is ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/AttentionSummary.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

static std::string describeHeads(const AttentionProblem &problem) {
  if (problem.kvHeads == problem.queryHeads)
    return "MHA";
  if (problem.kvHeads == 1)
    return "MQA";
  return llvm::formatv("GQA {0}:1", problem.groupSize()).str();
}

/// The summary of `op`'s attention, whose O is `outputType`.
template <typename OpTy>
static std::string summarize(OpTy op, const AttentionProblem &problem,
                             Type outputType) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // A length the kernel takes at run time is "?", as in the tensor type.
  os << llvm::formatv("B={0} Hq={1} Hkv={2} ({3}) Sq={4} Sk={5} D={6} Dv={7} ",
                      formatDim(problem.batch), problem.queryHeads,
                      problem.kvHeads, describeHeads(problem),
                      formatDim(problem.queryLen), formatDim(problem.keyLen),
                      problem.headDim, problem.valueDim);
  Type inputType = op.getQuery().getType().getElementType();
  os << inputType;
  if (outputType != inputType)
    os << "->" << outputType;
  if (problem.causal)
    os << " causal";
  if (problem.window)
    os << llvm::formatv(" window=[{0}, {1}]", problem.window->first,
                        problem.window->second);
  if (std::optional<APFloat> softcap = op.getSoftcap())
    os << " softcap=" << softcap->convertToDouble();
  if (Value mask = op.getMask())
    os << (getElementTypeOrSelf(mask.getType()).isInteger(1) ? " boolean-mask"
                                                             : " additive-mask");
  if (std::optional<std::pair<int64_t, int64_t>> blocks =
          op.getBlockMaskBlock())
    os << llvm::formatv(" block-mask={0}x{1}", blocks->first, blocks->second);
  if (op.hasKeyLengths())
    os << " key-lengths";
  if (op.hasScoreModifier())
    os << " score-mod";
  return text;
}

std::string mlir::attn::summarizeAttention(AttentionOp op,
                                           const AttentionProblem &problem) {
  return summarize(op, problem, getElementTypeOrSelf(op.getInitOut())) +
         (op.getInitLse() ? " +lse" : "");
}

std::string mlir::attn::summarizeAttention(AttentionGradOp op,
                                           const AttentionProblem &problem) {
  return summarize(op, problem, getElementTypeOrSelf(op.getOut())) +
         (op.getInitGradMask() ? " +dmask" : "");
}
