//===- Json.cpp - The JSON reader of the runtime --------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cmath>
#include <cstdlib>

using namespace attn::runtime::json;

const Value *Value::get(const std::string &key) const {
  for (const auto &[name, value] : object)
    if (name == key)
      return &value;
  return nullptr;
}

bool Value::isInteger() const {
  return kind == Kind::Number && std::isfinite(number) &&
         number == std::floor(number) && std::fabs(number) < 9.0e15;
}

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parseDocument(Value &value, std::string &error) {
    if (!parseValue(value, 0) || (skipSpace(), pos != text.size() &&
                                                   fail("trailing characters"))) {
      error = "invalid JSON at offset " + std::to_string(errorPos) + ": " +
              message;
      return false;
    }
    return true;
  }

private:
  const std::string &text;
  size_t pos = 0;
  size_t errorPos = 0;
  std::string message;

  bool fail(const std::string &why) {
    if (message.empty()) {
      message = why;
      errorPos = pos;
    }
    return false;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool literal(const char *word) {
    size_t length = std::char_traits<char>::length(word);
    if (text.compare(pos, length, word) != 0)
      return fail(std::string("expected ") + word);
    pos += length;
    return true;
  }

  bool parseValue(Value &value, int depth) {
    if (depth > 64)
      return fail("nested too deeply");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end");
    char c = text[pos];
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = Value::Kind::String;
      return parseString(value.string);
    }
    if (c == 't' || c == 'f') {
      value.kind = Value::Kind::Bool;
      value.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      value.kind = Value::Kind::Null;
      return literal("null");
    }
    return parseNumber(value);
  }

  bool parseNumber(Value &value) {
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    auto digits = [&] {
      size_t first = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos > first;
    };
    if (!digits())
      return fail("expected a value");
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (!digits())
        return fail("expected digits after '.'");
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (!digits())
        return fail("expected an exponent");
    }
    value.kind = Value::Kind::Number;
    value.number = std::strtod(text.substr(start, pos - start).c_str(), nullptr);
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    ++pos; // opening quote
    while (pos < text.size()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        break;
      char escape = text[pos++];
      switch (escape) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (pos + 4 > text.size())
          return fail("short \\u escape");
        char *end = nullptr;
        std::string hex = text.substr(pos, 4);
        unsigned code = std::strtoul(hex.c_str(), &end, 16);
        if (end != hex.c_str() + 4)
          return fail("bad \\u escape");
        pos += 4;
        appendUtf8(out, code);
        break;
      }
      default:
        return fail("bad escape");
      }
    }
    return fail("unterminated string");
  }

  bool parseArray(Value &value, int depth) {
    value.kind = Value::Kind::Array;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == ']') {
      ++pos;
      return true;
    }
    while (true) {
      value.array.emplace_back();
      if (!parseValue(value.array.back(), depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']'");
    }
  }

  bool parseObject(Value &value, int depth) {
    value.kind = Value::Kind::Object;
    ++pos;
    skipSpace();
    if (pos < text.size() && text[pos] == '}') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      if (pos >= text.size() || text[pos] != '"')
        return fail("expected a member name");
      std::string key;
      if (!parseString(key))
        return false;
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':'");
      ++pos;
      value.object.emplace_back(std::move(key), Value());
      if (!parseValue(value.object.back().second, depth + 1))
        return false;
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}'");
    }
  }
};

} // namespace

bool attn::runtime::json::parse(const std::string &text, Value &value,
                                std::string &error) {
  return Parser(text).parseDocument(value, error);
}
