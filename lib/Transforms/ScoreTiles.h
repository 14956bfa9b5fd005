//===- ScoreTiles.h - One tile of attention scores, as tensor IR -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The scores of one (query block, key/value block) tile of an attention:
// Q K^T, then scale, softcap, score region, mask operand and position masks,
// in base-2 units (times log2 e) ready for exp2. The forward decomposition
// computes them to run the online softmax; the backward recomputes the same
// scores to rebuild P from the LSE. Written once so that both see the same
// scores.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_SCORETILES_H
#define ATTN_LIB_TRANSFORMS_SCORETILES_H

#include "GenericBuilder.h"

#include "attn/Analysis/MaskGeometry.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

namespace mlir::attn {

/// acc + lhs * rhs for the matrix products. Their sums may be reassociated
/// and contracted into fused multiply-adds, as tensor cores and vectorised
/// loops do; the softmax arithmetic stays exact.
inline Value multiplyAdd(OpBuilder &b, Location loc, Value acc, Value lhs,
                         Value rhs) {
  auto flags = arith::FastMathFlagsAttr::get(
      b.getContext(),
      arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
  Value product = arith::MulFOp::create(b, loc, lhs, rhs, flags);
  return arith::AddFOp::create(b, loc, acc, product, flags);
}

/// `cond ? onTrue() : onFalse()` for a value of `type`, as an scf.if.
inline Value buildBranch(ImplicitLocOpBuilder &b, Type type, Value cond,
                         function_ref<Value()> onTrue,
                         function_ref<Value()> onFalse) {
  auto ifOp = scf::IfOp::create(b, TypeRange{type}, cond,
                                /*withElseRegion=*/true);
  for (bool side : {true, false}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(side ? ifOp.thenBlock() : ifOp.elseBlock());
    scf::YieldOp::create(b, side ? onTrue() : onFalse());
  }
  return ifOp.getResult(0);
}

/// The score tiles of an attn.attention, attn.partial_attention or
/// attn.attention_grad. Index values named `...Row`/`...Key` are absolute
/// positions; `head` is a tiled head (GQA packing, MaskGeometry.h).
template <typename OpTy> struct ScoreTiles {
  using IteratorType = utils::IteratorType;

  OpTy op;
  ImplicitLocOpBuilder &b;
  /// Sq, and the keys the tile's sequence attends to: Sk, or its
  /// key_lengths entry clamped to [0, Sk].
  Value queryLen, keyLen;
  std::optional<MaskGeometry<IndexArith>::Frame> frame;
  int64_t packedHeads = 1;

  MaskGeometry<IndexArith> geometry(IndexArith &a) {
    return {a,     queryLen,   keyLen, op.getCausal(), op.getWindowSizes(),
            frame, packedHeads};
  }

  bool hasAdditiveMask() {
    return op.getMask() && !getElementTypeOrSelf(op.getMask()).isInteger(1);
  }
  /// Whether the score must be formed in natural units before the base-2
  /// scaling: softcap, score region and additive mask are defined on it.
  bool needsNaturalUnits() {
    return op.getSoftcap() || op.hasScoreModifier() || hasAdditiveMask();
  }
  /// Whether keys are hidden by position: causal and window masks, and the
  /// end of a frame's keys or of a sequence's key lengths.
  bool masksByPosition() {
    return op.getCausal() || op.getWindowSizes() || op.hasFrame() ||
           op.hasKeyLengths();
  }

  /// The block mask's row of blocks holding row `row0` (tiles nest in its
  /// blocks).
  Value blockMaskRow(Value row0) {
    return arith::DivUIOp::create(
        b, row0,
        arith::ConstantIndexOp::create(b, op.getBlockMaskBlock()->first));
  }

  /// The block mask's element for the tile in row of blocks `blockRow`
  /// (blockMaskRow) at `key0` of (batch, head); size-1 batch and head
  /// dimensions broadcast.
  Value blockMaskStatus(Value batch, Value head, Value blockRow, Value key0) {
    Value blockMask = op.getBlockMask();
    auto maskType = cast<RankedTensorType>(blockMask.getType());
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, v);
    };
    return tensor::ExtractOp::create(
        b, blockMask,
        ValueRange{maskType.getDimSize(0) == 1 ? index(0) : batch,
                   maskType.getDimSize(1) == 1 ? index(0) : head, blockRow,
                   arith::DivUIOp::create(
                       b, key0, index(op.getBlockMaskBlock()->second))});
  }

