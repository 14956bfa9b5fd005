//===- TileSizes.cpp - The tile sizes an attention is decomposed with -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/TileSizes.h"

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/Support/FormatVariadic.h"

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

std::optional<TileSizes> mlir::attn::resolveTileSizes(AttentionOp op,
                                                      int64_t blockM,
                                                      int64_t blockN) {
  if (Fa2TilesAttr tiles = op.getTilesAttr()) {
    blockM = blockM ? blockM : tiles.getBlockM();
    blockN = blockN ? blockN : tiles.getBlockN();
  }
  if (!blockM || !blockN) {
    RankedTensorType q = op.getQuery().getType(), v = op.getValue().getType();
    if (q.isDynamicDim(3) || v.isDynamicDim(3))
      return std::nullopt;
    int64_t bytes = q.getElementType().getIntOrFloatBitWidth() / 8;
    std::optional<Fa2Tiling> tiling =
        defaultFa2Tiling(q.getDimSize(3), v.getDimSize(3), bytes, std::nullopt,
                         scoreWorkOf(op), op.splitsKeyValues());
    if (!tiling)
      return std::nullopt;
    // Default tiles nest in the block mask's blocks, by the CPU's rule, which
    // takes any side (fa2Tilings, the GPU's, needs multiples of 16 and keeps
    // warps to the table's rows each: 48 x 80 blocks at D = 128 give 48 x 16
    // tiles here, 16 x 16 there).
    std::optional<std::pair<int64_t, int64_t>> maskBlock =
        op.getBlockMaskBlock();
    if (!blockM)
      blockM = maskBlock ? nestedTileSide(maskBlock->first, tiling->blockM)
                         : tiling->blockM;
    if (!blockN)
      blockN = maskBlock ? nestedTileSide(maskBlock->second, tiling->blockN)
                         : tiling->blockN;
  }
  return TileSizes{blockM, blockN};
}

std::optional<std::string>
mlir::attn::describeUnnestableBlocks(AttentionOp op) {
  std::optional<std::pair<int64_t, int64_t>> blocks = op.getBlockMaskBlock();
  if (!blocks || (blocks->first % 16 == 0 && blocks->second % 16 == 0))
    return std::nullopt;
  return llvm::formatv("no FlashAttention-2 tiling nests in the block mask's "
                       "{0}x{1} blocks: the sides of tiles are multiples of "
                       "16, so a block's must be too (the CPU takes any)",
                       blocks->first, blocks->second)
      .str();
}

std::string mlir::attn::describeDefaultTiling(AttentionOp op) {
  int64_t widest = std::max(op.getQuery().getType().getDimSize(3),
                            op.getValue().getType().getDimSize(3));
  return llvm::formatv("FlashAttention-2's {0}default for D={1}",
                       op.splitsKeyValues() ? "split-KV " : "", widest);
}

FailureOr<TileSizes>
mlir::attn::requireTileSizes(AttentionOp op, int64_t blockM, int64_t blockN) {
  if (blockM < 0 || blockN < 0)
    return op.emitError() << "block-m and block-n must not be negative (0: "
                             "the default), got "
                          << blockM << " and " << blockN;
  if (blockM > Fa2TilesAttr::kMaxBlock || blockN > Fa2TilesAttr::kMaxBlock)
    return op.emitError() << "block-m and block-n must be at most "
                          << Fa2TilesAttr::kMaxBlock << ", got " << blockM
                          << " and " << blockN;
  std::optional<TileSizes> tiles = resolveTileSizes(op, blockM, blockN);
  if (!tiles)
    return op.emitError()
           << "no default tiling for this head dimension (above 256 or "
              "dynamic): pin one with the tiles attribute or the "
              "block-m/block-n options";
  if (std::optional<std::pair<int64_t, int64_t>> maskBlock =
          op.getBlockMaskBlock())
    if (maskBlock->first % tiles->blockM || maskBlock->second % tiles->blockN)
      return op.emitError() << "tiles " << tiles->blockM << "x" << tiles->blockN
                            << " do not nest in the block mask's "
                            << maskBlock->first << "x" << maskBlock->second
                            << " blocks: block_m must divide Bq and block_n Bk";
  return *tiles;
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
