//===- GpuRun.cpp - attn-run's GPU backend --------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "GpuRun.h"

#include "attn/Conversion/AttnToNVGPU/KernelName.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/KernelBundle.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn;

std::unique_ptr<GpuRunner> GpuRunner::open(int device,
                                           attnrt::Status &status) {
  std::unique_ptr<GpuRunner> runner(new GpuRunner);
  status = attnrt::Status::of(attnrtContextCreate(device, runner->context.out()));
  if (!status.ok())
    return nullptr;
  attnrtContextGetDeviceInfo(runner->context.get(), &runner->info);
  return runner;
}

std::string GpuRunner::describeDevice() const {
  return llvm::formatv("{0} (sm_{1}{2}, {3} SMs)", info.name, info.computeMajor,
                       info.computeMinor, info.multiprocessors);
}

llvm::Error GpuRunner::run(AttentionOp op, AttentionOperands &operands,
                           const bool given[3],
                           const ::attn::gpucheck::CheckOptions &options,
                           ::attn::gpucheck::KernelReport &report,
                           double &compileSeconds) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return llvm::createStringError(
        "attn-run --device=gpu runs attentions inside func.func");
  // The op's function alone, in a copy of its module.
  auto parent = op->getParentOfType<ModuleOp>();
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(parent->clone()));
  for (auto other : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (other.getSymName() != func.getSymName())
      other.erase();

  AttnToPTXOptions pipeline;
  pipeline.chip = llvm::formatv("sm_{0}{1}", info.computeMajor,
                                info.computeMinor)
                      .str();
  KernelBundle bundle;
  auto start = std::chrono::steady_clock::now();
  if (failed(compileKernelBundle(*module, pipeline, bundle)))
    return llvm::createStringError("cannot compile @" + func.getSymName() +
                                   " for " + pipeline.chip +
                                   " (diagnostics above)");
  compileSeconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();

  attnrt::Bundle loaded;
  attnrt::Status status = attnrt::Status::of(attnrtBundleLoadFromMemory(
      context.get(), bundle.manifestJson.c_str(), bundle.ptx.c_str(),
      loaded.out()));
  attnrtKernel kernel = nullptr;
  if (status.ok())
    status = attnrt::Status::of(attnrtBundleFindKernel(
        loaded.get(), getAttentionKernelName(op).c_str(), &kernel));
  ::attn::gpucheck::HostInputs inputs;
  if (given[0])
    inputs.query = operands.query().buffer.bytes.data();
  if (given[1])
    inputs.key = operands.key().buffer.bytes.data();
  if (given[2])
    inputs.value = operands.value().buffer.bytes.data();
  // Always attn-run's: the reference on either side needs the same ones.
  if (Operand *mask = operands.mask())
    inputs.mask = mask->buffer.bytes.data();
  if (Operand *blocks = operands.blockMask())
    inputs.blockMask = blocks->buffer.bytes.data();
  if (Operand *lengths = operands.keyLengths())
    inputs.keyLengths =
        reinterpret_cast<const int32_t *>(lengths->buffer.bytes.data());
  if (status.ok())
    status = ::attn::gpucheck::runKernel(context.get(), kernel, options, inputs,
                                 report);
  if (!status.ok())
    return llvm::createStringError(status.message);
  operands.out().assign(
      std::vector<double>(report.out.begin(), report.out.end()));
  if (Operand *lse = operands.lse())
    lse->assign(std::vector<double>(report.lse.begin(), report.lse.end()));
  return llvm::Error::success();
}
