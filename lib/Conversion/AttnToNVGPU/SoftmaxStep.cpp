//===- SoftmaxStep.cpp - The online softmax of a block of keys ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxStep.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

CtaState SoftmaxStep::initialState() {
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  Value zeroC = zeroFragment();
  Value minusInfPair = arith::ConstantOp::create(
      b, pair,
      DenseElementsAttr::get(cast<ShapedType>(pair),
                             -std::numeric_limits<float>::infinity()));
  Value zeroPair = arith::ConstantOp::create(
      b, pair, DenseElementsAttr::get(cast<ShapedType>(pair), 0.0f));
  // O fragments [mTiles][oTiles], then m and l per m tile (one f32 for row g
  // and one for row g + 8 of the tile).
  SmallVector<Value> state(mTiles * oTiles, zeroC);
  state.append(mTiles, minusInfPair);
  state.append(mTiles, zeroPair);
  return {state};
}

Value SoftmaxStep::modifyScore(Value x, Value batch, Value head, Value row,
                               Value key) {
  if (s.softcap)
    x = mulF(f32Const(*s.softcap), tanh(mulF(x, f32Const(1.0 / *s.softcap))));
  if (!s.scoreRegion)
    return x;
  Block &region = s.scoreRegion->front();
  IRMapping mapping;
  mapping.map(region.getArguments(), ValueRange{x, batch, head, row, key});
  for (Operation &op : region.without_terminator())
    inlineScoreOp(op, mapping);
  return scoreValue(cast<attn::YieldOp>(region.getTerminator()).getValue(),
                    mapping);
}

SmallVector<Value>
SoftmaxStep::blockScores(const ScoreBlock &w,
                         ArrayRef<SmallVector<Value>> scores) {
  Value key0 = w.key0, status = w.status;
  MaskGeometry<IndexArith> geometry = this->geometry();
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8;
  Value minusInf = f32Const(-std::numeric_limits<float>::infinity());
  Value mask = w.mask;
  // With `masked`, keys a row cannot see are -inf; with `maskOperand`, the
  // mask operand applies. A modified score, and one the mask operand adds
  // to, is formed in natural units (scale, softcap, score region, the
  // additive mask) and then taken to base 2.
  bool additiveMask = mask && !s.maskElement.isInteger(1);
  bool natural = s.modifiesScores() || additiveMask;
  Value scale = f32Const(natural ? s.scale : s.scaleLog2);
  auto scaledScores = [&](bool masked, bool maskOperand) {
    SmallVector<Value> values;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      Value tileRow = add(w.row0, add(warpRow, index(mt * 16)));
      // C rows g and g + 8 (layout.cRow(lane, 1) = cRow(lane, 0) + 8), and
      // the query head and row the score region sees for each.
      Value rowG = add(tileRow, layout.cRow(groupId, 0));
      SmallVector<Value> rowOf = {rowG, add(rowG, index(8))};
      SmallVector<std::pair<Value, Value>> queryOf;
      if (s.scoreRegion)
        for (Value row : rowOf)
          queryOf.push_back(queryRowOf(w.head, row));
      // The mask operand's rows are one head's (no GQA packing).
      assert((!maskOperand || s.problem.packedHeads == 1) &&
             "a mask operand's rows are not packed");
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            Value x = mulF(vector::ExtractOp::create(b, scores[mt][nt],
                                                     ArrayRef<int64_t>{i, j}),
                           scale);
            Value key =
                add(add(key0, index(nt * 8 + j)), layout.cCol(laneInGroup, 0));
            if (s.modifiesScores()) {
              auto [queryHead, queryRow] =
                  s.scoreRegion ? queryOf[i] : std::make_pair(w.head, rowOf[i]);
              x = modifyScore(x, w.batch, queryHead, queryRow, key);
            }
            if (maskOperand) {
              Value element =
                  maskOperandElement(mask, w.batch, w.head, rowOf[i], key,
                                     /*clampKey=*/masked);
              x = applyMaskElement(x, element);
            }
            if (natural)
              x = mulF(x, f32Const(M_LOG2E));
            if (masked) {
              Value hidden = geometry.isHidden(rowOf[i], key);
              x = arith::SelectOp::create(b, hidden, minusInf, x);
            }
            values.push_back(x);
          }
    }
    return values;
  };
  SmallVector<Type> types(mTiles * nTiles * 4, f32);
  auto withMask = [&](bool maskOperand) {
    if (!s.needsElementMask())
      return scaledScores(/*masked=*/false, maskOperand);
    // Only blocks that straddle a mask boundary pay for the mask: the block
    // is whole for every row when its last key is visible from the first
    // row, its first key from the last row, and it ends within Sk.
    Value straddles = geometry.needsElementMask(w.row0, w.rows, key0,
                                                add(key0, index(s.blockN)));
    return uniformBranch(
        straddles, types, [&] { return scaledScores(true, maskOperand); },
        [&] { return scaledScores(false, maskOperand); });
  };
  // A full block of the block mask does not read the mask operand.
  if (mask && status)
    return uniformBranch(
        isStatus(status, BlockMaskValue::kFull), types,
        [&] { return withMask(false); }, [&] { return withMask(true); });
  return withMask(static_cast<bool>(mask));
}

