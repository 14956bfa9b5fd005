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
    DenseMap<Operation *, int> attentionsSeen;
    WalkResult result = getOperation()->walk([&](AttentionOp op) {
      ReportedPlan plan = reportPlan(op);
      Operation *func = op->getParentOfType<FunctionOpInterface>();
      int index = attentionsSeen[func]++;
      if (svgDir.empty())
        return WalkResult::advance();
      return succeeded(writePicture(op, func, index, plan))
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    markAllAnalysesPreserved();
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
    std::string name =
        func ? cast<SymbolOpInterface>(func).getName().str() : "attention";
    SmallString<128> path(svgDir);
    llvm::sys::path::append(path,
                            llvm::formatv("{0}-{1}.svg", name, index).str());
    std::string title =
        llvm::formatv("@{0}: {1}", name, summarizeAttention(op, *problem))
            .str();
    std::string svg =
        drawSchedule(*problem, tiling ? tiling->blockM : 0,
                     tiling ? tiling->blockN : 0, op.getPartitionAttr(), title,
                     plan.blockMask ? &*plan.blockMask : nullptr);
    if (llvm::Error err = llvm::writeToOutput(path, [&](raw_ostream &os) {
          os << svg;
          return llvm::Error::success();
        }))
      return op.emitError() << "cannot write the schedule picture " << path
                            << ": " << llvm::toString(std::move(err));
    op.emitRemark() << "schedule picture: " << path;
    return success();
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

    TargetAttr target = getEnclosingTarget(op);
    std::optional<Fa2Tiling> tiling;
    std::optional<DerivedBlockMask> blockMask;
    std::string origin;
    if (Fa2TilesAttr tiles = op.getTilesAttr()) {
      tiling = fa2TilingOf(tiles);
      origin = "pinned";
    } else {
      // What attn-select-schedule will pin: the first of FlashAttention-2's
      // tilings whose CTA fits the target's shared memory and registers.
      tiling =
          target
              ? selectFa2Tiling(problem->headDim, problem->valueDim,
                                elementBytes, gpuLimits(target), nullptr,
                                scoreWorkOf(op), op.splitsKeyValues(),
                                op.getBlockMaskBlock())
              : defaultFa2Tiling(problem->headDim, problem->valueDim,
                                 elementBytes, std::nullopt, scoreWorkOf(op),
                                 op.splitsKeyValues(), op.getBlockMaskBlock());
      origin = describeDefaultTiling(op);
      if (target)
        origin += " on " + target.getChip().str();
      if (tiling) {
        tiling->packedHeads = selectPackedHeads(op, tiling->blockM);
        problem->packedHeads = tiling->packedHeads;
      }
    }
    if (!tiling) {
      if (std::optional<std::string> unnestable = describeUnnestableBlocks(op))
        remark << "\n  tiles: " << *unnestable;
      else if (target)
        remark << "\n  tiles: none of FlashAttention-2's tilings fits the "
                  "shared memory and registers of "
               << target.getChip();
      else
        remark << "\n  tiles: none of FlashAttention-2's tilings fits a head "
                  "dimension above 256";
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
               << fa2TilesAttrOf(op.getContext(), split->tiling);
    }
    if (!staticLengths)
      return {tiling, std::nullopt};
    if (std::optional<DistributedLayout> layout =
            DistributedLayout::of(op.getPartitionAttr()))
      remark << llvm::formatv(
          "\n  distribution: {0} ranks, shards of {1} query and {2} "
          "key/value tokens, {3} sent by every rank",
          layout->devices(), layout->shardLength(problem->queryLen),
          layout->shardLength(problem->kvLen),
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
