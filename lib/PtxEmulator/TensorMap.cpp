//===- TensorMap.cpp - Tiled tensor maps ----------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The checks are the requirements the CUDA driver API documents for
// cuTensorMapEncodeTiled: the map 64-byte aligned, rank 1 to 5, the global
// address 16-byte aligned, dimensions from 1 to 2^32, strides multiples of
// 16 below 2^40, box sizes from 1 to 256 with an inner box of a multiple of
// 16 bytes, element strides from 1 to 8, and under a swizzle an inner box no
// wider than the swizzle's span.
//
//===----------------------------------------------------------------------===//

#include "attn/PtxEmulator/TensorMap.h"

#include <cstring>

using namespace attn::ptxemu;

namespace {

/// "ATTNTMAP": the tag of an encoded map.
constexpr uint64_t kTag = 0x50414d544e545441ull;

/// The fields, packed into the map's 128 bytes.
struct Encoded {
  uint64_t tag, globalAddress, globalStrides[4];
  uint32_t globalDimMinus1[5];
  uint8_t boxDimMinus1[5], elementStrides[5];
  uint8_t dataType, rank, interleave, swizzle, l2Promotion, oobFill;
};
static_assert(sizeof(Encoded) <= kTensorMapBytes, "a map holds 128 bytes");

} // namespace

unsigned TiledTensorMap::elementBytes() const {
  switch (dataType) {
  case U8:
    return 1;
  case U16:
  case F16:
  case BF16:
    return 2;
  case U64:
  case I64:
  case F64:
    return 8;
  default:
    return 4;
  }
}

uint64_t TiledTensorMap::boxBytes() const {
  uint64_t bytes = elementBytes();
  for (uint32_t i = 0; i < rank; ++i)
    bytes *= boxDim[i];
  return bytes;
}

bool attn::ptxemu::encodeTensorMap(void *map, const TiledTensorMap &f,
                                   std::string &error) {
  auto refuse = [&](const std::string &why) {
    error = "cuTensorMapEncodeTiled: " + why;
    return false;
  };
  if (!map || reinterpret_cast<uintptr_t>(map) % kTensorMapAlignment != 0)
    return refuse("the tensor map is not 64-byte aligned");
  if (f.dataType > TiledTensorMap::TF32Ftz)
    return refuse("data type " + std::to_string(f.dataType));
  if (f.rank < 1 || f.rank > 5)
    return refuse("rank " + std::to_string(f.rank) + " (1 to 5)");
  if (f.interleave != 0)
    return refuse("interleaved layouts are not emulated");
  if (f.globalAddress % 16 != 0)
    return refuse("the global address is not 16-byte aligned");
  if (f.swizzle > TiledTensorMap::Swizzle128B || f.l2Promotion > 3 ||
      f.oobFill > 1)
    return refuse("swizzle, L2 promotion or out-of-bounds fill out of range");
  unsigned element = f.elementBytes();
  for (uint32_t i = 0; i < f.rank; ++i) {
    std::string dim = " of dimension " + std::to_string(i);
    if (f.globalDim[i] == 0 || f.globalDim[i] > (uint64_t(1) << 32))
      return refuse("size " + std::to_string(f.globalDim[i]) + dim);
    if (f.boxDim[i] == 0 || f.boxDim[i] > 256)
      return refuse("box size " + std::to_string(f.boxDim[i]) + dim +
                    " (1 to 256)");
    if (f.elementStrides[i] == 0 || f.elementStrides[i] > 8)
      return refuse("element stride " + std::to_string(f.elementStrides[i]) +
                    dim + " (1 to 8)");
    if (i > 0) {
      uint64_t stride = f.globalStrides[i - 1];
      if (stride % 16 != 0 || stride >= (uint64_t(1) << 40))
        return refuse("byte stride " + std::to_string(stride) + dim +
                      " (a multiple of 16 below 2^40)");
    }
  }
  uint64_t innerBytes = uint64_t(f.boxDim[0]) * element;
  if (innerBytes % 16 != 0)
    return refuse("the inner box is " + std::to_string(innerBytes) +
                  " bytes, not a multiple of 16");
  static const unsigned spans[] = {0, 32, 64, 128};
  if (f.swizzle != TiledTensorMap::NoSwizzle && innerBytes > spans[f.swizzle])
    return refuse("the inner box is " + std::to_string(innerBytes) +
                  " bytes, wider than the swizzle's " +
                  std::to_string(spans[f.swizzle]));
  Encoded e = {};
  e.tag = kTag;
  e.globalAddress = f.globalAddress;
  for (uint32_t i = 0; i < f.rank; ++i) {
    if (i > 0)
      e.globalStrides[i - 1] = f.globalStrides[i - 1];
    e.globalDimMinus1[i] = static_cast<uint32_t>(f.globalDim[i] - 1);
    e.boxDimMinus1[i] = static_cast<uint8_t>(f.boxDim[i] - 1);
    e.elementStrides[i] = static_cast<uint8_t>(f.elementStrides[i]);
  }
  e.dataType = static_cast<uint8_t>(f.dataType);
  e.rank = static_cast<uint8_t>(f.rank);
  e.interleave = static_cast<uint8_t>(f.interleave);
  e.swizzle = static_cast<uint8_t>(f.swizzle);
  e.l2Promotion = static_cast<uint8_t>(f.l2Promotion);
  e.oobFill = static_cast<uint8_t>(f.oobFill);
  std::memset(map, 0, kTensorMapBytes);
  std::memcpy(map, &e, sizeof(e));
  return true;
}

bool attn::ptxemu::decodeTensorMap(const void *map, TiledTensorMap &fields) {
  Encoded e;
  std::memcpy(&e, map, sizeof(e));
  if (e.tag != kTag || e.rank < 1 || e.rank > 5)
    return false;
  fields = TiledTensorMap();
  fields.globalAddress = e.globalAddress;
  fields.rank = e.rank;
  for (uint32_t i = 0; i < e.rank; ++i) {
    if (i > 0)
      fields.globalStrides[i - 1] = e.globalStrides[i - 1];
    fields.globalDim[i] = uint64_t(e.globalDimMinus1[i]) + 1;
    fields.boxDim[i] = uint32_t(e.boxDimMinus1[i]) + 1;
    fields.elementStrides[i] = e.elementStrides[i];
  }
  fields.dataType = e.dataType;
  fields.interleave = e.interleave;
  fields.swizzle = e.swizzle;
  fields.l2Promotion = e.l2Promotion;
  fields.oobFill = e.oobFill;
  return true;
}
