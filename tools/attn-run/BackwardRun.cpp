//===- BackwardRun.cpp - attn-run --backward: the gradient on the CPU -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "BackwardRun.h"

#include "CpuTiming.h"

#include "attn/Conversion/AttnToNVGPU/KernelName.h"
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
  llvm::Expected<GradientVerdict> verdict = checkGradientAgainstReference(
      op, operands, *gradOut,
      GradientOperands{gradients[0], gradients[1], gradients[2],
                       options.maskGrad ? &gradients[3] : nullptr},
      checkOptions);
  if (!verdict)
    return verdict.takeError();
  bool passed = reportChecks(verdict->checks);
  if (options.writeReference.empty())
    return passed;
  if (options.maskGrad || options.splits > 1)
    return llvm::createStringError(
        "--write-reference writes the case of a GPU backward kernel, which "
        "computes no mask gradient and has its own schedule: drop "
        "--mask-grad and --grad-splits");
  // The kernel of the function's first attn.attention_grad: the one built
  // here, which stands right after its forward.
  ::attn::gpucheck::GradientCase reference;
  reference.kernel = getAttentionGradKernelName(grad);
  reference.query = operands.query().toNpy();
  reference.key = operands.key().toNpy();
  reference.value = operands.value().toNpy();
  reference.out = operands.out().toNpy();
  reference.lse = operands.lse()->toNpy();
  reference.gradOut = gradOut->toNpy();
  if (Operand *mask = operands.mask())
    reference.mask = mask->toNpy();
  if (Operand *blocks = operands.blockMaskParameter())
    reference.blockMask = blocks->toNpy();
  if (Operand *lengths = operands.keyLengths())
    reference.keyLengths = lengths->toNpy();
  const reference::AttentionGradResult &exact = verdict->exact;
  reference.gradQuery =
      referenceOutput(gradients[0], exact.dQuery, verdict->checks[0]);
  reference.gradKey =
      referenceOutput(gradients[1], exact.dKey, verdict->checks[1]);
  reference.gradValue =
      referenceOutput(gradients[2], exact.dValue, verdict->checks[2]);
  if (std::string error = ::attn::gpucheck::writeGradientCase(
          options.writeReference, reference);
      !error.empty())
    return llvm::createStringError(error);
  llvm::outs() << "  gradient case: " << options.writeReference << " (kernel "
               << reference.kernel << ")\n";
  return passed;
}
