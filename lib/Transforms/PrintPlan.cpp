//===- PrintPlan.cpp - Report the work and schedule of each attention -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/AttentionSummary.h"
#include "attn/Analysis/DistributedLayout.h"
#include "attn/Analysis/DistributionCost.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/KernelPlan.h"
#include "attn/Analysis/MatrixUnit.h"
#include "attn/Analysis/SchedulePicture.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPRINTPLAN
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

std::string formatFlops(double flops) {
  const char *units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
  int unit = 0;
  while (flops >= 1000.0 && unit < 5) {
    flops /= 1000.0;
    ++unit;
  }
  return llvm::formatv("{0:F2} {1}", flops, units[unit]).str();
}

/// What the plan says of tensor copies with per-sequence key lengths where
/// the thread that issues them zeroes the keys past a sequence's end (the
/// backward, the forward's sequential loop).
constexpr const char *kZeroedTailPlanText =
    "the keys past a sequence's length zeroed in shared memory by the "
    "issuing thread";

/// The backward kernel attn-to-ptx builds for `op` (`problem`) on
/// `target`: its tiles (fa2GradKernelTiling) and its #attn.kernel, the op's
/// or the one planGradKernel plans with matrix-unit=auto, with the reason
/// for what it does without.
std::string describeGradKernel(AttentionGradOp op, TargetAttr target,
                               const AttentionProblem &problem) {
  Fa2Tiling tiling = fa2GradKernelTiling(problem.headDim, problem.valueDim);
  KernelAttr kernel = op.getKernelAttr();
  std::string why;
  if (!kernel) {
    FailureOr<KernelAttr> planned =
        planGradKernel(op, MatrixUnitRequest::Auto, why);
    if (failed(planned))
      return "GPU kernel: none (" + why + ")";
    kernel = *planned;
  }
  auto reason = [](const std::string &unfit) {
    return unfit.empty() ? std::string("pinned by the op's #attn.kernel")
                         : unfit;
  };
  MatrixUnit unit = kernel.getUnit();
  std::string text = llvm::formatv(
      "GPU kernel: a CTA per key/value block and per query block of {0} "
      "rows, the other side streamed past them {1} rows a step, {2} warps on "
      "{3}",
      tiling.blockM, tiling.blockN, tiling.warps, matrixUnitName(unit));
  if (unit == MatrixUnit::MmaSync && hasWarpgroupMma(target.getChip()))
    text += " (" +
            reason(gradWgmmaUnfit(target.getChip(), problem.headDim,
                                  problem.valueDim)) +
            ")";
  if (unit != MatrixUnit::Wgmma)
    return text;
  if (kernel.tensorCopies())
    return text +
           llvm::formatv(", tiles by tensor copies issued by thread 0 (the "
                         "streamed ones in {0} "
                         "stages{1})",
                         kGradTensorCopyStages,
                         op.hasKeyLengths()
                             ? "; " + std::string(kZeroedTailPlanText)
                             : std::string())
               .str();
  return text + ", tiles by cp.async (" +
         reason(gradTensorCopiesUnfit(problem.headDim, problem.valueDim,
                                      op.hasKeyLengths(),
                                      target.getSmemPerBlock())) +
         ")";
}

