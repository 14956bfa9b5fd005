//===- LowerCollectives.cpp - shard collectives to libattnmpi calls -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Distribution/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERCOLLECTIVES
#include "attn/Distribution/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int kMaxGridAxes = 3;

/// Builds the calls of one collective.
class CollectiveLowering {
public:
  CollectiveLowering(Operation *op, ModuleOp module)
      : op(op), module(module), b(op->getLoc(), op) {}

  /// The grid shape padded to three axes and the mask of `axes`, or an
  /// error.
  LogicalResult setGrid(FlatSymbolRefAttr gridName, ArrayRef<int16_t> axes) {
    auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, gridName.getAttr());
    if (!grid)
      return op->emitError() << "no shard.grid " << gridName;
    ArrayRef<int64_t> shape = grid.getShape();
    if (shape.size() > kMaxGridAxes || ShapedType::isDynamicShape(shape))
      return op->emitError()
             << "attn-lower-collectives needs a static grid of at most "
             << kMaxGridAxes << " axes, got " << grid;
    for (int axis = 0; axis < kMaxGridAxes; ++axis)
      gridArgs.push_back(constant(axis < (int)shape.size() ? shape[axis] : 1));
    groupSize = 1;
    for (int16_t axis : axes) {
      mask |= int64_t(1) << axis;
      groupSize *= shape[axis];
    }
    return success();
  }

  int64_t getGroupSize() const { return groupSize; }

  Value constant(int64_t value) {
    return arith::ConstantIntOp::create(b, b.getI64Type(), value);
  }

  /// The address of a contiguous buffer holding `tensor`.
  Value sendAddress(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    auto buffer = bufferization::ToBufferOp::create(
        b, MemRefType::get(type.getShape(), type.getElementType()), tensor,
        /*read_only=*/true);
    return address(buffer);
  }

  /// A new buffer of `type` for the call to write, and its address.
  std::pair<Value, Value> receiveBuffer(RankedTensorType type) {
    Value buffer = memref::AllocOp::create(
        b, MemRefType::get(type.getShape(), type.getElementType()));
    return {buffer, address(buffer)};
  }

  /// The tensor the call wrote into `buffer`.
  Value received(Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    return bufferization::ToTensorOp::create(
        b, RankedTensorType::get(type.getShape(), type.getElementType()),
        buffer, /*restrict=*/true, /*writable=*/true);
  }

  void call(StringRef name, ArrayRef<Value> args) {
    SmallVector<Type> types(args.size(), b.getI64Type());
    auto function = module.lookupSymbol<func::FuncOp>(name);
    if (!function) {
      OpBuilder top(module.getBodyRegion());
      function = func::FuncOp::create(top, module.getLoc(), name,
                                      top.getFunctionType(types, {}));
      function.setPrivate();
    }
    func::CallOp::create(b, function, args);
  }

  /// Calls `function(grid, mask, send, recv, pieceBytes)` with `input` as
  /// the send buffer, and returns what it receives, `[members, piece...]`,
  /// concatenated along dimension `axis` of a piece.
  Value exchange(StringRef function, Value input, ArrayRef<int64_t> piece,
                 int64_t pieceBytes, int64_t axis) {
    auto inputType = cast<RankedTensorType>(input.getType());
    Value send = sendAddress(input);
    SmallVector<int64_t> shape{groupSize};
    llvm::append_range(shape, piece);
    auto [buffer, recv] = receiveBuffer(inputType.clone(shape));
    SmallVector<Value> args(gridArgs);
    args.append({constant(mask), send, recv, constant(pieceBytes)});
    call(function, args);
    return concatenate(received(buffer), axis);
  }

  int64_t bytesOf(RankedTensorType type) {
    return type.getNumElements() *
           llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }

  /// `pieces` ([n, d0, d1, ...], piece k from member k) concatenated along
  /// dimension `axis` of a piece.
  Value concatenate(Value pieces, int64_t axis) {
    auto type = cast<RankedTensorType>(pieces.getType());
    int64_t rank = type.getRank();
    if (axis > 0) {
      // Move the member dimension next to `axis`: [d0 .. d(a-1), n, da ..].
      SmallVector<int64_t> permutation;
      for (int64_t dim = 1; dim <= axis; ++dim)
        permutation.push_back(dim);
      permutation.push_back(0);
      for (int64_t dim = axis + 1; dim < rank; ++dim)
        permutation.push_back(dim);
      pieces = transpose(pieces, permutation);
    }
    SmallVector<ReassociationIndices> groups;
    for (int64_t dim = 0; dim < rank - 1; ++dim) {
      if (dim < axis)
        groups.push_back({dim});
      else if (dim == axis)
        groups.push_back({dim, dim + 1});
      else
        groups.push_back({dim + 1});
    }
    return tensor::CollapseShapeOp::create(b, pieces, groups);
  }

  /// `input` cut along `axis` into `n` pieces stacked in front:
  /// [n, d0, .., da / n, ..].
  Value split(Value input, int64_t axis, int64_t n) {
    auto type = cast<RankedTensorType>(input.getType());
    int64_t rank = type.getRank();
    SmallVector<int64_t> expanded;
    SmallVector<ReassociationIndices> groups;
    for (int64_t dim = 0; dim < rank; ++dim) {
      int64_t first = expanded.size();
      if (dim == axis) {
        expanded.append({n, type.getDimSize(dim) / n});
        groups.push_back({first, first + 1});
      } else {
        expanded.push_back(type.getDimSize(dim));
        groups.push_back({first});
      }
    }
    Value cut =
        tensor::ExpandShapeOp::create(b, type.clone(expanded), input, groups);
    if (axis == 0)
      return cut;
    SmallVector<int64_t> permutation{axis};
    for (int64_t dim = 0; dim <= rank; ++dim)
      if (dim != axis)
        permutation.push_back(dim);
    return transpose(cut, permutation);
  }

  ImplicitLocOpBuilder &builder() { return b; }
  ArrayRef<Value> grid() const { return gridArgs; }

