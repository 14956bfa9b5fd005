//===- HostReference.cpp - The GPU check's reference on the host ----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "HostReference.h"

#include "attn/Support/HalfFloat.h"

#include <cstring>
#include <vector>

using namespace attn::gpucheck;
using namespace attn::gpucheck::reference;
using mlir::attn::HalfFormat;

namespace {

/// Every 16-bit pattern of FORMAT as a float: the row's inner loops convert
/// each element of K and V once per query row.
const std::vector<float> &widened(HalfFormat format) {
  auto table = [](HalfFormat format) {
    std::vector<float> values(1 << 16);
    for (uint32_t bits = 0; bits < values.size(); ++bits)
      values[bits] = mlir::attn::halfBitsToFloat(bits, format);
    return values;
  };
  static const std::vector<float> f16 = table(HalfFormat::F16),
                                  bf16 = table(HalfFormat::BF16);
  return format == HalfFormat::F16 ? f16 : bf16;
}

/// The formats' conversions, rounding to nearest even as the GPU's do.
struct HostNumbers {
  static inline const float *f16Values = widened(HalfFormat::F16).data();
  static inline const float *bf16Values = widened(HalfFormat::BF16).data();
  static float f16(uint16_t bits) { return f16Values[bits]; }
  static float bf16(uint16_t bits) { return bf16Values[bits]; }
  static float roundF16(float x) {
    return mlir::attn::roundToHalf(x, HalfFormat::F16);
  }
  static float roundBf16(float x) {
    return mlir::attn::roundToHalf(x, HalfFormat::BF16);
  }
  /// The product of two floats is exact in double: one rounding of the sum
  /// to double, then to float (fmaf rounds once; this differs from it in
  /// the last bit at most, rarely, and is not a library call).
  static float fma(float a, float b, float c) {
    return static_cast<float>(double(a) * double(b) + double(c));
  }
};

/// One thread computing a row: its reductions are the value itself.
struct HostTeam {
  int rank() const { return 0; }
  int size() const { return 1; }
  void sync() const {}
  float max(float x) const { return x; }
  float sum(float x) const { return x; }
};

template <int32_t TYPE>
void rows(const void *query, const void *key, const void *value,
          const int32_t *keyLengths, const void *mask,
          const uint8_t *blockMask, const Problem &p, float *out, float *lse) {
  std::vector<float> q(p.headDim), scores(p.keyLen);
  HostTeam team;
  int64_t count = int64_t(p.batch) * p.queryHeads * p.queryLen;
  for (int64_t row = 0; row < count; ++row)
    referenceRow<TYPE, HostNumbers>(team, row, q.data(), scores.data(), query,
                                    key, value, out, lse, keyLengths, mask,
                                    blockMask, p);
}

} // namespace

void attn::gpucheck::fillNormalOnHost(int32_t dtype, void *out, uint64_t count,
                                      uint64_t seed) {
  for (uint64_t i = 0; i < count; ++i) {
    float x = normalAt(seed, i);
    if (dtype == kF32) {
      std::memcpy(static_cast<float *>(out) + i, &x, 4);
    } else {
      uint16_t bits = mlir::attn::floatToHalfBits(
          x, dtype == kF16 ? HalfFormat::F16 : HalfFormat::BF16);
      std::memcpy(static_cast<uint16_t *>(out) + i, &bits, 2);
    }
  }
}

void attn::gpucheck::referenceOnHost(int32_t dtype, const void *query,
                                     const void *key, const void *value,
                                     const int32_t *keyLengths,
                                     const void *mask,
                                     const uint8_t *blockMask,
                                     const Problem &p, float *out,
                                     float *lse) {
  switch (dtype) {
  case kF16:
    return rows<kF16>(query, key, value, keyLengths, mask, blockMask, p, out,
                      lse);
  case kBF16:
    return rows<kBF16>(query, key, value, keyLengths, mask, blockMask, p, out,
                       lse);
  default:
    return rows<kF32>(query, key, value, keyLengths, mask, blockMask, p, out,
                      lse);
  }
}
