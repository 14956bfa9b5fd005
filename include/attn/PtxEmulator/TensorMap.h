//===- TensorMap.h - Tensor maps for the emulator's copies ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A tiled tensor map: what cuTensorMapEncodeTiled (CUDA driver API) takes
// and cp.async.bulk.tensor reads. On a GPU the 128-byte CUtensorMap is
// opaque; the emulated driver writes these fields into it, with a tag, and
// the emulator reads them back, so a map that did not come from the encoder
// is refused rather than misread.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PTXEMULATOR_TENSORMAP_H
#define ATTN_PTXEMULATOR_TENSORMAP_H

#include <cstdint>
#include <string>

namespace attn::ptxemu {

/// The bytes of a CUtensorMap, and the alignment it needs.
constexpr unsigned kTensorMapBytes = 128, kTensorMapAlignment = 64;

/// cuTensorMapEncodeTiled's arguments, with the driver's enumeration
/// values (CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
/// CUtensorMapL2promotion, CUtensorMapFloatOOBfill).
struct TiledTensorMap {
  enum DataType : uint32_t {
    U8,
    U16,
    U32,
    I32,
    U64,
    I64,
    F16,
    F32,
    F64,
    BF16,
    F32Ftz,
    TF32,
    TF32Ftz,
  };
  enum Swizzle : uint32_t { NoSwizzle, Swizzle32B, Swizzle64B, Swizzle128B };
  uint32_t dataType = BF16;
  uint32_t rank = 0;
  uint64_t globalAddress = 0;
  /// Sizes of dimensions 0 (innermost) to rank - 1, and the byte strides of
  /// dimensions 1 to rank - 1 (globalStrides[i] is dimension i + 1's).
  uint64_t globalDim[5] = {}, globalStrides[4] = {};
  uint32_t boxDim[5] = {}, elementStrides[5] = {};
  uint32_t interleave = 0, swizzle = NoSwizzle, l2Promotion = 0;
  /// 0: elements outside the tensor read as zero; 1: as NaN (floats).
  uint32_t oobFill = 0;

  unsigned elementBytes() const;
  /// The box's bytes: what one copy delivers (its tx-count).
  uint64_t boxBytes() const;
};

/// Checks FIELDS as cuTensorMapEncodeTiled does and writes them to MAP
/// (kTensorMapBytes, aligned to kTensorMapAlignment); false with ERROR
/// naming the argument otherwise.
bool encodeTensorMap(void *map, const TiledTensorMap &fields,
                     std::string &error);

/// The fields of a map encodeTensorMap wrote; false if MAP is not one.
bool decodeTensorMap(const void *map, TiledTensorMap &fields);

} // namespace attn::ptxemu

#endif // ATTN_PTXEMULATOR_TENSORMAP_H
