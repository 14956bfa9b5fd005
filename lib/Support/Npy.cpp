//===- Npy.cpp - Read and write NumPy .npy files --------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The format: the magic "\x93NUMPY", a major and a minor version byte, the
// header length (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then
// the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so that the data after it is aligned.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"

#include "attn/Support/Files.h"
#include "attn/Support/HalfFloat.h"
#include "attn/Support/SizeLimits.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <iterator>
#include <string_view>

using namespace mlir::attn;

namespace {
constexpr std::string_view kMagic("\x93NUMPY", 6);
/// The longest header read: NumPy writes at most a few hundred bytes, and
/// reads at most 10,000 by default.
constexpr size_t kMaxHeaderBytes = size_t(1) << 20;
// The prefix before the header: magic, two version bytes, a 2- or 4-byte
// length.
constexpr size_t kPrefixV1 = 10;
constexpr size_t kPrefixV2 = 12;
// NumPy aligns the data to 64 bytes; readers must not rely on it.
constexpr size_t kDataAlignment = 64;

/// The `bytes`-byte little-endian integer at `p`.
uint64_t readLittleEndian(const uint8_t *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = value << 8 | p[i];
  return value;
}

/// Stores the low `bytes` bytes of `value` at `p`, little-endian.
void writeLittleEndian(uint8_t *p, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    p[i] = static_cast<uint8_t>(value >> (8 * i));
}

template <typename To, typename From> To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "sizes differ");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

/// How an element type is named in messages.
std::string typeName(NpyElementType type) {
  switch (type) {
  case NpyElementType::F16:
    return "f16";
  case NpyElementType::BF16:
    return "bf16";
  case NpyElementType::F32:
    return "f32";
  case NpyElementType::F64:
    return "f64";
  case NpyElementType::Bool:
    return "bool";
  case NpyElementType::I8:
    return "int8";
  case NpyElementType::I32:
    return "int32";
  }
  assert(false && "unknown NpyElementType");
  return "";
}

std::string descrOf(NpyElementType type) {
  switch (type) {
  case NpyElementType::F16:
    return "<f2";
  case NpyElementType::BF16:
    return "<V2";
  case NpyElementType::F32:
    return "<f4";
  case NpyElementType::F64:
    return "<f8";
  case NpyElementType::Bool:
    return "|b1";
  case NpyElementType::I8:
    return "|i1";
  case NpyElementType::I32:
    return "<i4";
  }
  assert(false && "unknown NpyElementType");
  return "";
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (int64_t dim : shape)
    text += std::to_string(dim) + ", ";
  // Python writes (5,) for a 1-tuple and (2, 3) otherwise.
  if (shape.size() > 1)
    text.resize(text.size() - 2);
  else if (shape.size() == 1)
    text.pop_back();
  return text + ")";
}

/// The fields of a .npy header.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A recursive-descent parser for the dict literal NumPy writes (it is
/// Python's repr, so only the few forms below can appear). Each step returns
/// an error message, empty on success, without the file name.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : rest(text) {}

  NpyError parse(NpyHeader &header) {
    bool seenDescr = false, seenFortran = false, seenShape = false;
    if (!consume("{"))
      return fail("expected '{'");
    while (!consume("}")) {
      std::string key;
      if (NpyError err = parseString(key); !err.empty())
        return err;
      if (!consume(":"))
        return fail("expected ':' after '" + key + "'");
      NpyError err;
      if (key == "descr") {
        seenDescr = true;
        if (peek('['))
          return fail("structured dtypes are not supported");
        err = parseString(header.descr);
      } else if (key == "fortran_order") {
        seenFortran = true;
        err = parseBool(header.fortranOrder);
      } else if (key == "shape") {
        seenShape = true;
        err = parseShape(header.shape);
      } else {
        return fail("unexpected key '" + key + "'");
      }
      if (!err.empty())
        return err;
      if (!consume(",") && !peek('}'))
        return fail("expected ',' or '}' after the value of '" + key + "'");
    }
    skipSpace();
    if (!rest.empty())
      return fail("unexpected text after '}'");
    if (!seenDescr || !seenFortran || !seenShape)
      return fail("the keys 'descr', 'fortran_order' and 'shape' are not all "
                  "there");
    return {};
  }

