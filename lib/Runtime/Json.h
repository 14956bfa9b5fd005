//===- Json.h - The JSON reader of the runtime ------------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A small JSON reader (RFC 8259 values; \uXXXX escapes outside ASCII are kept
// as UTF-8) for bundle manifests: libattnrt depends on nothing but the C/C++
// runtime and the CUDA driver, so it cannot use LLVM's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_JSON_H
#define ATTN_LIB_RUNTIME_JSON_H

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn::runtime::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  /// The member KEY of an object, or null.
  const Value *get(const std::string &key) const;
  bool isInteger() const;
};

/// Parses TEXT; on failure returns false and sets ERROR (with the offset).
bool parse(const std::string &text, Value &value, std::string &error);

} // namespace attn::runtime::json

#endif // ATTN_LIB_RUNTIME_JSON_H