private:
  Value address(Value buffer) {
    Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, buffer);
    return arith::IndexCastOp::create(b, b.getI64Type(), index);
  }

  Value transpose(Value input, ArrayRef<int64_t> permutation) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<int64_t> shape;
    for (int64_t dim : permutation)
      shape.push_back(type.getDimSize(dim));
    Value init = tensor::EmptyOp::create(b, shape, type.getElementType());
    return linalg::TransposeOp::create(b, input, init, permutation)
        .getResult()[0];
  }

  Operation *op;
  ModuleOp module;
  ImplicitLocOpBuilder b;
  SmallVector<Value> gridArgs;
  int64_t mask = 0, groupSize = 1;
};

LogicalResult lower(shard::AllGatherOp op, ModuleOp module) {
  CollectiveLowering l(op, module);
  if (failed(l.setGrid(op.getGridAttr(), op.getGridAxes())))
    return failure();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  op.replaceAllUsesWith(l.exchange("attnmpi_all_gather", op.getInput(),
                                   inputType.getShape(), l.bytesOf(inputType),
                                   op.getGatherAxis().getSExtValue()));
  op.erase();
  return success();
}

LogicalResult lower(shard::AllToAllOp op, ModuleOp module) {
  CollectiveLowering l(op, module);
  if (failed(l.setGrid(op.getGridAttr(), op.getGridAxes())))
    return failure();
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  int64_t n = l.getGroupSize();
  int64_t splitAxis = op.getSplitAxis().getSExtValue();
  if (inputType.getDimSize(splitAxis) % n != 0)
    return op.emitError() << "all_to_all splits dimension " << splitAxis
                          << " of " << inputType << " into " << n
                          << " equal pieces";
  Value pieces = l.split(op.getInput(), splitAxis, n);
  op.replaceAllUsesWith(l.exchange(
      "attnmpi_all_to_all", pieces,
      cast<RankedTensorType>(pieces.getType()).getShape().drop_front(),
      l.bytesOf(inputType) / n, op.getConcatAxis().getSExtValue()));
  op.erase();
  return success();
}

LogicalResult lower(shard::ShiftOp op, ModuleOp module) {
  if (!op.getRotate())
    return op.emitError() << "attn-lower-collectives lowers rotating shifts "
                             "only (the ranks at the edge get nothing "
                             "otherwise)";
  CollectiveLowering l(op, module);
  if (failed(l.setGrid(op.getGridAttr(), op.getGridAxes())))
    return failure();
  auto type = cast<RankedTensorType>(op.getInput().getType());
  Value send = l.sendAddress(op.getInput());
  auto [buffer, recv] = l.receiveBuffer(type);
  SmallVector<Value> args(l.grid());
  args.append({l.constant(op.getShiftAxis().getSExtValue()),
               l.constant(op.getOffset()), send, recv,
               l.constant(l.bytesOf(type))});
  l.call("attnmpi_shift", args);
  op.replaceAllUsesWith(l.received(buffer));
  op.erase();
  return success();
}

struct AttnLowerCollectivesPass
    : public attn::impl::AttnLowerCollectivesBase<AttnLowerCollectivesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> collectives;
    module.walk([&](Operation *op) {
      if (isa<shard::AllGatherOp, shard::AllToAllOp, shard::ShiftOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives) {
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<shard::AllGatherOp, shard::AllToAllOp, shard::ShiftOp>(
                  [&](auto collective) { return lower(collective, module); });
      if (failed(result))
        return signalPassFailure();
    }
    if (collectives.empty() || module->hasAttr(DLTIDialect::kMapAttrName))
      return;
    MLIRContext *context = &getContext();
    auto entry =
        DataLayoutEntryAttr::get(StringAttr::get(context, "MPI:Implementation"),
                                 StringAttr::get(context, "MPICH"));
    module->setAttr(DLTIDialect::kMapAttrName, MapAttr::get(context, {entry}));
  }
};

} // namespace
