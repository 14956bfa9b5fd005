//===- KernelAbi.cpp - What a kernel takes and how it binds it ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "KernelAbi.h"
#include "WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Calls `visit(isStride, dim, value)` for each size, then each stride, of
/// `view`: the order in which the kernel takes a view's dynamic ones.
void forEachExtent(MemRefType view,
                   function_ref<void(bool, int64_t, int64_t)> visit) {
  for (auto [dim, size] : llvm::enumerate(view.getShape()))
    visit(/*isStride=*/false, dim, size);
  auto [strides, offset] = view.getStridesAndOffset();
  for (auto [dim, stride] : llvm::enumerate(strides))
    visit(/*isStride=*/true, dim, stride);
}

/// How the kernel takes a view or workspace: as itself when its shape is
/// static, else as a bare pointer (a rank-0 memref of its element type),
/// which the bare-pointer calling convention accepts.
MemRefType parameterType(MemRefType view) {
  return view.hasStaticShape() ? view
                               : MemRefType::get({}, view.getElementType());
}

} // namespace

namespace mlir::attn {

SmallVector<Workspace> kernelWorkspaces(const KernelShape &s,
                                        MLIRContext *ctx) {
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
  int64_t slots = s.leanCtas ? s.leanCtas : ShapedType::kDynamic;
  if (!s.leanCtas && s.splits == 1)
    return {};
  return {{"partial_o",
           MemRefType::get({slots, s.blockM, s.problem.valueDim}, f32)},
          {"partial_lse", MemRefType::get({slots, s.blockM}, f32)},
          {s.leanCtas ? "flags" : "counters", MemRefType::get({slots}, i32),
           /*zeroInit=*/true, /*kernelResets=*/!s.leanCtas}};
}

DictionaryAttr describeWorkspace(Builder &b, const Workspace &workspace) {
  MemRefType type = workspace.type;
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  bool perCta = type.getNumDynamicDims() != 0;
  for (int64_t size : type.getShape().drop_front(perCta ? 1 : 0))
    bytes *= size;
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("name", b.getStringAttr(workspace.name)),
      b.getNamedAttr("bytes", b.getI64IntegerAttr(bytes)),
      b.getNamedAttr("zero_init", b.getBoolAttr(workspace.zeroInit))};
  if (perCta)
    entries.push_back(b.getNamedAttr("per_cta", b.getUnitAttr()));
  if (workspace.kernelResets)
    entries.push_back(b.getNamedAttr("kernel_resets", b.getUnitAttr()));
  return b.getDictionaryAttr(entries);
}

SmallVector<TensorMap> kernelTensorMaps(const KernelShape &s) {
  SmallVector<TensorMap> maps;
  if (s.tensorCopies()) {
    SmallVector<int64_t, 4> box{kBlockColumns, s.blockN, 1, 1};
    maps.push_back({"k_map", 1, box});
    maps.push_back({"v_map", 2, box});
  }
  if (s.outputTensorStore())
    maps.push_back({"o_map", 3, {kBlockColumns, s.blockM, 1, 1}});
  if (s.queryTensorCopy())
    maps.push_back({"q_map", 0, {kBlockColumns, s.blockM, 1, 1}});
  return maps;
}

SmallVector<TensorMap> gradKernelTensorMaps(const KernelShape &s) {
  if (!s.tensorCopies())
    return {};
  SmallVector<int64_t, 4> box{kBlockColumns, s.blockN, 1, 1};
  return {{"q_map", 0, box},
          {"k_map", 1, box},
          {"v_map", 2, box},
          {"do_map", 5, box}};
}

DictionaryAttr describeTensorMap(Builder &b, const TensorMap &map) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("name", b.getStringAttr(map.name)),
       b.getNamedAttr("param", b.getI64IntegerAttr(map.param)),
       b.getNamedAttr("box", b.getDenseI64ArrayAttr(map.box)),
       b.getNamedAttr("swizzle", b.getI64IntegerAttr(kSwizzleRowBytes))});
}

MemRefType kernelView(Value operand) {
  auto type = cast<RankedTensorType>(operand.getType());
  if (type.hasStaticShape())
    return MemRefType::get(type.getShape(), type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  // Rows contiguous: dimensions 2 and up, each stride the product of the
  // sizes after it (dynamic from a dynamic size on: a mask's Sk).
  for (int64_t dim = rank - 1, stride = 1; dim >= 2; --dim) {
    strides[dim] = stride;
    stride = ShapedType::isDynamic(stride) || type.isDynamicDim(dim)
                 ? ShapedType::kDynamic
                 : stride * type.getDimSize(dim);
  }
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), /*offset=*/0, strides));
}

