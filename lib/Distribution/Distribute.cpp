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

#include "attn/Analysis/DistributedLayout.h"
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

/// Consecutive tokens of a local tensor: `length` rows from `localStart`,
/// at position `offset` (an index value) of the whole attention.
struct Run {
  Value offset;
  int64_t localStart, length;
};

Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

/// x * scale + shift, as index arithmetic.
Value affine(ImplicitLocOpBuilder &b, Value x, int64_t scale, int64_t shift) {
  Value scaled = arith::MulIOp::create(b, x, index(b, b.getLoc(), scale));
  if (shift == 0)
    return scaled;
  return arith::AddIOp::create(b, scaled, index(b, b.getLoc(), shift));
}

/// Rows [start, start + length) of dimension 2 of `value`.
Value sliceRows(ImplicitLocOpBuilder &b, Value value, int64_t start,
                int64_t length) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  offsets[2] = b.getIndexAttr(start);
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  sizes[2] = b.getIndexAttr(length);
  return tensor::ExtractSliceOp::create(b, withDim(type, 2, length), value,
                                        offsets, sizes, strides);
}

/// `part` written into `into` at `offsets` (sizes: `part`'s, with unit
/// dimensions in front when `into` has more). The copy is a linalg.copy into
/// the slice, which bufferizes in place and lowers to loops whatever the
/// slice's strides (a strided memref.copy would need a runtime library).
Value insertAt(ImplicitLocOpBuilder &b, Value part, Value into,
               ArrayRef<int64_t> offsets) {
  auto partType = cast<RankedTensorType>(part.getType());
  int64_t rank = cast<RankedTensorType>(into.getType()).getRank();
  SmallVector<OpFoldResult> offsetValues,
      sizes(rank - partType.getRank(), b.getIndexAttr(1)),
      strides(rank, b.getIndexAttr(1));
  for (int64_t offset : offsets)
    offsetValues.push_back(b.getIndexAttr(offset));
  for (int64_t size : partType.getShape())
    sizes.push_back(b.getIndexAttr(size));
  Value slice = tensor::ExtractSliceOp::create(b, partType, into, offsetValues,
                                               sizes, strides);
  Value copied = linalg::CopyOp::create(b, part, slice).getResult(0);
  return tensor::InsertSliceOp::create(b, copied, into, offsetValues, sizes,
                                       strides);
}

/// `parts` (same type) stacked along a new leading dimension: the slots of an
/// attn.merge.
Value stackSlots(ImplicitLocOpBuilder &b, ArrayRef<Value> parts) {
  auto type = cast<RankedTensorType>(parts.front().getType());
  Value stacked = tensor::EmptyOp::create(
      b, withLeading(type, parts.size(), type.getElementType()).getShape(),
      type.getElementType());
  for (auto [slot, part] : llvm::enumerate(parts)) {
    SmallVector<int64_t> offsets(type.getRank() + 1, 0);
    offsets[0] = slot;
    stacked = insertAt(b, part, stacked, offsets);
  }
  return stacked;
}

/// The f32 merge of `parts` (partial O or LSE tensors, with their LSEs).
std::pair<Value, Value> mergeF32(ImplicitLocOpBuilder &b,
                                 ArrayRef<Value> partsO,
                                 ArrayRef<Value> partsLse) {
  if (partsO.size() == 1)
    return {partsO.front(), partsLse.front()};
  Type f32 = b.getF32Type();
  auto oType = cast<RankedTensorType>(partsO.front().getType());
  auto lseType = cast<RankedTensorType>(partsLse.front().getType());
  auto merge = MergeOp::create(
      b, TypeRange{oType, lseType}, stackSlots(b, partsO),
      stackSlots(b, partsLse),
      ValueRange{tensor::EmptyOp::create(b, oType.getShape(), f32),
                 tensor::EmptyOp::create(b, lseType.getShape(), f32)},
      b.getI64IntegerAttr(0));
  return {merge.getResult(0), merge.getResult(1)};
}

