//===- IntegerArith.h - The index arithmetic on plain integers --*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The formulas of the schedules (MaskGeometry, WorkAssignment) and of the GPU
// fragments (FragmentLayout) are written once over an arithmetic `A`. The
// code generators instantiate them with IndexArith, which builds index ops;
// this one evaluates them on int64_t, for the plan report, schedule selection
// and the unit tests. Divisions are of non-negative values.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_INTEGERARITH_H
#define ATTN_ANALYSIS_INTEGERARITH_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace mlir::attn {

struct IntegerArith {
  using Value = int64_t;
  using Cond = bool;

  Value constant(int64_t v) { return v; }
  Value add(Value x, Value y) { return x + y; }
  Value sub(Value x, Value y) { return x - y; }
  Value mul(Value x, Value y) { return x * y; }
  Value div(Value x, Value y) { return x / y; }
  Value rem(Value x, Value y) { return x % y; }
  Value ceilDiv(Value x, Value y) { return x / y + (x % y != 0); }
  Value min(Value x, Value y) { return std::min(x, y); }
  Value max(Value x, Value y) { return std::max(x, y); }
  Value xorOp(Value x, Value y) { return x ^ y; }
  Cond lt(Value x, Value y) { return x < y; }
  Cond gt(Value x, Value y) { return x > y; }
  Cond eq(Value x, Value y) { return x == y; }
  Cond orOp(Cond x, Cond y) { return x || y; }
  Cond andOp(Cond x, Cond y) { return x && y; }
  Value select(Cond c, Value x, Value y) { return c ? x : y; }
  /// sum of `term(i)` for i in [0, count).
  Value sum(Value count, llvm::function_ref<Value(Value)> term) {
    Value total = 0;
    for (Value i = 0; i < count; ++i)
      total += term(i);
    return total;
  }
  /// The first i in [from, count) at which the running sum `before` +
  /// term(from) + ... + term(i) exceeds `target`, and the running sum before
  /// term(i); (count, the whole sum) when none does. term(i) is evaluated
  /// for i < count only.
  std::pair<Value, Value> scanPast(Value from, Value before, Value count,
                                   llvm::function_ref<Value(Value)> term,
                                   Value target) {
    Value i = from, total = before;
    for (; i < count; ++i) {
      Value next = total + term(i);
      if (next > target)
        break;
      total = next;
    }
    return {i, total};
  }
};

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_INTEGERARITH_H