private:
  static NpyError fail(const std::string &message) {
    return "malformed header: " + message;
  }

  void skipSpace() {
    size_t start = rest.find_first_not_of(" \t\r\n");
    rest.remove_prefix(start == std::string_view::npos ? rest.size() : start);
  }

  bool peek(char c) {
    skipSpace();
    return !rest.empty() && rest.front() == c;
  }

  bool consume(std::string_view token) {
    skipSpace();
    if (rest.substr(0, token.size()) != token)
      return false;
    rest.remove_prefix(token.size());
    return true;
  }

  NpyError parseString(std::string &result) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return fail("expected a quoted string");
    size_t end = rest.find(rest.front(), 1);
    if (end == std::string_view::npos)
      return fail("unterminated string");
    result = std::string(rest.substr(1, end - 1));
    rest.remove_prefix(end + 1);
    return {};
  }

  NpyError parseBool(bool &result) {
    if (consume("True"))
      result = true;
    else if (consume("False"))
      result = false;
    else
      return fail("'fortran_order' is neither True nor False");
    return {};
  }

  NpyError parseShape(std::vector<int64_t> &shape) {
    if (!consume("("))
      return fail("expected '(' to start the shape");
    while (!consume(")")) {
      skipSpace();
      // Decimal digits only (no sign, no spaces), at most 2^63 - 1.
      size_t digits = 0;
      std::optional<int64_t> dim = 0;
      for (; digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9';
           ++digits) {
        std::optional<int64_t> shifted =
            dim ? checkedMul(*dim, 10) : std::nullopt;
        dim = shifted ? checkedAdd(*shifted, rest[digits] - '0') : std::nullopt;
      }
      if (digits == 0)
        return fail("expected a non-negative dimension in the shape");
      if (!dim) {
        // Named by its first digits: the header may hold a megabyte of them.
        constexpr size_t kShown = 24;
        return fail("dimension " +
                    std::string(rest.substr(0, std::min(digits, kShown))) +
                    (digits > kShown
                         ? "... (" + std::to_string(digits) + " digits)"
                         : "") +
                    " in the shape is more than 2^63 - 1");
      }
      rest.remove_prefix(digits);
      shape.push_back(*dim);
      if (!consume(",") && !peek(')'))
        return fail("expected ',' or ')' in the shape");
    }
    return {};
  }

  std::string_view rest;
};

/// The bytes of the data of an array of `shape` (no dimension negative) and
/// `type`, or std::nullopt when they would be more than kMaxTensorBytes. As
/// in NumPy, which makes no such array, the dimensions other than 0 must fit
/// together even when one is 0: else (0, 2^62, 2^62) would be read where
/// (2^62, 2^62, 0) is refused, and a caller's product of some of a read
/// shape's dimensions (a stride, the elements of one batch) could overflow.
std::optional<int64_t> dataBytesOf(const std::vector<int64_t> &shape,
                                   NpyElementType type) {
  std::vector<int64_t> nonzero;
  std::copy_if(shape.begin(), shape.end(), std::back_inserter(nonzero),
               [](int64_t dim) { return dim != 0; });
  std::optional<int64_t> bytes =
      checkedTensorBytes(nonzero, npyElementBytes(type));
  if (bytes && nonzero.size() < shape.size())
    return 0;
  return bytes;
}

/// Why an array of `shape` and `type` is neither read nor written.
std::string tooManyBytes(const std::vector<int64_t> &shape,
                         NpyElementType type) {
  bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
  return "shape " + shapeString(shape) + " of " + typeName(type) +
         (empty ? " would hold more than 2^48 bytes (256 TiB) but for its "
                  "dimensions of 0 (NumPy, too, makes no such array)"
                : " holds more than 2^48 bytes (256 TiB), more than any "
                  "machine addresses");
}

/// How a file's element type is checked: against the caller's expectation,
/// and whether two opaque bytes are bf16 without one.
struct TypeRule {
  std::optional<NpyElementType> expected;
  bool opaqueIsBF16 = false;
};

