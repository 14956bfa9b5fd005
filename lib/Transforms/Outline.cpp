//===- Outline.cpp - Each attention of a function into its own function ---===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-outline: in a function with several attentions, each moves into a
// private function over buffers, so that bufferization and every later pass
// of the CPU pipeline see one attention at a time (see the pass description
// in Passes.td for why).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNOUTLINE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The buffer the caller allocates for a destination of `type`.
MemRefType outputBufferType(RankedTensorType type) {
  return cast<MemRefType>(
      bufferization::getMemRefTypeWithStaticIdentityLayout(type));
}

/// The buffer an input of `type` crosses the call as: any strides and
/// offset, so that a view (a slice of a shard, say) passes without a copy.
MemRefType inputBufferType(RankedTensorType type) {
  return cast<MemRefType>(
      bufferization::getMemRefTypeWithFullyDynamicLayout(type));
}

/// The values `op` reads (every operand but its destinations, then what its
/// score region uses from outside it, constants excepted: they are cloned),
/// or failure when one cannot cross a call as a buffer or a scalar.
FailureOr<SmallVector<Value>> inputsOf(DestinationStyleOpInterface op) {
  SmallVector<Value> inputs;
  for (OpOperand *operand : op.getDpsInputOperands())
    inputs.push_back(operand->get());
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value value : captured) {
    if (matchPattern(value, m_Constant()))
      continue;
    if (isa<TensorType>(value.getType()) &&
        !isa<RankedTensorType>(value.getType()))
      return failure();
    inputs.push_back(value);
  }
  return inputs;
}

/// The type `value` has as an argument of the outlined function.
Type argumentType(Value value) {
  if (auto tensor = dyn_cast<RankedTensorType>(value.getType()))
    return inputBufferType(tensor);
  return value.getType();
}

/// Builds the private function holding a clone of `op` over buffers:
/// arguments `inputs`, then one buffer per destination.
func::FuncOp buildCallee(DestinationStyleOpInterface op, ArrayRef<Value> inputs,
                         StringRef name) {
  Location loc = op->getLoc();
  SmallVector<Type> argTypes = llvm::map_to_vector(inputs, argumentType);
  for (Value init : op.getDpsInits())
    argTypes.push_back(
        outputBufferType(cast<RankedTensorType>(init.getType())));
  OpBuilder b(op->getContext());
  auto callee =
      func::FuncOp::create(b, loc, name, b.getFunctionType(argTypes, {}));
  callee.setPrivate();
  Block *entry = callee.addEntryBlock();
  b.setInsertionPointToStart(entry);

  IRMapping map;
  for (auto [input, arg] : llvm::zip(inputs, entry->getArguments())) {
    if (auto tensor = dyn_cast<RankedTensorType>(input.getType()))
      map.map(input, bufferization::ToTensorOp::create(
                         b, loc, tensor, arg, /*restrict=*/b.getUnitAttr()));
    else
      map.map(input, arg);
  }
  // Constants the score region uses, cloned next to it.
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value value : captured)
    if (!map.contains(value))
      map.map(value, b.clone(*value.getDefiningOp())->getResult(0));
  // The destinations are written, never read: empty tensors of their shape.
  ArrayRef<BlockArgument> outArgs =
      entry->getArguments().drop_front(inputs.size());
  for (auto [init, arg] : llvm::zip(op.getDpsInits(), outArgs)) {
    auto type = cast<RankedTensorType>(init.getType());
    map.map(init,
            tensor::EmptyOp::create(b, loc, memref::getMixedSizes(b, loc, arg),
                                    type.getElementType()));
  }
  Operation *clone = b.clone(*op, map);
  for (auto [result, arg] : llvm::zip(clone->getResults(), outArgs))
    bufferization::MaterializeInDestinationOp::create(
        b, loc, TypeRange{}, result, arg, /*restrict=*/true,
        /*writable=*/true);
  func::ReturnOp::create(b, loc);
  return callee;
}

/// Replaces `op` by a call of `callee`: its tensors as read-only buffers, a
/// new buffer per destination, the results read back from them.
void replaceByCall(DestinationStyleOpInterface op, ArrayRef<Value> inputs,
                   func::FuncOp callee) {
  Location loc = op->getLoc();
  OpBuilder b(op);
  SmallVector<Value> args;
  for (Value input : inputs) {
    if (auto tensor = dyn_cast<RankedTensorType>(input.getType()))
      args.push_back(bufferization::ToBufferOp::create(
          b, loc, inputBufferType(tensor), input,
          /*read_only=*/b.getUnitAttr()));
    else
      args.push_back(input);
  }
  SmallVector<Value> buffers;
  for (Value init : op.getDpsInits()) {
    auto type = cast<RankedTensorType>(init.getType());
    buffers.push_back(memref::AllocOp::create(
        b, loc, outputBufferType(type),
        tensor::createDynamicDimValues(b, loc, init), b.getI64IntegerAttr(64)));
  }
  llvm::append_range(args, buffers);
  func::CallOp::create(b, loc, callee, args);
  SmallVector<Value> results;
  for (auto [result, buffer] : llvm::zip(op->getResults(), buffers))
    results.push_back(bufferization::ToTensorOp::create(
        b, loc, result.getType(), buffer, /*restrict=*/b.getUnitAttr(),
        /*writable=*/b.getUnitAttr()));
  op->replaceAllUsesWith(results);
  op->erase();
}

struct AttnOutlinePass : public attn::impl::AttnOutlineBase<AttnOutlinePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<DestinationStyleOpInterface> attentions;
      func.walk([&](Operation *op) {
        if (isa<AttentionOp, PartialAttentionOp>(op))
          attentions.push_back(cast<DestinationStyleOpInterface>(op));
      });
      if (attentions.size() < 2)
        continue;
      std::string name = (func.getSymName() + "_attention").str();
      for (DestinationStyleOpInterface op : attentions) {
        FailureOr<SmallVector<Value>> inputs = inputsOf(op);
        if (failed(inputs))
          continue; // stays where it is: correct, only not isolated
        func::FuncOp callee = buildCallee(op, *inputs, name);
        symbols.insert(callee); // renamed when the name is taken
        replaceByCall(op, *inputs, callee);
      }
    }
  }
};

} // namespace