  /// Whether a block mask element is `value`.
  Value isBlockStatus(Value status, int64_t value) {
    return arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, status,
        arith::ConstantIntOp::create(b, b.getI8Type(), value));
  }

  /// The mask operand's [rows, cols] tile, or null without one.
  Value maskTile(Value batch, Value head, Value row0, Value key0, Value rows,
                 Value cols) {
    Value mask = op.getMask();
    if (!mask)
      return Value();
    auto maskType = cast<RankedTensorType>(mask.getType());
    OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    // Size-1 batch and head dimensions broadcast.
    OpFoldResult maskBatch =
        maskType.getDimSize(0) == 1 ? zero : OpFoldResult(batch);
    OpFoldResult maskHead =
        maskType.getDimSize(1) == 1 ? zero : OpFoldResult(head);
    return tensor::ExtractSliceOp::create(
        b,
        RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                              maskType.getElementType()),
        mask, ArrayRef<OpFoldResult>{maskBatch, maskHead, row0, key0},
        ArrayRef<OpFoldResult>{one, one, rows, cols},
        ArrayRef<OpFoldResult>{one, one, one, one});
  }

  /// S = Q_tile K_tile^T, raw dot products in f32.
  Value rawScores(Value qTile, Value kTile, Value rows, Value cols) {
    MLIRContext *ctx = b.getContext();
    Value init =
        filledTensor(b, {rows, cols}, b.getF32Type(), b.getF32FloatAttr(0.0));
    // (i, j, d): S[i, j] += Q[i, d] * K[j, d]
    return buildGeneric(
        b, {qTile, kTile},
        {projection(ctx, 3, {0, 2}), projection(ctx, 3, {1, 2})}, init,
        projection(ctx, 3, {0, 1}),
        {IteratorType::parallel, IteratorType::parallel,
         IteratorType::reduction},
        [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
          return multiplyAdd(nb, loc, args[2], extendToF32(nb, loc, args[0]),
                             extendToF32(nb, loc, args[1]));
        });
  }

  /// The scores of the tile in base-2 units from its raw dot products:
  /// scaling, softcap, score region, mask operand (not in a full block of
  /// the block mask, `fullBlock` true) and the position masks where the tile
  /// straddles their boundary. Hidden scores are -inf.
  Value scores(Value raw, Value maskTile, Value fullBlock, Value batch,
               Value head, Value row0, Value key0, Value rows, Value cols) {
    // A full block of the block mask does not read the mask operand.
    auto withMasks = [&](bool maskPositions) -> Value {
      auto withMask = [&](Value tile) {
        return epilogue(raw, tile, batch, head, row0, key0, rows, cols,
                        maskPositions);
      };
      if (!maskTile || !fullBlock)
        return withMask(maskTile);
      return buildBranch(
          b, raw.getType(), fullBlock, [&] { return withMask(Value()); },
          [&] { return withMask(maskTile); });
    };
    if (!masksByPosition())
      return withMasks(false);
    // Only tiles that straddle the mask boundary pay for the mask.
    IndexArith arith{b};
    Value straddles = geometry(arith).needsElementMask(
        row0, rows, key0, arith::AddIOp::create(b, key0, cols));
    return buildBranch(
        b, raw.getType(), straddles, [&] { return withMasks(true); },
        [&] { return withMasks(false); });
  }

