//===- Distribute.cpp - ATTENTION2D and ring attention over ranks --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-distribute: an attn.attention with an #attn.attention2d or #attn.ring
// partition becomes the program of one rank (SPMD) on a shard.grid. The
// function's Q, K, V, O (and LSE) arguments and results become the rank's
// shards; the collectives are shard dialect ops; the local work is an
// attn.attention with a frame (its positions in the whole attention) and the
// recombination is attn.merge. Nothing here knows the target.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Distribution/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDISTRIBUTE
#include "attn/Distribution/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// `type` with dimension `dim` replaced by `size`.
RankedTensorType withDim(Type type, int64_t dim, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] = size;
  return tensor.clone(shape);
}

/// `type` with a leading dimension of `size`.
RankedTensorType withLeading(Type type, int64_t size, Type element) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{size};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, element);
}

/// The private grid `name` of `shape`, created at the top of the module the
/// first time.
FailureOr<shard::GridOp> gridOf(ModuleOp module, ArrayRef<int64_t> shape,
                                Operation *user) {
  std::string name = "attn_grid";
  for (int64_t size : shape)
    name += "_" + std::to_string(size);
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto grid = dyn_cast<shard::GridOp>(existing);
    if (!grid || grid.getShape() != shape)
      return user->emitError()
             << "symbol @" << name << " exists and is not the grid it names";
    return grid;
  }
  OpBuilder b(module.getBodyRegion());
  auto grid = shard::GridOp::create(b, module.getLoc(), name, shape);
  grid.setPrivate();
  return grid;
}

/// Rewrites one distributed attention and the function around it.
class Distributor {
public:
  Distributor(AttentionOp op, func::FuncOp func) : op(op), func(func) {}

  LogicalResult run();

private:
  LogicalResult check();
  /// Gives function argument `value` the type `type`, or, when `value` is a
  /// destination made by tensor.empty, a new tensor.empty of that type.
  Value localized(Value value, RankedTensorType type, ImplicitLocOpBuilder &b);
  /// The rank's attention of `q` against `k`, `v` at the given positions of
  /// the whole attention, as f32 partial O and LSE.
  std::pair<Value, Value> partial(ImplicitLocOpBuilder &b, Value q, Value k,
                                  Value v, Value queryOffset, Value keyOffset);
  SmallVector<Value> buildAttention2D(ImplicitLocOpBuilder &b,
                                      Attention2DAttr partition);
  SmallVector<Value> buildRing(ImplicitLocOpBuilder &b, RingAttr partition);
  /// attn.merge of `parts` (slots along dimension 0) into the rank's O and
  /// LSE shards.
  SmallVector<Value> mergeInto(ImplicitLocOpBuilder &b, Value partsO,
                               Value partsLse);
  Value index(ImplicitLocOpBuilder &b, int64_t value) {
    return arith::ConstantIndexOp::create(b, value);
  }

  AttentionOp op;
  func::FuncOp func;
  /// Ranks; the whole attention's lengths; tokens per shard.
  int64_t devices = 0, totalQuery = 0, totalKey = 0, queryShard = 0,
          keyShard = 0;
  FlatSymbolRefAttr grid;
  Value localQ, localK, localV, localO, localLse;
};

LogicalResult Distributor::check() {
  if (op.getMask())
    return op.emitError() << "a distributed attention cannot take a mask "
                             "operand yet; express the mask as a score region";
  for (Value operand : {op.getQuery(), op.getKey(), op.getValue()})
    if (ShapedType::isDynamicShape(
            cast<RankedTensorType>(operand.getType()).getShape()))
      return op.emitError() << "a distributed attention needs static sizes";
  SmallVector<Value> sharded{op.getQuery(), op.getKey(), op.getValue()};
  for (Value init : op.getOutputs())
    if (isa<BlockArgument>(init))
      sharded.push_back(init);
  for (auto [index, value] : llvm::enumerate(sharded)) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op.emitError()
             << "a distributed attention's Q, K and V must be arguments of "
                "the function, which becomes the program of one rank";
    if (!arg.hasOneUse())
      return op.emitError() << "argument #" << arg.getArgNumber()
                            << " is sharded for the distributed attention "
                               "and must have no other use";
  }
  for (Value init : op.getOutputs())
    if (!isa<BlockArgument>(init) && !init.getDefiningOp<tensor::EmptyOp>())
      return op.emitError() << "a distributed attention's destinations must "
                               "be function arguments or tensor.empty";
  for (Value result : op.getResults())
    for (Operation *user : result.getUsers())
      if (!isa<func::ReturnOp>(user))
        return op.emitError()
               << "a distributed attention's results are sharded and must "
                  "only be returned";
  return success();
}

