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
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

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
DictionaryAttr describeAttention(Builder &b, AttentionOp op) {
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

struct AttnToNVGPUPass : public attn::impl::AttnToNVGPUBase<AttnToNVGPUPass> {
  using AttnToNVGPUBase::AttnToNVGPUBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty())
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
      if (shape->maskElement) {
        views.push_back(kernelView(op.getMask()));
        names.push_back(kb.getStringAttr("mask"));
      }
      if (shape->blockMaskParameter()) {
        views.push_back(kernelView(op.getBlockMask()));
        names.push_back(kb.getStringAttr("block_mask"));
      }
      if (shape->keyLengths) {
        views.push_back(kernelView(op.getKeyLengths()));
        names.push_back(kb.getStringAttr("key_lengths"));
      }
      // The runtime passes the workspaces after the tensors.
      SmallVector<Workspace> workspaces = kernelWorkspaces(*shape, ctx);
      SmallVector<MemRefType> workspaceTypes;
      SmallVector<Attribute> workspaceEntries;
      for (const Workspace &workspace : workspaces) {
        workspaceTypes.push_back(workspace.type);
        workspaceEntries.push_back(describeWorkspace(kb, workspace));
      }
      KernelSignature signature = kernelSignature(kb, views, workspaceTypes);
      auto func = gpu::GPUFuncOp::create(
          kb, name, kb.getFunctionType(signature.params, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kb.getUnitAttr());
      int32_t threads = static_cast<int32_t>(shape->threads());
      func.setKnownBlockSizeAttr(kb.getDenseI32ArrayAttr({threads, 1, 1}));
      // The registers the estimate allowed are a promise ptxas must keep:
      // with more, fewer CTAs are resident and the waits never end (the
      // runtime would refuse the launch).
      if (shape->residentCtasPerSm)
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      kb.getI32IntegerAttr(
                          static_cast<int32_t>(shape->residentCtasPerSm)));
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
                          kb.getI64IntegerAttr(shape->sharedBytes())),
          kb.getNamedAttr("tiles", fa2TilesAttrOf(ctx, shape->tiling())),
          kb.getNamedAttr("attention", describeAttention(kb, op))};
      // All CTAs must be resident at once: the runtime checks before
      // launching.
      if (ctas)
        launch.push_back(kb.getNamedAttr("persistent", kb.getUnitAttr()));
      if (!workspaces.empty())
        launch.push_back(
            kb.getNamedAttr("workspaces", kb.getArrayAttr(workspaceEntries)));
      func->setAttr(AttnDialect::getLaunchAttrName(),
                    kb.getDictionaryAttr(launch));
      KernelArguments args =
          bindArguments(kb, *shape, views, workspaceTypes, func);
      if (ctas)
        buildLeanKernel(kb, *shape, args);
      else if (shape->splits > 1)
        buildSplitKvKernel(kb, *shape, args);
      else
        buildFa2Kernel(kb, *shape, args);
    }
  }
};

} // namespace

std::string mlir::attn::getAttentionKernelName(AttentionOp op) {
  auto parent = op->getParentOfType<FunctionOpInterface>();
  Operation *root = parent ? parent.getOperation()
                           : op->getParentOfType<ModuleOp>().getOperation();
  int index = 0;
  root->walk([&](AttentionOp other) {
    if (other == op)
      return WalkResult::interrupt();
    if (other->getParentOfType<FunctionOpInterface>() == parent)
      ++index;
    return WalkResult::advance();
  });
  std::string base = parent ? parent.getName().str() : "attention";
  return base + "_attention" + std::to_string(index);
}
