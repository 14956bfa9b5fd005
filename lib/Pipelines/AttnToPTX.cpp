//===- AttnToPTX.cpp - attn ops to PTX through NVGPU and NVVM -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildKernelsToPTXPipeline(OpPassManager &pm,
                                           const AttnToPTXOptions &options) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

std::string AttnToPTXOptions::validate() const {
  int64_t capability = computeCapabilityOf(chip);
  if (capability < 0)
    return "chip must name an NVPTX architecture such as sm_80 or sm_90a, "
           "got \"" +
           chip + "\"";
  if (capability < kMinComputeCapability)
    return "the kernels use sm_80 instructions (mma.sync m16n8k16, "
           "cp.async): " +
           chip + " is too old; use sm_80 or newer";
  SmallVector<StringRef> entries;
  StringRef(features).split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    unsigned version;
    if (!entry.consume_front("+ptx") || entry.getAsInteger(10, version))
      return "features must be PTX versions such as +ptx80 or +ptx83, got \"" +
             features + "\"";
  }
  return "";
}

void mlir::attn::buildAttnToKernelsPipeline(OpPassManager &pm,
                                            const AttnToPTXOptions &options) {
  AttnSelectScheduleOptions schedule;
  // Lean attention replaces split-KV.
  schedule.lean = options.lean;
  schedule.splitKv = options.splitKv && !options.lean;
  pm.addPass(createAttnSelectSchedule(schedule));
  // With the tiles chosen: the block sparsity the IR proves, which the
  // kernel skips.
  pm.addPass(createAttnDeriveBlockMask());
  pm.addPass(createAttnToNVGPU());
}

void mlir::attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                        const AttnToPTXOptions &options) {
  buildAttnToKernelsPipeline(pm, options);
  buildKernelsToPTXPipeline(pm, options);
}
