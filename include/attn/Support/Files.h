//===- Files.h - Reading and writing the tools' files safely ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// How every tool and libattnrt touch the files a user names, so that bad
// paths end in an error naming the path and the reason:
// - inputs must be regular files of a bounded size (a device or a FIFO such
//   as /dev/zero would be read until memory runs out);
// - a regular output is written to a temporary file in the same directory,
//   flushed to disk, checked and renamed over the final name, so that a full
//   disk leaves the old file (or none), never a truncated one; an existing
//   path that is not a regular file (a device, a FIFO: /dev/stdout) is
//   written in place, never replaced; a directory is refused.
// Plain POSIX, without LLVM: attn-launch and libattnrt run where LLVM is not
// installed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_FILES_H
#define ATTN_SUPPORT_FILES_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlir::attn::files {

/// An error message naming the path and the reason; empty on success.
using Error = std::string;

/// The largest MLIR source the tools read (1 GiB): far above any module of
/// attentions, below one whose parse alone would exhaust memory.
constexpr uint64_t kMaxSourceBytes = uint64_t(1) << 30;

/// Checks that `path` is a regular file of at most `maxBytes` bytes.
Error checkInput(const std::string &path, uint64_t maxBytes);

/// Reads the regular file `path` of at most `maxBytes` bytes into `contents`.
Error readFile(const std::string &path, uint64_t maxBytes,
               std::string &contents);

/// Writes the concatenation of `chunks` to `path` as described above.
Error writeFile(const std::string &path,
                const std::vector<std::string_view> &chunks);

} // namespace mlir::attn::files

#endif // ATTN_SUPPORT_FILES_H