KernelSignature kernelSignature(Builder &b, ArrayRef<MemRefType> views,
                                ArrayRef<MemRefType> workspaces,
                                size_t tensorMaps) {
  KernelSignature signature;
  for (MemRefType type : llvm::concat<const MemRefType>(views, workspaces))
    signature.params.push_back(parameterType(type));
  for (auto [index, view] : llvm::enumerate(views)) {
    if (view.hasStaticShape())
      continue;
    forEachExtent(view, [&](bool isStride, int64_t dim, int64_t value) {
      if (ShapedType::isStatic(value))
        return;
      signature.params.push_back(b.getI64Type());
      signature.scalars.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("param", b.getI64IntegerAttr(index)),
           b.getNamedAttr(isStride ? "stride" : "size",
                          b.getI64IntegerAttr(dim))}));
    });
  }
  signature.params.append(tensorMaps,
                          LLVM::LLVMPointerType::get(b.getContext()));
  return signature;
}

KernelArguments bindArguments(ImplicitLocOpBuilder &b, const KernelShape &shape,
                              ArrayRef<MemRefType> views,
                              ArrayRef<MemRefType> workspaces,
                              gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned nextScalar = views.size() + workspaces.size();
  SmallVector<Value> bound;
  for (auto [index, view] : llvm::enumerate(views)) {
    Value param = entry.getArgument(index);
    if (view.hasStaticShape()) {
      bound.push_back(param);
      continue;
    }
    SmallVector<OpFoldResult> sizes, strides;
    forEachExtent(view, [&](bool isStride, int64_t, int64_t value) {
      OpFoldResult extent =
          ShapedType::isStatic(value)
              ? OpFoldResult(b.getIndexAttr(value))
              : OpFoldResult(Value(arith::IndexCastOp::create(
                    b, b.getIndexType(), entry.getArgument(nextScalar++))));
      (isStride ? strides : sizes).push_back(extent);
    });
    bound.push_back(memref::ReinterpretCastOp::create(
        b, view, param, b.getIndexAttr(0), sizes, strides));
  }
  // The order of the views (AttnToNVGPUPass): Q, K, V, O, then those the
  // kernel has of LSE, the mask, the block mask and the key lengths.
  KernelArguments args;
  args.q = bound[0];
  args.kv.k = bound[1];
  args.kv.v = bound[2];
  args.out.o = bound[3];
  unsigned next = 4;
  if (shape.withLse)
    args.out.lse = bound[next++];
  if (shape.maskElement)
    args.kv.mask = bound[next++];
  if (shape.blockMaskParameter())
    args.kv.blockMask = bound[next++];
  if (shape.keyLengths)
    args.keyLengths = bound[next++];
  Value ctas;
  for (auto [i, workspace] : llvm::enumerate(workspaces)) {
    Value param = entry.getArgument(views.size() + i);
    if (workspace.hasStaticShape()) {
      args.workspaces.push_back(param);
      continue;
    }
    if (!ctas)
      ctas = b.createOrFold<arith::MulIOp>(
          b.createOrFold<arith::MulIOp>(
              gpu::GridDimOp::create(b, gpu::Dimension::x),
              gpu::GridDimOp::create(b, gpu::Dimension::y)),
          gpu::GridDimOp::create(b, gpu::Dimension::z));
    SmallVector<OpFoldResult> sizes{ctas}, strides;
    for (int64_t size : workspace.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(size));
    for (int64_t stride : workspace.getStridesAndOffset().first)
      strides.push_back(b.getIndexAttr(stride));
    args.workspaces.push_back(memref::ReinterpretCastOp::create(
        b, workspace, param, b.getIndexAttr(0), sizes, strides));
  }
  // The tensor maps, last (kernelTensorMaps' order).
  unsigned map = entry.getNumArguments() - kernelTensorMaps(shape).size();
  if (shape.tensorCopies()) {
    args.kv.kMap = entry.getArgument(map++);
    args.kv.vMap = entry.getArgument(map++);
  }
  if (shape.outputTensorStore())
    args.out.oMap = entry.getArgument(map++);
  if (shape.queryTensorCopy())
    args.qMap = entry.getArgument(map++);
  args.lengths = {b.createOrFold<memref::DimOp>(args.q, 0),
                  b.createOrFold<memref::DimOp>(args.q, 2),
                  b.createOrFold<memref::DimOp>(args.kv.k, 2)};
  return args;
}

} // namespace mlir::attn
