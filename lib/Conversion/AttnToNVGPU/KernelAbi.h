//===- KernelAbi.h - What a kernel takes and how it binds it ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The kernel's parameters and the runtime's side of them: the views of the
// attention's operands, the workspaces the runtime owns, the signature the
// manifest describes ("scalars", "workspaces"), and their binding at the
// kernel's entry.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELABI_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELABI_H

#include "CtaBody.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::attn {

/// What the kernel reads and writes, as its entry block sees them.
struct KernelArguments {
  /// Q: a memref of the operand's shape, and its tensor map when the
  /// kernel has one; the key lengths when the attention has them.
  Value q, qMap, keyLengths;
  /// O and, when returned, LSE (memrefs of the operands' shapes), and O's
  /// tensor map when the kernel has one.
  OutputOperands out;
  /// K, V, and the mask operand and block mask parameter when the kernel
  /// has them.
  KeyValueOperands kv;
  /// The workspaces the runtime owns, after them.
  SmallVector<Value> workspaces;
  KernelLengths lengths;
};

/// A buffer the runtime owns for the kernel (the manifest's "workspaces"),
/// passed after the tensors. A dynamic leading dimension has one slot per
/// CTA of the launch's grid.
struct Workspace {
  StringRef name;
  MemRefType type;
  /// Zero when the kernel starts: the runtime zero-fills it before every
  /// launch, or, when the kernel leaves it zero, once when it allocates it.
  bool zeroInit = false;
  bool kernelResets = false;
};

/// A tensor map the runtime encodes for each launch (the manifest's
/// "tensor_maps") over view `param`, read in boxes of `box` elements
/// (innermost dimension first) in the 128-byte swizzle, and passes by value
/// after the scalars.
struct TensorMap {
  StringRef name;
  unsigned param;
  SmallVector<int64_t, 4> box;
};

/// The tensor maps of a kernel, in order: with tensor copies K's and V's
/// (views 1 and 2), a box a 64-column block of a block_n-key tile (the
/// shared-memory layout of Fa2CtaBody's wgmma tiles); with
/// KernelShape::outputTensorStore O's (view 3), a box a 64-column block of
/// the block_m-row output tile; with KernelShape::queryTensorCopy Q's (view
/// 0), the same box of the Q tile.
SmallVector<TensorMap> kernelTensorMaps(const KernelShape &s);
/// The tensor maps of the backward kernel (Fa2GradKernel.h's parameters):
/// with tensor copies Q's, K's, V's and dO's (views 0, 1, 2 and 5), each box
/// a 64-column block of block_n rows (a streamed tile, and a block_m-row
/// own tile in block_m / block_n boxes).
SmallVector<TensorMap> gradKernelTensorMaps(const KernelShape &s);

/// The `attn.launch` entry of a tensor map.
DictionaryAttr describeTensorMap(Builder &b, const TensorMap &map);

/// The kernel's signature, in order: one parameter per view (the memref
/// itself when static, else a pointer: a rank-0 memref of its element
/// type), the workspaces, then one i64 per dynamic size and dynamic stride
/// of the views, view by view (forEachExtent's order), then a pointer per
/// tensor map (the generic address of the map the runtime passes by value,
/// attn-tensor-map-parameters). `scalars` says which i64 is which (the
/// manifest's "scalars").
struct KernelSignature {
  SmallVector<Type> params;
  SmallVector<Attribute> scalars;
};

/// The workspaces of the schedule's partials: Lean's, a slot per persistent
/// CTA with a flag each; split-KV's, a slot per CTA with a counter per CTA
/// (of which the kernel uses one per output tile).
SmallVector<Workspace> kernelWorkspaces(const KernelShape &s, MLIRContext *ctx);

/// The `attn.launch` entry of a workspace: its bytes (per CTA when it has a
/// slot per CTA) and how it is zeroed.
DictionaryAttr describeWorkspace(Builder &b, const Workspace &workspace);

/// The memref through which a kernel reads or writes `operand`: its shape,
/// rows contiguous. When a length is dynamic, the batch and head strides
/// are run-time values too, so a view of a larger buffer (a KV cache with
/// room for more rows) is accepted as it is.
MemRefType kernelView(Value operand);

/// The signature of a kernel over `views`, `workspaces` and `tensorMaps`
/// tensor maps.
KernelSignature kernelSignature(Builder &b, ArrayRef<MemRefType> views,
                                ArrayRef<MemRefType> workspaces,
                                size_t tensorMaps);

/// Binds the kernel's parameters (kernelSignature's order) at the start of
/// its entry block: a pointer and its scalars become a view
/// (memref.reinterpret_cast), a workspace with a slot per CTA a memref with
/// as many slots as the grid has CTAs, the tensor maps K's and V's, and
/// the lengths are read off Q and K.
KernelArguments bindArguments(ImplicitLocOpBuilder &b, const KernelShape &shape,
                              ArrayRef<MemRefType> views,
                              ArrayRef<MemRefType> workspaces,
                              gpu::GPUFuncOp func);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELABI_H