/// The element type a descr stands for.
NpyError elementTypeOf(const std::string &descr, TypeRule rule,
                       NpyElementType &type) {
  static const std::pair<const char *, NpyElementType> kDescrs[] = {
      {"<f2", NpyElementType::F16}, {"<f4", NpyElementType::F32},
      {"<f8", NpyElementType::F64}, {"|b1", NpyElementType::Bool},
      {"|i1", NpyElementType::I8},  {"<i4", NpyElementType::I32}};
  for (auto [name, candidate] : kDescrs)
    if (descr == name) {
      type = candidate;
      return {};
    }
  // Two opaque bytes: bf16 as ml_dtypes saves it, but only the caller can
  // tell.
  if (descr == "<V2" || descr == "|V2") {
    if (rule.expected == NpyElementType::BF16 ||
        (!rule.expected && rule.opaqueIsBF16)) {
      type = NpyElementType::BF16;
      return {};
    }
    return "dtype '" + descr + "' is read as bf16 only when bf16 is expected";
  }
  return "unsupported dtype '" + descr +
         "' (supported: '<f2', '<f4', '<f8', '|b1', '|i1', '<i4', and bf16 "
         "as '<V2')";
}

NpyError parseNpy(std::string_view bytes, TypeRule rule, NpyArray &array) {
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return "not a .npy file (bad magic)";
  if (bytes.size() < kPrefixV1)
    return "the header is cut short";
  const auto *raw = reinterpret_cast<const uint8_t *>(bytes.data());
  unsigned major = raw[6], minor = raw[7];
  size_t prefix, headerLength;
  if (major == 1 && minor == 0) {
    prefix = kPrefixV1;
    headerLength = readLittleEndian(raw + 8, 2);
  } else if ((major == 2 || major == 3) && minor == 0) {
    // 3.0 differs from 2.0 only in allowing UTF-8 in the header, which no
    // supported header needs.
    if (bytes.size() < kPrefixV2)
      return "the header is cut short";
    prefix = kPrefixV2;
    headerLength = readLittleEndian(raw + 8, 4);
  } else {
    return "unsupported .npy version " + std::to_string(major) + "." +
           std::to_string(minor);
  }
  if (headerLength > kMaxHeaderBytes)
    return "the header claims " + std::to_string(headerLength) +
           " bytes; a .npy header has at most " +
           std::to_string(kMaxHeaderBytes);
  if (bytes.size() - prefix < headerLength)
    return "the header is cut short";

  NpyHeader header;
  if (NpyError err =
          HeaderParser(bytes.substr(prefix, headerLength)).parse(header);
      !err.empty())
    return err;
  NpyElementType type = NpyElementType::F32;
  if (NpyError err = elementTypeOf(header.descr, rule, type); !err.empty())
    return err;
  if (rule.expected && type != *rule.expected)
    return "holds " + typeName(type) + " but " + typeName(*rule.expected) +
           " was expected";
  if (header.fortranOrder)
    return "Fortran-order arrays are not supported";

  array.elementType = type;
  array.shape = std::move(header.shape);
  std::optional<int64_t> checkedBytes =
      dataBytesOf(array.shape, array.elementType);
  if (!checkedBytes)
    return tooManyBytes(array.shape, array.elementType);
  uint64_t dataBytes = static_cast<uint64_t>(*checkedBytes);
  std::string_view data = bytes.substr(prefix + headerLength);
  if (data.size() != dataBytes)
    return std::string(data.size() < dataBytes ? "the data is cut short"
                                               : "there are bytes after the "
                                                 "data") +
           ": shape " + shapeString(array.shape) + " of " +
           typeName(array.elementType) + " takes " + std::to_string(dataBytes) +
           " bytes, the file has " + std::to_string(data.size()) +
           " after the header";
  array.data.assign(data.begin(), data.end());
  return {};
}

/// A header ready to write, and the major version its length needs.
struct WrappedHeader {
  std::string text;
  uint8_t major;
};

/// The header NumPy writes for `array`.
WrappedHeader headerFor(const NpyArray &array) {
  std::string header =
      "{'descr': '" + descrOf(array.elementType) +
      "', 'fortran_order': False, 'shape': " + shapeString(array.shape) + ", }";
  // NumPy leaves room for the first dimension to grow to 21 digits, so that
  // appending rows can rewrite the header in place; writing the same bytes
  // keeps files identical to NumPy's.
  constexpr size_t kGrowthDigits = 21;
  if (!array.shape.empty())
    header.append(kGrowthDigits - std::to_string(array.shape[0]).size(), ' ');
  // Spaces and a '\n' end the header so that the data starts at a multiple
  // of kDataAlignment; like NumPy, at least one space.
  auto paddedLength = [&](size_t prefix) {
    size_t unpadded = header.size() + 1;
    return unpadded + kDataAlignment - (prefix + unpadded) % kDataAlignment;
  };
  uint8_t major = 1;
  size_t length = paddedLength(kPrefixV1);
  if (length > UINT16_MAX) {
    major = 2;
    length = paddedLength(kPrefixV2);
  }
  header.resize(length - 1, ' ');
  header += '\n';
  return {std::move(header), major};
}

