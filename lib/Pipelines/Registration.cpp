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

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::registerAttnPipelines() {
  PassPipelineRegistration<AttnToCPUOptions>(
      "attn-to-cpu",
      "Lower attn ops to the LLVM dialect for the CPU: tiled online-softmax "
      "loops, the merge lowering, bufferisation, loops, LLVM",
      buildAttnToCPUPipeline);
  PassPipelineRegistration<AttnToPTXOptions>(
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
