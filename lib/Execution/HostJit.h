//===- HostJit.h - Shared steps of compiling IR for this machine -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What CpuExecutable and ScoreRegionFunction both do: collect a pass
// pipeline's diagnostics into the error they return, clone the constants a
// region uses from outside into the function that takes its place, and
// JIT-compile an LLVM-dialect module for the host with optimisation.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_EXECUTION_HOSTJIT_H
#define ATTN_LIB_EXECUTION_HOSTJIT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

/// Marks a function that calls JIT-compiled code through a pointer:
/// UBSan's -fsanitize=function reads a type signature just before the
/// callee, which JIT code does not have (the read can even fall off the
/// start of its page).
#if defined(__clang__)
#define ATTN_CALLS_JIT_CODE __attribute__((no_sanitize("function")))
#else
#define ATTN_CALLS_JIT_CODE
#endif

namespace mlir {
class ExecutionEngine;
namespace attn {

/// Collects the diagnostics emitted during its lifetime, one per line, each
/// after the position it names.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MLIRContext *context);
  /// An error made of `what` and the collected diagnostics.
  llvm::Error error(llvm::StringRef what) const;

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

/// Maps every value `region` uses but does not define to a clone, made with
/// `b`, of its defining constant. A value that is not a constant (a function
/// argument, the result of a computation) cannot move into another function:
/// the error starts with `why` (what compiles the region alone) and names
/// the value's type and position.
llvm::Error cloneCapturedConstants(Region &region, OpBuilder &b,
                                   IRMapping &mapping, llvm::StringRef why);

/// Loads the dialects and translations that lowering to the LLVM dialect and
/// the JIT need.
void prepareHostJit(MLIRContext *context);

/// JIT-compiles `module` (LLVM dialect) for this machine at -O3; looking a
/// function up afterwards generates its code.
llvm::Expected<std::unique_ptr<ExecutionEngine>>
createHostEngine(ModuleOp module);

} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_EXECUTION_HOSTJIT_H
