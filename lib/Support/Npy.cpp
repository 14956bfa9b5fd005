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

#include "llvm/ADT/bit.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir::attn;
using llvm::StringRef;

namespace {
constexpr StringRef kMagic("\x93NUMPY", 6);
/// The longest header read: NumPy writes at most a few hundred bytes, and
/// reads at most 10,000 by default.
constexpr size_t kMaxHeaderBytes = size_t(1) << 20;
// The prefix before the header: magic, two version bytes, a 2- or 4-byte
// length.
constexpr size_t kPrefixV1 = 10;
constexpr size_t kPrefixV2 = 12;
// NumPy aligns the data to 64 bytes; readers must not rely on it.
constexpr size_t kDataAlignment = 64;

/// How an element type is named in messages.
StringRef typeName(NpyElementType type) {
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
  llvm_unreachable("unknown NpyElementType");
}

StringRef descrOf(NpyElementType type) {
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
  llvm_unreachable("unknown NpyElementType");
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
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
/// Python's repr, so only the few forms below can appear).
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : rest(text) {}

  /// Parses the whole header; the error says what was wrong, without the
  /// file name.
  llvm::Expected<NpyHeader> parse() {
    NpyHeader header;
    bool seenDescr = false, seenFortran = false, seenShape = false;
    if (!consume("{"))
      return fail("expected '{'");
    while (!consume("}")) {
      std::string key;
      if (llvm::Error err = parseString(key))
        return std::move(err);
      if (!consume(":"))
        return fail("expected ':' after '" + key + "'");
      llvm::Error err = llvm::Error::success();
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
      if (err)
        return std::move(err);
      if (!consume(",") && !peek('}'))
        return fail("expected ',' or '}' after the value of '" + key + "'");
    }
    if (!rest.ltrim(" \t\r\n").empty())
      return fail("unexpected text after '}'");
    if (!seenDescr || !seenFortran || !seenShape)
      return fail("the keys 'descr', 'fortran_order' and 'shape' are not all "
                  "there");
    return header;
  }

private:
  llvm::Error fail(const llvm::Twine &message) {
    return llvm::createStringError("malformed header: " + message);
  }

  void skipSpace() { rest = rest.ltrim(" \t\r\n"); }

  bool peek(char c) {
    skipSpace();
    return rest.starts_with(StringRef(&c, 1));
  }

  bool consume(StringRef token) {
    skipSpace();
    return rest.consume_front(token);
  }

  llvm::Error parseString(std::string &result) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return fail("expected a quoted string");
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return fail("unterminated string");
    result = rest.slice(1, end).str();
    rest = rest.drop_front(end + 1);
    return llvm::Error::success();
  }

  llvm::Error parseBool(bool &result) {
    if (consume("True"))
      result = true;
    else if (consume("False"))
      result = false;
    else
      return fail("'fortran_order' is neither True nor False");
    return llvm::Error::success();
  }

  llvm::Error parseShape(std::vector<int64_t> &shape) {
    if (!consume("("))
      return fail("expected '(' to start the shape");
    while (!consume(")")) {
      skipSpace();
      unsigned long long dim;
      if (rest.consumeInteger(10, dim) || dim > INT64_MAX)
        return fail("expected a non-negative dimension in the shape");
      shape.push_back(static_cast<int64_t>(dim));
      if (!consume(",") && !peek(')'))
        return fail("expected ',' or ')' in the shape");
    }
    return llvm::Error::success();
  }

  StringRef rest;
};

/// The element type a descr stands for.
llvm::Expected<NpyElementType>
elementTypeOf(StringRef descr, std::optional<NpyElementType> expected) {
  if (descr == "<f2")
    return NpyElementType::F16;
  if (descr == "<f4")
    return NpyElementType::F32;
  if (descr == "<f8")
    return NpyElementType::F64;
  if (descr == "|b1")
    return NpyElementType::Bool;
  if (descr == "|i1")
    return NpyElementType::I8;
  if (descr == "<i4")
    return NpyElementType::I32;
  // Two opaque bytes: bf16 as ml_dtypes saves it, but only the caller can
  // tell.
  if (descr == "<V2" || descr == "|V2") {
    if (expected == NpyElementType::BF16)
      return NpyElementType::BF16;
    return llvm::createStringError(
        "dtype '" + descr + "' is read as bf16 only when bf16 is expected");
  }
  return llvm::createStringError(
      "unsupported dtype '" + descr +
      "' (supported: '<f2', '<f4', '<f8', '|b1', '|i1', and bf16 as '<V2')");
}

