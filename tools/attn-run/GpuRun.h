//===- GpuRun.h - attn-run's GPU backend ------------------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-run --device=gpu: each attention is compiled in-process to a kernel
// bundle (attn-to-ptx for the device's chip), loaded by libattnrt from
// memory, run on its operands (.npy inputs where given, else seeded random
// values made on the device) and checked against the GPU reference of
// lib/GpuCheck, as attn-launch does with bundles on disk.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_GPURUN_H
#define ATTN_RUN_GPURUN_H

#include "AttentionOperands.h"

#include "attn/GpuCheck/GpuCheck.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir::attn {

class AttentionOp;

class GpuRunner {
public:
  /// Opens DEVICE. STATUS says why not: ATTNRT_ERROR_NO_DRIVER or
  /// ATTNRT_ERROR_NO_DEVICE when there is no GPU to run on.
  static std::unique_ptr<GpuRunner> open(int device, attnrt::Status &status);

  /// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)".
  std::string describeDevice() const;

  /// Compiles OP alone to a bundle, runs it on OPERANDS' given inputs
  /// (GIVEN[i] for Q, K, V: whether the .npy option supplied it) and fills
  /// REPORT; the kernel's O and LSE are written back into OPERANDS.
  llvm::Error run(AttentionOp op, AttentionOperands &operands,
                  const bool given[3], const ::attn::gpucheck::CheckOptions &options,
                  ::attn::gpucheck::KernelReport &report, double &compileSeconds);

private:
  attnrt::Context context;
  attnrtDeviceInfo info = {};
};

} // namespace mlir::attn

#endif // ATTN_RUN_GPURUN_H
