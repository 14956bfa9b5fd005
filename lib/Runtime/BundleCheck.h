//===- BundleCheck.h - A bundle's manifest against its PTX ------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The one check every bundle passes before libattnrt uses it (attnrtBundle-
// Load, attnrtBundleLoadFromMemory, attnrtBundleValidate, attnrtBundle-
// ValidateFromMemory, and so attn-launch --validate): its PTX is whole, and
// its manifest (already read by parseManifest) agrees with it and with
// itself, so that a launch never hands the driver parameters, a block, shared
// memory or a grid the kernel was not compiled for (docs/runtime.md, "What a
// bundle is checked for"). No driver or device is needed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_BUNDLECHECK_H
#define ATTN_LIB_RUNTIME_BUNDLECHECK_H

#include "Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::runtime {

/// One parameter of a PTX entry as its declaration states it.
struct PtxParam {
  /// The type without its dot ("u64", "b32"); empty when there is none.
  std::string type;
  /// `.ptr` (LLVM's NVPTX marks a kernel's pointer parameters so).
  bool pointer = false;
  /// `name[N]`: an array of N of the type (a by-value struct); 0 when not
  /// an array.
  bool array = false;
  int64_t arrayLength = 0;
  /// `.align N`; 0 without.
  int64_t alignment = 0;

  /// Whether the runtime's 64-bit value fits it: a .u64, .s64 or .b64.
  bool is64BitInteger() const;
  /// Whether a CUtensorMap fits it: `.align 64 .b8 name[128]` (or wider
  /// alignment).
  bool isTensorMap() const;
  /// "ptr", "u64", "b32", "b8[128]": for messages.
  std::string kind() const;
};

/// A `.entry` of the PTX module.
struct PtxEntry {
  std::string name;
  std::vector<PtxParam> params;
  /// `.maxntid` and `.reqntid` (missing dimensions 1); 0 without.
  int64_t maxntid[3] = {0, 0, 0};
  int64_t reqntid[3] = {0, 0, 0};
  /// A definition (`{ ... }`), not a declaration (`;`).
  bool hasBody = false;
  /// The line of `.entry`.
  size_t line = 0;
};

struct PtxModule {
  std::vector<PtxEntry> entries;

  /// The definition of `name`, else its declaration, else null.
  const PtxEntry *find(const std::string &name) const;
};

/// Reads the module structure of `ptx`: a `.version` first and a `.target`,
/// and each entry's parameters, thread-count directives and body, whose
/// braces must balance (comments and strings skipped). On failure returns
/// false with `error` naming `ptxName`: not PTX, a malformed parameter list,
/// or a file that ends inside a body, a parameter list or a comment (a
/// truncated file).
bool parsePtx(const std::string &ptx, const std::string &ptxName,
              PtxModule &module, std::string &error);

/// The bundle check: parsePtx, then for each kernel of `manifest`
/// 1. its entry is defined, with exactly the parameters the manifest
///    implies: a 64-bit pointer per tensor and per workspace, then a 64-bit
///    integer per scalar;
/// 2. its block equals the entry's .reqntid or .maxntid (attn-compile writes
///    the block it compiled for) and holds the tiles' warps;
/// 3. its dynamic shared memory is at most the most any GPU offers a block
///    (227 KiB) and, for an attention kernel (Q, K, V, O first), at least what
///    its tiles stage (lib/Analysis fa2SharedMemoryBytes);
/// 4. an attention kernel's grid is FlashAttention-2's (ceil(p Sq / block_m),
///    B, Hq / p x splits) with split-KV's workspaces exactly when splits > 1,
///    or, persistent (Lean), [G, 1, 1] with workspaces of G CTAs; the
///    workspaces hold at least what the kernel writes.
/// On failure returns false with `error` naming the kernel and
/// `manifestName` or `ptxName`.
bool checkBundle(const Manifest &manifest, const std::string &ptx,
                 const std::string &manifestName, const std::string &ptxName,
                 std::string &error);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_BUNDLECHECK_H
