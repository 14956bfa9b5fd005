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

/// The formats' conversions, rounding to nearest even as the GPU's do.
struct HostNumbers {
  static float f16(uint16_t bits) { return mlir::attn::f16BitsToFloat(bits); }
  static float bf16(uint16_t bits) { return mlir::attn::bf16BitsToFloat(bits); }
  static float roundF16(float x) {
    return mlir::attn::roundToHalf(x, HalfFormat::F16);
  }
  static float roundBf16(float x) {
    return mlir::attn::roundToHalf(x, HalfFormat::BF16);
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
