//===- SelectSchedule.cpp - FlashAttention-2 tiles for the target ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/IR/TypeUtilities.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSELECTSCHEDULE
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Why `tiling` cannot run on `target`, or an empty string.
std::string whyNotFitting(const Fa2Tiling &tiling, int64_t headDim,
                          int64_t valueDim, int64_t elementBytes,
                          TargetAttr target) {
  int64_t shared =
      fa2SharedMemoryBytes(tiling, headDim, valueDim, elementBytes);
  if (shared > target.getSmemPerBlock())
    return (llvm::Twine("need ") + llvm::Twine(shared) +
            " bytes of shared memory per block; " + target.getChip() +
            " allows " + llvm::Twine(target.getSmemPerBlock()))
        .str();
  // A thread gets at most regs_per_thread, and one CTA must fit the
  // register file.
  int64_t allowed = std::min(target.getRegsPerThread(),
                             target.getRegsPerSm() / (32 * tiling.warps));
  int64_t registers = fa2RegistersPerThread(tiling, valueDim);
  if (registers > allowed)
    return (llvm::Twine("need at least ") + llvm::Twine(registers) +
            " registers per thread; " + target.getChip() + " allows " +
            llvm::Twine(allowed))
        .str();
  return "";
}

struct AttnSelectSchedulePass
    : public attn::impl::AttnSelectScheduleBase<AttnSelectSchedulePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto target =
        module->getAttrOfType<TargetAttr>(AttnDialect::getTargetAttrName());
    if (!target)
      return;
    WalkResult result = module.walk([&](AttentionOp op) {
      return succeeded(select(op, target)) ? WalkResult::advance()
                                           : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult select(AttentionOp op, TargetAttr target) {
    auto queryType = op.getQuery().getType();
    auto valueType = op.getValue().getType();
    int64_t headDim = queryType.getDimSize(3);
    int64_t valueDim = valueType.getDimSize(3);
    if (ShapedType::isDynamic(headDim) || ShapedType::isDynamic(valueDim))
      return op.emitError("attn-select-schedule needs static head "
                          "dimensions");
    int64_t elementBytes = queryType.getElementTypeBitWidth() / 8;

    if (Fa2TilesAttr tiles = op.getTilesAttr()) {
      Fa2Tiling pinned{tiles.getBlockM(), tiles.getBlockN(), tiles.getWarps(),
                       tiles.getStages()};
      std::string why =
          whyNotFitting(pinned, headDim, valueDim, elementBytes, target);
      if (why.empty())
        return success();
      return op.emitError() << "pinned tiles " << tiles << " " << why;
    }
    std::string lastWhy = "no FlashAttention-2 tiling for D above 256";
    // Each candidate with its own pipeline depth, then with one stage.
    for (const Fa2Tiling &candidate :
         fa2Candidates(std::max(headDim, valueDim))) {
      for (int64_t stages : {candidate.stages, int64_t(1)}) {
        Fa2Tiling tiling = candidate;
        tiling.stages = stages;
        lastWhy =
            whyNotFitting(tiling, headDim, valueDim, elementBytes, target);
        if (!lastWhy.empty())
          continue;
        op.setTilesAttr(Fa2TilesAttr::get(op.getContext(), tiling.blockM,
                                          tiling.blockN, tiling.warps,
                                          tiling.stages));
        return success();
      }
    }
    return op.emitError() << "no FlashAttention-2 tiling fits "
                          << target.getChip()
                          << ": the smallest would " << lastWhy;
  }
};

} // namespace
