//===- ReferenceDevices.h - The GPU a chip stands for -----------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A module compiled for a chip (attn-to-ptx's `chip`, attn-compile's
// `--chip`) without an #attn.target of its own gets the limits of one GPU of
// that chip, its reference device: the tiles, the matrix unit and the
// split-KV and Lean grids are then chosen for that GPU rather than for
// sm_80's limits whatever the chip. The table is here, once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_REFERENCEDEVICES_H
#define ATTN_ANALYSIS_REFERENCEDEVICES_H

#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::attn {

/// One GPU's limits, as an #attn.target holds them (every chip in the table
/// has 65536 registers per SM and 255 per thread).
struct ReferenceDevice {
  llvm::StringRef name;
  int64_t sms;
  int64_t smemPerBlock;
  int64_t smemPerSm;
};

/// The reference device of `chip`'s compute capability (sm_90 and sm_90a:
/// an H100 SXM), or std::nullopt for a chip not in the table.
std::optional<ReferenceDevice> referenceDeviceOf(llvm::StringRef chip);

/// `chip`'s #attn.target: its reference device's limits under its own name
/// (so "sm_90a" keeps the architecture-specific instructions), or a null
/// attribute for a chip not in the table.
TargetAttr referenceTargetOf(MLIRContext *context, llvm::StringRef chip);

/// The table for a message: "sm_80 (A100 SXM), sm_86 (A10), ...".
std::string referenceDeviceList();

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_REFERENCEDEVICES_H
