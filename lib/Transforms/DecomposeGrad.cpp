//===- DecomposeGrad.cpp - attn.attention_grad to tiled backward loops ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The FlashAttention-2 backward algorithm (its Algorithm 2) as
// target-independent tensor IR: Dsum = rowsum(dO * O) first; then an
// scf.forall over (piece, batch, key/value head) whose program walks the
// key/value blocks of its piece, owns their dK and dV, and, for each block,
// walks the query blocks that see it (MaskGeometry's transposed range),
// recomputing P from Q, K and the LSE (ScoreTiles, the forward's scores),
// back through the score region by its derivative (ScoreDerivative);
// dQ terms go into the piece's own f32 copy of dQ, summed in piece order at
// the end.
//
//===----------------------------------------------------------------------===//

#include "GenericBuilder.h"
#include "ScoreTiles.h"
#include "attn/Analysis/ScoreDerivative.h"

#include "attn/Analysis/TileSizes.h"
#include "attn/Analysis/WorkAssignment.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEGRAD
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;
constexpr IteratorType kParallel = IteratorType::parallel;
constexpr IteratorType kReduction = IteratorType::reduction;

class GradDecomposer {
public:
  GradDecomposer(AttentionGradOp op, TileSizes tileSizes, int64_t pieces,
                 ImplicitLocOpBuilder &b)
      : op(op), blockM(tileSizes.blockM), blockN(tileSizes.blockN),
        pieces(pieces), b(b), ctx(b.getContext()), arith{b}, tiles{op, b} {}

  /// Returns dQ, dK and dV.
  SmallVector<Value> build();

private:
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, value); }
  Value zeros(ArrayRef<OpFoldResult> sizes) {
    return filledTensor(b, sizes, b.getF32Type(), b.getF32FloatAttr(0.0));
  }
  Value slice(Value source, ArrayRef<OpFoldResult> offsets,
              ArrayRef<OpFoldResult> sizes, int64_t rank) {
    return extractTile(b, source, offsets, sizes, rank);
  }
  Value insert(Value tile, Value dest, ArrayRef<OpFoldResult> offsets,
               ArrayRef<OpFoldResult> sizes);

  /// The dK and dV terms of one key/value block from the query blocks that
  /// see it, over every query head of its group, with the block's dQ terms
  /// added into `slots[0]` ([group, Sq, D] f32) and, with dMask, its dS
  /// tiles written into `slots[1]` ([group, Sq, piece keys] f32). Returns
  /// (dQ slot, dK, dV, [dMask slot]), dK and dV [cols, D] and [cols, Dv]
  /// f32.
  SmallVector<Value> buildKeyBlock(Value batch, Value kvHead, Value key0,
                                   Value cols, ValueRange slots);

  /// `full` ([B, Hq, Sq, Sk] f32) summed over the mask's size-1 (broadcast)
  /// dimensions and rounded into `init`, of the mask's shape.
  Value reduceToMaskShape(Value full, Value init);

  /// One (query block, key/value block) step of buildKeyBlock; `fullBlock`
  /// (null without a block mask) says whether the block mask's element is
  /// full.
  SmallVector<Value> buildTile(Value batch, Value head, Value headInGroup,
                               Value row0, Value rows, Value key0, Value cols,
                               Value kTile, Value vTile, Value fullBlock,
                               ValueRange state);

  AttentionGradOp op;
  int64_t blockM, blockN, pieces;
  ImplicitLocOpBuilder &b;
  MLIRContext *ctx;
  IndexArith arith;
  ScoreTiles<AttentionGradOp> tiles;
  OpFoldResult headDim, valueDim;
  Value group;
  /// rowsum(dO * O), [B, Hq, Sq] f32.
  Value dsum;
  /// The first key of the program's piece.
  Value pieceKey0;
};

Value GradDecomposer::insert(Value tile, Value dest,
                             ArrayRef<OpFoldResult> offsets,
                             ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, tile, dest, offsets, sizes, strides);
}