private:
  /// The element-wise score epilogue: scaling, softcap, score region, mask,
  /// and (when `maskPositions`) the causal/window mask.
  Value epilogue(Value raw, Value maskTile, Value batch, Value head, Value row0,
                 Value key0, Value rows, Value cols, bool maskPositions) {
    MLIRContext *ctx = b.getContext();
    const double log2e = M_LOG2E;
    double scale = op.getEffectiveScale();
    bool natural = needsNaturalUnits();
    std::optional<double> softcap;
    if (std::optional<APFloat> cap = op.getSoftcap())
      softcap = cap->convertToDouble();
    bool booleanMask = maskTile && !hasAdditiveMask();

    SmallVector<Value> inputs{raw};
    SmallVector<AffineMap> maps{projection(ctx, 2, {0, 1})};
    if (maskTile) {
      inputs.push_back(maskTile);
      maps.push_back(projection(ctx, 2, {0, 1}));
    }
    Value init = tensor::EmptyOp::create(b, ArrayRef<OpFoldResult>{rows, cols},
                                         b.getF32Type());
    return buildGeneric(
        b, inputs, maps, init, projection(ctx, 2, {0, 1}),
        {IteratorType::parallel, IteratorType::parallel},
        [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
          auto constant = [&](double v) -> Value {
            return arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(v));
          };
          Value s = args[0];
          Value row, key;
          auto positions = [&]() {
            if (row)
              return;
            row = arith::AddIOp::create(nb, loc, row0,
                                        linalg::IndexOp::create(nb, loc, 0));
            key = arith::AddIOp::create(nb, loc, key0,
                                        linalg::IndexOp::create(nb, loc, 1));
          };
          if (!natural) {
            s = arith::MulFOp::create(nb, loc, s, constant(scale * log2e));
          } else {
            s = arith::MulFOp::create(nb, loc, s, constant(scale));
            if (softcap) {
              Value t = arith::DivFOp::create(nb, loc, s, constant(*softcap));
              t = math::TanhOp::create(nb, loc, t);
              s = arith::MulFOp::create(nb, loc, t, constant(*softcap));
            }
            if (op.hasScoreModifier()) {
              positions();
              // The region sees each tiled row's own head and query, and
              // positions in the larger attention of a frame.
              ImplicitLocOpBuilder inner(loc, nb);
              IndexArith innerArith{inner};
              MaskGeometry<IndexArith> rowGeometry = geometry(innerArith);
              Value regionHead = rowGeometry.queryHead(head, row);
              Value regionRow = rowGeometry.queryRow(row), regionKey = key;
              if constexpr (!std::is_same_v<OpTy, AttentionGradOp>) {
                if (op.hasFrame()) {
                  regionRow =
                      arith::AddIOp::create(nb, loc, row, op.getQueryOffset());
                  regionKey =
                      arith::AddIOp::create(nb, loc, key, op.getKeyOffset());
                }
              }
              IRMapping mapping;
              s = inlineScoreRegion(
                  nb, op.getScore(),
                  ValueRange{s, batch, regionHead, regionRow, regionKey},
                  mapping);
            }
            if (maskTile && !booleanMask)
              s = arith::AddFOp::create(nb, loc, s,
                                        extendToF32(nb, loc, args[1]));
            s = arith::MulFOp::create(nb, loc, s, constant(log2e));
          }
          Value minusInf = constant(-std::numeric_limits<double>::infinity());
          if (booleanMask)
            s = arith::SelectOp::create(nb, loc, args[1], s, minusInf);
          if (maskPositions) {
            positions();
            ImplicitLocOpBuilder inner(loc, nb);
            IndexArith innerArith{inner};
            Value hidden = geometry(innerArith).isHidden(row, key);
            s = arith::SelectOp::create(nb, loc, hidden, minusInf, s);
          }
          return s;
        });
  }
};

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_SCORETILES_H
