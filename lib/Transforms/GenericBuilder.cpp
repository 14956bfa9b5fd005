//===- GenericBuilder.cpp - Small builders for linalg.generic on tensors --===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "GenericBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::attn;

AffineMap mlir::attn::projection(MLIRContext *context, unsigned numDims,
                                 ArrayRef<unsigned> dims) {
  return AffineMap::getMultiDimMapWithTargets(numDims, dims, context);
}

Value mlir::attn::buildGeneric(ImplicitLocOpBuilder &b, ValueRange inputs,
                               ArrayRef<AffineMap> inputMaps, Value init,
                               AffineMap initMap,
                               ArrayRef<utils::IteratorType> iterators,
                               GenericBody body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(initMap);
  auto generic = linalg::GenericOp::create(
      b, TypeRange{init.getType()}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        linalg::YieldOp::create(nested, loc, body(nested, loc, args));
      });
  return generic.getResult(0);
}

Value mlir::attn::extractTile(ImplicitLocOpBuilder &b, Value source,
                              ArrayRef<OpFoldResult> offsets,
                              ArrayRef<OpFoldResult> sizes, int64_t rank) {
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  RankedTensorType type =
      tensor::ExtractSliceOp::inferCanonicalRankReducedResultType(
          rank, cast<RankedTensorType>(source.getType()), sizes);
  return tensor::ExtractSliceOp::create(b, type, source, offsets, sizes,
                                        strides);
}

Value mlir::attn::filledTensor(ImplicitLocOpBuilder &b,
                               ArrayRef<OpFoldResult> sizes, Type elementType,
                               TypedAttr value) {
  Value empty = tensor::EmptyOp::create(b, sizes, elementType);
  Value fillValue = arith::ConstantOp::create(b, value);
  return linalg::FillOp::create(b, ValueRange{fillValue}, ValueRange{empty})
      .getResult(0);
}

Value mlir::attn::extendToF32(OpBuilder &b, Location loc, Value value) {
  Type f32 = b.getF32Type();
  if (value.getType() == f32)
    return value;
  return arith::ExtFOp::create(b, loc, f32, value);
}

Value mlir::attn::truncateFromF32(OpBuilder &b, Location loc, Value value,
                                  Type type) {
  if (value.getType() == type)
    return value;
  return arith::TruncFOp::create(b, loc, type, value);
}
