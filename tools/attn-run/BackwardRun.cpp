//===- BackwardRun.cpp - attn-run --backward: the gradient on the CPU -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "BackwardRun.h"

#include "CpuTiming.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Execution/AttentionSpec.h"
#include "attn/Execution/CpuExecutable.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"


using namespace mlir;
using namespace mlir::attn;

llvm::Expected<bool> mlir::attn::runBackwardOnCpu(
    AttentionOp op, AttentionOperands &operands,
    const BackwardOptions &options, const CheckOptions &checkOptions) {
  if (!op.getLse())
    return llvm::createStringError(
        "--backward needs the attention's LSE: give it an LSE destination "
        "(--lse)");
  if (op.hasFrame())
    return llvm::createStringError(
        "--backward takes attentions without a frame");
  int64_t keys = op.getKey().getType().getDimSize(2);
  if (options.splits < 1 || options.splits > keys)
    return llvm::createStringError(
        llvm::formatv("--grad-splits must be from 1 to Sk = {0} (a piece "
                      "holds at least one key/value block), got {1}",
                      keys, options.splits)
            .str());

  if (options.maskGrad && !operands.mask())
    return llvm::createStringError(
        "--mask-grad needs an additive mask (--mask=additive)");
  if (options.maskGrad && operands.mask()->format == ElementFormat::I1)
    return llvm::createStringError(
        "--mask-grad takes an additive mask: a boolean mask has no gradient");
  AttentionGradOp grad = buildAttentionGrad(op, options.splits,
                                            /*deterministic=*/false,
                                            options.maskGrad);
  llvm::scope_exit erase([&] { grad->erase(); });
  if (failed(grad.verify()))
    return llvm::createStringError("the gradient op does not verify");

  llvm::Expected<Operand> gradOut =
      Operand::ofType("dO", cast<RankedTensorType>(op.getOut().getType()));
  if (!gradOut)
    return gradOut.takeError();
  gradOut->randomize(options.seed + 1);
  SmallVector<Operand> gradients;
  const char *names[] = {"dQ", "dK", "dV", "dMask"};
  for (auto [name, value] : llvm::zip(names, grad.getOutputs())) {
    llvm::Expected<Operand> gradient =
        Operand::ofType(name, cast<RankedTensorType>(value.getType()));
    if (!gradient)
      return gradient.takeError();
    gradient->poison();
    gradients.push_back(std::move(*gradient));
  }

  AttnToCPUOptions pipeline;
  pipeline.blockM = options.blockM;
  pipeline.blockN = options.blockN;
  llvm::Expected<TimedCompile> compiled =
      timeCompile([&] { return CpuExecutable::compile(grad, pipeline); });
  if (!compiled)
    return compiled.takeError();

  // Q, K, V, O, LSE, dO, [mask], [block mask], [key lengths], dQ, dK, dV.
  std::vector<HostBuffer *> buffers{
      &operands.query().buffer, &operands.key().buffer,
      &operands.value().buffer, &operands.out().buffer,
      &operands.lse()->buffer,  &gradOut->buffer};
  for (Operand *input :
       {operands.mask(), operands.blockMask(), operands.keyLengths()})
    if (input)
      buffers.push_back(&input->buffer);
  for (Operand &gradient : gradients)
    buffers.push_back(&gradient.buffer);
  llvm::Expected<std::string> timing =
      timeRuns(compiled->seconds, options.repeat, 2.5 * options.forwardFlops,
               [&] { return compiled->executable->run(buffers); });
  if (!timing)
    return timing.takeError();
  llvm::outs() << llvm::formatv("  backward: {0} piece{1}; {2}\n",
                                options.splits,
                                options.splits == 1 ? "" : "s", *timing);
  if (!options.check) {
    llvm::outs() << "  check: skipped (--no-check)\n";
    return true;
  }
  llvm::Expected<std::vector<OutputCheck>> checks =
      checkGradientAgainstReference(
          op, operands, *gradOut,
          GradientOperands{gradients[0], gradients[1], gradients[2],
                       options.maskGrad ? &gradients[3] : nullptr},
          checkOptions);
  if (!checks)
    return checks.takeError();
  return reportChecks(*checks);
}
