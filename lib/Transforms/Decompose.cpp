//===- Decompose.cpp - attn.attention to tiled online-softmax loops -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The FlashAttention-2 forward algorithm as target-independent tensor IR:
// scf.forall over (slot,) batch, head and query block; scf.for over the
// visible key/value blocks (of the slot's piece) carrying the online-softmax
// state (m, l, acc); linalg.generic for the tile maths. The block bounds and
// masks are MaskGeometry's and the pieces WorkAssignment's, built as IR.
//
//===----------------------------------------------------------------------===//

#include "GenericBuilder.h"
#include "ScoreTiles.h"

#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/IntegerArith.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Analysis/WorkAssignment.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/IndexArith.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

using utils::IteratorType;
constexpr IteratorType kParallel = IteratorType::parallel;
constexpr IteratorType kReduction = IteratorType::reduction;

/// Builds the loops of one attn.attention or attn.partial_attention. Index
/// values named `...Row`/`...Key` are absolute positions.
template <typename OpTy> class Decomposer {
public:
  /// Tiles of blockM x blockN over GQA packing's tiled heads of
  /// `packedHeads` query heads.
  Decomposer(OpTy op, int64_t blockM, int64_t blockN, int64_t packedHeads,
             ImplicitLocOpBuilder &b)
      : op(op), blockM(blockM), blockN(blockN), b(b), ctx(b.getContext()),
        arith{b}, tiles{op, b} {
    tiles.packedHeads = packedHeads;
  }

  /// Returns the values replacing the op's results.
  SmallVector<Value> build();

private:
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, value); }
  /// A row vector of -inf: the initial running maximum.
  Value m0Like(Value rows) {
    return filledTensor(
        b, {rows}, b.getF32Type(),
        b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  }

  /// The key/value blocks [begin, end) that `slot` of query block
  /// `queryBlock` of (batch, head) visits: all those the query block sees,
  /// or the slot's piece of them.
  std::pair<Value, Value> blockRange(Value slot, Value batch, Value head,
                                     Value queryBlock, Value row0, Value rows);

  /// One query block: the online-softmax loop and its epilogue, writing the
  /// O tile into `oInit` ([rows, Dv]) and, when `lseInit` ([rows]) is
  /// given, the LSE tile into it. Returns both tiles (LSE's null without
  /// `lseInit`).
  std::pair<Value, Value> buildQueryBlock(Value slot, Value batch, Value head,
                                          Value queryBlock, Value row0,
                                          Value rows, Value oInit,
                                          Value lseInit);

  OpTy op;
  int64_t blockM, blockN;
  ImplicitLocOpBuilder &b;
  MLIRContext *ctx;
  IndexArith arith;
  /// The score tiles, and the masking geometry (Sk set per sequence in the
  /// loop).
  ScoreTiles<OpTy> tiles;
  OpFoldResult valueDim;
  /// Lean only: the LeanTiles and their even split over CTAs.
  std::optional<LeanWork<IndexArith>> lean;
  /// GQA packing (#attn.fa2's packed_heads, tiles.packedHeads): Q as tiled
  /// heads of tiled rows ([B, Hq / p, p Sq, D]), and Hq / p.
  Value packedQuery, tiledHeads;
  /// `t` ([..., Hq, Sq, ...], heads at `headDim`) as GQA packing's
  /// [..., Hq / p, p Sq, ...], or back (`pack` false): views of the same
  /// elements, head after head.
  Value regroupHeads(Value t, int64_t headDim, bool pack);
  MaskGeometry<IndexArith> geometry() { return tiles.geometry(arith); }
};

template <typename OpTy>
std::pair<Value, Value>
Decomposer<OpTy>::blockRange(Value slot, Value batch, Value head,
                             Value queryBlock, Value row0, Value rows) {
  auto [begin, end] = geometry().kvBlockRange(row0, rows, blockN);
  if (!slot)
    return {begin, end};
  if (auto split = dyn_cast<SplitKVAttr>(op.getPartitionAttr()))
    return splitKVPiece(arith, begin, end, slot, split.getSplits());
  // Lean: the slot's piece of this output tile's LeanTiles, as blocks.
  Value batchHead = arith.add(arith.mul(batch, tiledHeads), head);
  Value first = lean->order.tileFirst(lean->perHead, batchHead, queryBlock);
  auto [pieceBegin, pieceEnd] =
      lean->assignment.piece(first, arith.sub(end, begin), slot);
  Value shift = arith.sub(begin, first);
  return {arith.add(pieceBegin, shift), arith.add(pieceEnd, shift)};
}