/// The CTA body attn-to-ptx builds for `op`'s kernel with `tiling` on
/// `target`, its key/value range split (split-KV, Lean) or not: `kernel`
/// as it says (the op's #attn.kernel), or with a null `kernel` what
/// KernelPlan.h plans with matrix-unit=auto. Each wgmma feature the kernel
/// does without comes with planWgmmaBody's reason, or "pinned by the op's
/// #attn.kernel" where the plan would have taken it.
std::string describeCtaBody(AttentionOp op, TargetAttr target,
                            const Fa2Tiling &tiling,
                            const AttentionProblem &problem, bool splitsKv,
                            KernelAttr kernel) {
  StringRef chip = target.getChip();
  std::string noWgmma = wgmmaUnfit(chip, tiling, problem.valueDim);
  bool wgmma = kernel ? kernel.getUnit() == MatrixUnit::Wgmma
                      : hasWarpgroupMma(chip) && noWgmma.empty();
  auto reason = [](const std::string &why) {
    return why.empty() ? std::string("pinned by the op's #attn.kernel") : why;
  };
  if (!wgmma) {
    std::string text = "CTA body: FlashAttention-2's loop on mma.sync";
    if (hasWarpgroupMma(chip))
      text += " (" + reason(noWgmma) + ")";
    return text;
  }
  WgmmaBodyPlan plan = wgmmaBodyPlanOf(op, tiling, splitsKv,
                                       !kernel && blockMaskToCome(op, tiling));
  if (!kernel)
    kernel = wgmmaKernelAttrOf(op.getContext(), plan, 0);
  std::string text =
      "CTA body: " +
      std::string(
          kernel.overlapped()
              ? "FlashAttention-3's overlapped loop (softmax beside P V)"
              : "FlashAttention-2's loop") +
      " on wgmma, K and V by " +
      (kernel.tensorCopies()
           ? std::string("tensor copies into mbarrier-guarded stages")
           : "cp.async (" + reason(plan.noTensorCopies) + ")");
  if (kernel.tensorCopies() && op.hasKeyLengths())
    text += kernel.overlapped()
                ? std::string(" (V's keys past a sequence's length zeroed in "
                              "shared memory by the consumers before the last "
                              "P V)")
                : " (" + std::string(kZeroedTailPlanText) + ")";
  if (kernel.warpRoles()) {
    text += ", issued by a producer warpgroup";
    if (kernel.reallocatesRegisters()) {
      // The CTAs an SM the .maxnreg at entry leaves room for.
      int64_t threads = 32 * (tiling.warps + kProducerWarps);
      text += " (setmaxnreg: " + std::to_string(kernel.getProducerRegisters()) +
              " registers a producer thread, " +
              std::to_string(kernel.getConsumerRegisters()) +
              " a consumer's, " +
              std::to_string(target.getRegsPerSm() /
                             (kernel.getEntryRegisters() * threads)) +
              " CTA(s) an SM)";
    }
    if (kernel.pingPong())
      text += ", its two consumer warpgroups taking turns at the products";
  } else if (kernel.tensorCopies()) {
    text += ", issued by thread 0 (no warp roles: " + reason(plan.noWarpRoles) +
            ")";
  }
  if (kernel.tensorCopies())
    text += kernel.queryTensorCopy()
                ? ", Q by a tensor copy"
                : ", Q by cp.async (" + reason(plan.noQueryTensorCopy) + ")";
  text += kernel.outputTensorStore()
              ? ", O by tensor stores"
              : ", O by every lane's 16-byte stores (" +
                    reason(plan.noOutputTensorStore) + ")";
  if (!kernel.overlapped())
    text += " (softmax not overlapped: " + reason(plan.noOverlap) + ")";
  else if (!kernel.pingPong() && plan.pingPong())
    text += " (no ping-pong: " + reason("") + ")";
  return text;
}

std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return llvm::formatv("{0:F1} {1}", bytes, units[unit]).str();
}