SmallVector<Value> GradDecomposer::buildTile(Value batch, Value head,
                                             Value headInGroup, Value row0,
                                             Value rows, Value key0,
                                             Value cols, Value kTile,
                                             Value vTile, Value fullBlock,
                                             ValueRange state) {
  Value dqSlot = state[0], dkAcc = state[1], dvAcc = state[2];
  Value dmSlot = state.size() > 3 ? state[3] : Value();
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  Value qTile = slice(op.getQuery(), {batch, head, row0, zero},
                      {one, one, rows, headDim}, 2);
  Value doTile = slice(op.getGradOut(), {batch, head, row0, zero},
                       {one, one, rows, valueDim}, 2);
  Value lseTile = slice(op.getLse(), {batch, head, row0}, {one, one, rows}, 1);
  Value dsumTile = slice(dsum, {batch, head, row0}, {one, one, rows}, 1);

  Value raw = tiles.rawScores(qTile, kTile, rows, cols);
  Value scores =
      tiles.scores(raw, tiles.maskTile(batch, head, row0, key0, rows, cols),
                   fullBlock, batch, head, row0, key0, rows, cols);

  AffineMap rowsCols = projection(ctx, 2, {0, 1});
  AffineMap rowOf2 = projection(ctx, 2, {0});
  Type f32Type = b.getF32Type();
  auto emptyTile = [&]() {
    return tensor::EmptyOp::create(b, ArrayRef<OpFoldResult>{rows, cols},
                                   f32Type);
  };
  // P = exp2(S - LSE log2 e): the forward's probabilities, from its LSE. A
  // row that saw no key (LSE = -inf) has P = 0.
  Value p = buildGeneric(
      b, {scores, lseTile}, {rowsCols, rowOf2}, emptyTile(), rowsCols,
      {kParallel, kParallel},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        auto constant = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(v));
        };
        Value empty = arith::CmpFOp::create(
            nb, loc, arith::CmpFPredicate::OEQ, args[1],
            constant(-std::numeric_limits<double>::infinity()));
        Value lse2 = arith::MulFOp::create(nb, loc, args[1], constant(M_LOG2E));
        Value prob = math::Exp2Op::create(
            nb, loc, arith::SubFOp::create(nb, loc, args[0], lse2));
        return arith::SelectOp::create(nb, loc, empty, constant(0.0), prob);
      });
  // (i, j, e): dV[j, e] += P[i, j] dO[i, e]
  Value dvNew = buildGeneric(
      b, {p, doTile}, {projection(ctx, 3, {0, 1}), projection(ctx, 3, {0, 2})},
      dvAcc, projection(ctx, 3, {1, 2}), {kReduction, kParallel, kParallel},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return multiplyAdd(nb, loc, args[2], args[0],
                           extendToF32(nb, loc, args[1]));
      });
  // (i, j, e): dP[i, j] = sum_e dO[i, e] V[j, e]
  Value dp = buildGeneric(
      b, {doTile, vTile},
      {projection(ctx, 3, {0, 2}), projection(ctx, 3, {1, 2})},
      zeros({rows, cols}), projection(ctx, 3, {0, 1}),
      {kParallel, kParallel, kReduction},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return multiplyAdd(nb, loc, args[2], extendToF32(nb, loc, args[0]),
                           extendToF32(nb, loc, args[1]));
      });
  // dS = P (dP - Dsum): the gradient of the scores, and of an additive
  // mask where it applies (not in a full block of the block mask).
  Value ds = buildGeneric(
      b, {p, dp, dsumTile}, {rowsCols, rowsCols, rowOf2}, emptyTile(),
      rowsCols, {kParallel, kParallel},
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return arith::MulFOp::create(
            nb, loc, args[0], arith::SubFOp::create(nb, loc, args[1], args[2]));
      });
  if (dmSlot) {
    SmallVector<OpFoldResult> offsets{headInGroup, row0,
                                      arith.sub(key0, pieceKey0)};
    SmallVector<OpFoldResult> sizes{one, rows, cols};
    Value maskTile = ds;
    if (fullBlock)
      maskTile = buildGeneric(
          b, {ds}, {rowsCols}, emptyTile(), rowsCols, {kParallel, kParallel},
          [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
            Value zeroF =
                arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0.0));
            return arith::SelectOp::create(nb, loc, fullBlock, zeroF, args[0]);
          });
    dmSlot = insert(maskTile, dmSlot, offsets, sizes);
  }
  // Back through the score region, the softcap and the scale to the raw
  // dot products:
  //   dRaw = dS region'(c) (1 - tanh^2(scale raw / softcap)) scale,
  // c = softcap tanh(scale raw / softcap) (scale raw without softcap).
  double scale = op.getEffectiveScale();
  std::optional<double> softcap;
  if (std::optional<APFloat> cap = op.getSoftcap())
    softcap = cap->convertToDouble();
  // Hidden scores (P = 0) contribute 0, even where a score region's
  // derivative is infinite or NaN (the forward hides them after it).
  Value dRaw = buildGeneric(
      b, {ds, raw, p}, {rowsCols, rowsCols, rowsCols}, emptyTile(), rowsCols,
      {kParallel, kParallel},
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        auto constant = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(v));
        };
        Value hidden = arith::CmpFOp::create(
            nb, loc, arith::CmpFPredicate::OEQ, args[2], constant(0.0));
        auto unlessHidden = [&](Value d) -> Value {
          return arith::SelectOp::create(nb, loc, hidden, constant(0.0), d);
        };
        Value d = arith::MulFOp::create(nb, loc, args[0], constant(scale));
        Value c = arith::MulFOp::create(nb, loc, args[1], constant(scale));
        if (softcap) {
          Value t = math::TanhOp::create(
              nb, loc,
              arith::MulFOp::create(nb, loc, args[1],
                                    constant(scale / *softcap)));
          Value slope = arith::SubFOp::create(
              nb, loc, constant(1.0), arith::MulFOp::create(nb, loc, t, t));
          d = arith::MulFOp::create(nb, loc, d, slope);
          c = arith::MulFOp::create(nb, loc, t, constant(*softcap));
        }
        if (!op.hasScoreModifier())
          return d;
        Value row = arith::AddIOp::create(nb, loc, row0,
                                          linalg::IndexOp::create(nb, loc, 0));
        Value key = arith::AddIOp::create(nb, loc, key0,
                                          linalg::IndexOp::create(nb, loc, 1));
        Value slope = buildScoreDerivative(nb, loc, op.getScore(),
                                           ValueRange{c, batch, head, row, key});
        return unlessHidden(arith::MulFOp::create(nb, loc, d, slope));
      });
  // (i, j, d): dQ[i, d] += dRaw[i, j] K[j, d], into the piece's f32 copy.
  OpFoldResult oneSize = one;
  SmallVector<OpFoldResult> dqOffsets{headInGroup, row0, zero};
  SmallVector<OpFoldResult> dqSizes{oneSize, rows, headDim};
  Value dqTile = slice(dqSlot, dqOffsets, dqSizes, 2);
  Value dqNew = buildGeneric(
      b, {dRaw, kTile}, {projection(ctx, 3, {0, 1}), projection(ctx, 3, {1, 2})},
      dqTile, projection(ctx, 3, {0, 2}), {kParallel, kReduction, kParallel},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return multiplyAdd(nb, loc, args[2], args[0],
                           extendToF32(nb, loc, args[1]));
      });
  dqSlot = insert(dqNew, dqSlot, dqOffsets, dqSizes);
  // (i, j, d): dK[j, d] += dRaw[i, j] Q[i, d]
  Value dkNew = buildGeneric(
      b, {dRaw, qTile}, {projection(ctx, 3, {0, 1}), projection(ctx, 3, {0, 2})},
      dkAcc, projection(ctx, 3, {1, 2}), {kReduction, kParallel, kParallel},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return multiplyAdd(nb, loc, args[2], args[0],
                           extendToF32(nb, loc, args[1]));
      });
  SmallVector<Value> results{dqSlot, dkNew, dvNew};
  if (dmSlot)
    results.push_back(dmSlot);
  return results;
}

