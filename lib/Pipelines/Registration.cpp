//===- Registration.cpp - Register the named pipelines --------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Conversion/Passes.h"
#include "attn/Distribution/Passes.h"
#include "attn/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn;

/// Registers a pipeline of module passes. Nested under another op (e.g.
/// `builtin.module(func.func(attn-to-cpu))`) it is refused with a diagnostic:
/// adding its module passes there would abort in the pass manager.
template <typename Options>
static void registerModulePipeline(StringRef arg, StringRef description,
                                   void (*builder)(OpPassManager &,
                                                   const Options &)) {
  registerPassPipeline(
      arg, description,
      [arg, builder](OpPassManager &pm, StringRef optionsText,
                     function_ref<LogicalResult(const Twine &)> errorHandler) {
        StringRef anchor = pm.getOpAnchorName();
        if (anchor != ModuleOp::getOperationName())
          return errorHandler(
              Twine(arg) + " runs on a builtin.module, not nested in '" +
              anchor + "': use --pass-pipeline='builtin.module(" + arg + ")'");
        Options options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        if (std::string error = options.validate(); !error.empty())
          return errorHandler(Twine(arg) + ": " + error);
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionsHandler) {
        optionsHandler(Options());
      });
}

void mlir::attn::registerAttnPipelines() {
  registerModulePipeline<AttnToCPUOptions>(
      "attn-to-cpu",
      "Lower attn ops to the LLVM dialect for the CPU: the schedule "
      "attn-to-ptx chooses for the module's target, tiled online-softmax "
      "loops, the merge lowering, bufferisation, loops, LLVM",
      buildAttnToCPUPipeline);
  registerModulePipeline<AttnToPTXOptions>(
      "attn-to-ptx",
      "Generate a FlashAttention-2 tensor-core kernel per attn.attention and "
      "lower it through NVGPU and NVVM to PTX (gpu.binary, format isa)",
      buildAttnToPTXPipeline);
}

void mlir::attn::registerAllAttnPassesAndPipelines() {
  registerAttnPasses();
  registerAttnConversionPasses();
  registerAttnDistributionPasses();
  registerAttnPipelines();
}
