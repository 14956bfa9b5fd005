//===- KernelBundle.h - Compile attentions to a kernel bundle ---*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A kernel bundle is what libattnrt loads: the PTX of a module's attention
// kernels and a manifest (JSON) that says, for each kernel, its parameters
// (name, element type, shape, strides, alignment), its grid as a formula of
// the parameters' sizes, its block and dynamic shared memory, its tiles,
// target and semantics. docs/runtime.md describes the format; attn-compile
// writes it to a directory, attn-run --device=gpu hands it to the runtime in
// memory.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_KERNELBUNDLE_H
#define ATTN_PIPELINES_KERNELBUNDLE_H

#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::attn {

struct KernelBundle {
  std::string manifestJson;
  std::string ptx;
  size_t kernelCount = 0;
};

/// Runs attn-to-ptx on MODULE (in place) and describes its kernels. Fails,
/// with diagnostics on MODULE, if an attention cannot be lowered or the
/// module has none.
LogicalResult compileKernelBundle(ModuleOp module,
                                  const AttnToPTXOptions &options,
                                  KernelBundle &bundle);

} // namespace mlir::attn

#endif // ATTN_PIPELINES_KERNELBUNDLE_H
