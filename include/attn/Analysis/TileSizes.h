//===- TileSizes.h - The tile sizes an attention is decomposed with -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_TILESIZES_H
#define ATTN_ANALYSIS_TILESIZES_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

#include <cstdint>
#include <optional>

namespace mlir::attn {

class AttentionOp;
class AttentionGradOp;

struct TileSizes {
  int64_t blockM;
  int64_t blockN;
};

/// The tiles of `op`: each of `blockM`/`blockN` when non-zero, else the op's
/// `tiles` attribute, else FlashAttention-2's default for its head dimension
/// and kernel (defaultFa2Tiling; split-KV's for an op that splits keys and
/// values), with a block mask, the largest divisor of the mask's block side
/// that is not above it, a multiple of 16 where one divides, so that tiles nest
/// in the mask's blocks. std::nullopt when nothing applies (a head dimension
/// above 256, or dynamic, without pinned tiles).
std::optional<TileSizes> resolveTileSizes(AttentionOp op, int64_t blockM,
                                          int64_t blockN);

/// Where resolveTileSizes' default comes from, for reports: "FlashAttention-2's
/// default for D=<max(D, Dv)>", or "FlashAttention-2's split-KV default ..."
/// for an op that splits keys and values.
std::string describeDefaultTiling(AttentionOp op);

/// Why no #attn.fa2 tiling (and so no GPU kernel, split-KV or Lean) nests in
/// `op`'s block mask: its blocks' sides are not multiples of 16; std::nullopt
/// when they are or there is no block mask. The message the GPU path's
/// passes and the plan report give.
std::optional<std::string> describeUnnestableBlocks(AttentionOp op);

/// resolveTileSizes, with an error on `op` that says how to pin tiles when
/// none apply, and one when the tiles do not nest in the block mask's
/// blocks.
FailureOr<TileSizes> requireTileSizes(AttentionOp op, int64_t blockM,
                                      int64_t blockN);

/// The tiles of the backward `op`: each of `blockM` (query rows per step)
/// and `blockN` (keys per key/value block) when non-zero, else the op's
/// `tiles`, else FlashAttention-2's backward default (its sm80 kernel
/// traits: 128 x 128 up to D = 64, 64 x 128 up to D = 128, 64 x 64 above),
/// with a block mask the largest divisor of its block side not above it.
/// An error on `op` when none applies (D dynamic or above 256 without pinned
/// tiles) or when the tiles do not nest in the block mask's blocks.
FailureOr<TileSizes> requireGradTileSizes(AttentionGradOp op, int64_t blockM,
                                          int64_t blockN);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_TILESIZES_H
