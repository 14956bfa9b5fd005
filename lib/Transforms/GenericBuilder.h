//===- GenericBuilder.h - Small builders for linalg.generic on tensors -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The decomposition and the merge lowering state their maths as element-wise
// and reduction linalg.generic ops over tiles; these helpers keep that short.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_GENERICBUILDER_H
#define ATTN_LIB_TRANSFORMS_GENERICBUILDER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// Computes the yielded value of a generic from its block arguments.
using GenericBody = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// The projection of `numDims` loop dimensions onto `dims`.
AffineMap projection(MLIRContext *context, unsigned numDims,
                     ArrayRef<unsigned> dims);

/// A single-result linalg.generic writing into `init`.
Value buildGeneric(ImplicitLocOpBuilder &b, ValueRange inputs,
                   ArrayRef<AffineMap> inputMaps, Value init, AffineMap initMap,
                   ArrayRef<utils::IteratorType> iterators, GenericBody body);

/// A tensor of `sizes` filled with `value`.
Value filledTensor(ImplicitLocOpBuilder &b, ArrayRef<OpFoldResult> sizes,
                   Type elementType, TypedAttr value);

/// The [sizes] tile of `source` at `offsets` (unit strides), its unit
/// dimensions dropped down to `rank`.
Value extractTile(ImplicitLocOpBuilder &b, Value source,
                  ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
                  int64_t rank);

/// `value` widened to f32 (unchanged when it already is).
Value extendToF32(OpBuilder &b, Location loc, Value value);

/// `value` (f32) converted to `type`, rounding to nearest even.
Value truncateFromF32(OpBuilder &b, Location loc, Value value, Type type);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_GENERICBUILDER_H