Value GradDecomposer::reduceToMaskShape(Value full, Value init) {
  auto maskType = cast<RankedTensorType>(op.getMask().getType());
  SmallVector<unsigned> kept;
  SmallVector<OpFoldResult> keptSizes;
  SmallVector<IteratorType> iterators;
  for (unsigned dim = 0; dim < 4; ++dim) {
    bool broadcast = dim < 2 && maskType.getDimSize(dim) == 1;
    iterators.push_back(broadcast ? kReduction : kParallel);
    if (!broadcast) {
      kept.push_back(dim);
      keptSizes.push_back(tensor::getMixedSize(b, b.getLoc(), full, dim));
    }
  }
  // (b, h, i, k): sums[kept dims] += full[b, h, i, k]
  Value sums = buildGeneric(
      b, {full}, {projection(ctx, 4, {0, 1, 2, 3})}, zeros(keptSizes),
      projection(ctx, 4, kept), iterators,
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return arith::AddFOp::create(nb, loc, args[1], args[0]);
      });
  // Over the mask's own (unit where broadcast) dimensions.
  Type type = maskType.getElementType();
  return buildGeneric(
      b, {sums}, {projection(ctx, 4, kept)}, init,
      projection(ctx, 4, {0, 1, 2, 3}),
      {kParallel, kParallel, kParallel, kParallel},
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return truncateFromF32(nb, loc, args[0], type);
      });
}