template <typename OpTy>
std::pair<Value, Value>
Decomposer<OpTy>::buildQueryBlock(Value slot, Value batch, Value head,
                                  Value queryBlock, Value row0, Value rows,
                                  Value oInit, Value lseInit) {
  Type outType = getElementTypeOrSelf(oInit);
  Value q = packedQuery, k = op.getKey(), v = op.getValue();
  Type f32Type = b.getF32Type();
  OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
  OpFoldResult headDim = tensor::getMixedSize(b, b.getLoc(), q, 3);

  // Grouped-query heads read their key/value head in place; the heads
  // packed into a tiled head share one.
  Value group =
      arith::DivUIOp::create(b, tensor::DimOp::create(b, op.getQuery(), 1),
                             tensor::DimOp::create(b, k, 1));
  Value kvHead =
      arith::DivUIOp::create(b, arith.mul(head, tiles.packedHeads), group);

  auto tileType = [&](Value source, int64_t dim) {
    auto type = cast<RankedTensorType>(source.getType());
    return RankedTensorType::get({ShapedType::kDynamic, type.getDimSize(dim)},
                                 type.getElementType());
  };
  Value qTile = tensor::ExtractSliceOp::create(
      b, tileType(q, 3), q, ArrayRef<OpFoldResult>{batch, head, row0, zero},
      ArrayRef<OpFoldResult>{one, one, rows, headDim},
      ArrayRef<OpFoldResult>{one, one, one, one});

  auto [blockBegin, blockEnd] =
      blockRange(slot, batch, head, queryBlock, row0, rows);
  Value bn = index(blockN);

  // The block mask's row of blocks, the same for every key/value block.
  Value blockMaskRow =
      op.getBlockMask() ? tiles.blockMaskRow(row0) : Value();

  // Online-softmax state, in base 2: m = running max of the scaled scores.
  Value m0 = m0Like(rows);
  Value l0 = filledTensor(b, {rows}, f32Type, b.getF32FloatAttr(0.0));
  Value acc0 = filledTensor(b, {rows, valueDim}, f32Type, b.getF32FloatAttr(0.0));

  auto loop = scf::ForOp::create(
      b, blockBegin, blockEnd, index(1), ValueRange{m0, l0, acc0},
      [&](OpBuilder &nested, Location, Value block, ValueRange state) {
        // Build the body with the decomposer's own builder.
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Value m = state[0], l = state[1], acc = state[2];
        Value key0 = arith::MulIOp::create(b, block, bn);
        // The block mask's element for this tile (tiles nest in its
        // blocks): an empty block leaves the state as it is.
        Value fullBlock;
        scf::IfOp skipEmpty;
        if (blockMaskRow) {
          Value status =
              tiles.blockMaskStatus(batch, head, blockMaskRow, key0);
          fullBlock = tiles.isBlockStatus(status, BlockMaskValue::kFull);
          skipEmpty = scf::IfOp::create(
              b, state.getTypes(),
              tiles.isBlockStatus(status, BlockMaskValue::kEmpty),
              /*withElseRegion=*/true);
          b.setInsertionPointToStart(skipEmpty.thenBlock());
          scf::YieldOp::create(b, state);
          b.setInsertionPointToStart(skipEmpty.elseBlock());
        }
        Value cols = arith::MinUIOp::create(
            b, bn, arith::SubIOp::create(b, tiles.keyLen, key0));
        Value kTile = tensor::ExtractSliceOp::create(
            b, tileType(k, 3), k,
            ArrayRef<OpFoldResult>{batch, kvHead, key0, zero},
            ArrayRef<OpFoldResult>{one, one, cols, headDim},
            ArrayRef<OpFoldResult>{one, one, one, one});
        Value vTile = tensor::ExtractSliceOp::create(
            b, tileType(v, 3), v,
            ArrayRef<OpFoldResult>{batch, kvHead, key0, zero},
            ArrayRef<OpFoldResult>{one, one, cols, valueDim},
            ArrayRef<OpFoldResult>{one, one, one, one});
        Value maskTile = tiles.maskTile(batch, head, row0, key0, rows, cols);
        Value raw = tiles.rawScores(qTile, kTile, rows, cols);
        Value scores = tiles.scores(raw, maskTile, fullBlock, batch, head,
                                    row0, key0, rows, cols);

        AffineMap rowsCols = projection(ctx, 2, {0, 1});
        AffineMap rowOf2 = projection(ctx, 2, {0});
        AffineMap rowOf1 = projection(ctx, 1, {0});
        // The state is updated in place: every read of the old m, l and acc
        // comes before the write that replaces it.
        Value rowsEmpty = tensor::EmptyOp::create(
            b, ArrayRef<OpFoldResult>{rows}, f32Type);
        // m_new = max(m, rowmax S): a row reduction seeded with a copy of
        // the old m.
        Value mSeed =
            linalg::CopyOp::create(b, m, rowsEmpty).getResult(0);
        Value mNew = buildGeneric(
            b, {scores}, {rowsCols}, mSeed, rowOf2, {kParallel, kReduction},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              return arith::MaximumFOp::create(nb, loc, args[0], args[1]);
            });
        // m_safe = m_new, but 0 for a row that has seen nothing yet
        // (m_new = -inf), so that exp2 yields 0 rather than NaN.
        Value mSafe = buildGeneric(
            b, {mNew}, {rowOf1}, rowsEmpty, rowOf1, {kParallel},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              Value minusInf = arith::ConstantOp::create(
                  nb, loc,
                  nb.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
              Value isEmpty = arith::CmpFOp::create(
                  nb, loc, arith::CmpFPredicate::OEQ, args[0], minusInf);
              Value zeroF = arith::ConstantOp::create(nb, loc,
                                                      nb.getF32FloatAttr(0.0));
              return arith::SelectOp::create(nb, loc, isEmpty, zeroF, args[0]);
            });
        // alpha = exp2(m - m_safe), the rescaling of the old state, and
        // m = m_new, in one pass: the last read of the old m is its update.
        auto mUpdate = linalg::GenericOp::create(
            b, TypeRange{m.getType(), rowsEmpty.getType()},
            ValueRange{mNew, mSafe}, ValueRange{m, rowsEmpty},
            ArrayRef<AffineMap>{rowOf1, rowOf1, rowOf1, rowOf1},
            ArrayRef<utils::IteratorType>{kParallel},
            [](OpBuilder &nb, Location loc, ValueRange args) {
              Value alpha = math::Exp2Op::create(
                  nb, loc, arith::SubFOp::create(nb, loc, args[2], args[1]));
              linalg::YieldOp::create(nb, loc, ValueRange{args[0], alpha});
            });
        Value mUpdated = mUpdate.getResult(0), alpha = mUpdate.getResult(1);
        // P = exp2(S - m_safe)
        Value pInit = tensor::EmptyOp::create(
            b, ArrayRef<OpFoldResult>{rows, cols}, f32Type);
        Value p = buildGeneric(
            b, {scores, mSafe}, {rowsCols, rowOf2}, pInit, rowsCols,
            {kParallel, kParallel},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              return math::Exp2Op::create(
                  nb, loc, arith::SubFOp::create(nb, loc, args[0], args[1]));
            });
        // l_new = alpha * l + rowsum P
        Value lScaled = buildGeneric(
            b, {alpha}, {rowOf1}, l, rowOf1, {kParallel},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              return arith::MulFOp::create(nb, loc, args[0], args[1]);
            });
        Value lNew = buildGeneric(
            b, {p}, {rowsCols}, lScaled, rowOf2, {kParallel, kReduction},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              return arith::AddFOp::create(nb, loc, args[0], args[1]);
            });
        // acc_new = alpha * acc + P V
        Value accScaled = buildGeneric(
            b, {alpha}, {rowOf2}, acc, rowsCols, {kParallel, kParallel},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              return arith::MulFOp::create(nb, loc, args[0], args[1]);
            });
        // (i, j, e): acc[i, e] += P[i, j] * V[j, e], the value dimension
        // innermost so that rows of V and acc are read contiguously.
        Value accNew = buildGeneric(
            b, {p, vTile},
            {projection(ctx, 3, {0, 1}), projection(ctx, 3, {1, 2})},
            accScaled, projection(ctx, 3, {0, 2}),
            {kParallel, kReduction, kParallel},
            [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
              return multiplyAdd(nb, loc, args[2], args[0],
                                 extendToF32(nb, loc, args[1]));
            });
        scf::YieldOp::create(b, ValueRange{mUpdated, lNew, accNew});
        if (skipEmpty) {
          b.setInsertionPointAfter(skipEmpty);
          scf::YieldOp::create(b, skipEmpty.getResults());
        }
      });
  Value m = loop.getResult(0), l = loop.getResult(1), acc = loop.getResult(2);

  // O = acc / l, once; rows that saw nothing (l = 0) get 0.
  Value oTile = buildGeneric(
      b, {acc, l}, {projection(ctx, 2, {0, 1}), projection(ctx, 2, {0})},
      oInit, projection(ctx, 2, {0, 1}), {kParallel, kParallel},
      [&](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        Value zeroF = arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0.0));
        Value empty = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ,
                                            args[1], zeroF);
        Value quotient = arith::DivFOp::create(nb, loc, args[0], args[1]);
        Value value = arith::SelectOp::create(nb, loc, empty, zeroF, quotient);
        return truncateFromF32(nb, loc, value, outType);
      });
  if (!lseInit)
    return {oTile, Value()};
  // LSE = (m + log2 l) * ln 2, natural log; -inf where l = 0.
  Value lseTile = buildGeneric(
      b, {m, l}, {projection(ctx, 1, {0}), projection(ctx, 1, {0})}, lseInit,
      projection(ctx, 1, {0}), {kParallel},
      [](OpBuilder &nb, Location loc, ValueRange args) -> Value {
        auto constant = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(v));
        };
        Value empty = arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ,
                                            args[1], constant(0.0));
        Value log2Sum = arith::AddFOp::create(
            nb, loc, args[0], math::Log2Op::create(nb, loc, args[1]));
        Value lse = arith::MulFOp::create(nb, loc, log2Sum, constant(M_LN2));
        return arith::SelectOp::create(
            nb, loc, empty,
            constant(-std::numeric_limits<double>::infinity()), lse);
      });
  return {oTile, lseTile};
}

