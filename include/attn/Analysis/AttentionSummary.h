//===- AttentionSummary.h - One line that says which attention it is -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_ATTENTIONSUMMARY_H
#define ATTN_ANALYSIS_ATTENTIONSUMMARY_H

#include "attn/Analysis/AttentionProblem.h"

#include <string>

namespace mlir::attn {

/// "B=1 Hq=32 Hkv=8 (GQA 4:1) Sq=4096 Sk=4096 D=128 Dv=128 bf16 causal +lse":
/// the sizes of `problem` (which is `op`'s) and every feature `op` uses.
std::string summarizeAttention(AttentionOp op, const AttentionProblem &problem);
/// The same for the attention whose gradient `op` computes ("+dmask" when it
/// computes the mask's gradient too).
std::string summarizeAttention(AttentionGradOp op,
                               const AttentionProblem &problem);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_ATTENTIONSUMMARY_H
