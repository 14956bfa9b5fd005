//===- TileSizes.cpp - The one choice of an attention's tiles ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/TileSizes.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;

/// The tile side for a block mask's `side` and FlashAttention-2's `limit`:
/// fa2NestedSide (a side #attn.fa2 tiles, and so split-KV, Lean and the GPU,
/// can take), else the largest divisor of `side` not above `limit`.
static int64_t nestedTileSide(int64_t side, int64_t limit) {
  if (std::optional<int64_t> size = fa2NestedSide(side, limit))
    return *size;
  for (int64_t size = std::min(side, limit); size > 1; --size)
    if (side % size == 0)
      return size;
  return 1;
}

std::string mlir::attn::describeMisfit(const Fa2Misfit &misfit,
                                      TargetAttr target) {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (misfit.limit) {
  case Fa2Misfit::Limit::SharedMemoryPerBlock:
    os << "need " << misfit.needed << " bytes of shared memory per block; "
       << target.getChip() << " allows " << misfit.allowed;
    break;
  case Fa2Misfit::Limit::RegistersPerThread:
    os << "need at least " << misfit.needed << " registers per thread; "
       << target.getChip() << " allows " << misfit.allowed;
    break;
  case Fa2Misfit::Limit::SharedMemoryPerSm:
    os << "need " << misfit.needed
       << " bytes of shared memory on an SM (with the "
       << kReservedSharedBytesPerCta << " reserved per block); "
       << target.getChip() << " has " << misfit.allowed;
    break;
  }
  return text;
}

static constexpr const char *kNoDefaultTiling =
    "no default tiling for this head dimension (above 256 or dynamic): pin "
    "one with the tiles attribute or the block-m/block-n options";

/// FlashAttention-2's default tiling of `op` for `request` (step 2 of
/// chooseTiles), or std::nullopt with `why`.
static std::optional<Fa2Tiling> defaultTiling(AttentionOp op,
                                              const TileRequest &request,
                                              std::string &why) {
  RankedTensorType q = op.getQuery().getType(), v = op.getValue().getType();
  if (q.isDynamicDim(3) || v.isDynamicDim(3)) {
    why = kNoDefaultTiling;
    return std::nullopt;
  }
  int64_t headDim = q.getDimSize(3), valueDim = v.getDimSize(3);
  int64_t bytes = q.getElementTypeBitWidth() / 8;
  ScoreWork work = scoreWorkOf(op);
  bool splitKv = op.splitsKeyValues();
  MaskBlocks blocks = op.getBlockMaskBlock();
  bool unnestable =
      blocks && (blocks->first % 16 != 0 || blocks->second % 16 != 0);
  if (unnestable && request.target == TileTarget::Gpu) {
    why = llvm::formatv("no FlashAttention-2 tiling nests in the block mask's "
                        "{0}x{1} blocks: the sides of tiles are multiples of "
                        "16, so a block's must be too (the CPU takes any)",
                        blocks->first, blocks->second)
              .str();
    return std::nullopt;
  }
  if (std::max(headDim, valueDim) > kFa2MaxHeadDim) {
    why = kNoDefaultTiling;
    return std::nullopt;
  }
  std::optional<Fa2Tiling> tiling;
  if (request.gpu) {
    std::optional<Fa2Misfit> misfit;
    tiling = selectFa2Tiling(
        headDim, valueDim, bytes, gpuLimits(request.gpu, request.matrixUnit),
        &misfit, work, splitKv, unnestable ? std::nullopt : blocks);
    if (!tiling) {
      why = "no FlashAttention-2 tiling fits " + request.gpu.getChip().str();
      if (misfit)
        why += ": the smallest would " + describeMisfit(*misfit, request.gpu);
      return std::nullopt;
    }
  } else {
    tiling = defaultFa2Tiling(headDim, valueDim, bytes, std::nullopt, work,
                              splitKv, unnestable ? std::nullopt : blocks);
    if (!tiling) {
      why = llvm::formatv("no FlashAttention-2 tiling fits D = {0}, Dv = {1} "
                          "in the registers: pin one with the op's tiles "
                          "attribute (#attn.fa2<block_m = ..., block_n = ..., "
                          "warps = ..., stages = ...>)",
                          headDim, valueDim)
                .str();
      return std::nullopt;
    }
  }
  // The CPU's tiles in blocks that no #attn.fa2 tiling nests in.
  if (unnestable) {
    tiling->blockM = nestedTileSide(blocks->first, tiling->blockM);
    tiling->blockN = nestedTileSide(blocks->second, tiling->blockN);
    tiling->warps = 1;
  }
  tiling->packedHeads = selectPackedHeads(op, tiling->blockM);
  return tiling;
}