SmallVector<Value> GradDecomposer::buildKeyBlock(Value batch, Value kvHead,
                                                Value key0, Value cols,
                                                ValueRange slots) {
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  Value kTile = slice(op.getKey(), {batch, kvHead, key0, zero},
                      {one, one, cols, headDim}, 2);
  Value vTile = slice(op.getValue(), {batch, kvHead, key0, zero},
                      {one, one, cols, valueDim}, 2);
  auto [blockBegin, blockEnd] =
      tiles.geometry(arith).queryBlockRange(key0, cols, blockM);
  auto headLoop = scf::ForOp::create(
      b, index(0), group, index(1),
      llvm::to_vector(llvm::concat<Value>(
          ValueRange{slots[0], zeros({cols, headDim}), zeros({cols, valueDim})},
          slots.drop_front())),
      [&](OpBuilder &nested, Location, Value headInGroup, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Value head = arith.add(arith.mul(kvHead, group), headInGroup);
        auto blockLoop = scf::ForOp::create(
            b, blockBegin, blockEnd, index(1), state,
            [&](OpBuilder &inner, Location, Value queryBlock,
                ValueRange blockState) {
              OpBuilder::InsertionGuard innerGuard(b);
              b.setInsertionPoint(inner.getInsertionBlock(),
                                  inner.getInsertionPoint());
              auto [row0, rows] =
                  tiles.geometry(arith).queryBlockRows(queryBlock, blockM);
              if (!op.getBlockMask()) {
                scf::YieldOp::create(
                    b, buildTile(batch, head, headInGroup, row0, rows, key0,
                                 cols, kTile, vTile, Value(), blockState));
                return;
              }
              // An empty block of the block mask leaves the state as it is;
              // a full one does not read the mask operand.
              Value status = tiles.blockMaskStatus(
                  batch, head, tiles.blockMaskRow(row0), key0);
              Value fullBlock =
                  tiles.isBlockStatus(status, BlockMaskValue::kFull);
              auto skip = scf::IfOp::create(
                  b, blockState.getTypes(),
                  tiles.isBlockStatus(status, BlockMaskValue::kEmpty),
                  /*withElseRegion=*/true);
              b.setInsertionPointToStart(skip.thenBlock());
              scf::YieldOp::create(b, blockState);
              b.setInsertionPointToStart(skip.elseBlock());
              scf::YieldOp::create(
                  b, buildTile(batch, head, headInGroup, row0, rows, key0,
                               cols, kTile, vTile, fullBlock, blockState));
              b.setInsertionPointAfter(skip);
              scf::YieldOp::create(b, skip.getResults());
            });
        scf::YieldOp::create(b, blockLoop.getResults());
      });
  return SmallVector<Value>(headLoop.getResults());
}