/// Stores `convert` of each element of `array`, whose bits `read` loads, in
/// `values`.
template <typename Result, typename ReadFn, typename ConvertFn>
void convertEach(const NpyArray &array, int64_t elementBytes, ReadFn read,
                 ConvertFn convert, std::vector<Result> &values) {
  const uint8_t *data = array.data.data();
  for (size_t i = 0, e = values.size(); i < e; ++i)
    values[i] = convert(read(data + i * elementBytes));
}

/// The elements of `array` as `Result`s.
template <typename Result>
std::vector<Result> convertElements(const NpyArray &array) {
  int64_t count = array.numElements();
  assert(static_cast<int64_t>(array.data.size()) ==
             count * npyElementBytes(array.elementType) &&
         "data does not match the shape");
  std::vector<Result> values(count);
  // One loop per type, so that the type is not tested per element.
  auto read16 = [](const uint8_t *p) {
    return static_cast<uint16_t>(readLittleEndian(p, 2));
  };
  auto read32 = [](const uint8_t *p) {
    return static_cast<uint32_t>(readLittleEndian(p, 4));
  };
  switch (array.elementType) {
  case NpyElementType::F16:
    convertEach(array, 2, read16, f16BitsToFloat, values);
    break;
  case NpyElementType::BF16:
    convertEach(array, 2, read16, bf16BitsToFloat, values);
    break;
  case NpyElementType::F32:
    convertEach(
        array, 4, read32, [](uint32_t bits) { return bitCast<float>(bits); },
        values);
    break;
  case NpyElementType::F64:
    convertEach(
        array, 8, [](const uint8_t *p) { return readLittleEndian(p, 8); },
        [](uint64_t bits) {
          return static_cast<Result>(bitCast<double>(bits));
        },
        values);
    break;
  case NpyElementType::Bool:
    convertEach(
        array, 1, [](const uint8_t *p) { return *p; },
        [](uint8_t byte) { return static_cast<Result>(byte != 0); }, values);
    break;
  case NpyElementType::I8:
    convertEach(
        array, 1, [](const uint8_t *p) { return *p; },
        [](uint8_t byte) {
          return static_cast<Result>(static_cast<int8_t>(byte));
        },
        values);
    break;
  case NpyElementType::I32:
    convertEach(
        array, 4, read32,
        [](uint32_t bits) {
          return static_cast<Result>(static_cast<int32_t>(bits));
        },
        values);
    break;
  }
  return values;
}
} // namespace

int64_t mlir::attn::npyElementBytes(NpyElementType type) {
  switch (type) {
  case NpyElementType::Bool:
  case NpyElementType::I8:
    return 1;
  case NpyElementType::F16:
  case NpyElementType::BF16:
    return 2;
  case NpyElementType::F32:
  case NpyElementType::I32:
    return 4;
  case NpyElementType::F64:
    return 8;
  }
  assert(false && "unknown NpyElementType");
  return 1;
}

int64_t NpyArray::numElements() const {
  // Every array read has a shape that fits (dataBytesOf); one that
  // npyFromFloats or npyFromDoubles made has that many values in memory.
  std::optional<int64_t> count = checkedProduct(shape);
  assert(count && "the element count overflows int64");
  return *count;
}

namespace {
NpyError readNpyFile(const std::string &path, TypeRule rule, NpyArray &array) {
  // A .npy file is its header (at most kMaxHeaderBytes) and at most one
  // tensor's bytes; /dev/zero or a FIFO would be read until memory runs out.
  std::string bytes;
  if (files::Error error = files::readFile(
          path, static_cast<uint64_t>(kMaxTensorBytes) + kMaxHeaderBytes,
          bytes);
      !error.empty())
    return error;
  if (NpyError error = parseNpy(bytes, rule, array); !error.empty())
    return path + ": " + error;
  return {};
}
} // namespace

NpyError mlir::attn::readNpy(const std::string &path, NpyArray &array,
                             std::optional<NpyElementType> expected) {
  return readNpyFile(path, {expected, false}, array);
}

