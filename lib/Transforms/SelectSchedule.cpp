//===- SelectSchedule.cpp - FlashAttention-2 schedules for the target -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Attaches `tiles` (and, with split-kv, a split-KV `partition`) and the GPU
// kernel's plan (`kernel`, KernelPlan.h) to every attn.attention from its
// shape and the `#attn.target` around it, the backward kernel's plan to
// every attn.attention_grad under one, and a distributed partition from
// the `#attn.cluster` around it. The numbers
// are lib/Analysis's: the tile table (Fa2Defaults), the resources of a CTA,
// the fit and the split rule (Fa2Resources); this file reads the IR and writes
// attributes and diagnostics.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/DistributionCost.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/KernelPlan.h"
#include "attn/Analysis/MatrixUnit.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSELECTSCHEDULE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnSelectSchedulePass
    : public attn::impl::AttnSelectScheduleBase<AttnSelectSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (splitKv && lean) {
      emitError(getOperation().getLoc())
          << "attn-select-schedule: choose split-kv or lean, not both";
      return signalPassFailure();
    }
    std::optional<MatrixUnitRequest> request =
        parseMatrixUnitRequest(matrixUnit);
    if (!request) {
      emitError(getOperation().getLoc(),
                "attn-select-schedule: matrix-unit must be auto, mma-sync or "
                "wgmma; got '")
          << matrixUnit << "'";
      return signalPassFailure();
    }
    unit = *request;
    WalkResult result = getOperation().walk([&](Operation *op) {
      LogicalResult selected = success();
      if (auto attention = dyn_cast<AttentionOp>(op))
        selected = select(attention);
      else if (auto grad = dyn_cast<AttentionGradOp>(op))
        selected = selectGradKernel(grad);
      return succeeded(selected) ? WalkResult::advance()
                                 : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// The matrix-unit option, parsed.
  MatrixUnitRequest unit = MatrixUnitRequest::Auto;

  LogicalResult select(AttentionOp op) {
    if (ClusterAttr cluster = getEnclosingCluster(op))
      selectDistribution(op, cluster);
    TargetAttr target = getEnclosingTarget(op);
    if (!target) {
      if (!requireTarget)
        return success();
      return op.emitError() << "attn-select-schedule needs an `"
                            << AttnDialect::getTargetAttrName()
                            << "` attribute (#attn.target<...>) on an "
                               "enclosing module";
    }
    GpuLimits limits = gpuLimits(target, unit);

    auto queryType = op.getQuery().getType();
    if (queryType.isDynamicDim(3) || op.getValue().getType().isDynamicDim(3))
      return op.emitError("attn-select-schedule needs static head "
                          "dimensions");
    // Q, K and V share one of f16, bf16, f32 (the verifier): 2 or 4 bytes.
    int64_t elementBytes = queryType.getElementTypeBitWidth() / 8;

    bool tilesPinned = static_cast<bool>(op.getTilesAttr());
    FailureOr<TileChoice> choice =
        requireTiles(op, {TileTarget::Gpu, 0, 0, target, unit});
    if (failed(choice))
      return failure();
    const Fa2Tiling &tiling = choice->tiling;
    if (!tilesPinned)
      op.setTilesAttr(fa2TilesAttrOf(op.getContext(), tiling));
    // Pinned tiles must fit the target (the default fits by construction).
    else if (std::optional<Fa2Misfit> misfit = findFa2Misfit(
                 fa2Resources(tiling, queryType.getDimSize(3),
                              op.getValue().getType().getDimSize(3),
                              elementBytes, scoreWorkOf(op),
                              op.splitsKeyValues()),
                 limits))
      return op.emitError() << "pinned tiles " << op.getTilesAttr() << " "
                            << describeMisfit(*misfit, target);

    // Pinned tiles pin the kernel: FlashAttention-2's grid unless a
    // partition is pinned too.
    if ((splitKv || lean) && !op.getPartitionAttr() && !tilesPinned)
      selectKvPartition(op, tiling, limits, elementBytes);
    return selectKernel(op);
  }

  /// The op's #attn.kernel (planKernel, KernelPlan.h), with the tiles'
  /// stages it keeps; a pinned one is checked. Nothing for an op that does
  /// not become a GPU kernel (kernelUnfit) or whose plan fails:
  /// attn-to-nvgpu reports those.
  LogicalResult selectKernel(AttentionOp op) {
    if (!kernelUnfit(op).empty())
      return success();
    Fa2Tiling tiling = fa2TilingOf(op.getTilesAttr());
    std::string why;
    if (KernelAttr pinned = op.getKernelAttr()) {
      if (failed(checkKernelPlan(op, tiling, pinned, why)))
        return op.emitError("attn-select-schedule: ") << why;
      return success();
    }
    // attn-derive-block-mask attaches the block mask the IR proves over
    // these tiles, which keeps the loop sequential.
    FailureOr<KernelPlan> plan =
        planKernel(op, tiling, {unit, blockMaskToCome(op, tiling)}, why);
    if (failed(plan))
      return success();
    op.setTilesAttr(fa2TilesAttrOf(op.getContext(), plan->tiling));
    op.setKernelAttr(plan->kernel);
    return success();
  }

  /// The backward `op`'s #attn.kernel under an #attn.target
  /// (planGradKernel); a pinned one is checked. Nothing for an op that does
  /// not become a GPU kernel (gradKernelUnfit) or whose plan fails:
  /// attn-to-nvgpu reports those.
  LogicalResult selectGradKernel(AttentionGradOp op) {
    if (!getEnclosingTarget(op) || !gradKernelUnfit(op).empty())
      return success();
    std::string why;
    if (KernelAttr pinned = op.getKernelAttr()) {
      if (failed(checkGradKernelPlan(op, pinned, why)))
        return op.emitError("attn-select-schedule: ") << why;
      return success();
    }
    FailureOr<KernelAttr> plan = planGradKernel(op, unit, why);
    if (succeeded(plan))
      op.setKernelAttr(*plan);
    return success();
  }

  /// On a cluster of several ranks, the cheapest of ring attention and
  /// ATTENTION2D on every grid (DistributionCost), for an op without a
  /// partition; a warning says why an op cannot be distributed.
  void selectDistribution(AttentionOp op, ClusterAttr cluster) {
    // A framed attention is already a rank's part (attn-distribute's).
    if (cluster.getRanks() < 2 || op.getPartitionAttr() || op.hasFrame())
      return;
    std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
    if (!problem || op.getMask() || op.getBlockMask() || op.hasKeyLengths()) {
      op.emitWarning() << "not distributed over the " << cluster.getRanks()
                       << " ranks of the cluster: "
                       << (!problem       ? "sizes must be static"
                           : op.getMask() ? "a mask operand is not distributed"
                           : op.getBlockMask()
                               ? "a block mask operand is not distributed"
                               : "key lengths are not distributed");
      return;
    }
    int64_t elementBytes = op.getQuery().getType().getElementTypeBitWidth() / 8;
    op.setPartitionAttr(
        rankDistributions(op.getContext(), *problem, elementBytes, cluster)
            .front()
            .partition);
  }

  /// Where FlashAttention-2's split-KV rule splits, split-KV (or with
  /// `lean` Lean attention, but split-KV for per-sequence key lengths,
  /// which Lean's work assignment cannot count) and its tiles:
  /// chooseKvPartition's, for static or run-time lengths. Attaches nothing
  /// when the rule keeps one split or Sq is dynamic.
  void selectKvPartition(AttentionOp op, const Fa2Tiling &tiling,
                         const GpuLimits &limits, int64_t elementBytes) {
    std::optional<AttentionProblem> problem =
        AttentionProblem::fromOp(op, /*dynamicLengths=*/true);
    if (!problem)
      return;
    std::optional<KvPartitionChoice> choice = chooseKvPartition(
        op.getContext(), *problem, tiling, limits, elementBytes,
        scoreWorkOf(op), lean && !op.hasKeyLengths(), op.getBlockMaskBlock());
    if (!choice)
      return;
    op.setTilesAttr(fa2TilesAttrOf(op.getContext(), choice->tiling));
    op.setPartitionAttr(choice->partition);
  }
};

} // namespace