FailureOr<TileChoice> mlir::attn::chooseTiles(AttentionOp op,
                                              const TileRequest &request,
                                              std::string &why) {
  if (request.blockM < 0 || request.blockN < 0) {
    why = llvm::formatv("block-m and block-n must not be negative (0: the "
                        "default), got {0} and {1}",
                        request.blockM, request.blockN);
    return failure();
  }
  if (request.blockM > Fa2TilesAttr::kMaxBlock ||
      request.blockN > Fa2TilesAttr::kMaxBlock) {
    why = llvm::formatv("block-m and block-n must be at most {0}, got {1} and "
                        "{2}",
                        Fa2TilesAttr::kMaxBlock, request.blockM,
                        request.blockN);
    return failure();
  }
  TileChoice choice;
  if (Fa2TilesAttr tiles = op.getTilesAttr()) {
    choice.tiling = fa2TilingOf(tiles);
    choice.fromOp = true;
  } else if (std::optional<Fa2Tiling> tiling =
                 defaultTiling(op, request, why)) {
    choice.tiling = *tiling;
  } else if (request.blockM && request.blockN) {
    // Both sides pinned by the request, and no default to take the GPU's
    // parameters from (which the CPU does not read).
    choice.tiling = Fa2Tiling{request.blockM, request.blockN, 1, 1};
  } else {
    return failure();
  }
  Fa2Tiling &tiling = choice.tiling;
  if (request.blockM)
    tiling.blockM = request.blockM;
  if (request.blockN)
    tiling.blockN = request.blockN;
  while (tiling.warps > 1 && tiling.blockM % (16 * tiling.warps) != 0)
    tiling.warps /= 2;
  if (MaskBlocks blocks = op.getBlockMaskBlock())
    if (blocks->first % tiling.blockM || blocks->second % tiling.blockN) {
      why = llvm::formatv("tiles {0}x{1} do not nest in the block mask's "
                          "{2}x{3} blocks: block_m must divide Bq and block_n "
                          "Bk",
                          tiling.blockM, tiling.blockN, blocks->first,
                          blocks->second);
      return failure();
    }
  return choice;
}

FailureOr<TileChoice> mlir::attn::requireTiles(AttentionOp op,
                                               const TileRequest &request) {
  std::string why;
  FailureOr<TileChoice> choice = chooseTiles(op, request, why);
  if (failed(choice))
    return op.emitError() << why;
  return choice;
}

std::string mlir::attn::describeDefaultTiling(AttentionOp op, TargetAttr gpu) {
  int64_t widest = std::max(op.getQuery().getType().getDimSize(3),
                            op.getValue().getType().getDimSize(3));
  std::string text =
      llvm::formatv("FlashAttention-2's {0}default for D={1}",
                    op.splitsKeyValues() ? "split-KV " : "", widest);
  if (gpu)
    text += " on " + gpu.getChip().str();
  return text;
}

FailureOr<TileSizes> mlir::attn::requireGradTileSizes(AttentionGradOp op,
                                                      int64_t blockM,
                                                      int64_t blockN) {
  if (blockM < 0 || blockN < 0 || blockM > Fa2TilesAttr::kMaxBlock ||
      blockN > Fa2TilesAttr::kMaxBlock)
    return op.emitError() << "block-m and block-n must be from 0 (the "
                             "default) to "
                          << Fa2TilesAttr::kMaxBlock << ", got " << blockM
                          << " and " << blockN;
  if (Fa2TilesAttr tiles = op.getTilesAttr()) {
    blockM = blockM ? blockM : tiles.getBlockM();
    blockN = blockN ? blockN : tiles.getBlockN();
  }
  std::optional<std::pair<int64_t, int64_t>> maskBlock =
      op.getBlockMaskBlock();
  if (!blockM || !blockN) {
    RankedTensorType q = op.getQuery().getType(), v = op.getValue().getType();
    int64_t widest = std::max(q.getDimSize(3), v.getDimSize(3));
    if (q.isDynamicDim(3) || v.isDynamicDim(3) || widest > 256)
      return op.emitError()
             << "no default backward tiling for this head dimension (above "
                "256 or dynamic): pin one with the tiles attribute or the "
                "block-m/block-n options";
    int64_t defaultM = widest <= 64 ? 128 : 64;
    int64_t defaultN = widest <= 128 ? 128 : 64;
    if (!blockM)
      blockM = maskBlock ? nestedTileSide(maskBlock->first, defaultM) : defaultM;
    if (!blockN)
      blockN =
          maskBlock ? nestedTileSide(maskBlock->second, defaultN) : defaultN;
  }
  if (maskBlock && (maskBlock->first % blockM || maskBlock->second % blockN))
    return op.emitError() << "tiles " << blockM << "x" << blockN
                          << " do not nest in the block mask's "
                          << maskBlock->first << "x" << maskBlock->second
                          << " blocks: block_m must divide Bq and block_n Bk";
  return TileSizes{blockM, blockN};
}
