//===- TileSizes.h - The one choice of an attention's tiles ---*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_TILESIZES_H
#define ATTN_ANALYSIS_TILESIZES_H

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

#include <cstdint>
#include <optional>

namespace mlir::attn {

struct TileSizes {
  int64_t blockM;
  int64_t blockN;
};

/// What an attention's tiles are for.
enum class TileTarget {
  /// The CPU's loops (attn-decompose, attn-partition-kv, attn-run): besides
  /// every tiling a GPU kernel can take, tiles nested in a block mask whose
  /// sides are not multiples of 16.
  Cpu,
  /// A GPU kernel: #attn.fa2 tilings only.
  Gpu,
};

/// What a pass asks chooseTiles for.
struct TileRequest {
  TileTarget target = TileTarget::Cpu;
  /// Sides a pass's options pin (0: not pinned): they override the op's
  /// tiles and the default.
  int64_t blockM = 0, blockN = 0;
  /// The GPU the default must fit (the #attn.target of the op's module);
  /// null: FlashAttention-2's table within the registers alone.
  TargetAttr gpu;
  /// The matrix unit the kernel will use: mma-sync takes FlashAttention-2's
  /// table on a chip with warpgroup MMA too (gpuLimits).
  MatrixUnitRequest matrixUnit = MatrixUnitRequest::Auto;
};

/// The tiles of an attention and where they come from.
struct TileChoice {
  /// Warps, stages and packing are the GPU's (the CPU reads the sides); the
  /// sides of a CPU choice need not be #attn.fa2's (multiples of 16).
  Fa2Tiling tiling;
  /// The op's `tiles` attribute, not the default.
  bool fromOp = false;
};

/// The one decision of an attention's tiles: every pass (attn-select-schedule,
/// attn-derive-block-mask, attn-partition-kv, attn-decompose, attn-to-nvgpu),
/// the plan report and the tools take it, so a plan means the same on the CPU
/// and the GPU.
///   1. The op's `tiles` when it has them (warps, stages and packing too).
///   2. Else FlashAttention-2's default for max(D, Dv) (fa2Tilings: split-KV's
///      table for an op that splits keys and values, cut down to nest in the
///      block mask's blocks): with `request.gpu`, the first that fits the
///      target (selectFa2Tiling), else the first within the registers
///      (defaultFa2Tiling); with GQA packing (selectPackedHeads). For the
///      CPU only, a block mask whose sides are not multiples of 16, in which
///      no #attn.fa2 tiling nests, gets the largest divisors of its sides
///      not above the table's first tiling's.
///   3. The request's sides replace the chosen ones; warps are halved until
///      each owns whole m16 tiles of rows.
/// Failure, with `why` (a sentence on how to go on), when the request's sides
/// are out of range, nothing applies (a dynamic head dimension or one above
/// 256 without pinned tiles, no tiling that fits the target, a GPU kernel
/// with a block mask whose sides are not multiples of 16), or the tiles do
/// not nest in the block mask's blocks.
FailureOr<TileChoice> chooseTiles(AttentionOp op, const TileRequest &request,
                                  std::string &why);

/// "need ...; <chip> allows ...": why a CTA does not fit `target`.
std::string describeMisfit(const Fa2Misfit &misfit, TargetAttr target);

/// chooseTiles, with `why` as an error on `op`.
FailureOr<TileChoice> requireTiles(AttentionOp op, const TileRequest &request);

/// Where chooseTiles' default comes from, for reports: "FlashAttention-2's
/// default for D=<max(D, Dv)>" ("... split-KV default ..." for an op that
/// splits keys and values), and " on <chip>" with a target.
std::string describeDefaultTiling(AttentionOp op, TargetAttr gpu);

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