template <typename OpTy> SmallVector<Value> Decomposer<OpTy>::build() {
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
  tiles.queryLen = tensor::DimOp::create(b, q, 2);
  Value keyCapacity = tensor::DimOp::create(b, k, 2);
  tiles.keyLen = keyCapacity;
  if (op.hasFrame())
    tiles.frame = MaskGeometry<IndexArith>::frameOf(
        arith, op.getQueryOffset(), op.getKeyOffset(), op.getQueryTotal(),
        op.getKeyTotal());
  valueDim = tensor::getMixedSize(b, b.getLoc(), v, 3);
  packedQuery = regroupHeads(q, 1, /*pack=*/true);

  Value batch = tensor::DimOp::create(b, q, 0);
  tiledHeads = arith.div(tensor::DimOp::create(b, q, 1), tiles.packedHeads);
  Value queryBlocks = arith.ceilDiv(geometry().tiledRows(), blockM);
  // A partial attention writes slot s of its destinations for every piece s.
  constexpr bool partial = std::is_same_v<OpTy, PartialAttentionOp>;
  SmallVector<OpFoldResult> bounds;
  if (partial)
    bounds.push_back(tensor::getMixedSize(b, b.getLoc(), op.getInitOut(), 0));
  bounds.append({batch, tiledHeads, queryBlocks});
  if (auto leanAttr = dyn_cast_or_null<LeanAttr>(op.getPartitionAttr())) {
    lean.emplace(LeanWork<IndexArith>::create(
        arith, geometry(), blockM, blockN, queryBlocks,
        arith.mul(batch, tiledHeads), arith.constant(leanAttr.getCtas())));
  }

  // The destinations' heads sit after the slot dimension of a partial.
  int64_t headDim = partial ? 2 : 1;
  SmallVector<Value> outputs;
  for (Value output : op.getOutputs())
    outputs.push_back(regroupHeads(output, headDim, /*pack=*/true));
  auto forall = scf::ForallOp::create(b, bounds, outputs, std::nullopt);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> ivs = forall.getInductionVars();
    Value slot = partial ? ivs[0] : Value();
    ValueRange tileIvs = ArrayRef<Value>(ivs).take_back(3);
    Value batch = tileIvs[0], head = tileIvs[1], queryBlock = tileIvs[2];
    if (Value lengths = op.getKeyLengths()) {
      Value length = arith::IndexCastOp::create(
          b, b.getIndexType(),
          tensor::ExtractOp::create(b, lengths, ValueRange{batch}));
      tiles.keyLen =
          MaskGeometry<IndexArith>::sequenceKeys(arith, length, keyCapacity);
    }
    auto [row0, rows] = geometry().queryBlockRows(queryBlock, blockM);
    OpFoldResult one = b.getIndexAttr(1), zero = b.getIndexAttr(0);
    SmallVector<OpFoldResult> prefix;
    if (slot)
      prefix.push_back(slot);
    prefix.append({batch, head, row0});
    SmallVector<OpFoldResult> unitPrefix(prefix.size() - 1, one);
    ValueRange shared = forall.getRegionIterArgs();

    // Each query block writes its rows of the destinations in place.
    SmallVector<OpFoldResult> oOffsets(prefix), oSizes(unitPrefix),
        oStrides(prefix.size() + 1, one);
    oOffsets.push_back(zero);
    oSizes.append({rows, valueDim});
    SmallVector<OpFoldResult> lSizes(unitPrefix), lStrides(prefix.size(), one);
    lSizes.push_back(rows);
    Value oInit = extractTile(b, shared[0], oOffsets, oSizes, 2);
    Value lseInit =
        shared.size() > 1 ? extractTile(b, shared[1], prefix, lSizes, 1)
                          : Value();
    auto [oTile, lseTile] = buildQueryBlock(slot, batch, head, queryBlock, row0,
                                            rows, oInit, lseInit);

    b.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, oTile, shared[0], oOffsets, oSizes,
                                          oStrides);
    if (lseTile)
      tensor::ParallelInsertSliceOp::create(b, lseTile, shared[1], prefix,
                                            lSizes, lStrides);
  }
  SmallVector<Value> results;
  for (Value result : forall.getResults())
    results.push_back(regroupHeads(result, headDim, /*pack=*/false));
  return results;
}

