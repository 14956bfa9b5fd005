//===- AttnToNVGPU.cpp - FlashAttention-2 kernels on tensor cores ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Builds, for each attn.attention, a gpu.func that runs FlashAttention-2's
// forward pass, and the manifest entry the runtime launches it by. The pass
// driver of four jobs, each in its own file: what the kernel is made for
// (KernelAnalysis.cpp: the checks, chooseTiles' tiles), what it takes
// (KernelAbi.cpp: views, workspaces, signature), how the schedule's work
// maps onto CTAs (KernelSkeletons.cpp), and what one CTA runs over its
// key/value blocks (CtaBody.h, the interface; Fa2CtaBody.cpp, the body).
// Each attn.attention_grad gets its backward kernel (Fa2GradKernel.cpp: its
// checks, grid and body).
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "Fa2GradKernel.h"
#include "KernelAnalysis.h"
#include "KernelSkeletons.h"

#include "attn/Analysis/Fa2Resources.h"
#include "attn/Conversion/AttnToNVGPU/KernelName.h"
#include "attn/Dialect/Attn/IR/Attn.h"

// The dialects the pass's kernels use (its dependent dialects).
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTONVGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the kernel computes, for whoever checks it: the effective scale,
/// causal, and the window when there is one.
template <typename OpT> DictionaryAttr describeAttention(Builder &b, OpT op) {
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("scale", b.getF32FloatAttr(op.getEffectiveScale())),
      b.getNamedAttr("causal", b.getBoolAttr(op.getCausal()))};
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow())
    entries.push_back(
        b.getNamedAttr("window", b.getDenseI64ArrayAttr(*window)));
  if (std::optional<APFloat> softcap = op.getSoftcap())
    entries.push_back(b.getNamedAttr(
        "softcap", b.getF32FloatAttr(softcap->convertToFloat())));
  // Arbitrary IR, and a constant block mask's values, which the GPU
  // reference does not know: checkers that cannot evaluate them must say so.
  if (op.hasScoreModifier())
    entries.push_back(b.getNamedAttr("score_region", b.getUnitAttr()));
  if (op.getBlockMask() && matchPattern(op.getBlockMask(), m_Constant()))
    entries.push_back(b.getNamedAttr("block_mask", b.getUnitAttr()));
  // The block mask's blocks, for whoever checks or fills the block_mask
  // parameter ([B or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)]).
  if (std::optional<std::pair<int64_t, int64_t>> blocks =
          op.getBlockMaskBlock())
    entries.push_back(b.getNamedAttr(
        "block_mask_blocks",
        b.getDenseI64ArrayAttr({blocks->first, blocks->second})));
  return b.getDictionaryAttr(entries);
}

/// Appends the parameters both kinds of kernel take after their own, those
/// `shape` has, to `views` and `names`: `op`'s mask operand, its block mask
/// (unless constant: a table in the kernel) and its key lengths.
template <typename OpT>
void appendMaskAndLengthParams(Builder &b, OpT op, const KernelShape &shape,
                               SmallVectorImpl<MemRefType> &views,
                               SmallVectorImpl<Attribute> &names) {
  if (shape.maskElement) {
    views.push_back(kernelView(op.getMask()));
    names.push_back(b.getStringAttr("mask"));
  }
  if (shape.blockMaskParameter()) {
    views.push_back(kernelView(op.getBlockMask()));
    names.push_back(b.getStringAttr("block_mask"));
  }
  if (shape.keyLengths) {
    views.push_back(kernelView(op.getKeyLengths()));
    names.push_back(b.getStringAttr("key_lengths"));
  }
}

