//===- SourceInput.cpp - Reading MLIR sources within bounds ---------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/SourceInput.h"

#include "attn/Support/Files.h"

#include "llvm/ADT/Twine.h"

#include <cctype>

using namespace mlir::attn;

std::string mlir::attn::checkSourceText(llvm::StringRef text) {
  int64_t depth = 0, digits = 0;
  size_t line = 1;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (++digits > kMaxLiteralDigits)
        return (llvm::Twine("line ") + llvm::Twine(line) +
                ": a number of more than " + llvm::Twine(kMaxLiteralDigits) +
                " digits, which MLIR's parser would take minutes over")
            .str();
      continue;
    }
    digits = 0;
    switch (c) {
    case '\n':
      ++line;
      break;
    case '"':
      // A string literal, with backslash escapes, ends at the next quote.
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n')
          ++line;
      }
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
      if (++depth > kMaxSourceNesting)
        return (llvm::Twine("line ") + llvm::Twine(line) +
                ": brackets nested more than " +
                llvm::Twine(kMaxSourceNesting) +
                " levels deep, which would overflow MLIR's recursive parser")
            .str();
      break;
    case ')':
    case ']':
    case '}':
      --depth;
      break;
    default:
      break;
    }
  }
  return "";
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
mlir::attn::readSource(llvm::StringRef path) {
  if (path != "-")
    if (std::string error = files::checkInput(path.str(), files::kMaxSourceBytes);
        !error.empty())
      return llvm::createStringError(error);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError("cannot read " + path + ": " +
                                   buffer.getError().message());
  if ((*buffer)->getBufferSize() > files::kMaxSourceBytes)
    return llvm::createStringError("cannot read " + path +
                                   ": more than 1 GiB of input");
  if (std::string error = checkSourceText((*buffer)->getBuffer());
      !error.empty())
    return llvm::createStringError("cannot parse " + path + ": " + error);
  return std::move(*buffer);
}
