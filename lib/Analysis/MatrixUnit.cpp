//===- MatrixUnit.cpp - Which matrix instructions a kernel uses -----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/MatrixUnit.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir::attn;

llvm::StringRef mlir::attn::matrixUnitName(MatrixUnit unit) {
  return unit == MatrixUnit::Wgmma ? "wgmma" : "mma.sync";
}

bool mlir::attn::hasWarpgroupMma(llvm::StringRef chip) {
  return chip == "sm_90a";
}

std::optional<MatrixUnitRequest>
mlir::attn::parseMatrixUnitRequest(llvm::StringRef text) {
  return llvm::StringSwitch<std::optional<MatrixUnitRequest>>(text)
      .Case("auto", MatrixUnitRequest::Auto)
      .Case("mma-sync", MatrixUnitRequest::MmaSync)
      .Case("wgmma", MatrixUnitRequest::Wgmma)
      .Default(std::nullopt);
}

std::string mlir::attn::wgmmaUnfit(llvm::StringRef chip,
                                   const Fa2Tiling &tiling, int64_t valueDim) {
  if (!hasWarpgroupMma(chip))
    return "wgmma needs sm_90a; the chip is " + chip.str();
  if (tiling.warps % 4 != 0 || tiling.blockM != 16 * tiling.warps)
    return "wgmma needs warps in warpgroups of 4, each warp owning 16 rows "
           "(block_m = 16 x warps); the tiles are " +
           std::to_string(tiling.blockM) + " x " +
           std::to_string(tiling.blockN) + " with " +
           std::to_string(tiling.warps) + " warps";
  if (tiling.blockN > 256 || valueDim > 256)
    return "wgmma's N is at most 256; block_n is " +
           std::to_string(tiling.blockN) + " and Dv " +
           std::to_string(valueDim);
  return "";
}

/// The unit for `request` where wgmma `fits` or not.
static std::optional<MatrixUnit> chooseUnit(MatrixUnitRequest request,
                                            bool fits) {
  switch (request) {
  case MatrixUnitRequest::MmaSync:
    return MatrixUnit::MmaSync;
  case MatrixUnitRequest::Wgmma:
    return fits ? std::optional(MatrixUnit::Wgmma) : std::nullopt;
  case MatrixUnitRequest::Auto:
    break;
  }
  return fits ? MatrixUnit::Wgmma : MatrixUnit::MmaSync;
}

std::optional<MatrixUnit>
mlir::attn::chooseMatrixUnit(MatrixUnitRequest request, llvm::StringRef chip,
                             const Fa2Tiling &tiling, int64_t valueDim) {
  return chooseUnit(request, wgmmaUnfit(chip, tiling, valueDim).empty());
}

std::string mlir::attn::gradWgmmaUnfit(llvm::StringRef chip, int64_t headDim,
                                       int64_t valueDim) {
  std::string why =
      wgmmaUnfit(chip, fa2GradKernelTiling(headDim, valueDim), valueDim);
  if (why.empty() && std::max(headDim, valueDim) > kGradWgmmaMaxRows)
    why = "the backward kernel's rows (max(D, Dv) = " +
          std::to_string(std::max(headDim, valueDim)) +
          ") are wider than wgmma's " + std::to_string(kGradWgmmaMaxRows) +
          ": its dK or dV accumulators leave too few registers (ptxas "
          "spilled)";
  return why;
}

std::optional<MatrixUnit>
mlir::attn::chooseGradMatrixUnit(MatrixUnitRequest request,
                                 llvm::StringRef chip, int64_t headDim,
                                 int64_t valueDim) {
  return chooseUnit(request, gradWgmmaUnfit(chip, headDim, valueDim).empty());
}