/// Prefixes every message of `err` with the file name.
llvm::Error inFile(StringRef path, llvm::Error err) {
  return llvm::createStringError(path + ": " + llvm::toString(std::move(err)));
}

llvm::Expected<NpyArray> parseNpy(StringRef bytes,
                                  std::optional<NpyElementType> expected) {
  if (!bytes.starts_with(kMagic))
    return llvm::createStringError("not a .npy file (bad magic)");
  if (bytes.size() < kPrefixV1)
    return llvm::createStringError("the header is cut short");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  unsigned minor = static_cast<uint8_t>(bytes[7]);
  size_t prefix, headerLength;
  if (major == 1 && minor == 0) {
    prefix = kPrefixV1;
    headerLength = llvm::support::endian::read16le(bytes.data() + 8);
  } else if ((major == 2 || major == 3) && minor == 0) {
    // 3.0 differs from 2.0 only in allowing UTF-8 in the header, which no
    // supported header needs.
    if (bytes.size() < kPrefixV2)
      return llvm::createStringError("the header is cut short");
    prefix = kPrefixV2;
    headerLength = llvm::support::endian::read32le(bytes.data() + 8);
  } else {
    return llvm::createStringError("unsupported .npy version " +
                                   llvm::Twine(major) + "." +
                                   llvm::Twine(minor));
  }
  if (headerLength > kMaxHeaderBytes)
    return llvm::createStringError(
        "the header claims " + llvm::Twine(headerLength) +
        " bytes; a .npy header has at most " + llvm::Twine(kMaxHeaderBytes));
  if (bytes.size() - prefix < headerLength)
    return llvm::createStringError("the header is cut short");

  llvm::Expected<NpyHeader> header =
      HeaderParser(bytes.substr(prefix, headerLength)).parse();
  if (!header)
    return header.takeError();
  llvm::Expected<NpyElementType> type = elementTypeOf(header->descr, expected);
  if (!type)
    return type.takeError();
  if (expected && *type != *expected)
    return llvm::createStringError("holds " + typeName(*type) + " but " +
                                   typeName(*expected) + " was expected");
  if (header->fortranOrder)
    return llvm::createStringError("Fortran-order arrays are not supported");

  NpyArray array;
  array.elementType = *type;
  array.shape = std::move(header->shape);
  std::optional<int64_t> checkedBytes =
      checkedTensorBytes(array.shape, npyElementBytes(array.elementType));
  if (!checkedBytes)
    return llvm::createStringError(
        "shape " + shapeString(array.shape) + " of " +
        typeName(array.elementType) +
        " holds more than 2^48 bytes (256 TiB), more than any machine "
        "addresses");
  int64_t dataBytes = *checkedBytes;
  StringRef data = bytes.drop_front(prefix + headerLength);
  if (data.size() != static_cast<uint64_t>(dataBytes))
    return llvm::createStringError(
        llvm::Twine(data.size() < static_cast<uint64_t>(dataBytes)
                        ? "the data is cut short"
                        : "there are bytes after the data") +
        ": shape " + shapeString(array.shape) + " of " +
        typeName(array.elementType) + " takes " + llvm::Twine(dataBytes) +
        " bytes, the file has " + llvm::Twine(data.size()) +
        " after the header");
  array.data.assign(data.bytes_begin(), data.bytes_end());
  return array;
}

/// A header ready to write, and the major version its length needs.
struct WrappedHeader {
  std::string text;
  uint8_t major;
};

/// The header NumPy writes for `array`.
WrappedHeader headerFor(const NpyArray &array) {
  std::string header =
      "{'descr': '" + descrOf(array.elementType).str() +
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
  using namespace llvm::support::endian;
  auto read16 = [](const uint8_t *p) { return read16le(p); };
  switch (array.elementType) {
  case NpyElementType::F16:
    convertEach(array, 2, read16, f16BitsToFloat, values);
    break;
  case NpyElementType::BF16:
    convertEach(array, 2, read16, bf16BitsToFloat, values);
    break;
  case NpyElementType::F32:
    convertEach(
        array, 4, [](const uint8_t *p) { return read32le(p); },
        [](uint32_t bits) { return llvm::bit_cast<float>(bits); }, values);
    break;
  case NpyElementType::F64:
    convertEach(
        array, 8, [](const uint8_t *p) { return read64le(p); },
        [](uint64_t bits) {
          return static_cast<Result>(llvm::bit_cast<double>(bits));
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
        array, 4, [](const uint8_t *p) { return read32le(p); },
        [](uint32_t bits) {
          return static_cast<Result>(static_cast<int32_t>(bits));
        },
        values);
    break;
  }
  return values;
}

int64_t elementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
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
  llvm_unreachable("unknown NpyElementType");
}

