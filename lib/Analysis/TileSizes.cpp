//===- TileSizes.cpp - The tile sizes an attention is decomposed with -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/TileSizes.h"

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Dialect/Attn/IR/Attn.h"

using namespace mlir;
using namespace mlir::attn;

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
    std::optional<Fa2Tiling> tiling = defaultFa2Tiling(
        q.getDimSize(3), v.getDimSize(3), bytes, std::nullopt);
    if (!tiling)
      return std::nullopt;
    blockM = blockM ? blockM : tiling->blockM;
    blockN = blockN ? blockN : tiling->blockN;
  }
  return TileSizes{blockM, blockN};
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
  if (std::optional<TileSizes> tiles = resolveTileSizes(op, blockM, blockN))
    return *tiles;
  return op.emitError()
         << "no default tiling for this head dimension (above 256 or "
            "dynamic): pin one with the tiles attribute or the "
            "block-m/block-n options";
}
