//===- Passes.h - attn conversion passes --------------------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Conversion/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
