//===- PartitionKV.cpp - Split-KV and Lean as partials and a merge --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Makes the work partition of split-KV and Lean attention explicit: an
// attn.attention with such a partition becomes an attn.partial_attention
// into f32 partial slots and the attn.merge that combines them. The pieces
// each slot holds are WorkAssignment's; this pass fixes the tiles they are
// made of and the number of slots.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/IntegerArith.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Analysis/WorkAssignment.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/IndexArith.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARTITIONKV
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The tiles of the pieces: chooseTiles' (the op's, with the block sizes of
/// the options where given, else FlashAttention-2's default), as #attn.fa2,
/// which the pieces' partial attention carries.
FailureOr<Fa2TilesAttr> resolveTiles(AttentionOp op, int64_t blockM,
                                     int64_t blockN) {
  FailureOr<TileChoice> choice = requireTiles(
      op, {TileTarget::Cpu, blockM, blockN, getEnclosingTarget(op)});
  if (failed(choice))
    return failure();
  const Fa2Tiling &tiling = choice->tiling;
  if (std::optional<std::pair<int64_t, int64_t>> maskBlock =
          op.getBlockMaskBlock())
    if (tiling.blockM % 16 || tiling.blockN % 16)
      return op.emitError()
             << "the pieces of " << op.getPartitionAttr()
             << " take #attn.fa2 tiles, whose sides are multiples of 16; "
                "tiles nest in the block mask's "
             << maskBlock->first << "x" << maskBlock->second
             << " blocks, which leaves " << tiling.blockM << "x"
             << tiling.blockN << ": use blocks that are multiples of 16";
  auto emitError = [&] { return op.emitError(); };
  if (failed(Fa2TilesAttr::verify(emitError, tiling.blockM, tiling.blockN,
                                  tiling.warps, tiling.stages,
                                  tiling.packedHeads)))
    return failure();
  return fa2TilesAttrOf(op.getContext(), tiling);
}

/// The partial slots a Lean schedule over `ctas` CTAs needs: the most pieces
/// any output tile is cut into.
template <typename A>
typename A::Value
leanSlots(A &a, MaskGeometry<A> geometry, typename A::Value batchHeads,
          typename A::Value queryBlocks, typename A::Value maxBlocks,
          int64_t ctas, Fa2TilesAttr tiles) {
  return LeanWork<A>::create(a, geometry, tiles.getBlockM(), tiles.getBlockN(),
                             queryBlocks, batchHeads, a.constant(ctas))
      .assignment.slots(maxBlocks);
}

/// The number of slots: static when the sizes are, else an index value.
OpFoldResult slotCount(AttentionOp op, Fa2TilesAttr tiles,
                       ImplicitLocOpBuilder &b) {
  Attribute partition = op.getPartitionAttr();
  if (auto split = dyn_cast<SplitKVAttr>(partition))
    return b.getIndexAttr(split.getSplits());
  int64_t ctas = cast<LeanAttr>(partition).getCtas();
  int64_t blockM = tiles.getBlockM(), blockN = tiles.getBlockN();
  int64_t packed = tiles.getPackedHeads();
  if (std::optional<AttentionProblem> p = AttentionProblem::fromOp(op)) {
    p->packedHeads = packed;
    IntegerArith a;
    int64_t maxBlocks = *llvm::max_element(p->kvBlockCounts(blockM, blockN));
    return b.getIndexAttr(
        leanSlots(a, p->geometry(), p->batch * p->tiledHeads(),
                  p->queryBlocks(blockM), maxBlocks, ctas, tiles));
  }
  IndexArith a{b};
  Value q = op.getQuery(), k = op.getKey();
  Value queryLen = tensor::DimOp::create(b, q, 2);
  Value keyLen = tensor::DimOp::create(b, k, 2);
  MaskGeometry<IndexArith> geometry{a,
                                    queryLen,
                                    keyLen,
                                    op.getCausal(),
                                    op.getWindowSizes(),
                                    std::nullopt,
                                    packed};
  Value batchHeads = a.mul(tensor::DimOp::create(b, q, 0),
                           a.div(tensor::DimOp::create(b, q, 1), packed));
  // Any tile visits at most every block.
  return leanSlots(a, geometry, batchHeads,
                   a.ceilDiv(geometry.tiledRows(), blockM),
                   a.ceilDiv(keyLen, blockN), ctas, tiles);
}

struct AttnPartitionKVPass
    : public attn::impl::AttnPartitionKVBase<AttnPartitionKVPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if (isa_and_nonnull<SplitKVAttr, LeanAttr>(op.getPartitionAttr()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (AttentionOp op : ops)
      if (failed(partition(op, rewriter)))
        return signalPassFailure();
  }

  LogicalResult partition(AttentionOp op, IRRewriter &rewriter) {
    FailureOr<Fa2TilesAttr> tiles = resolveTiles(op, blockM, blockN);
    if (failed(tiles))
      return failure();
    // A huge split count would allocate slots without bound.
    if (auto split = dyn_cast<SplitKVAttr>(op.getPartitionAttr()))
      if (failed(checkSplitCount(op, split.getSplits(), tiles->getBlockN())))
        return failure();
    rewriter.setInsertionPoint(op);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value q = op.getQuery(), v = op.getValue();
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, b.getLoc(), q);
    sizes.insert(sizes.begin(), slotCount(op, *tiles, b));
    Type f32 = b.getF32Type();
    Value partialLse =
        tensor::EmptyOp::create(b, ArrayRef(sizes).drop_back(), f32);
    sizes.back() = tensor::getMixedSize(b, b.getLoc(), v, 3);
    Value partialOut = tensor::EmptyOp::create(b, sizes, f32);

    auto partial = PartialAttentionOp::create(
        b, TypeRange{partialOut.getType(), partialLse.getType()}, q,
        op.getKey(), v, op.getMask(), op.getBlockMask(), op.getKeyLengths(),
        /*query_offset=*/Value(), /*key_offset=*/Value(),
        /*query_total=*/Value(), /*key_total=*/Value(),
        ValueRange{partialOut, partialLse}, op.getScaleAttr(),
        op.getCausalAttr(), op.getWindowAttr(), op.getSoftcapAttr(),
        op.getBlockMaskSizeAttr(), *tiles, op.getPartitionAttr(),
        op.getKernelAttr());
    rewriter.inlineRegionBefore(op.getScore(), partial.getScore(),
                                partial.getScore().end());
    auto merge = MergeOp::create(b, op->getResultTypes(), partial.getResult(0),
                                 partial.getResult(1), op.getOutputs(),
                                 b.getI64IntegerAttr(0));
    rewriter.replaceOp(op, merge.getResults());
    return success();
  }
};

} // namespace
