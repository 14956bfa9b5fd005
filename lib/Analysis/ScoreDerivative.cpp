//===- ScoreDerivative.cpp - d/dscore of an attention's score region ------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/ScoreDerivative.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Builds the tangents of one region body: `tangents` maps a value of the
/// original body to its derivative with respect to the score, in the clone;
/// a value without an entry does not depend on the score.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc, IRMapping &mapping)
      : b(b), loc(loc), mapping(mapping) {}

  /// Whether the ops of `op`'s kind have a derivative rule below.
  static bool hasRule(Operation *op) {
    return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
               arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
               arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp,
               math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
               math::TanhOp, math::SqrtOp, math::SinOp, math::CosOp,
               math::AbsFOp, math::FmaOp>(op);
  }

  /// Whether `op`'s results depend on the score: an operand has a tangent,
  /// and a result is a float (a comparison or a conversion to an integer
  /// is piecewise constant in the score, its derivative 0).
  bool dependsOnScore(Operation *op) const {
    return llvm::any_of(op->getOperands(),
                        [&](Value v) { return tangents.count(v); }) &&
           llvm::any_of(op->getResultTypes(),
                        [](Type t) { return isa<FloatType>(t); });
  }

  void seed(Value score) { tangents[score] = constant(1.0); }

  Value tangentOf(Value original) const { return tangents.lookup(original); }

  /// The tangent of `op`'s result, whose value `r` is built.
  void differentiate(Operation *op, Value r) {
    auto x = [&](unsigned i) {
      return mapping.lookupOrDefault(op->getOperand(i));
    };
    auto t = [&](unsigned i) { return tangents.lookup(op->getOperand(i)); };
    Value tangent =
        llvm::TypeSwitch<Operation *, Value>(op)
            .Case([&](arith::AddFOp) { return add(t(0), t(1)); })
            .Case([&](arith::SubFOp) { return add(t(0), neg(t(1))); })
            .Case([&](arith::MulFOp) {
              return add(mul(t(0), x(1)), mul(x(0), t(1)));
            })
            .Case([&](arith::DivFOp) {
              // (a / b)' = a' / b - (a / b) b' / b
              return add(div(t(0), x(1)), neg(div(mul(r, t(1)), x(1))));
            })
            .Case([&](arith::NegFOp) { return neg(t(0)); })
            .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
              return pick(arith::CmpFPredicate::OGE, x(0), x(1), t(0), t(1));
            })
            .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
              return pick(arith::CmpFPredicate::OLE, x(0), x(1), t(0), t(1));
            })
            .Case([&](arith::SelectOp) {
              Value onTrue = t(1) ? t(1) : constant(0.0);
              Value onFalse = t(2) ? t(2) : constant(0.0);
              return arith::SelectOp::create(b, loc, x(0), onTrue, onFalse)
                  .getResult();
            })
            .Case([&](math::ExpOp) { return mul(r, t(0)); })
            .Case([&](math::Exp2Op) {
              return mul(mul(r, constant(M_LN2)), t(0));
            })
            .Case([&](math::LogOp) { return div(t(0), x(0)); })
            .Case([&](math::Log2Op) {
              return div(t(0), mul(x(0), constant(M_LN2)));
            })
            .Case([&](math::TanhOp) {
              return mul(add(constant(1.0), neg(mul(r, r))), t(0));
            })
            .Case(
                [&](math::SqrtOp) { return div(t(0), mul(constant(2.0), r)); })
            .Case([&](math::SinOp) {
              return mul(math::CosOp::create(b, loc, x(0)), t(0));
            })
            .Case([&](math::CosOp) {
              return neg(mul(math::SinOp::create(b, loc, x(0)), t(0)));
            })
            .Case([&](math::AbsFOp) {
              Value negative = arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::OLT, x(0), constant(0.0));
              return arith::SelectOp::create(b, loc, negative, neg(t(0)), t(0))
                  .getResult();
            })
            .Case([&](math::FmaOp) {
              return add(add(mul(t(0), x(1)), mul(x(0), t(1))), t(2));
            });
    tangents[op->getResult(0)] = tangent ? tangent : constant(0.0);
  }

private:
  Value constant(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  // Null stands for 0: the arithmetic below skips it.
  Value add(Value a, Value c) {
    if (!a || !c)
      return a ? a : c;
    return arith::AddFOp::create(b, loc, a, c);
  }
  Value mul(Value a, Value c) {
    if (!a || !c)
      return Value();
    return arith::MulFOp::create(b, loc, a, c);
  }
  Value div(Value a, Value c) {
    if (!a)
      return Value();
    return arith::DivFOp::create(b, loc, a, c);
  }
  Value neg(Value a) { return a ? arith::NegFOp::create(b, loc, a) : a; }
  /// The tangent of the operand a max or min picks.
  Value pick(arith::CmpFPredicate predicate, Value a, Value c, Value ta,
             Value tc) {
    Value first = arith::CmpFOp::create(b, loc, predicate, a, c);
    return arith::SelectOp::create(b, loc, first, ta ? ta : constant(0.0),
                                   tc ? tc : constant(0.0));
  }

  OpBuilder &b;
  Location loc;
  IRMapping &mapping;
  DenseMap<Value, Value> tangents;
};

/// Whether `op` reads a value of `dependent`, as an operand or inside its
/// regions.
bool readsAny(Operation &op, const DenseSet<Value> &dependent) {
  return op
      .walk([&](Operation *inner) {
        return llvm::any_of(inner->getOperands(),
                            [&](Value v) { return dependent.contains(v); })
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Ops that read the score but are piecewise constant in it, their
/// derivative 0 almost everywhere: comparisons and conversions to integers.
bool isPiecewiseConstant(Operation &op) {
  return isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(op);
}

} // namespace

Operation *mlir::attn::findUndifferentiableOp(Region &score) {
  // Every result of an op that reads the score depends on it (whatever its
  // type: a value can pass through an integer or a tensor), except those of
  // piecewise constant ops.
  Block &body = score.front();
  DenseSet<Value> dependent{body.getArgument(0)};
  for (Operation &op : body.without_terminator()) {
    if (!readsAny(op, dependent) || isPiecewiseConstant(op))
      continue;
    if (!TangentBuilder::hasRule(&op))
      return &op;
    dependent.insert(op.result_begin(), op.result_end());
  }
  return nullptr;
}

Value mlir::attn::buildScoreDerivative(OpBuilder &b, Location loc,
                                       Region &score, ValueRange args,
                                       ScoreOpBuilder buildOp, Value *value) {
  assert(!findUndifferentiableOp(score) && "a region without a derivative");
  Block &body = score.front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  TangentBuilder tangents(b, loc, mapping);
  tangents.seed(body.getArgument(0));
  for (Operation &op : body.without_terminator()) {
    if (buildOp)
      buildOp(op, mapping);
    else
      b.clone(op, mapping);
    if (tangents.dependsOnScore(&op))
      tangents.differentiate(&op, mapping.lookupOrNull(op.getResult(0)));
  }
  Value result = cast<YieldOp>(body.getTerminator()).getValue();
  // A constant of the region's function yielded as it is: built where the
  // derivative is (a kernel cannot use the host's value).
  if (Operation *def = result.getDefiningOp();
      def && !mapping.contains(result) &&
      def->hasTrait<OpTrait::ConstantLike>()) {
    if (buildOp)
      buildOp(*def, mapping);
    else
      b.clone(*def, mapping);
  }
  if (value)
    *value = mapping.lookupOrDefault(result);
  if (Value tangent = tangents.tangentOf(result))
    return tangent;
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
}