Value Distributor::localized(Value value, RankedTensorType type,
                             ImplicitLocOpBuilder &b) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    arg.setType(type);
    return arg;
  }
  return tensor::EmptyOp::create(b, type.getShape(), type.getElementType());
}

std::pair<Value, Value> Distributor::partial(ImplicitLocOpBuilder &b, Value q,
                                             Value k, Value v,
                                             Value queryOffset,
                                             Value keyOffset) {
  Type f32 = b.getF32Type();
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> oShape(qType.getShape());
  oShape.back() = vType.getDimSize(3);
  Value oInit = tensor::EmptyOp::create(b, oShape, f32);
  Value lseInit = tensor::EmptyOp::create(b, ArrayRef(oShape).drop_back(), f32);
  auto local = AttentionOp::create(
      b, TypeRange{oInit.getType(), lseInit.getType()}, q, k, v,
      /*mask=*/Value(), queryOffset, keyOffset, index(b, totalQuery),
      index(b, totalKey), ValueRange{oInit, lseInit}, op.getScaleAttr(),
      op.getCausalAttr(), op.getWindowAttr(), op.getSoftcapAttr(),
      op.getTilesAttr(), /*partition=*/nullptr);
  if (op.hasScoreModifier()) {
    IRMapping mapping;
    op.getScore().cloneInto(&local.getScore(), mapping);
  }
  return {local.getResult(0), local.getResult(1)};
}

SmallVector<Value> Distributor::mergeInto(ImplicitLocOpBuilder &b, Value partsO,
                                          Value partsLse) {
  SmallVector<Value> outs{localO};
  if (localLse)
    outs.push_back(localLse);
  auto merge = MergeOp::create(b, ValueRange(outs).getTypes(), partsO, partsLse,
                               outs, b.getI64IntegerAttr(0));
  return merge.getResults();
}

SmallVector<Value> Distributor::buildAttention2D(ImplicitLocOpBuilder &b,
                                                 Attention2DAttr partition) {
  int64_t rows = partition.getQParts(), cols = partition.getKvParts();
  auto indices = shard::ProcessMultiIndexOp::create(
      b, TypeRange{b.getIndexType(), b.getIndexType()}, grid);
  Value row = indices.getResult()[0], col = indices.getResult()[1];
  auto axes = [&](int16_t axis) {
    return DenseI16ArrayAttr::get(b.getContext(), {axis});
  };
  // Row i gathers query chunk i; column j gathers key/value chunk j.
  auto gather = [&](Value shard, int16_t axis, int64_t parts) -> Value {
    auto type = cast<RankedTensorType>(shard.getType());
    return shard::AllGatherOp::create(
        b, withDim(type, 2, parts * type.getDimSize(2)), grid, axes(axis),
        shard, b.getIndexAttr(2));
  };
  Value q = gather(localQ, 1, cols);
  Value k = gather(localK, 0, rows);
  Value v = gather(localV, 0, rows);
  Value queryOffset =
      arith::MulIOp::create(b, row, index(b, cols * queryShard));
  Value keyOffset = arith::MulIOp::create(b, col, index(b, rows * keyShard));
  auto [partO, partLse] = partial(b, q, k, v, queryOffset, keyOffset);

  // Reduce-scatter over the row with the merge as the reduction: piece c of
  // every rank's partial goes to the row's c-th rank, which merges them.
  auto scatter = [&](Value part) -> Value {
    auto type = cast<RankedTensorType>(part.getType());
    int64_t rank = type.getRank();
    SmallVector<ReassociationIndices> reassociation{{0, 1}};
    for (int64_t dim = 2; dim <= rank; ++dim)
      reassociation.push_back({dim});
    Value stacked = tensor::ExpandShapeOp::create(
        b, withLeading(type, 1, type.getElementType()), part, reassociation);
    auto result =
        withLeading(withDim(type, 2, queryShard), cols, type.getElementType());
    return shard::AllToAllOp::create(b, result, grid, axes(1), stacked,
                                     b.getIndexAttr(3), b.getIndexAttr(0));
  };
  return mergeInto(b, scatter(partO), scatter(partLse));
}