SoftmaxStep::Update SoftmaxStep::update(ArrayRef<Value> scores, ValueRange m,
                                        ValueRange l) {
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8;
  Value minusInf = f32Const(-std::numeric_limits<float>::infinity());
  Value zeroF = f32Const(0.0);
  Update update;
  update.pFrags.resize(mTiles);
  update.alphas.resize(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    SmallVector<SmallVector<Value>> elems(nTiles);
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t e = 0; e < 4; ++e)
        elems[nt].push_back(scores[(mt * nTiles + nt) * 4 + e]);
    // Online softmax, per row (i = 0: row g, i = 1: row g + 8).
    Value mNew = m[mt], lNew = l[mt];
    for (int64_t i = 0; i < 2; ++i) {
      Value rowMax = minusInf;
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t j = 0; j < 2; ++j)
          rowMax = maxF(rowMax, elems[nt][2 * i + j]);
      rowMax = quadReduce(rowMax, /*isMax=*/true);
      Value old = vector::ExtractOp::create(b, m[mt], i);
      Value updated = maxF(old, rowMax);
      Value isEmpty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                            updated, minusInf);
      Value safe = arith::SelectOp::create(b, isEmpty, zeroF, updated);
      update.alphas[mt].push_back(exp2(subF(old, safe)));
      Value rowSum = zeroF;
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t j = 0; j < 2; ++j) {
          Value &x = elems[nt][2 * i + j];
          x = exp2(subF(x, safe));
          rowSum = addF(rowSum, x);
        }
      // l stays a per-lane partial sum; the quad adds it up at the end.
      Value lRow = addF(
          mulF(update.alphas[mt][i], vector::ExtractOp::create(b, l[mt], i)),
          rowSum);
      mNew = vector::InsertOp::create(b, updated, mNew, i);
      lNew = vector::InsertOp::create(b, lRow, lNew, i);
    }
    update.m.push_back(mNew);
    update.l.push_back(lNew);

    // P's A fragments: S's C fragments of n tiles 2 kk and 2 kk + 1,
    // rounded to the input type.
    auto fragA = VectorType::get({4, 2}, s.element);
    for (int64_t kk = 0; kk < nTiles / 2; ++kk) {
      SmallVector<Value> halves;
      for (int64_t nt : {2 * kk, 2 * kk + 1})
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            halves.push_back(
                arith::TruncFOp::create(b, s.element, elems[nt][2 * i + j]));
      update.pFrags[mt].push_back(
          vector::FromElementsOp::create(b, fragA, halves));
    }
  }
  return update;
}

SmallVector<Value> SoftmaxStep::rescaled(ValueRange acc,
                                         ArrayRef<SmallVector<Value>> alphas) {
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  SmallVector<Value> next;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t ot = 0; ot < oTiles; ++ot) {
      Value fragment = acc[mt * oTiles + ot];
      for (int64_t i = 0; i < 2; ++i) {
        Value rowPair = vector::ExtractOp::create(b, fragment, i);
        Value scaled =
            mulF(rowPair, vector::BroadcastOp::create(b, pair, alphas[mt][i]));
        fragment = vector::InsertOp::create(b, scaled, fragment, i);
      }
      next.push_back(fragment);
    }
  return next;
}
