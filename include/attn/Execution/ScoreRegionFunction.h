//===- ScoreRegionFunction.h - An attention's score region, alone -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Compiles the body of an attn.attention's score region, and nothing else,
// into a scalar function `f32 (f32 score, i64 b, i64 h, i64 q, i64 k)` on
// this machine. The float64 reference calls it for every score, so a score
// region is checked by code that shares only the region's body with the
// tiled lowerings: the tiles, loops, masks and softmax it is checked against
// are the reference's own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_SCOREREGIONFUNCTION_H
#define ATTN_EXECUTION_SCOREREGIONFUNCTION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace mlir {
class ExecutionEngine;
namespace attn {

class AttentionOp;

class ScoreRegionFunction {
public:
  ~ScoreRegionFunction();

  /// Compiles the score region of `op` (which must have one; `op` is not
  /// modified). The region may use constants defined outside it, which are
  /// cloned; any other value from outside is an error. As for
  /// CpuExecutable, the context must know the interfaces of every dialect
  /// and extension that attn-to-cpu lowers (registerAllDialects and
  /// registerAllExtensions). With `widened`, every f32 of the body (the
  /// score, its constants and its intermediates) becomes f64, so that the
  /// reference can take an accurate derivative of it by differences; a body
  /// that does not verify so widened (one that converts to or from f32
  /// explicitly, say) is an error.
  static llvm::Expected<std::unique_ptr<ScoreRegionFunction>>
  compile(AttentionOp op, bool widened = false);

  /// The score the region yields for `score` at batch `b`, query head `h`,
  /// query `q` and key `k` (computed in f32 unless widened).
  double operator()(double score, int64_t b, int64_t h, int64_t q,
                    int64_t k) const;

private:
  ScoreRegionFunction() = default;

  OwningOpRef<ModuleOp> module;
  std::unique_ptr<ExecutionEngine> engine;
  float (*function)(float, int64_t, int64_t, int64_t, int64_t) = nullptr;
  double (*widenedFunction)(double, int64_t, int64_t, int64_t,
                            int64_t) = nullptr;
};

} // namespace attn
} // namespace mlir

#endif // ATTN_EXECUTION_SCOREREGIONFUNCTION_H