/// A kernel `name` in the builder's gpu.module over `views` (named `names`)
/// and `workspaces` and `tensorMaps`, which the runtime passes after them,
/// with its `attn.launch` entry: `grid`, the shape's block, tiles and
/// kernel plan, `sharedBytes` of dynamic shared memory, `attention`, and the
/// units in `marks`.
gpu::GPUFuncOp
createKernel(ImplicitLocOpBuilder &kb, StringRef name, const KernelShape &shape,
             ArrayRef<MemRefType> views, ArrayRef<Attribute> names,
             ArrayRef<Workspace> workspaces, ArrayRef<TensorMap> tensorMaps,
             ArrayRef<int64_t> grid, int64_t sharedBytes,
             DictionaryAttr attention, ArrayRef<NamedAttribute> marks) {
  SmallVector<MemRefType> workspaceTypes;
  SmallVector<Attribute> workspaceEntries;
  for (const Workspace &workspace : workspaces) {
    workspaceTypes.push_back(workspace.type);
    workspaceEntries.push_back(describeWorkspace(kb, workspace));
  }
  KernelSignature signature =
      kernelSignature(kb, views, workspaceTypes, tensorMaps.size());
  auto func = gpu::GPUFuncOp::create(kb, name,
                                     kb.getFunctionType(signature.params, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kb.getUnitAttr());
  int32_t threads = static_cast<int32_t>(shape.threads());
  func.setKnownBlockSizeAttr(kb.getDenseI32ArrayAttr({threads, 1, 1}));
  SmallVector<Attribute> viewTypes;
  for (MemRefType view : views)
    viewTypes.push_back(TypeAttr::get(view));
  SmallVector<NamedAttribute> launch{
      kb.getNamedAttr("params", kb.getArrayAttr(viewTypes)),
      kb.getNamedAttr("param_names", kb.getArrayAttr(names)),
      kb.getNamedAttr("scalars", kb.getArrayAttr(signature.scalars)),
      kb.getNamedAttr("grid", kb.getDenseI64ArrayAttr(grid)),
      kb.getNamedAttr("block", kb.getDenseI64ArrayAttr({threads, 1, 1})),
      kb.getNamedAttr("dynamic_shared_memory",
                      kb.getI64IntegerAttr(sharedBytes)),
      kb.getNamedAttr("tiles", fa2TilesAttrOf(kb.getContext(), shape.tiling())),
      kb.getNamedAttr("kernel", shape.kernel),
      kb.getNamedAttr("attention", attention)};
  llvm::append_range(launch, marks);
  if (shape.warpSpecialised())
    launch.push_back(kb.getNamedAttr(
        "producer_warps", kb.getI64IntegerAttr(shape.producerWarps())));
  if (!workspaces.empty())
    launch.push_back(
        kb.getNamedAttr("workspaces", kb.getArrayAttr(workspaceEntries)));
  if (!tensorMaps.empty())
    launch.push_back(kb.getNamedAttr(
        "tensor_maps", kb.getArrayAttr(llvm::map_to_vector(
                           tensorMaps, [&](const TensorMap &map) -> Attribute {
                             return describeTensorMap(kb, map);
                           }))));
  func->setAttr(AttnDialect::getLaunchAttrName(), kb.getDictionaryAttr(launch));
  return func;
}

struct AttnToNVGPUPass : public attn::impl::AttnToNVGPUBase<AttnToNVGPUPass> {
  using AttnToNVGPUBase::AttnToNVGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    SmallVector<AttentionGradOp> gradOps;
    module.walk([&](AttentionGradOp op) { gradOps.push_back(op); });
    if (ops.empty() && gradOps.empty())
      return;
    std::optional<MatrixUnitRequest> request =
        parseMatrixUnitRequest(matrixUnit);
    if (!request) {
      emitError(module.getLoc(), "attn-to-nvgpu: matrix-unit must be auto, "
                                 "mma-sync or wgmma; got '")
          << matrixUnit << "'";
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, "attn_kernels");

    for (AttentionOp op : ops) {
      FailureOr<KernelShape> shape = analyseKernel(op, *request);
      if (failed(shape))
        return signalPassFailure();
      std::string name = getAttentionKernelName(op);
      ImplicitLocOpBuilder kb(op.getLoc(), ctx);
      kb.setInsertionPointToEnd(kernels.getBody());

      SmallVector<MemRefType> views;
      for (Value operand : {Value(op.getQuery()), Value(op.getKey()),
                            Value(op.getValue()), op.getInitOut()})
        views.push_back(kernelView(operand));
      SmallVector<Attribute> names{kb.getStringAttr("Q"), kb.getStringAttr("K"),
                                   kb.getStringAttr("V"),
                                   kb.getStringAttr("O")};
      if (shape->withLse) {
        views.push_back(kernelView(op.getInitLse()));
        names.push_back(kb.getStringAttr("LSE"));
      }
      appendMaskAndLengthParams(kb, op, *shape, views, names);
      // A grid size that depends on a run-time length is dynamic.
      const AttentionProblem &problem = shape->problem;
      int64_t ctas = shape->leanCtas;
      SmallVector<int64_t> grid =
          ctas ? SmallVector<int64_t>{ctas, 1, 1}
               : SmallVector<int64_t>{ShapedType::isDynamic(problem.queryLen)
                                          ? ShapedType::kDynamic
                                          : shape->queryBlocks(),
                                      problem.batch,
                                      problem.tiledHeads() * shape->splits};
      // All CTAs must be resident at once: the runtime checks before
      // launching.
      SmallVector<NamedAttribute> marks;
      if (ctas)
        marks.push_back(kb.getNamedAttr("persistent", kb.getUnitAttr()));
      SmallVector<Workspace> workspaces = kernelWorkspaces(*shape, ctx);
      gpu::GPUFuncOp func = createKernel(
          kb, name, *shape, views, names, workspaces, kernelTensorMaps(*shape),
          grid, shape->sharedBytes(), describeAttention(kb, op), marks);
      // The registers the estimate allowed are a promise ptxas must keep:
      // with more, fewer CTAs are resident and the waits never end (the
      // runtime would refuse the launch).
      if (shape->residentCtasPerSm())
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      kb.getI32IntegerAttr(
                          static_cast<int32_t>(shape->residentCtasPerSm())));
      // setmaxnreg moves registers between warpgroups of a kernel launched
      // with a stated count (the PTX ISA): the block's share at entry.
      if (shape->roleRegisters().reallocates())
        func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                      kb.getI32IntegerAttr(
                          static_cast<int32_t>(shape->roleRegisters().entry)));
      SmallVector<MemRefType> workspaceTypes;
      for (const Workspace &workspace : workspaces)
        workspaceTypes.push_back(workspace.type);
      KernelArguments args =
          bindArguments(kb, *shape, views, workspaceTypes, func);
      if (ctas)
        buildLeanKernel(kb, *shape, args);
      else if (shape->splits > 1)
        buildSplitKvKernel(kb, *shape, args);
      else
        buildFa2Kernel(kb, *shape, args);
    }
    for (AttentionGradOp op : gradOps)
      if (failed(buildGradKernel(op, kernels, *request)))
        return signalPassFailure();
  }

  /// The backward kernel of `op` in `kernels`: parameters Q, K, V, O, LSE,
  /// dO, dQ, dK, dV (static views), then the mask, the block mask (unless
  /// constant) and key_lengths when `op` has them, then its tensor maps
  /// (gradKernelTensorMaps); no workspace.
  LogicalResult buildGradKernel(AttentionGradOp op, gpu::GPUModuleOp kernels,
                                MatrixUnitRequest request) {
    FailureOr<KernelShape> shape = analyseGradKernel(op, request);
    if (failed(shape))
      return failure();
    MLIRContext *ctx = &getContext();
    ImplicitLocOpBuilder kb(op.getLoc(), ctx);
    kb.setInsertionPointToEnd(kernels.getBody());
    SmallVector<MemRefType> views;
    SmallVector<Attribute> names;
    StringRef paramNames[] = {"Q",  "K",  "V",  "O", "LSE",
                              "dO", "dQ", "dK", "dV"};
    Value operands[] = {
        op.getQuery(),      op.getKey(),        op.getValue(),
        op.getOut(),        op.getLse(),        op.getGradOut(),
        op.getOutputs()[0], op.getOutputs()[1], op.getOutputs()[2]};
    for (auto [name, operand] : llvm::zip_equal(paramNames, operands)) {
      views.push_back(kernelView(operand));
      names.push_back(kb.getStringAttr(name));
    }
    appendMaskAndLengthParams(kb, op, *shape, views, names);
    SmallVector<TensorMap> maps = gradKernelTensorMaps(*shape);
    gpu::GPUFuncOp func = createKernel(
        kb, getAttentionGradKernelName(op), *shape, views, names, {}, maps,
        gradGrid(*shape), gradSharedBytes(*shape), describeAttention(kb, op),
        {kb.getNamedAttr("gradient", kb.getUnitAttr())});
    Block &entry = func.getBody().front();
    kb.setInsertionPointToStart(&entry);
    GradArguments args{
        entry.getArgument(0), entry.getArgument(1), entry.getArgument(2),
        entry.getArgument(3), entry.getArgument(4), entry.getArgument(5),
        entry.getArgument(6), entry.getArgument(7), entry.getArgument(8)};
    unsigned next = 9;
    if (shape->maskElement)
      args.mask = entry.getArgument(next++);
    if (shape->blockMaskParameter())
      args.blockMask = entry.getArgument(next++);
    if (shape->keyLengths)
      args.keyLengths = entry.getArgument(next++);
    if (!maps.empty()) {
      unsigned map = entry.getNumArguments() - maps.size();
      args.qMap = entry.getArgument(map);
      args.kMap = entry.getArgument(map + 1);
      args.vMap = entry.getArgument(map + 2);
      args.gradOutMap = entry.getArgument(map + 3);
    }
    buildFa2GradKernel(kb, *shape, args);
    gpu::ReturnOp::create(kb);
    return success();
  }
};

} // namespace

/// `<function>_<stem><i>` for the i-th op of its kind in its function.
template <typename OpT>
static std::string kernelNameOf(OpT op, StringRef stem) {
  auto parent = op->template getParentOfType<FunctionOpInterface>();
  Operation *root =
      parent ? parent.getOperation()
             : op->template getParentOfType<ModuleOp>().getOperation();
  int index = 0;
  root->walk([&](OpT other) {
    if (other == op)
      return WalkResult::interrupt();
    if (other->template getParentOfType<FunctionOpInterface>() == parent)
      ++index;
    return WalkResult::advance();
  });
  std::string base = parent ? parent.getName().str() : "attention";
  return base + "_" + stem.str() + std::to_string(index);
}

std::string mlir::attn::getAttentionKernelName(AttentionOp op) {
  return kernelNameOf(op, "attention");
}

std::string mlir::attn::getAttentionGradKernelName(AttentionGradOp op) {
  return kernelNameOf(op, "attention_grad");
}