template <typename OpTy>
Value Decomposer<OpTy>::regroupHeads(Value t, int64_t headDim, bool pack) {
  int64_t packedHeads = tiles.packedHeads;
  if (packedHeads == 1)
    return t;
  auto type = cast<RankedTensorType>(t.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, b.getLoc(), t);
  // Packing splits the heads into (Hq / p, p) and joins (p, Sq); unpacking
  // splits p Sq into (p, Sq) and joins (Hq / p, p).
  int64_t split = pack ? headDim : headDim + 1;
  int64_t join = pack ? headDim + 1 : headDim;
  OpFoldResult pSize = b.getIndexAttr(packedHeads);
  OpFoldResult rest = tensor::getMixedSize(b, b.getLoc(), op.getQuery(), 2);
  if (pack) {
    std::optional<int64_t> heads = getConstantIntValue(sizes[headDim]);
    rest =
        heads
            ? OpFoldResult(b.getIndexAttr(*heads / packedHeads))
            : OpFoldResult(arith.div(cast<Value>(sizes[headDim]), packedHeads));
  }
  SmallVector<OpFoldResult> expanded(sizes);
  expanded[split] = pack ? rest : pSize;
  expanded.insert(expanded.begin() + split + 1, pack ? pSize : rest);
  SmallVector<ReassociationIndices> expandGroups, joinGroups;
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
    expandGroups.push_back(dim < split    ? ReassociationIndices{dim}
                           : dim == split ? ReassociationIndices{dim, dim + 1}
                                          : ReassociationIndices{dim + 1});
  for (int64_t dim = 0, rank = type.getRank(); dim < rank; ++dim)
    joinGroups.push_back(dim < join    ? ReassociationIndices{dim}
                         : dim == join ? ReassociationIndices{dim, dim + 1}
                                       : ReassociationIndices{dim + 1});
  auto [staticSizes, dynamicSizes] = decomposeMixedValues(expanded);
  auto expandedType = RankedTensorType::get(staticSizes, type.getElementType());
  Value view =
      tensor::ExpandShapeOp::create(b, expandedType, t, expandGroups, expanded);
  return tensor::CollapseShapeOp::create(b, view, joinGroups);
}

