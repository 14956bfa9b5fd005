//===- MatrixUnit.h - Which matrix instructions a kernel uses ---*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The GPU CTA body computes S = Q K^T and O += P V on one of two matrix
// units: mma.sync (sm_80 and later; a warp's m16n8k16 products) or wgmma
// (sm_90a; a warpgroup's m64nNk16 products, operands read from shared
// memory by descriptor). The choice is made here, once, for attn-to-nvgpu
// and the plan report.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_MATRIXUNIT_H
#define ATTN_ANALYSIS_MATRIXUNIT_H

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::attn {

// MatrixUnit (mma_sync, wgmma) is #attn.kernel's `unit` (AttnAttrs.td).

/// Whether `chip` has warpgroup MMA: sm_90a (the architecture-specific
/// features of sm_90; later chips drop wgmma).
bool hasWarpgroupMma(llvm::StringRef chip);

/// "mma.sync" or "wgmma".
llvm::StringRef matrixUnitName(MatrixUnit unit);

/// What a kernel asks for: the target's default, or one unit.
enum class MatrixUnitRequest { Auto, MmaSync, Wgmma };

/// "auto", "mma-sync" or "wgmma" (the pass options' spelling); std::nullopt
/// for anything else.
std::optional<MatrixUnitRequest> parseMatrixUnitRequest(llvm::StringRef text);

/// Why a kernel for `chip` with `tiling` and value dimension `valueDim`
/// cannot compute on wgmma, or an empty string: wgmma needs sm_90a (the
/// architecture-specific features of sm_90; later chips drop it), warps in
/// whole warpgroups of 4 each owning one m16 row tile (block_m = 16 x
/// warps, so the warpgroup's 64 rows are one m64 product), and N (block_n
/// and Dv) within its 256.
std::string wgmmaUnfit(llvm::StringRef chip, const Fa2Tiling &tiling,
                       int64_t valueDim);

/// The unit for `request`: with Auto, wgmma where it fits (wgmmaUnfit),
/// mma.sync elsewhere; std::nullopt when wgmma is requested and does not
/// fit.
std::optional<MatrixUnit> chooseMatrixUnit(MatrixUnitRequest request,
                                           llvm::StringRef chip,
                                           const Fa2Tiling &tiling,
                                           int64_t valueDim);

/// The widest rows (max(D, Dv)) of a backward kernel on wgmma: at 256 a
/// key/value CTA's dK or dV accumulators take 128 registers a thread, which
/// a wgmma holds for the whole product, and ptxas 13.0 spilled (48 to 556
/// bytes of spill stores, 4 to 364 with 16 streamed rows instead of 32) in
/// every backward kernel of test/Target/NVPTX/ptxas-backward.mlir at
/// D = 256, none at 192 and below; mma.sync spilled none.
constexpr int64_t kGradWgmmaMaxRows = 192;

/// Why the backward kernel (fa2GradKernelTiling's tiles) for `chip` cannot
/// compute on wgmma, or an empty string: wgmmaUnfit, or rows wider than
/// kGradWgmmaMaxRows.
std::string gradWgmmaUnfit(llvm::StringRef chip, int64_t headDim,
                           int64_t valueDim);

/// chooseMatrixUnit for the backward kernel (gradWgmmaUnfit).
std::optional<MatrixUnit> chooseGradMatrixUnit(MatrixUnitRequest request,
                                               llvm::StringRef chip,
                                               int64_t headDim,
                                               int64_t valueDim);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_MATRIXUNIT_H
