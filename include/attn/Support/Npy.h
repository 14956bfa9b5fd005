//===- Npy.h - Read and write NumPy .npy files ------------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The subset of the .npy format (versions 1.0, 2.0 and 3.0) that attention
// inputs and outputs need: little-endian f16, bf16, f32 and f64 arrays in C
// order. Every problem with a file is an error message naming the file.
// Plain C++ without LLVM (as Files.h): attn-launch reads the reference cases
// attn-run writes where LLVM is not installed.
//
// NumPy has no bfloat16; ml_dtypes saves it with the opaque descr '<V2', so a
// '<V2' file is read as bf16 only when the caller asks for bf16, and bf16 is
// written as '<V2'.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_NPY_H
#define ATTN_SUPPORT_NPY_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn {

enum class NpyElementType {
  F16,
  BF16,
  F32,
  F64,
  /// NumPy's bool ('|b1'): one byte, 0 or 1; converts to 0.0 and 1.0.
  Bool,
  /// NumPy's int8 ('|i1'): one signed byte (a block mask's values).
  I8,
  /// NumPy's int32 ('<i4'): per-sequence key lengths.
  I32,
};

/// Bytes per element of `type`.
int64_t npyElementBytes(NpyElementType type);

/// A dense array as it lies in a .npy file.
struct NpyArray {
  NpyElementType elementType = NpyElementType::F32;
  /// Empty for a scalar.
  std::vector<int64_t> shape;
  /// numElements() * npyElementBytes(elementType) bytes, little-endian, in C
  /// order.
  std::vector<uint8_t> data;

  int64_t numElements() const;
};

/// An error message naming the file and the reason; empty on success.
using NpyError = std::string;

/// Reads the .npy file at `path` into `array`. With `expected`, the file must
/// hold that element type; without it, a '<V2' file is rejected since it is
/// not known to be bf16.
NpyError readNpy(const std::string &path, NpyArray &array,
                 std::optional<NpyElementType> expected = std::nullopt);

/// Reads the .npy file at `path` into `array`, whatever its element type,
/// taking '<V2' as bf16: for an attention tensor, whose only two-byte opaque
/// type is bf16.
NpyError readTensorNpy(const std::string &path, NpyArray &array);

/// Writes `array` to `path` as a version 1.0 .npy file (2.0 if the header
/// needs it), replacing any file there (files::writeFile).
NpyError writeNpy(const std::string &path, const NpyArray &array);

/// The elements of `array` as floats; f64 elements are rounded to nearest.
std::vector<float> npyToFloats(const NpyArray &array);

/// The elements of `array` as doubles, exactly.
std::vector<double> npyToDoubles(const NpyArray &array);

/// An array of `type` and `shape` holding `values` rounded to nearest even.
/// `values` must have as many elements as `shape` describes.
NpyArray npyFromFloats(NpyElementType type, const std::vector<int64_t> &shape,
                       const std::vector<float> &values);

/// An f64 array of `shape` holding `values`, which must have as many elements
/// as `shape` describes.
NpyArray npyFromDoubles(const std::vector<int64_t> &shape,
                        const std::vector<double> &values);

} // namespace mlir::attn

#endif // ATTN_SUPPORT_NPY_H