struct AttnDecomposePass
    : public attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockM < 0 || blockN < 0) {
      emitError(getOperation()->getLoc())
          << "block-m and block-n must not be negative (0: the default), got "
          << static_cast<int64_t>(blockM) << " and "
          << static_cast<int64_t>(blockN);
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AttentionOp, PartialAttentionOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      LogicalResult result =
          isa<AttentionOp>(op)
              ? decompose(cast<AttentionOp>(op), rewriter)
              : decompose(cast<PartialAttentionOp>(op), rewriter);
      if (failed(result))
        return signalPassFailure();
    }
  }

  LogicalResult decompose(AttentionOp op, IRRewriter &rewriter) {
    if (Attribute partition = op.getPartitionAttr())
      return op.emitError()
             << "attn-decompose takes attentions without a partition; got "
             << partition
             << " (split_kv and lean: run attn-partition-kv first)";
    FailureOr<TileChoice> tiles = requireTiles(
        op, {TileTarget::Cpu, blockM, blockN, getEnclosingTarget(op)});
    if (failed(tiles))
      return failure();
    return replace(op, tiles->tiling, rewriter);
  }

  LogicalResult decompose(PartialAttentionOp op, IRRewriter &rewriter) {
    Fa2TilesAttr tiles = op.getTilesAttr();
    if ((blockM && blockM != tiles.getBlockM()) ||
        (blockN && blockN != tiles.getBlockN()))
      return op.emitError()
             << "the tiles of a partial attention define its pieces: got "
                "block-m/block-n "
             << static_cast<int64_t>(blockM) << " x "
             << static_cast<int64_t>(blockN) << " for tiles "
             << tiles.getBlockM() << " x " << tiles.getBlockN();
    if (auto lean = dyn_cast<LeanAttr>(op.getPartitionAttr()))
      if (failed(checkLeanSlots(op, lean.getCtas())))
        return failure();
    return replace(op, fa2TilingOf(tiles), rewriter);
  }

  /// Whether the partial slots of a Lean partial attention hold every piece
  /// its schedule cuts an output tile into (LeanWork::mostPieces), checked
  /// when the sizes are static and there are at most 2^20 output tiles to
  /// walk: a slot written by two pieces would lose one.
  static LogicalResult checkLeanSlots(PartialAttentionOp op, int64_t ctas) {
    ArrayRef<int64_t> q = op.getQuery().getType().getShape();
    int64_t keyLen = op.getKey().getType().getDimSize(2);
    int64_t slots =
        cast<RankedTensorType>(op.getInitLse().getType()).getDimSize(0);
    if (ShapedType::isDynamicShape(q.take_front(3)) ||
        ShapedType::isDynamic(keyLen) || ShapedType::isDynamic(slots))
      return success();
    Fa2TilesAttr tiles = op.getTilesAttr();
    int64_t packed = tiles.getPackedHeads();
    int64_t batchHeads = q[0] * (q[1] / packed);
    int64_t queryBlocks = llvm::divideCeil(q[2] * packed, tiles.getBlockM());
    if (batchHeads * queryBlocks > (int64_t(1) << 20))
      return success();
    IntegerArith a;
    MaskGeometry<IntegerArith> geometry{
        a,     q[2], keyLen, op.getCausal(), op.getWindowSizes(), std::nullopt,
        packed};
    int64_t needed =
        LeanWork<IntegerArith>::create(a, geometry, tiles.getBlockM(),
                                       tiles.getBlockN(), queryBlocks,
                                       batchHeads, ctas)
            .mostPieces(batchHeads, queryBlocks);
    if (slots < needed)
      return op.emitOpError()
             << "lean with " << ctas << " CTAs cuts an output tile into "
             << needed << " pieces, one slot each; got " << slots << " slots";
    return success();
  }

  template <typename OpTy>
  LogicalResult replace(OpTy op, const Fa2Tiling &tiling,
                        IRRewriter &rewriter) {
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    SmallVector<Value> results =
        Decomposer<OpTy>(op, tiling.blockM, tiling.blockN, tiling.packedHeads,
                         b)
            .build();
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace
