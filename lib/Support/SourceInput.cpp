//===- SourceInput.cpp - Reading MLIR sources within bounds ---------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/SourceInput.h"

#include "attn/Support/Files.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <cctype>
#include <optional>

using namespace mlir::attn;

/// Whether `text` has `dimensions = [` or `permutation = [` followed by
/// anything but integers before `]`: MLIR 22's linalg.broadcast, reduce and
/// transpose parsers use the attribute of a failed integer-list parse (a
/// null attribute) and crash (stock mlir-opt too). Returns the line.
static std::optional<size_t> malformedLinalgIntegerList(llvm::StringRef text) {
  for (llvm::StringRef word : {"dimensions", "permutation"}) {
    for (size_t at = text.find(word); at != llvm::StringRef::npos;
         at = text.find(word, at + 1)) {
      llvm::StringRef rest = text.drop_front(at + word.size()).ltrim();
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim();
      if (!rest.consume_front("["))
        continue;
      llvm::StringRef list = rest.take_until([](char c) { return c == ']'; });
      bool integers =
          list.size() < rest.size() && llvm::all_of(list, [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) ||
                   std::isspace(static_cast<unsigned char>(c)) || c == ',' ||
                   c == '-';
          });
      if (!integers)
        return text.take_front(at).count('\n') + 1;
    }
  }
  return std::nullopt;
}

std::string mlir::attn::checkSourceText(llvm::StringRef text) {
  if (std::optional<size_t> line = malformedLinalgIntegerList(text))
    return (llvm::Twine("line ") + llvm::Twine(*line) +
            ": a 'dimensions' or 'permutation' list that is not integers in "
            "[...], on which MLIR 22's linalg parsers crash")
        .str();
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
