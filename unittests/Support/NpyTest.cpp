//===- NpyTest.cpp - Read and write NumPy .npy files ----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"

#include "attn/Support/HalfFloat.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir::attn;

namespace {

/// What readNpy gives: the array, or the error.
struct ReadResult {
  NpyArray array;
  std::string error;
  explicit operator bool() const { return error.empty(); }
  const NpyArray *operator->() const { return &array; }
  const NpyArray &operator*() const { return array; }
};

ReadResult readArray(const std::string &path,
                     std::optional<NpyElementType> expected = std::nullopt) {
  ReadResult result;
  result.error = readNpy(path, result.array, expected);
  return result;
}

class NpyTest : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("attn-npy-test", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string pathOf(llvm::StringRef name) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }

  /// Writes `bytes` to the file `name` and returns its path.
  std::string writeBytes(llvm::StringRef name, llvm::StringRef bytes) {
    std::string path = pathOf(name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    EXPECT_FALSE(ec);
    os << bytes;
    return path;
  }

  std::string readBytes(llvm::StringRef path) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(buffer));
    return buffer ? (*buffer)->getBuffer().str() : "";
  }

  /// Writes `array` to the file `name`, expects `descr` in its header and
  /// reads it back with the same element type; nothing when a step fails.
  std::optional<NpyArray> roundTrip(llvm::StringRef name, const NpyArray &array,
                                    llvm::StringRef descr) {
    std::string path = pathOf(name);
    if (NpyError error = writeNpy(path, array); !error.empty()) {
      ADD_FAILURE() << error;
      return std::nullopt;
    }
    EXPECT_NE(readBytes(path).find(("'descr': '" + descr + "'").str()),
              std::string::npos);
    ReadResult read = readArray(path);
    if (!read) {
      ADD_FAILURE() << read.error;
      return std::nullopt;
    }
    EXPECT_EQ(read->elementType, array.elementType);
    return read.array;
  }

  /// The message of reading `bytes` from a file, which must fail.
  std::string readError(llvm::StringRef bytes,
                        std::optional<NpyElementType> expected = {}) {
    std::string path = writeBytes("bad.npy", bytes);
    ReadResult array = readArray(path, expected);
    if (array) {
      ADD_FAILURE() << "reading succeeded";
      return "";
    }
    std::string message = array.error;
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    return message;
  }

  llvm::SmallString<128> dir;
};

/// A .npy file as NumPy lays it out: `dict` padded with spaces and ended by
/// '\n' so that the data is 64-byte aligned.
std::string npyBytes(int major, llvm::StringRef dict, llvm::StringRef data) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict.str();
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header + data.str();
}

/// Little-endian bytes of float values.
std::string f32Bytes(std::initializer_list<float> values) {
  std::string bytes;
  for (float value : values)
    for (int i = 0; i < 4; ++i)
      bytes += static_cast<char>((llvm::bit_cast<uint32_t>(value) >> (8 * i)) &
                                 0xff);
  return bytes;
}

const char *kDict23 =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST_F(NpyTest, WritesWhatNumPyWrites) {
  // np.save of np.arange(6, dtype=np.float32).reshape(2, 3) with NumPy 1.24.
  std::string numpy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + kDict23 +
                      std::string(58, ' ') + "\n" +
                      f32Bytes({0, 1, 2, 3, 4, 5});
  std::string path = pathOf("a.npy");
  ASSERT_EQ(writeNpy(path, npyFromFloats(NpyElementType::F32, {2, 3},
                                         {0, 1, 2, 3, 4, 5})),
            "");
  EXPECT_EQ(readBytes(path), numpy);
}