SmallVector<Value> GradDecomposer::build() {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  Value dqInit = op.getOutputs()[0], dkInit = op.getOutputs()[1],
        dvInit = op.getOutputs()[2];
  tiles.queryLen = tensor::DimOp::create(b, q, 2);
  Value keyCapacity = tensor::DimOp::create(b, k, 2);
  tiles.keyLen = keyCapacity;
  headDim = tensor::getMixedSize(b, b.getLoc(), q, 3);
  valueDim = tensor::getMixedSize(b, b.getLoc(), v, 3);
  OpFoldResult batchSize = tensor::getMixedSize(b, b.getLoc(), q, 0);
  OpFoldResult queryHeads = tensor::getMixedSize(b, b.getLoc(), q, 1);
  OpFoldResult kvHeads = tensor::getMixedSize(b, b.getLoc(), k, 1);
  OpFoldResult queryLen = tiles.queryLen;
  group = arith::DivUIOp::create(b, tensor::DimOp::create(b, q, 1),
                                 tensor::DimOp::create(b, k, 1));

  // (b, h, i, e): Dsum[b, h, i] += dO[b, h, i, e] O[b, h, i, e]
  dsum = buildGeneric(
      b, {op.getGradOut(), op.getOut()},
      {projection(ctx, 4, {0, 1, 2, 3}), projection(ctx, 4, {0, 1, 2, 3})},
      zeros({batchSize, queryHeads, queryLen}), projection(ctx, 4, {0, 1, 2}),
      {kParallel, kParallel, kParallel, kReduction},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return multiplyAdd(nb, loc, args[2], extendToF32(nb, loc, args[0]),
                           extendToF32(nb, loc, args[1]));
      });

  // Keys no piece covers (past a sequence's key length) keep dK = dV = 0.
  auto zeroFilled = [&](Value dest) {
    Value zero = arith::ConstantOp::create(
        b, b.getZeroAttr(getElementTypeOrSelf(dest)));
    return linalg::FillOp::create(b, zero, dest).getResult(0);
  };
  Value dqCopies =
      zeros({b.getIndexAttr(pieces), batchSize, queryHeads, queryLen, headDim});
  SmallVector<Value> sharedInits{dqCopies, zeroFilled(dkInit),
                                 zeroFilled(dvInit)};
  // The additive mask's gradient, dS at every (batch, head, row, key) in
  // f32, reduced to the mask's shape at the end.
  Value dmInit = op.getInitGradMask();
  OpFoldResult keyLen = tensor::getMixedSize(b, b.getLoc(), k, 2);
  if (dmInit)
    sharedInits.push_back(zeros({batchSize, queryHeads, queryLen, keyLen}));
  auto forall = scf::ForallOp::create(
      b, ArrayRef<OpFoldResult>{b.getIndexAttr(pieces), batchSize, kvHeads},
      sharedInits, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    Value piece = forall.getInductionVar(0), batch = forall.getInductionVar(1),
          kvHead = forall.getInductionVar(2);
    ValueRange shared = forall.getRegionIterArgs();
    if (Value lengths = op.getKeyLengths()) {
      Value length = arith::IndexCastOp::create(
          b, b.getIndexType(),
          tensor::ExtractOp::create(b, lengths, ValueRange{batch}));
      tiles.keyLen =
          MaskGeometry<IndexArith>::sequenceKeys(arith, length, keyCapacity);
    }
    // The piece's key/value blocks, and the keys they hold.
    Value kvBlocks = arith.ceilDiv(tiles.keyLen, blockN);
    auto [blockBegin, blockEnd] =
        splitKVPiece(arith, index(0), kvBlocks, piece, pieces);
    // An empty last piece starts at Sk, not past it.
    pieceKey0 = arith.min(arith.mul(blockBegin, blockN), tiles.keyLen);
    Value pieceKeys = arith.max(
        arith.sub(arith.min(arith.mul(blockEnd, blockN), tiles.keyLen),
                  pieceKey0),
        index(0));

    OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    Value firstHead = arith.mul(kvHead, group);
    SmallVector<OpFoldResult> dqOffsets{piece, batch, firstHead, zero, zero};
    SmallVector<OpFoldResult> dqSizes{one, one, group, queryLen, headDim};
    SmallVector<OpFoldResult> dkOffsets{batch, kvHead, pieceKey0, zero};
    SmallVector<OpFoldResult> dkSizes{one, one, pieceKeys, headDim};
    SmallVector<OpFoldResult> dvSizes{one, one, pieceKeys, valueDim};
    SmallVector<OpFoldResult> dmOffsets{batch, firstHead, zero, pieceKey0};
    SmallVector<OpFoldResult> dmSizes{one, group, queryLen, pieceKeys};
    SmallVector<Value> carried{slice(shared[0], dqOffsets, dqSizes, 3),
                               slice(shared[1], dkOffsets, dkSizes, 2),
                               slice(shared[2], dkOffsets, dvSizes, 2)};
    if (dmInit)
      carried.push_back(slice(shared[3], dmOffsets, dmSizes, 3));

    auto loop = scf::ForOp::create(
        b, blockBegin, blockEnd, index(1), carried,
        [&](OpBuilder &nested, Location, Value block, ValueRange state) {
          OpBuilder::InsertionGuard loopGuard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          Value key0 = arith.mul(block, blockN);
          Value cols = arith::MinUIOp::create(b, index(blockN),
                                              arith.sub(tiles.keyLen, key0));
          SmallVector<Value> slots{state[0]};
          if (dmInit)
            slots.push_back(state[3]);
          SmallVector<Value> terms =
              buildKeyBlock(batch, kvHead, key0, cols, slots);
          // The block's dK and dV, rounded once.
          SmallVector<OpFoldResult> offsets{arith.sub(key0, pieceKey0), zero};
          auto rounded = [&](Value acc, Value piece, OpFoldResult width) {
            SmallVector<OpFoldResult> sizes{cols, width};
            Value dest = slice(piece, offsets, sizes, 2);
            Value tile = buildGeneric(
                b, {acc}, {projection(ctx, 2, {0, 1})}, dest,
                projection(ctx, 2, {0, 1}), {kParallel, kParallel},
                [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
                  return truncateFromF32(nb, loc, args[0],
                                         getElementTypeOrSelf(piece));
                });
            return insert(tile, piece, offsets, sizes);
          };
          SmallVector<Value> next{terms[0],
                                  rounded(terms[1], state[1], headDim),
                                  rounded(terms[2], state[2], valueDim)};
          if (dmInit)
            next.push_back(terms[3]);
          scf::YieldOp::create(b, next);
        });

    b.setInsertionPointToStart(forall.getTerminator().getBody());
    auto strides = [&](size_t rank) {
      return SmallVector<OpFoldResult>(rank, one);
    };
    tensor::ParallelInsertSliceOp::create(b, loop.getResult(0), shared[0],
                                          dqOffsets, dqSizes, strides(5));
    tensor::ParallelInsertSliceOp::create(b, loop.getResult(1), shared[1],
                                          dkOffsets, dkSizes, strides(4));
    tensor::ParallelInsertSliceOp::create(b, loop.getResult(2), shared[2],
                                          dkOffsets, dvSizes, strides(4));
    if (dmInit)
      tensor::ParallelInsertSliceOp::create(b, loop.getResult(3), shared[3],
                                            dmOffsets, dmSizes, strides(4));
  }

  // dQ = the sum of the pieces' copies, in piece order, rounded once:
  // (b, h, i, d, s).
  Value dqSum = buildGeneric(
      b, {forall.getResult(0)},
      {AffineMap::get(5, 0,
                      {b.getAffineDimExpr(4), b.getAffineDimExpr(0),
                       b.getAffineDimExpr(1), b.getAffineDimExpr(2),
                       b.getAffineDimExpr(3)},
                      ctx)},
      zeros({batchSize, queryHeads, queryLen, headDim}),
      projection(ctx, 5, {0, 1, 2, 3}),
      {kParallel, kParallel, kParallel, kParallel, kReduction},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return arith::AddFOp::create(nb, loc, args[1], args[0]);
      });
  AffineMap identity = projection(ctx, 4, {0, 1, 2, 3});
  Type dqType = getElementTypeOrSelf(dqInit);
  Value dq = buildGeneric(
      b, {dqSum}, {identity}, dqInit, identity,
      {kParallel, kParallel, kParallel, kParallel},
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        return truncateFromF32(nb, loc, args[0], dqType);
      });
  SmallVector<Value> results{dq, forall.getResult(1), forall.getResult(2)};
  if (dmInit)
    results.push_back(reduceToMaskShape(forall.getResult(3), dmInit));
  return results;
}

struct AttnDecomposeGradPass
    : public attn::impl::AttnDecomposeGradBase<AttnDecomposeGradPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AttentionGradOp> ops;
    getOperation()->walk([&](AttentionGradOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionGradOp op : ops)
      if (failed(decompose(op, rewriter)))
        return signalPassFailure();
  }

  LogicalResult decompose(AttentionGradOp op, IRRewriter &rewriter) {
    if (op.hasScoreModifier())
      if (Operation *stop = findUndifferentiableOp(op.getScore()))
        return op.emitError()
               << "attn-decompose-grad: the score region uses the score in '"
               << stop->getName() << "', which has no derivative rule";
    FailureOr<TileSizes> tileSizes = requireGradTileSizes(op, blockM, blockN);
    if (failed(tileSizes))
      return failure();
    int64_t pieces = 1;
    if (auto split = dyn_cast_or_null<SplitKVAttr>(op.getPartitionAttr()))
      pieces = split.getSplits();
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    SmallVector<Value> results =
        GradDecomposer(op, *tileSizes, pieces, b).build();
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace
