//===- AttnToNVGPU.cpp - FlashAttention-2 kernels on tensor cores ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Builds, for each attn.attention, a gpu.func that runs FlashAttention-2's
// forward pass: the kernel skeleton maps the schedule's work onto CTAs
// (here FlashAttention-2's grid over query blocks, batch and heads) and each
// CTA runs the CTA body (CtaBody.cpp) over its range of key/value blocks.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "CtaBody.h"

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"
#include "attn/Conversion/AttnToNVGPU/KernelName.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTONVGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Why `op` cannot become a kernel, or its shape.
FailureOr<KernelShape> analyse(AttentionOp op) {
  std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
  if (!problem)
    return op.emitError("attn-to-nvgpu needs static sizes");
  Type element = op.getQuery().getType().getElementType();
  if (!element.isF16() && !element.isBF16())
    return op.emitError("attn-to-nvgpu supports f16 and bf16 operands, got ")
           << element;
  if (getElementTypeOrSelf(op.getInitOut().getType()) != element)
    return op.emitError("attn-to-nvgpu needs O in the element type of Q");
  if (op.getMask())
    return op.emitError("attn-to-nvgpu does not support the mask operand yet");
  if (op.getSoftcap())
    return op.emitError("attn-to-nvgpu does not support softcap yet");
  if (op.hasScoreModifier())
    return op.emitError("attn-to-nvgpu does not support a score region yet");
  if (op.getPartitionAttr())
    return op.emitError("attn-to-nvgpu does not support partitions yet, got ")
           << op.getPartitionAttr();
  if (problem->headDim != problem->valueDim || problem->headDim % 64 != 0)
    return op.emitError("attn-to-nvgpu needs D = Dv, a multiple of 64; got "
                        "D = ")
           << problem->headDim << ", Dv = " << problem->valueDim;

  KernelShape shape{*problem, element, 0, 0, 0, 0, 0, false};
  if (Fa2TilesAttr tiles = op.getTilesAttr()) {
    shape.blockM = tiles.getBlockM();
    shape.blockN = tiles.getBlockN();
    shape.warps = tiles.getWarps();
    shape.stages = tiles.getStages();
  } else {
    std::optional<Fa2Tiling> tiling = defaultFa2Tiling(
        problem->headDim, problem->valueDim, /*elementBytes=*/2, std::nullopt);
    if (!tiling)
      return op.emitError("no FlashAttention-2 tiling for this head dimension");
    shape.blockM = tiling->blockM;
    shape.blockN = tiling->blockN;
    shape.warps = tiling->warps;
    shape.stages = tiling->stages;
  }
  if (shape.blockM % (16 * shape.warps) != 0 || shape.blockN % 16 != 0)
    return op.emitError("attn-to-nvgpu needs block_m a multiple of 16 * warps "
                        "and block_n a multiple of 16");
  // Two stages at most, and one when two do not fit the target's shared
  // memory per block (without a target: sm_80's).
  int64_t sharedLimit = kSm80SharedBytesPerBlock;
  if (TargetAttr target = getEnclosingTarget(op))
    sharedLimit = target.getSmemPerBlock();
  shape.stages = std::min<int64_t>(shape.stages, 2);
  if (shape.stages == 2 && shape.sharedBytes() > sharedLimit)
    shape.stages = 1;
  if (shape.sharedBytes() > sharedLimit)
    return op.emitError("attn-to-nvgpu: the tiles need ")
           << shape.sharedBytes() << " bytes of shared memory per block; the "
           << "target allows " << sharedLimit;
  shape.scaleLog2 = op.getEffectiveScale() * static_cast<float>(M_LOG2E);
  shape.withLse = static_cast<bool>(op.getInitLse());
  return shape;
}

/// FlashAttention-2's kernel: CTA (m, b, h) of the grid (ceil(Sq / block_m),
/// B, Hq) computes query block m of (b, h) over every key/value block its
/// rows can see.
void buildFa2Kernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                    gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value q = entry.getArgument(0), k = entry.getArgument(1),
        v = entry.getArgument(2), o = entry.getArgument(3);
  Value lse = s.withLse ? entry.getArgument(4) : Value();

  Value queryBlock = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value batch = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value head = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  CtaBody body(b, s);
  body.setUp();
  IndexArith a{b};
  Value kvHead = a.div(head, s.problem.groupSize());
  Value row0 = a.mul(queryBlock, s.blockM);
  Value qGroup = body.loadQueryBlock(q, batch, head, row0);
  Value rows = arith::MinUIOp::create(
      b, a.constant(s.blockM), a.sub(a.constant(s.problem.queryLen), row0));
  auto [blockBegin, blockEnd] =
      body.geometry().kvBlockRange(row0, rows, s.blockN);
  SmallVector<Value> state = body.runKvRange(k, v, qGroup, batch, kvHead, row0,
                                             rows, blockBegin, blockEnd);
  body.storeOutput(state, o, lse, batch, head, row0);
  gpu::ReturnOp::create(b);
}

/// What the kernel computes, for whoever checks it: the effective scale,
/// causal, and the window when there is one.
DictionaryAttr describeAttention(Builder &b, AttentionOp op) {
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("scale", b.getF32FloatAttr(op.getEffectiveScale())),
      b.getNamedAttr("causal", b.getBoolAttr(op.getCausal()))};
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow())
    entries.push_back(
        b.getNamedAttr("window", b.getDenseI64ArrayAttr(*window)));
  return b.getDictionaryAttr(entries);
}

struct AttnToNVGPUPass : public attn::impl::AttnToNVGPUBase<AttnToNVGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    MLIRContext *ctx = &getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, "attn_kernels");

    for (AttentionOp op : ops) {
      FailureOr<KernelShape> shape = analyse(op);
      if (failed(shape))
        return signalPassFailure();
      std::string name = getAttentionKernelName(op);

      SmallVector<Type> params;
      for (Value operand : {Value(op.getQuery()), Value(op.getKey()),
                            Value(op.getValue()),
                            op.getInitOut()}) {
        auto type = cast<RankedTensorType>(operand.getType());
        params.push_back(MemRefType::get(type.getShape(), type.getElementType()));
      }
      if (shape->withLse) {
        auto type = cast<RankedTensorType>(op.getInitLse().getType());
        params.push_back(MemRefType::get(type.getShape(), type.getElementType()));
      }
      ImplicitLocOpBuilder kb(op.getLoc(), ctx);
      kb.setInsertionPointToEnd(kernels.getBody());
      auto func = gpu::GPUFuncOp::create(kb, name,
                                         kb.getFunctionType(params, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kb.getUnitAttr());
      int32_t threads = static_cast<int32_t>(shape->threads());
      func.setKnownBlockSizeAttr(kb.getDenseI32ArrayAttr({threads, 1, 1}));
      func->setAttr(
          AttnDialect::getLaunchAttrName(),
          kb.getDictionaryAttr({
              kb.getNamedAttr("grid", kb.getDenseI64ArrayAttr(
                                          {shape->queryBlocks(),
                                           shape->problem.batch,
                                           shape->problem.queryHeads})),
              kb.getNamedAttr("block",
                              kb.getDenseI64ArrayAttr({threads, 1, 1})),
              kb.getNamedAttr("dynamic_shared_memory",
                              kb.getI64IntegerAttr(shape->sharedBytes())),
              kb.getNamedAttr("tiles",
                              Fa2TilesAttr::get(ctx, shape->blockM,
                                                shape->blockN, shape->warps,
                                                shape->stages)),
              kb.getNamedAttr("attention", describeAttention(kb, op)),
          }));
      buildFa2Kernel(kb, *shape, func);
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