/// Dimension 2 of `value`, laid out as [outer][inner][rest], reordered to
/// [inner][outer][rest]: how zig-zag shards, gathered member by member, become
/// chunks of two blocks, and back.
Value swapBlocks(ImplicitLocOpBuilder &b, Value value, int64_t outer,
                 int64_t inner) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  int64_t rest = type.getDimSize(2) / (outer * inner);
  SmallVector<int64_t> expanded(type.getShape().take_front(2));
  expanded.append({outer, inner, rest});
  llvm::append_range(expanded, type.getShape().drop_front(3));
  SmallVector<ReassociationIndices> groups{{0}, {1}, {2, 3, 4}};
  for (int64_t dim = 3; dim < rank; ++dim)
    groups.push_back({dim + 2});
  Value split =
      tensor::ExpandShapeOp::create(b, type.clone(expanded), value, groups);
  SmallVector<int64_t> permutation{0, 1, 3, 2};
  for (int64_t dim = 4; dim < rank + 2; ++dim)
    permutation.push_back(dim);
  SmallVector<int64_t> swapped(expanded);
  std::swap(swapped[2], swapped[3]);
  Value init = tensor::EmptyOp::create(b, swapped, type.getElementType());
  Value transposed =
      linalg::TransposeOp::create(b, split, init, permutation).getResult()[0];
  return tensor::CollapseShapeOp::create(b, type, transposed, groups);
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
  /// The f32 partial (O, LSE) of every row of `q` over every key of `k`,
  /// `v`, whose rows and keys are the given runs of the whole attention:
  /// one framed attention per pair of runs, merged over the key runs.
  std::pair<Value, Value> runsPartial(ImplicitLocOpBuilder &b, Value q, Value k,
                                      Value v, ArrayRef<Run> queryRuns,
                                      ArrayRef<Run> keyRuns);
  SmallVector<Value> buildAttention2D(ImplicitLocOpBuilder &b);
  SmallVector<Value> buildRing(ImplicitLocOpBuilder &b);
  /// attn.merge of `parts` (slots along dimension 0) into the rank's O and
  /// LSE shards.
  SmallVector<Value> mergeInto(ImplicitLocOpBuilder &b, Value partsO,
                               Value partsLse);

  AttentionOp op;
  func::FuncOp func;
  DistributedLayout layout;
  /// The whole attention's lengths; tokens per shard.
  int64_t totalQuery = 0, totalKey = 0, queryShard = 0, keyShard = 0;
  FlatSymbolRefAttr grid;
  Value localQ, localK, localV, localO, localLse;
};

