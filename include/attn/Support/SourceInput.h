//===- SourceInput.h - Reading MLIR sources within bounds -------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// How the tools (attn-opt, attn-run, attn-compile) read an MLIR source before
// MLIR's parser sees it. The parser recurses once per level of nesting and
// parses integer literals in time quadratic in their length: a source nested
// 10,000 levels deep overflows the stack, and a literal of a million digits
// takes minutes (stock mlir-opt too). So a source is refused when it is not a
// regular file of at most 1 GiB (Files.h), nests brackets deeper than
// kMaxSourceNesting, or has a number longer than kMaxLiteralDigits; string
// literals and comments are skipped, so dense hex blobs are not limited.
// Also refused: a `dimensions = [` or `permutation = [` list that is not
// integers, which MLIR 22's linalg named-op parsers crash on.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_SOURCEINPUT_H
#define ATTN_SUPPORT_SOURCEINPUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace mlir::attn {

/// Deepest nesting of (), [] and {} a source may have: real modules nest a
/// few dozen levels; MLIR's parser overflows an 8 MiB stack at about 10,000.
constexpr int64_t kMaxSourceNesting = 1000;

/// Longest run of digits (an integer or float literal) a source may have:
/// an i64 needs 19, the widest integer type MLIR allows (2^24 bits) 5 million,
/// which its parser takes minutes over.
constexpr int64_t kMaxLiteralDigits = 4096;

/// Why `text` would crash or stall MLIR's parser, or an empty string.
std::string checkSourceText(llvm::StringRef text);

/// Reads `path` ("-": standard input) within the bounds above.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readSource(llvm::StringRef path);

} // namespace mlir::attn

#endif // ATTN_SUPPORT_SOURCEINPUT_H
