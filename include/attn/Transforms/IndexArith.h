//===- IndexArith.h - The index arithmetic as arith/scf ops -----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The arithmetic that MaskGeometry, WorkAssignment and FragmentLayout are
// written over (see attn/Analysis/IntegerArith.h), as index ops: the code
// generators of both targets build those formulas as IR through it, so the
// IR computes exactly what the unit tests evaluate on integers. Divisions
// are unsigned (of non-negative values); min and max are signed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_INDEXARITH_H
#define ATTN_TRANSFORMS_INDEXARITH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

struct IndexArith {
  using Value = mlir::Value;
  using Cond = mlir::Value;
  ImplicitLocOpBuilder &b;

  Value constant(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value add(Value x, int64_t y) { return y == 0 ? x : add(x, constant(y)); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value sub(Value x, int64_t y) { return y == 0 ? x : sub(x, constant(y)); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value mul(Value x, int64_t y) { return y == 1 ? x : mul(x, constant(y)); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value div(Value x, int64_t y) { return y == 1 ? x : div(x, constant(y)); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value rem(Value x, int64_t y) { return rem(x, constant(y)); }
  Value ceilDiv(Value x, Value y) {
    return arith::CeilDivUIOp::create(b, x, y);
  }
  Value ceilDiv(Value x, int64_t y) { return ceilDiv(x, constant(y)); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, x, y); }
  Value min(Value x, int64_t y) { return min(x, constant(y)); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, x, y); }
  Value max(Value x, int64_t y) { return max(x, constant(y)); }
  Value xorOp(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Cond lt(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, x, y);
  }
  Cond gt(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, x, y);
  }
  Cond eq(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
  }
  Cond orOp(Cond x, Cond y) { return arith::OrIOp::create(b, x, y); }
  Cond andOp(Cond x, Cond y) { return arith::AndIOp::create(b, x, y); }
  Value select(Cond c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  /// sum of `term(i)` for i in [0, count), as an scf.for.
  Value sum(Value count, function_ref<Value(Value)> term) {
    auto loop = scf::ForOp::create(
        b, constant(0), count, constant(1), ValueRange{constant(0)},
        [&](OpBuilder &nested, Location, Value i, ValueRange total) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, add(total[0], term(i)));
        });
    return loop.getResult(0);
  }
  /// IntegerArith::scanPast as an scf.while; term(i) is built under an
  /// scf.if that evaluates it for i < count only (a term may load).
  std::pair<Value, Value> scanPast(Value from, Value before, Value count,
                                   function_ref<Value(Value)> term,
                                   Value target) {
    Type index = b.getIndexType();
    auto loop = scf::WhileOp::create(
        b, TypeRange{index, index, index}, ValueRange{from, before},
        [&](OpBuilder &nested, Location, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value i = args[0], total = args[1];
          Cond inRange = lt(i, count);
          auto guarded = scf::IfOp::create(b, TypeRange{index}, inRange,
                                           /*withElseRegion=*/true);
          b.setInsertionPointToStart(guarded.thenBlock());
          scf::YieldOp::create(b, term(i));
          b.setInsertionPointToStart(guarded.elseBlock());
          scf::YieldOp::create(b, constant(0));
          b.setInsertionPointAfter(guarded);
          Value next = add(total, guarded.getResult(0));
          Cond within =
              arith::CmpIOp::create(b, arith::CmpIPredicate::sle, next, target);
          scf::ConditionOp::create(b, andOp(inRange, within),
                                   ValueRange{i, total, next});
        },
        [&](OpBuilder &nested, Location, ValueRange args) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b,
                               ValueRange{add(args[0], constant(1)), args[2]});
        });
    return {loop.getResult(0), loop.getResult(1)};
  }
};

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_INDEXARITH_H