SmallVector<Value> Distributor::buildRing(ImplicitLocOpBuilder &b,
                                          RingAttr partition) {
  int64_t p = partition.getDevices();
  Value rank =
      shard::ProcessMultiIndexOp::create(b, TypeRange{b.getIndexType()}, grid)
          .getResult()[0];
  Value queryOffset = arith::MulIOp::create(b, rank, index(b, queryShard));
  Type f32 = b.getF32Type();
  auto oType = cast<RankedTensorType>(localO.getType());
  SmallVector<int64_t> oShape(oType.getShape());
  Value acc0 = tensor::EmptyOp::create(b, oShape, f32);
  acc0 = linalg::FillOp::create(
             b, ValueRange{arith::ConstantOp::create(b, b.getF32FloatAttr(0))},
             ValueRange{acc0})
             .getResult(0);
  Value lse0 = tensor::EmptyOp::create(b, ArrayRef(oShape).drop_back(), f32);
  lse0 =
      linalg::FillOp::create(
          b,
          ValueRange{arith::ConstantOp::create(
              b, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()))},
          ValueRange{lse0})
          .getResult(0);

  auto loop = scf::ForOp::create(
      b, index(b, 0), index(b, p), index(b, 1),
      ValueRange{acc0, lse0, localK, localV},
      [&](OpBuilder &nested, Location loc, Value step, ValueRange state) {
        ImplicitLocOpBuilder nb(loc, nested);
        // After `step` shifts rank r holds key/value shard (r - step) mod P.
        Value source = arith::RemUIOp::create(
            nb,
            arith::SubIOp::create(
                nb, arith::AddIOp::create(nb, rank, index(nb, p)), step),
            index(nb, p));
        Value keyOffset =
            arith::MulIOp::create(nb, source, index(nb, keyShard));
        auto [partO, partLse] =
            partial(nb, localQ, state[2], state[3], queryOffset, keyOffset);
        // Merge the step's partial into the running result (two slots).
        auto stack = [&](Value acc, Value part) -> Value {
          auto type = cast<RankedTensorType>(acc.getType());
          Value both = tensor::EmptyOp::create(
              nb, withLeading(type, 2, f32).getShape(), f32);
          int64_t rank = type.getRank();
          Value slots[] = {acc, part};
          for (auto [slot, value] : llvm::enumerate(slots)) {
            SmallVector<OpFoldResult> offsets(rank + 1, nb.getIndexAttr(0));
            offsets[0] = nb.getIndexAttr(slot);
            SmallVector<OpFoldResult> sizes{nb.getIndexAttr(1)};
            for (int64_t size : type.getShape())
              sizes.push_back(nb.getIndexAttr(size));
            SmallVector<OpFoldResult> strides(rank + 1, nb.getIndexAttr(1));
            both = tensor::InsertSliceOp::create(nb, value, both, offsets,
                                                 sizes, strides);
          }
          return both;
        };
        auto merge = MergeOp::create(
            nb, TypeRange{state[0].getType(), state[1].getType()},
            stack(state[0], partO), stack(state[1], partLse),
            ValueRange{
                tensor::EmptyOp::create(nb, oShape, f32),
                tensor::EmptyOp::create(nb, ArrayRef(oShape).drop_back(), f32)},
            nb.getI64IntegerAttr(0));
        // Pass the key/value shard on, except after the last step.
        Value more = arith::CmpIOp::create(nb, arith::CmpIPredicate::ult, step,
                                           index(nb, p - 1));
        auto shift = scf::IfOp::create(
            nb, TypeRange{state[2].getType(), state[3].getType()}, more,
            /*withElseRegion=*/true);
        {
          ImplicitLocOpBuilder then =
              ImplicitLocOpBuilder::atBlockBegin(loc, shift.thenBlock());
          auto axes = DenseI16ArrayAttr::get(nb.getContext(), {0});
          SmallVector<Value> next;
          for (Value shardValue : {state[2], state[3]})
            next.push_back(shard::ShiftOp::create(
                then, shardValue.getType(), grid, axes, shardValue,
                then.getIndexAttr(0), then.getI64IntegerAttr(1),
                then.getUnitAttr()));
          scf::YieldOp::create(then, next);
          ImplicitLocOpBuilder otherwise =
              ImplicitLocOpBuilder::atBlockBegin(loc, shift.elseBlock());
          scf::YieldOp::create(otherwise, ValueRange{state[2], state[3]});
        }
        scf::YieldOp::create(
            nb, ValueRange{merge.getResult(0), merge.getResult(1),
                           shift.getResult(0), shift.getResult(1)});
      });

  // One slot: the merge only rounds the result to O's element type.
  auto single = [&](Value acc) -> Value {
    auto type = cast<RankedTensorType>(acc.getType());
    SmallVector<ReassociationIndices> reassociation{{0, 1}};
    for (int64_t dim = 2; dim <= type.getRank(); ++dim)
      reassociation.push_back({dim});
    return tensor::ExpandShapeOp::create(b, withLeading(type, 1, f32), acc,
                                         reassociation);
  };
  return mergeInto(b, single(loop.getResult(0)), single(loop.getResult(1)));
}

