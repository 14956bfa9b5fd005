//===- LowerMerge.cpp - attn.merge to linalg ------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "GenericBuilder.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERMERGE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;

/// The dimensions 0..numDims-1 except those in `dropped`.
SmallVector<unsigned> keptDims(unsigned numDims, ArrayRef<unsigned> dropped) {
  SmallVector<unsigned> dims;
  for (unsigned d = 0; d < numDims; ++d)
    if (!llvm::is_contained(dropped, d))
      dims.push_back(d);
  return dims;
}

/// `max` made safe to subtract: 0 where every partial is empty (-inf).
Value safeMax(OpBuilder &b, Location loc, Value max) {
  Value minusInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, minusInf);
  return arith::SelectOp::create(b, loc, empty, zero, max);
}

SmallVector<Value> lowerMerge(MergeOp op, ImplicitLocOpBuilder &b) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  Value partialOut = op.getPartialOut(), partialLse = op.getPartialLse();
  unsigned rank = cast<RankedTensorType>(partialLse.getType()).getRank();
  unsigned dim = op.getDim();
  unsigned featureDim = rank; // the last dimension of partial O

  SmallVector<OpFoldResult> lseSizes =
      tensor::getMixedSizes(b, b.getLoc(), partialLse);
  lseSizes.erase(lseSizes.begin() + dim);
  SmallVector<OpFoldResult> outSizes =
      tensor::getMixedSizes(b, b.getLoc(), partialOut);
  outSizes.erase(outSizes.begin() + dim);

  SmallVector<IteratorType> lseIterators(rank, IteratorType::parallel);
  lseIterators[dim] = IteratorType::reduction;
  AffineMap lseAll = projection(ctx, rank, keptDims(rank, {}));
  AffineMap lseMerged = projection(ctx, rank, keptDims(rank, {dim}));

  // M = max_s LSE_s
  Value maxInit = filledTensor(b, lseSizes, f32,
                               b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value max = buildGeneric(
      b, {partialLse}, {lseAll}, maxInit, lseMerged, lseIterators,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return arith::MaximumFOp::create(nb, loc, args[0], args[1]);
      });
  // W = sum_s exp(LSE_s - M)
  Value sumInit = filledTensor(b, lseSizes, f32, b.getF32FloatAttr(0.0));
  Value sum = buildGeneric(
      b, {partialLse, max}, {lseAll, lseMerged}, sumInit, lseMerged,
      lseIterators, [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value shifted =
            arith::SubFOp::create(nb, loc, args[0], safeMax(nb, loc, args[1]));
        return arith::AddFOp::create(nb, loc, args[2],
                                     math::ExpOp::create(nb, loc, shifted));
      });

  // O = sum_s exp(LSE_s - M) / W * O_s, accumulated in f32.
  unsigned outRank = rank + 1;
  SmallVector<IteratorType> outIterators(outRank, IteratorType::parallel);
  outIterators[dim] = IteratorType::reduction;
  AffineMap outMerged = projection(ctx, outRank, keptDims(outRank, {dim}));
  AffineMap rowOfPartial =
      projection(ctx, outRank, keptDims(outRank, {featureDim}));
  AffineMap rowOfMerged =
      projection(ctx, outRank, keptDims(outRank, {dim, featureDim}));
  Value accInit = filledTensor(b, outSizes, f32, b.getF32FloatAttr(0.0));
  Value acc = buildGeneric(
      b, {partialOut, partialLse, max, sum},
      {projection(ctx, outRank, keptDims(outRank, {})), rowOfPartial,
       rowOfMerged, rowOfMerged},
      accInit, outMerged, outIterators,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value partial = args[0], lse = args[1], m = args[2], w = args[3];
        Value weight = arith::DivFOp::create(
            nb, loc,
            math::ExpOp::create(
                nb, loc, arith::SubFOp::create(nb, loc, lse, safeMax(nb, loc, m))),
            w);
        // An empty partial has weight 0 and is skipped, whatever it holds.
        Value zero = arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0.0));
        Value skip = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UEQ,
                                           weight, zero);
        Value added = arith::AddFOp::create(
            nb, loc, args[4], arith::MulFOp::create(nb, loc, weight, partial));
        return arith::SelectOp::create(nb, loc, skip, args[4], added);
      });
  Type outType = getElementTypeOrSelf(op.getInitOut());
  AffineMap identity = projection(ctx, rank, keptDims(rank, {}));
  Value out = buildGeneric(
      b, {acc}, {identity}, op.getInitOut(), identity,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return truncateFromF32(nb, loc, args[0], outType);
      });
  SmallVector<Value> results{out};

  if (Value initLse = op.getInitLse()) {
    // LSE = M + ln W; -inf where every partial is empty (W = 0).
    AffineMap lseIdentity = projection(ctx, rank - 1, keptDims(rank - 1, {}));
    results.push_back(buildGeneric(
        b, {max, sum}, {lseIdentity, lseIdentity}, initLse, lseIdentity,
        SmallVector<IteratorType>(rank - 1, IteratorType::parallel),
        [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
          Value zero =
              arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0.0));
          Value minusInf = arith::ConstantOp::create(
              nb, loc,
              nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
          Value empty = arith::CmpFOp::create(
              nb, loc, arith::CmpFPredicate::OEQ, args[1], zero);
          Value lse = arith::AddFOp::create(nb, loc, safeMax(nb, loc, args[0]),
                                            math::LogOp::create(nb, loc, args[1]));
          return arith::SelectOp::create(nb, loc, empty, minusInf, lse);
        }));
  }
  return results;
}

struct AttnLowerMergePass
    : public attn::impl::AttnLowerMergeBase<AttnLowerMergePass> {
  void runOnOperation() override {
    SmallVector<MergeOp> ops;
    getOperation()->walk([&](MergeOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MergeOp op : ops) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op.getLoc(), rewriter);
      rewriter.replaceOp(op, lowerMerge(op, b));
    }
  }
};

} // namespace
