//===- Passes.h - attn-mlir distribution passes -----------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DISTRIBUTION_PASSES_H
#define ATTN_DISTRIBUTION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Distribution/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Distribution/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_DISTRIBUTION_PASSES_H