struct AttnPrintPlanPass
    : public attn::impl::AttnPrintPlanBase<AttnPrintPlanPass> {
  using Base::Base;

  /// What reportPlan reports and the picture draws.
  struct ReportedPlan {
    std::optional<Fa2Tiling> tiling;
    /// The block sparsity the IR proves over the tiles.
    std::optional<DerivedBlockMask> blockMask;
  };

  void runOnOperation() override {
    DenseMap<Operation *, int> attentionsSeen, gradientsSeen;
    WalkResult result = getOperation()->walk([&](Operation *op) {
      Operation *func = op->getParentOfType<FunctionOpInterface>();
      if (auto attention = dyn_cast<AttentionOp>(op)) {
        ReportedPlan plan = reportPlan(attention);
        int index = attentionsSeen[func]++;
        if (!svgDir.empty() &&
            failed(writePicture(attention, func, index, plan)))
          return WalkResult::interrupt();
      } else if (auto grad = dyn_cast<AttentionGradOp>(op)) {
        std::optional<TileSizes> tiles = reportGradPlan(grad);
        int index = gradientsSeen[func]++;
        if (!svgDir.empty() && tiles &&
            failed(writeGradPicture(grad, func, index, *tiles)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    markAllAnalysesPreserved();
  }

  /// Writes `svg` as svg-dir/<function>-<suffix>.svg, with a remark on `op`.
  LogicalResult writeSvg(Operation *op, Operation *func, const Twine &suffix,
                         StringRef svg) {
    SmallString<128> path(svgDir);
    llvm::sys::path::append(path, functionName(func) + "-" + suffix + ".svg");
    if (llvm::Error err = llvm::writeToOutput(path, [&](raw_ostream &os) {
          os << svg;
          return llvm::Error::success();
        }))
      return op->emitError() << "cannot write the schedule picture " << path
                             << ": " << llvm::toString(std::move(err));
    op->emitRemark() << "schedule picture: " << path;
    return success();
  }

  static std::string functionName(Operation *func) {
    return func ? cast<SymbolOpInterface>(func).getName().str() : "attention";
  }

  /// Writes the backward schedule's picture as
  /// svg-dir/<function>-grad-<index>.svg.
  LogicalResult writeGradPicture(AttentionGradOp op, Operation *func, int index,
                                 TileSizes tiles) {
    std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
    if (!problem)
      return success();
    std::string title =
        llvm::formatv("@{0}: gradient of {1}", functionName(func),
                      summarizeAttention(op, *problem))
            .str();
    return writeSvg(op, func, "grad-" + Twine(index),
                    drawGradSchedule(*problem, tiles.blockM, tiles.blockN,
                                     gradPieces(op), title));
  }

  static int64_t gradPieces(AttentionGradOp op) {
    auto split = dyn_cast_or_null<SplitKVAttr>(op.getPartitionAttr());
    return split ? split.getSplits() : 1;
  }

  /// Reports the backward plan of `op`; returns its tiles when it has some.
  static std::optional<TileSizes> reportGradPlan(AttentionGradOp op) {
    std::optional<AttentionProblem> problem =
        AttentionProblem::fromOp(op, /*dynamicLengths=*/true);
    if (!problem) {
      op.emitRemark() << "gradient with dynamic head counts or dimensions: "
                         "the tiling and the work are decided at run time";
      return std::nullopt;
    }
    InFlightDiagnostic remark = op.emitRemark();
    remark << "gradient of " << summarizeAttention(op, *problem);
    bool staticLengths = problem->hasStaticLengths();
    if (staticLengths)
      remark << "\n  work: "
             << formatFlops(2.5 * problem->nominalForwardFlops())
             << " nominal (2.5 times the forward's)";
    std::optional<TileSizes> tiles;
    {
      // requireGradTileSizes' errors become part of the report.
      ScopedDiagnosticHandler quiet(op.getContext(),
                                    [](Diagnostic &) { return success(); });
      FailureOr<TileSizes> resolved = requireGradTileSizes(op, 0, 0);
      if (succeeded(resolved))
        tiles = *resolved;
    }
    if (!tiles) {
      remark << "\n  tiles: none applies (a head dimension above 256 or "
                "tiles that do not nest in the block mask's blocks)";
      return std::nullopt;
    }
    int64_t pieces = gradPieces(op);
    remark << llvm::formatv("\n  tiles: {0} query rows x {1} keys ({2})",
                            tiles->blockM, tiles->blockN,
                            op.getTilesAttr() ? "pinned"
                                              : "FlashAttention-2's backward "
                                                "default");
    // The kernel takes static lengths and 16-bit elements.
    if (TargetAttr target = getEnclosingTarget(op);
        target && staticLengths &&
        op.getQuery().getType().getElementTypeBitWidth() == 16)
      remark << "\n  " << describeGradKernel(op, target, *problem);
    if (!staticLengths)
      return tiles;
    int64_t kvBlocks = llvm::divideCeil(problem->keyLen, tiles->blockN);
    int64_t queryBlocks = problem->queryBlocks(tiles->blockM);
    int64_t visited = 0, masked = 0;
    for (int64_t n = 0; n < kvBlocks; ++n) {
      IndexRange range =
          problem->queryBlockRange(n, tiles->blockM, tiles->blockN);
      visited += range.size();
      for (int64_t m = range.begin; m < range.end; ++m)
        masked += !problem->isBlockUnmasked(m, n, tiles->blockM, tiles->blockN);
    }
    int64_t dense = kvBlocks * queryBlocks;
    remark << llvm::formatv(
        "\n  per (batch, key/value head): {0} key/value blocks in {1} "
        "piece{2} of {3}, one program each owning their dK and dV; per query "
        "head, {4} of {5} (key/value block, query block) tiles visited "
        "({6:F1}%), {7} with an element mask",
        kvBlocks, pieces, pieces == 1 ? "" : "s",
        llvm::divideCeil(kvBlocks, pieces), visited, dense,
        dense ? 100.0 * visited / dense : 0.0, masked);
    int64_t dqBytes = problem->batch * problem->queryHeads * problem->queryLen *
                      problem->headDim * 4;
    remark << llvm::formatv("\n  dQ: {0} f32 cop{1} ({2}), summed in piece "
                            "order",
                            pieces, pieces == 1 ? "y" : "ies",
                            formatBytes(static_cast<double>(pieces * dqBytes)));
    return tiles;
  }

  /// Writes `op`'s schedule picture as svg-dir/<function>-<index>.svg.
  LogicalResult writePicture(AttentionOp op, Operation *func, int index,
                             const ReportedPlan &plan) {
    const std::optional<Fa2Tiling> &tiling = plan.tiling;
    std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
    bool distributed = DistributedLayout::of(op.getPartitionAttr()).has_value();
    if (!problem || (!tiling && !distributed))
      return success();
    if (tiling)
      problem->packedHeads = tiling->packedHeads;
    std::string title = llvm::formatv("@{0}: {1}", functionName(func),
                                      summarizeAttention(op, *problem))
                            .str();
    return writeSvg(op, func, Twine(index),
                    drawSchedule(*problem, tiling ? tiling->blockM : 0,
                                 tiling ? tiling->blockN : 0,
                                 op.getPartitionAttr(), title,
                                 plan.blockMask ? &*plan.blockMask : nullptr));
  }

  /// Reports the plan of `op`; returns what it reports.
  static ReportedPlan reportPlan(AttentionOp op) {
    std::optional<AttentionProblem> problem =
        AttentionProblem::fromOp(op, /*dynamicLengths=*/true);
    if (!problem) {
      op.emitRemark() << "attention with "
                      << (op.hasFrame() ? "a frame"
                                        : "dynamic head counts or dimensions")
                      << ": the tiling and the work are decided at run time";
      return {};
    }
    // Batch, Sq or Sk taken at run time: the tiles and the partition are
    // still the compiler's; the work is counted at launch.
    bool staticLengths = problem->hasStaticLengths();
    Type elementType = op.getQuery().getType().getElementType();
    int64_t elementBytes = elementType.getIntOrFloatBitWidth() / 8;
    InFlightDiagnostic remark = op.emitRemark();
    remark << "attention " << summarizeAttention(op, *problem);
    if (staticLengths)
      remark << "\n  work: " << formatFlops(problem->nominalForwardFlops())
             << " nominal; an untiled lowering would hold "
             << formatBytes(problem->naiveScoreBytes()) << " of f32 scores";
    else
      remark << "\n  work: counted at launch from the lengths (one kernel "
                "for every B, Sq and Sk marked ?)";

    // What attn-select-schedule pins with the module's target, the tiles
    // every pass takes (chooseTiles).
    TargetAttr target = getEnclosingTarget(op);
    std::optional<Fa2Tiling> tiling;
    std::optional<DerivedBlockMask> blockMask;
    std::string origin, why;
    FailureOr<TileChoice> choice =
        chooseTiles(op, {TileTarget::Gpu, 0, 0, target}, why);
    if (succeeded(choice)) {
      tiling = choice->tiling;
      problem->packedHeads = tiling->packedHeads;
      origin = choice->fromOp ? "pinned" : describeDefaultTiling(op, target);
    }
    if (!tiling) {
      remark << "\n  tiles: " << why;
    } else {
      int64_t sharedBytes = fa2SharedMemoryBytes(
          *tiling, problem->headDim, problem->valueDim, elementBytes);
      remark << "\n  tiles: " << fa2TilesAttrOf(op.getContext(), *tiling)
             << " (" << origin << "), "
             << formatBytes(static_cast<double>(sharedBytes))
             << " shared memory per CTA";
      if (target && sharedBytes > target.getSmemPerBlock())
        remark << ", more than the " << target.getSmemPerBlock()
               << " bytes a block may use on " << target.getChip();
      if (target)
        remark << "\n  "
               << describeCtaBody(op, target, *tiling, *problem,
                                  op.splitsKeyValues(), op.getKernelAttr());
    }
    if (tiling && staticLengths) {
      TiledWork work = countTiledWork(*problem, tiling->blockM, tiling->blockN);
      double visitedShare =
          work.denseBlocks ? 100.0 * work.visitedBlocks / work.denseBlocks : 0;
      remark << llvm::formatv("\n  per (batch, {0}): {1} query blocks, {2} of "
                              "{3} key blocks visited ({4:F1}%), {5} with an "
                              "element mask",
                              problem->tiledHeadName(), work.queryBlocks,
                              work.visitedBlocks, work.denseBlocks,
                              visitedShare, work.maskedBlocks);
      if (op.hasKeyLengths())
        remark << " (for a full cache of Sk keys; each sequence visits the "
                  "blocks of its own key length)";
      blockMask = deriveBlockMask(op, tiling->blockM, tiling->blockN);
      if (const std::optional<DerivedBlockMask> &blocks = blockMask)
        remark << llvm::formatv(
            "\n  block mask the IR proves: {0} of {1} blocks empty (their "
            "work skipped), {2} full",
            blocks->emptyBlocks, blocks->values.size(), blocks->fullBlocks);
    }
    remark << "\n  partition: ";
    if (Attribute partition = op.getPartitionAttr()) {
      remark << partition;
    } else {
      remark << "none";
      // What attn-to-ptx compiles by default for unpinned tiles.
      std::optional<KvPartitionChoice> split;
      if (target && tiling && !op.getTilesAttr())
        split = chooseKvPartition(
            op.getContext(), *problem, *tiling, gpuLimits(target), elementBytes,
            scoreWorkOf(op), /*lean=*/false, op.getBlockMaskBlock());
      if (split)
        remark << "; attn-to-ptx splits it (FlashAttention-2's rule, "
                  "split-KV by default): "
               << split->partition << " over "
               << fa2TilesAttrOf(op.getContext(), split->tiling) << "; its "
               << describeCtaBody(op, target, split->tiling, *problem,
                                  /*splitsKv=*/true, /*kernel=*/nullptr);
    }
    if (!staticLengths)
      return {tiling, std::nullopt};
    if (std::optional<DistributedLayout> layout =
            DistributedLayout::of(op.getPartitionAttr()))
      remark << llvm::formatv(
          "\n  distribution: {0} ranks, shards of {1} query and {2} "
          "key/value tokens, {3} sent by every rank",
          layout->devices(), layout->shardLength(problem->queryLen),
          layout->shardLength(problem->keyLen),
          formatBytes(
              static_cast<double>(layout->bytesSent(*problem, elementBytes))));
    ClusterAttr cluster = getEnclosingCluster(op);
    if (!cluster || cluster.getRanks() < 2)
      return {tiling, std::move(blockMask)};
    // The cost model's candidates, cheapest first: what
    // attn-select-schedule picks for an op without a partition.
    remark << llvm::formatv("\n  on {0} ranks ({1} per node), predicted "
                            "communication per run:",
                            cluster.getRanks(), cluster.getRanksPerNode());
    for (const DistributionCandidate &candidate :
         rankDistributions(op.getContext(), *problem, elementBytes, cluster)) {
      remark << "\n    " << candidate.partition
             << llvm::formatv(
                    ": {0} sent per rank, {1:F1} us",
                    formatBytes(static_cast<double>(candidate.bytesPerRank)),
                    candidate.seconds * 1e6);
      if (candidate.partition == op.getPartitionAttr())
        remark << " (pinned)";
    }
    return {tiling, std::move(blockMask)};
  }
};

} // namespace