LogicalResult Distributor::run() {
  if (failed(check()))
    return failure();
  Attribute partitionAttr = op.getPartitionAttr();
  SmallVector<int64_t> gridShape;
  if (auto twoD = dyn_cast<Attention2DAttr>(partitionAttr))
    gridShape = {twoD.getQParts(), twoD.getKvParts()};
  else
    gridShape = {cast<RingAttr>(partitionAttr).getDevices()};
  devices = 1;
  for (int64_t size : gridShape)
    devices *= size;
  totalQuery = op.getQuery().getType().getDimSize(2);
  totalKey = op.getKey().getType().getDimSize(2);
  queryShard = llvm::divideCeil(totalQuery, devices);
  keyShard = llvm::divideCeil(totalKey, devices);

  FailureOr<shard::GridOp> gridOp =
      gridOf(func->getParentOfType<ModuleOp>(), gridShape, op);
  if (failed(gridOp))
    return failure();
  grid = FlatSymbolRefAttr::get(gridOp->getSymNameAttr());

  ImplicitLocOpBuilder b(op.getLoc(), op);
  localQ = localized(op.getQuery(),
                     withDim(op.getQuery().getType(), 2, queryShard), b);
  localK =
      localized(op.getKey(), withDim(op.getKey().getType(), 2, keyShard), b);
  localV = localized(op.getValue(),
                     withDim(op.getValue().getType(), 2, keyShard), b);
  localO = localized(op.getInitOut(),
                     withDim(op.getInitOut().getType(), 2, queryShard), b);
  if (Value lse = op.getInitLse())
    localLse = localized(lse, withDim(lse.getType(), 2, queryShard), b);

  SmallVector<Value> results =
      isa<Attention2DAttr>(partitionAttr)
          ? buildAttention2D(b, cast<Attention2DAttr>(partitionAttr))
          : buildRing(b, cast<RingAttr>(partitionAttr));
  for (auto [old, replacement] : llvm::zip(op.getResults(), results))
    old.replaceAllUsesWith(replacement);
  Value oldO = op.getInitOut(), oldLse = op.getInitLse();
  op.erase();
  for (Value init : {oldO, oldLse})
    if (init && !isa<BlockArgument>(init) && init.use_empty())
      init.getDefiningOp()->erase();

  // The function now takes and returns shards.
  auto returnOp = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  func.setType(FunctionType::get(func.getContext(),
                                 func.getBody().front().getArgumentTypes(),
                                 returnOp.getOperandTypes()));
  return success();
}

struct AttnDistributePass
    : public attn::impl::AttnDistributeBase<AttnDistributePass> {
  void runOnOperation() override {
    SmallVector<std::pair<AttentionOp, func::FuncOp>> work;
    WalkResult walk = getOperation()->walk([&](AttentionOp op) {
      if (!isa_and_nonnull<Attention2DAttr, RingAttr>(op.getPartitionAttr()))
        return WalkResult::advance();
      auto func = dyn_cast<func::FuncOp>(op->getParentOp());
      if (!func || func.isExternal()) {
        op.emitError() << "a distributed attention must sit in the body of a "
                          "func.func, which becomes the program of one rank";
        return WalkResult::interrupt();
      }
      work.emplace_back(op, func);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    for (auto [op, func] : work)
      if (failed(Distributor(op, func).run()))
        return signalPassFailure();
  }
};

} // namespace