int64_t NpyArray::numElements() const { return elementCount(shape); }

llvm::Expected<NpyArray>
mlir::attn::readNpy(StringRef path, std::optional<NpyElementType> expected) {
  // A .npy file is its header (at most kMaxHeaderBytes) and at most one
  // tensor's bytes; /dev/zero or a FIFO would be read until memory runs out.
  std::string error = files::checkInput(
      path.str(), static_cast<uint64_t>(kMaxTensorBytes) + kMaxHeaderBytes);
  if (!error.empty())
    return llvm::createStringError(error);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(
        path + ": cannot read: " + buffer.getError().message());
  llvm::Expected<NpyArray> array = parseNpy((*buffer)->getBuffer(), expected);
  if (!array)
    return inFile(path, array.takeError());
  return array;
}

llvm::Error mlir::attn::writeNpy(StringRef path, const NpyArray &array) {
  for (int64_t dim : array.shape)
    if (dim < 0)
      return llvm::createStringError(path + ": cannot write shape " +
                                     shapeString(array.shape));
  size_t dataBytes = array.numElements() * npyElementBytes(array.elementType);
  if (array.data.size() != dataBytes)
    return llvm::createStringError(
        path + ": cannot write " + llvm::Twine(array.data.size()) +
        " bytes of data for shape " + shapeString(array.shape) + " of " +
        typeName(array.elementType) + ", which takes " +
        llvm::Twine(dataBytes));
  WrappedHeader header = headerFor(array);
  std::string prefix = kMagic.str();
  prefix += static_cast<char>(header.major);
  prefix += '\0';
  char length[4];
  if (header.major == 1) {
    llvm::support::endian::write16le(length, header.text.size());
    prefix.append(length, 2);
  } else {
    llvm::support::endian::write32le(length, header.text.size());
    prefix.append(length, 4);
  }
  prefix += header.text;
  std::string error = files::writeFile(
      path.str(),
      {prefix,
       std::string_view(reinterpret_cast<const char *>(array.data.data()),
                        array.data.size())});
  if (!error.empty())
    return llvm::createStringError(error);
  return llvm::Error::success();
}

std::vector<float> mlir::attn::npyToFloats(const NpyArray &array) {
  return convertElements<float>(array);
}

std::vector<double> mlir::attn::npyToDoubles(const NpyArray &array) {
  return convertElements<double>(array);
}

NpyArray mlir::attn::npyFromFloats(NpyElementType type,
                                   llvm::ArrayRef<int64_t> shape,
                                   llvm::ArrayRef<float> values) {
  assert(static_cast<int64_t>(values.size()) == elementCount(shape) &&
         "values do not match the shape");
  NpyArray array;
  array.elementType = type;
  array.shape.assign(shape.begin(), shape.end());
  int64_t elementBytes = npyElementBytes(type);
  array.data.resize(values.size() * elementBytes);
  uint8_t *data = array.data.data();
  // One loop per type, so that the type is not tested per element.
  auto storeEach = [&](auto store) {
    for (size_t i = 0, e = values.size(); i < e; ++i)
      store(data + i * elementBytes, values[i]);
  };
  using namespace llvm::support::endian;
  switch (type) {
  case NpyElementType::F16:
    storeEach([](uint8_t *p, float v) { write16le(p, floatToF16Bits(v)); });
    break;
  case NpyElementType::BF16:
    storeEach([](uint8_t *p, float v) { write16le(p, floatToBF16Bits(v)); });
    break;
  case NpyElementType::F32:
    storeEach(
        [](uint8_t *p, float v) { write32le(p, llvm::bit_cast<uint32_t>(v)); });
    break;
  case NpyElementType::F64:
    storeEach([](uint8_t *p, float v) {
      write64le(p, llvm::bit_cast<uint64_t>(static_cast<double>(v)));
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
      write32le(p, static_cast<uint32_t>(static_cast<int32_t>(v)));
    });
    break;
  }
  return array;
}

NpyArray mlir::attn::npyFromDoubles(llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<double> values) {
  assert(static_cast<int64_t>(values.size()) == elementCount(shape) &&
         "values do not match the shape");
  NpyArray array;
  array.elementType = NpyElementType::F64;
  array.shape.assign(shape.begin(), shape.end());
  array.data.resize(values.size() * sizeof(double));
  for (size_t i = 0, e = values.size(); i < e; ++i)
    llvm::support::endian::write64le(array.data.data() + 8 * i,
                                     llvm::bit_cast<uint64_t>(values[i]));
  return array;
}