TEST_F(NpyTest, RoundTripsEveryType) {
  std::vector<float> values = {0.0f, -1.5f, 3.14159f, 1e-6f, 65504.0f, -2.0f};
  for (NpyElementType type : {NpyElementType::F16, NpyElementType::BF16,
                              NpyElementType::F32, NpyElementType::F64}) {
    NpyArray written = npyFromFloats(type, {3, 2}, values);
    EXPECT_EQ(written.data.size(), 6 * npyElementBytes(type));
    std::string path = pathOf("round-trip.npy");
    ASSERT_EQ(writeNpy(path, written), "");
    ReadResult read = readArray(path, type);
    ASSERT_TRUE(bool(read)) << read.error;
    EXPECT_EQ(read->elementType, type);
    EXPECT_EQ(read->shape, (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(read->data, written.data);

    std::vector<float> floats = npyToFloats(*read);
    for (size_t i = 0; i < values.size(); ++i) {
      float expected = values[i];
      if (type == NpyElementType::F16)
        expected = roundToHalf(values[i], HalfFormat::F16);
      else if (type == NpyElementType::BF16)
        expected = roundToHalf(values[i], HalfFormat::BF16);
      EXPECT_EQ(floats[i], expected);
      EXPECT_EQ(npyToDoubles(*read)[i], static_cast<double>(expected));
    }
  }
}

TEST_F(NpyTest, BooleansAreOneByteEach) {
  // np.save of np.array([True, False, True]): descr '|b1', bytes 1 0 1.
  NpyArray written =
      npyFromFloats(NpyElementType::Bool, {3}, {2.5f, 0.0f, -1.0f});
  EXPECT_EQ(written.data, (std::vector<uint8_t>{1, 0, 1}));
  std::optional<NpyArray> read = roundTrip("bool.npy", written, "|b1");
  ASSERT_TRUE(read);
  EXPECT_EQ(npyToFloats(*read), (std::vector<float>{1.0f, 0.0f, 1.0f}));
}

TEST_F(NpyTest, Int8IsOneSignedByteEach) {
  // np.save of np.array([0, 2, -1], dtype=np.int8): descr '|i1'.
  NpyArray written =
      npyFromFloats(NpyElementType::I8, {3}, {0.0f, 2.0f, -1.0f});
  EXPECT_EQ(written.data, (std::vector<uint8_t>{0, 2, 0xff}));
  std::optional<NpyArray> read = roundTrip("int8.npy", written, "|i1");
  ASSERT_TRUE(read);
  EXPECT_EQ(npyToDoubles(*read), (std::vector<double>{0.0, 2.0, -1.0}));
}

TEST_F(NpyTest, Int32IsFourLittleEndianBytesEach) {
  // np.save of np.array([0, 300, -1], dtype=np.int32): descr '<i4'.
  NpyArray written =
      npyFromFloats(NpyElementType::I32, {3}, {0.0f, 300.0f, -1.0f});
  EXPECT_EQ(written.data, (std::vector<uint8_t>{0, 0, 0, 0, 44, 1, 0, 0, 0xff,
                                                0xff, 0xff, 0xff}));
  std::optional<NpyArray> read = roundTrip("int32.npy", written, "<i4");
  ASSERT_TRUE(read);
  EXPECT_EQ(npyToDoubles(*read), (std::vector<double>{0.0, 300.0, -1.0}));
}

TEST_F(NpyTest, DoublesRoundTripExactly) {
  std::vector<double> values = {1.0 / 3.0, -1e300, 0.1};
  std::string path = pathOf("f64.npy");
  ASSERT_EQ(writeNpy(path, npyFromDoubles({3}, values)), "");
  ReadResult read = readArray(path);
  ASSERT_TRUE(bool(read)) << read.error;
  EXPECT_EQ(read->elementType, NpyElementType::F64);
  EXPECT_EQ(npyToDoubles(*read), values);
  EXPECT_EQ(npyToFloats(*read)[0], 1.0f / 3.0f);
}

TEST_F(NpyTest, ReadsNumPyHeaders) {
  ReadResult matrix = readArray(writeBytes(
      "matrix.npy", npyBytes(1, kDict23, f32Bytes({0, 1, 2, 3, 4, 5}))));
  ASSERT_TRUE(bool(matrix)) << matrix.error;
  EXPECT_EQ(matrix->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(npyToFloats(*matrix), (std::vector<float>{0, 1, 2, 3, 4, 5}));

  // np.save(np.float64(1.5)): a scalar has shape ().
  std::string scalarBytes = std::string("\0\0\0\0\0\0\xf8\x3f", 8);
  ReadResult scalar = readArray(writeBytes(
      "scalar.npy",
      npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
               scalarBytes)));
  ASSERT_TRUE(bool(scalar)) << scalar.error;
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->numElements(), 1);
  EXPECT_EQ(npyToDoubles(*scalar), (std::vector<double>{1.5}));

  // np.arange(5, dtype=np.float16).
  std::string halfBytes = std::string("\0\0\0\x3c\0\x40\0\x42\0\x44", 10);
  ReadResult vector = readArray(writeBytes(
      "vector.npy",
      npyBytes(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }",
               halfBytes)));
  ASSERT_TRUE(bool(vector)) << vector.error;
  EXPECT_EQ(vector->shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(npyToFloats(*vector), (std::vector<float>{0, 1, 2, 3, 4}));

  // Versions 2.0 and 3.0 have a 4-byte header length.
  for (int major : {2, 3}) {
    ReadResult wide = readArray(writeBytes(
        "wide.npy",
        npyBytes(major,
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                 f32Bytes({1, 1}))));
    ASSERT_TRUE(bool(wide)) << wide.error;
    EXPECT_EQ(npyToFloats(*wide), (std::vector<float>{1, 1}));
  }

  // Other key orders, double quotes, no trailing comma, an empty array.
  ReadResult loose = readArray(writeBytes(
      "loose.npy",
      npyBytes(1, "{\"shape\": (0, 4),\"fortran_order\":False,'descr':'<f4'}",
               "")));
  ASSERT_TRUE(bool(loose)) << loose.error;
  EXPECT_EQ(loose->shape, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(loose->numElements(), 0);
}

TEST_F(NpyTest, WritesVersion2WhenTheHeaderIsLong) {
  NpyArray array = npyFromFloats(NpyElementType::F32,
                                 std::vector<int64_t>(30000, 1), {2.5f});
  std::string path = pathOf("long.npy");
  ASSERT_EQ(writeNpy(path, array), "");
  std::string bytes = readBytes(path);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ(bytes.size() % 64, 4u);
  ReadResult read = readArray(path);
  ASSERT_TRUE(bool(read)) << read.error;
  EXPECT_EQ(read->shape.size(), 30000u);
  EXPECT_EQ(npyToFloats(*read), (std::vector<float>{2.5f}));
}

TEST_F(NpyTest, BFloat16IsTwoOpaqueBytes) {
  NpyArray array = npyFromFloats(NpyElementType::BF16, {2}, {1.0f, -2.0f});
  std::string path = pathOf("bf16.npy");
  ASSERT_EQ(writeNpy(path, array), "");
  EXPECT_NE(readBytes(path).find("'descr': '<V2'"), std::string::npos);

  ReadResult unexpected = readArray(path);
  ASSERT_FALSE(bool(unexpected));
  EXPECT_NE(
      unexpected.error.find("'<V2' is read as bf16 only when bf16 is expected"),
      std::string::npos);

  ReadResult read = readArray(path, NpyElementType::BF16);
  ASSERT_TRUE(bool(read)) << read.error;
  EXPECT_EQ(npyToFloats(*read), (std::vector<float>{1.0f, -2.0f}));

  // A plain NumPy void of two bytes says '|V2'.
  ReadResult plainVoid =
      readArray(writeBytes("void.npy",
                           npyBytes(1,
                                    "{'descr': '|V2', 'fortran_order': False, "
                                    "'shape': (1,), }",
                                    std::string("\x80\x3f", 2))),
                NpyElementType::BF16);
  ASSERT_TRUE(bool(plainVoid)) << plainVoid.error;
  EXPECT_EQ(npyToFloats(*plainVoid), (std::vector<float>{1.0f}));
}

TEST_F(NpyTest, ReportsEveryProblem) {
  auto contains = [](const std::string &message, llvm::StringRef part) {
    return llvm::StringRef(message).contains(part);
  };
  std::string data6 = f32Bytes({0, 1, 2, 3, 4, 5});

  std::string missing = pathOf("missing.npy");
  ReadResult absent = readArray(missing);
  ASSERT_FALSE(bool(absent));
  std::string absentMessage = absent.error;
  EXPECT_TRUE(contains(absentMessage, "cannot read " + missing +
                                          ": No such file or directory"))
      << absentMessage;

  EXPECT_TRUE(contains(readError("PK\x03\x04 not numpy"), "bad magic"));
  EXPECT_TRUE(contains(readError(std::string("\x93NUMPY\x01", 7)),
                       "header is cut short"));
  std::string v4 = npyBytes(1, kDict23, data6);
  v4[6] = 4;
  EXPECT_TRUE(contains(readError(v4), "unsupported .npy version 4.0"));
  EXPECT_TRUE(contains(readError(npyBytes(1, kDict23, data6).substr(0, 40)),
                       "header is cut short"));

  EXPECT_TRUE(contains(
      readError(npyBytes(
          1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
          data6)),
      "unsupported dtype '>f4'"));
  EXPECT_TRUE(contains(
      readError(npyBytes(
          1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }",
          data6)),
      "unsupported dtype '<i8'"));
  EXPECT_TRUE(contains(
      readError(npyBytes(
          1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
          data6)),
      "Fortran-order arrays are not supported"));
  EXPECT_TRUE(
      contains(readError(npyBytes(1, kDict23, data6.substr(0, 20))),
               "the data is cut short: shape (2, 3) of f32 takes 24 bytes, "
               "the file has 20 after the header"));
  EXPECT_TRUE(contains(readError(npyBytes(1, kDict23, data6 + "xx")),
                       "there are bytes after the data"));
  EXPECT_TRUE(
      contains(readError(npyBytes(1, kDict23, data6), NpyElementType::F16),
               "holds f32 but f16 was expected"));

  EXPECT_TRUE(contains(
      readError(npyBytes(1, "{'descr': '<f4', 'shape': (2, 3), }", data6)),
      "malformed header: the keys 'descr', 'fortran_order' and 'shape' are "
      "not all there"));
  EXPECT_TRUE(contains(
      readError(npyBytes(
          1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
          data6)),
      "malformed header: expected a non-negative dimension"));
  EXPECT_TRUE(contains(
      readError(npyBytes(
          1, "{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3), }",
          data6)),
      "malformed header: expected ',' or '}'"));
  EXPECT_TRUE(contains(
      readError(npyBytes(
          1,
          "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
          data6)),
      "structured dtypes are not supported"));
  EXPECT_TRUE(contains(readError(npyBytes(1, "not a dict", data6)),
                       "malformed header: expected '{'"));
  EXPECT_TRUE(contains(
      readError(npyBytes(1,
                         "{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(4294967296, 4294967296, 4294967296), }",
                         data6)),
      "holds more than 2^48 bytes"));
}

TEST_F(NpyTest, NamesADimensionMoreThanInt64) {
  auto dictOf = [](const std::string &dim) {
    return "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dim +
           ",), }";
  };
  // 2^63 - 1 is a dimension (of too many bytes), 2^63 is none.
  EXPECT_NE(readError(npyBytes(1, dictOf("9223372036854775807"), ""))
                .find("shape (9223372036854775807,) of f32 holds more than "
                      "2^48 bytes"),
            std::string::npos);
  EXPECT_NE(readError(npyBytes(1, dictOf("9223372036854775808"), ""))
                .find("malformed header: dimension 9223372036854775808 in "
                      "the shape is more than 2^63 - 1"),
            std::string::npos);
  // A long one is named by its first digits.
  EXPECT_NE(readError(npyBytes(1, dictOf(std::string(5000, '7')), ""))
                .find("dimension " + std::string(24, '7') +
                      "... (5000 digits) in the shape is more than 2^63 - 1"),
            std::string::npos);
}

TEST_F(NpyTest, RefusesADimensionOf0BesideOnesThatOverflow) {
  // Once read with no data when the 0 came first (and refused when it came
  // last), leaving callers a shape whose other dimensions multiply past
  // int64. NumPy makes no such array either.
  for (const char *shape : {"(0, 4611686018427387904, 4611686018427387904)",
                            "(4611686018427387904, 4611686018427387904, 0)"})
    EXPECT_NE(readError(npyBytes(1,
                                 std::string("{'descr': '<f4', "
                                             "'fortran_order': False, "
                                             "'shape': ") +
                                     shape + ", }",
                                 ""))
                  .find(std::string("shape ") + shape +
                        " of f32 would hold more than 2^48 bytes (256 TiB) "
                        "but for its dimensions of 0"),
              std::string::npos)
        << shape;

  ReadResult empty = readArray(writeBytes(
      "empty.npy",
      npyBytes(1,
               "{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, "
               "0, 1048576), }",
               "")));
  ASSERT_TRUE(bool(empty)) << empty.error;
  EXPECT_EQ(empty->numElements(), 0);
}

TEST_F(NpyTest, RefusesToWriteAShapeOfTooManyBytes) {
  // Once 2^62 x 4 elements of 4 bytes wrapped to 0 bytes, matched the empty
  // data, and the file was written (for readNpy to refuse).
  NpyArray array;
  array.elementType = NpyElementType::F32;
  array.shape = {int64_t(1) << 62, 4};
  std::string path = pathOf("huge.npy");
  EXPECT_EQ(writeNpy(path, array),
            path + ": cannot write: shape (4611686018427387904, 4) of f32 "
                   "holds more than 2^48 bytes (256 TiB), more than any "
                   "machine addresses");
  array.shape = {0, int64_t(1) << 62, int64_t(1) << 62};
  EXPECT_EQ(writeNpy(path, array),
            path + ": cannot write: shape (0, 4611686018427387904, "
                   "4611686018427387904) of f32 would hold more than 2^48 "
                   "bytes (256 TiB) but for its dimensions of 0 (NumPy, too, "
                   "makes no such array)");
  EXPECT_FALSE(llvm::sys::fs::exists(path));
}

TEST_F(NpyTest, RefusesToWriteInconsistentArrays) {
  NpyArray array;
  array.elementType = NpyElementType::F32;
  array.shape = {2, 2};
  array.data.resize(12);
  std::string path = pathOf("inconsistent.npy");
  EXPECT_EQ(writeNpy(path, array),
            path + ": cannot write 12 bytes of data for shape (2, 2) of f32, "
                   "which takes 16");

  std::string unwritable = pathOf("no-such-dir/x.npy");
  EXPECT_EQ(
      writeNpy(unwritable, npyFromFloats(NpyElementType::F32, {1}, {1.0f})),
      "cannot write " + unwritable + ": No such file or directory");
}

} // namespace
