//===- CtaBody.cpp - Choosing the CTA body and its components -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "CtaBody.h"
#include "Fa2CtaBody.h"
#include "ProductUnit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;

std::unique_ptr<CtaBody> mlir::attn::createCtaBody(ImplicitLocOpBuilder &b,
                                                   const KernelShape &shape,
                                                   WarpRole role) {
  return std::make_unique<Fa2CtaBody>(b, shape, role);
}

std::unique_ptr<ProductUnit>
mlir::attn::createProductUnit(const CtaPrimitives &cta, MatrixUnit unit) {
  if (unit == MatrixUnit::Wgmma)
    return std::make_unique<WgmmaUnit>(cta);
  return std::make_unique<MmaSyncUnit>(cta);
}

static bool isScalar(Type type) {
  return isa<IntegerType, IndexType, FloatType>(type);
}

bool mlir::attn::isInlinableScoreOp(Operation &op) {
  // Tables: constant tensors and the elements read from them.
  if (auto extract = dyn_cast<tensor::ExtractOp>(op))
    return matchPattern(extract.getTensor(), m_Constant());
  if (isa<arith::ConstantOp>(op))
    return true;
  if (op.getNumRegions() != 0 ||
      !llvm::all_of(op.getOperandTypes(), isScalar) ||
      !llvm::all_of(op.getResultTypes(), isScalar))
    return false;
  // The math operations a body lowers itself (Fa2CtaBody::modifyScore).
  return isa<arith::ArithDialect>(op.getDialect()) ||
         isa<math::TanhOp, math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
             math::AbsFOp, math::SqrtOp>(op);
}
