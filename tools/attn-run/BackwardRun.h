//===- BackwardRun.h - attn-run --backward: the gradient on the CPU -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// After an attention has run on the CPU, attn-run --backward builds its
// attn.attention_grad, compiles it with attn-to-cpu, runs it on the
// forward's inputs, O and LSE and a seeded random dO, and checks dQ, dK and
// dV against the float64 reference gradient.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_BACKWARDRUN_H
#define ATTN_RUN_BACKWARDRUN_H

#include "AttentionOperands.h"
#include "ReferenceCheck.h"

#include "llvm/Support/Error.h"

namespace mlir::attn {

class AttentionOp;

struct BackwardOptions {
  /// attn-to-cpu's tile options (0: the op's or the default).
  int64_t blockM = 0, blockN = 0;
  /// Seeds dO.
  uint64_t seed = 0;
  /// The gradient's #attn.split_kv pieces when > 1.
  int64_t splits = 1;
  /// Also the gradient of the additive mask.
  bool maskGrad = false;
  bool check = true;
  unsigned repeat = 1;
  /// The forward's FLOPs, for the report (the backward counts 2.5 times).
  double forwardFlops = 0;
  /// Where to write the gradient case of the function's attn.attention_grad
  /// kernel (GradientCase), when not empty.
  std::string writeReference;
};

/// Runs the gradient of `op`, whose outputs in `operands` (O and LSE) hold a
/// finished forward run; returns whether its check passed. Errors are bad
/// input (an attention without LSE, a framed one) or a failure to compile
/// or run.
llvm::Expected<bool> runBackwardOnCpu(AttentionOp op,
                                      AttentionOperands &operands,
                                      const BackwardOptions &options,
                                      const CheckOptions &checkOptions);

} // namespace mlir::attn

#endif // ATTN_RUN_BACKWARDRUN_H