NpyError mlir::attn::readTensorNpy(const std::string &path, NpyArray &array) {
  return readNpyFile(path, {std::nullopt, true}, array);
}

NpyError mlir::attn::writeNpy(const std::string &path, const NpyArray &array) {
  for (int64_t dim : array.shape)
    if (dim < 0)
      return path + ": cannot write shape " + shapeString(array.shape);
  // Before the data's size is compared with it: a wrapped size could match.
  std::optional<int64_t> checkedBytes =
      dataBytesOf(array.shape, array.elementType);
  if (!checkedBytes)
    return path +
           ": cannot write: " + tooManyBytes(array.shape, array.elementType);
  uint64_t dataBytes = static_cast<uint64_t>(*checkedBytes);
  if (array.data.size() != dataBytes)
    return path + ": cannot write " + std::to_string(array.data.size()) +
           " bytes of data for shape " + shapeString(array.shape) + " of " +
           typeName(array.elementType) + ", which takes " +
           std::to_string(dataBytes);
  WrappedHeader header = headerFor(array);
  std::string prefix(kMagic);
  prefix += static_cast<char>(header.major);
  prefix += '\0';
  int lengthBytes = header.major == 1 ? 2 : 4;
  uint8_t length[4];
  writeLittleEndian(length, header.text.size(), lengthBytes);
  prefix.append(reinterpret_cast<const char *>(length), lengthBytes);
  prefix += header.text;
  return files::writeFile(
      path, {prefix,
             std::string_view(reinterpret_cast<const char *>(array.data.data()),
                              array.data.size())});
}

std::vector<float> mlir::attn::npyToFloats(const NpyArray &array) {
  return convertElements<float>(array);
}

std::vector<double> mlir::attn::npyToDoubles(const NpyArray &array) {
  return convertElements<double>(array);
}

NpyArray mlir::attn::npyFromFloats(NpyElementType type,
                                   const std::vector<int64_t> &shape,
                                   const std::vector<float> &values) {
  assert(checkedProduct(shape) == static_cast<int64_t>(values.size()) &&
         "values do not match the shape");
  NpyArray array;
  array.elementType = type;
  array.shape = shape;
  int64_t elementBytes = npyElementBytes(type);
  array.data.resize(values.size() * elementBytes);
  uint8_t *data = array.data.data();
  // One loop per type, so that the type is not tested per element.
  auto storeEach = [&](auto store) {
    for (size_t i = 0, e = values.size(); i < e; ++i)
      store(data + i * elementBytes, values[i]);
  };
  switch (type) {
  case NpyElementType::F16:
    storeEach([](uint8_t *p, float v) {
      writeLittleEndian(p, floatToF16Bits(v), 2);
    });
    break;
  case NpyElementType::BF16:
    storeEach([](uint8_t *p, float v) {
      writeLittleEndian(p, floatToBF16Bits(v), 2);
    });
    break;
  case NpyElementType::F32:
    storeEach([](uint8_t *p, float v) {
      writeLittleEndian(p, bitCast<uint32_t>(v), 4);
    });
    break;
  case NpyElementType::F64:
    storeEach([](uint8_t *p, float v) {
      writeLittleEndian(p, bitCast<uint64_t>(static_cast<double>(v)), 8);
    });
    break;
  case NpyElementType::Bool:
    storeEach([](uint8_t *p, float v) { *p = v != 0; });
    break;
  case NpyElementType::I8:
    storeEach([](uint8_t *p, float v) {
      *p = static_cast<uint8_t>(static_cast<int8_t>(v));
    });
    break;
  case NpyElementType::I32:
    storeEach([](uint8_t *p, float v) {
      writeLittleEndian(p, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    });
    break;
  }
  return array;
}

NpyArray mlir::attn::npyFromDoubles(const std::vector<int64_t> &shape,
                                    const std::vector<double> &values) {
  assert(checkedProduct(shape) == static_cast<int64_t>(values.size()) &&
         "values do not match the shape");
  NpyArray array;
  array.elementType = NpyElementType::F64;
  array.shape = shape;
  array.data.resize(values.size() * sizeof(double));
  for (size_t i = 0, e = values.size(); i < e; ++i)
    writeLittleEndian(array.data.data() + 8 * i, bitCast<uint64_t>(values[i]),
                      8);
  return array;
}