LogicalResult Distributor::check() {
  if (op.getMask() || op.getBlockMask())
    return op.emitError() << "a distributed attention cannot take a "
                          << (op.getMask() ? "mask" : "block mask")
                          << " operand yet; express the mask as a score region";
  if (op.hasKeyLengths())
    return op.emitError() << "a distributed attention cannot take key lengths "
                             "yet: its ranks' frames place the keys";
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
  // Ops are created in named steps: the order in which function arguments
  // are evaluated differs between compilers, and with it the IR.
  Value queryTotal = index(b, b.getLoc(), totalQuery);
  Value keyTotal = index(b, b.getLoc(), totalKey);
  auto local = AttentionOp::create(
      b, TypeRange{oInit.getType(), lseInit.getType()}, q, k, v,
      /*mask=*/Value(), /*block_mask=*/Value(), /*key_lengths=*/Value(),
      queryOffset, keyOffset, queryTotal, keyTotal, ValueRange{oInit, lseInit},
      op.getScaleAttr(), op.getCausalAttr(), op.getWindowAttr(),
      op.getSoftcapAttr(),
      /*block_mask_size=*/nullptr, op.getTilesAttr(), /*partition=*/nullptr,
      /*kernel=*/nullptr);
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

std::pair<Value, Value> Distributor::runsPartial(ImplicitLocOpBuilder &b,
                                                 Value q, Value k, Value v,
                                                 ArrayRef<Run> queryRuns,
                                                 ArrayRef<Run> keyRuns) {
  if (queryRuns.size() == 1 && keyRuns.size() == 1)
    return partial(b, q, k, v, queryRuns[0].offset, keyRuns[0].offset);
  auto qType = cast<RankedTensorType>(q.getType());
  auto vType = cast<RankedTensorType>(v.getType());
  Type f32 = b.getF32Type();
  SmallVector<int64_t> oShape(qType.getShape());
  oShape.back() = vType.getDimSize(3);
  Value allO = tensor::EmptyOp::create(b, oShape, f32);
  Value allLse = tensor::EmptyOp::create(b, ArrayRef(oShape).drop_back(), f32);
  for (const Run &rows : queryRuns) {
    Value qRows = sliceRows(b, q, rows.localStart, rows.length);
    SmallVector<Value> partsO, partsLse;
    for (const Run &keys : keyRuns) {
      auto [o, lse] =
          partial(b, qRows, sliceRows(b, k, keys.localStart, keys.length),
                  sliceRows(b, v, keys.localStart, keys.length), rows.offset,
                  keys.offset);
      partsO.push_back(o);
      partsLse.push_back(lse);
    }
    auto [o, lse] = mergeF32(b, partsO, partsLse);
    allO = insertAt(b, o, allO, {0, 0, rows.localStart, 0});
    allLse = insertAt(b, lse, allLse, {0, 0, rows.localStart});
  }
  return {allO, allLse};
}

SmallVector<Value> Distributor::buildAttention2D(ImplicitLocOpBuilder &b) {
  int64_t rows = layout.rows, cols = layout.cols;
  auto indices = shard::ProcessMultiIndexOp::create(
      b, TypeRange{b.getIndexType(), b.getIndexType()}, grid);
  Value row = indices.getResult()[0], col = indices.getResult()[1];
  auto axes = [&](int16_t axis) {
    return DenseI16ArrayAttr::get(b.getContext(), {axis});
  };
  // Row i gathers query chunk i; column j gathers key/value chunk j. Zig-zag
  // shards arrive member by member, [member][block][piece]; the chunk is
  // [block][member][piece]: two runs of consecutive tokens.
  auto gather = [&](Value shard, int16_t axis, int64_t parts) -> Value {
    auto type = cast<RankedTensorType>(shard.getType());
    Value chunk = shard::AllGatherOp::create(
        b, withDim(type, 2, parts * type.getDimSize(2)), grid, axes(axis),
        shard, b.getIndexAttr(2));
    return layout.zigzag ? swapBlocks(b, chunk, parts, 2) : chunk;
  };
  Value q = gather(localQ, 1, cols);
  Value k = gather(localK, 0, rows);
  Value v = gather(localV, 0, rows);
  // The runs of a chunk (chunk `index` of `chunks`, each `block` tokens per
  // block in zig-zag).
  auto chunkRuns = [&](Value chunk, int64_t chunks, int64_t shard,
                       int64_t parts) -> SmallVector<Run, 2> {
    if (!layout.zigzag)
      return {{affine(b, chunk, parts * shard, 0), 0, parts * shard}};
    int64_t block = parts * (shard / 2);
    return {{affine(b, chunk, block, 0), 0, block},
            {affine(b, chunk, -block, (2 * chunks - 1) * block), block, block}};
  };
  SmallVector<Run, 2> queryRuns = chunkRuns(row, rows, queryShard, cols);
  SmallVector<Run, 2> keyRuns = chunkRuns(col, cols, keyShard, rows);
  auto [partO, partLse] = runsPartial(b, q, k, v, queryRuns, keyRuns);

  // Reduce-scatter over the row with the merge as the reduction: piece c of
  // every rank's partial (its rows of rank (i, c)'s shard) goes to the row's
  // c-th rank, which merges them.
  auto scatter = [&](Value part) -> Value {
    if (layout.zigzag)
      part = swapBlocks(b, part, 2, cols);
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
  Value scatteredO = scatter(partO);
  Value scatteredLse = scatter(partLse);
  return mergeInto(b, scatteredO, scatteredLse);
}

SmallVector<Value> Distributor::buildRing(ImplicitLocOpBuilder &b) {
  int64_t p = layout.devices();
  Value rank =
      shard::ProcessMultiIndexOp::create(b, TypeRange{b.getIndexType()}, grid)
          .getResult()[0];
  // The runs of shard `owner`: shard `owner`, or blocks owner and
  // 2P - 1 - owner.
  auto shardRuns = [&](ImplicitLocOpBuilder &nb, Value owner,
                       int64_t shard) -> SmallVector<Run, 2> {
    if (!layout.zigzag)
      return {{affine(nb, owner, shard, 0), 0, shard}};
    int64_t half = shard / 2;
    return {{affine(nb, owner, half, 0), 0, half},
            {affine(nb, owner, -half, (2 * p - 1) * half), half, half}};
  };
  SmallVector<Run, 2> queryRuns = shardRuns(b, rank, queryShard);
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

  Value lower = index(b, b.getLoc(), 0);
  Value upper = index(b, b.getLoc(), p);
  Value stepSize = index(b, b.getLoc(), 1);
  auto loop = scf::ForOp::create(
      b, lower, upper, stepSize, ValueRange{acc0, lse0, localK, localV},
      [&](OpBuilder &nested, Location loc, Value step, ValueRange state) {
        ImplicitLocOpBuilder nb(loc, nested);
        // After `step` shifts rank r holds key/value shard (r - step) mod P.
        Value source = arith::RemUIOp::create(
            nb, arith::SubIOp::create(nb, affine(nb, rank, 1, p), step),
            index(nb, loc, p));
        SmallVector<Run, 2> keyRuns = shardRuns(nb, source, keyShard);
        auto [partO, partLse] =
            runsPartial(nb, localQ, state[2], state[3], queryRuns, keyRuns);
        // Merge the step's partial into the running result.
        auto [accO, accLse] =
            mergeF32(nb, {state[0], partO}, {state[1], partLse});
        // Pass the key/value shard on, except after the last step.
        Value more = arith::CmpIOp::create(nb, arith::CmpIPredicate::ult, step,
                                           index(nb, loc, p - 1));
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
        scf::YieldOp::create(nb, ValueRange{accO, accLse, shift.getResult(0),
                                            shift.getResult(1)});
      });

  // One slot: the merge only rounds the result to O's element type.
  return mergeInto(b, stackSlots(b, {loop.getResult(0)}),
                   stackSlots(b, {loop.getResult(1)}));
}

LogicalResult Distributor::run() {
  if (failed(check()))
    return failure();
  layout = *DistributedLayout::of(op.getPartitionAttr());
  SmallVector<int64_t> gridShape{layout.rows, layout.cols};
  if (layout.ring)
    gridShape = {layout.cols};
  totalQuery = op.getQuery().getType().getDimSize(2);
  totalKey = op.getKey().getType().getDimSize(2);
  queryShard = layout.shardLength(totalQuery);
  keyShard = layout.shardLength(totalKey);

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

  SmallVector<Value> results = layout.ring ? buildRing(b) : buildAttention2D(b);
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
