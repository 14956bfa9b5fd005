//===- HalfFloat.cpp - IEEE binary16 and bfloat16 conversions -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/HalfFloat.h"

#include "llvm/ADT/bit.h"

using namespace mlir::attn;

namespace {
// Float's fields.
constexpr uint32_t kFloatSign = 0x80000000u;
constexpr uint32_t kFloatInf = 0x7f800000u;
constexpr uint32_t kFloatQuiet = 0x00400000u;
constexpr int kFloatMantissaBits = 23;
constexpr int kFloatBias = 127;

// binary16's fields.
constexpr uint16_t kHalfInf = 0x7c00;
constexpr uint16_t kHalfQuiet = 0x0200;
constexpr int kHalfMantissaBits = 10;
constexpr int kHalfBias = 15;
constexpr int kMantissaDrop = kFloatMantissaBits - kHalfMantissaBits;

// bfloat16 is the top half of a float.
constexpr uint16_t kBFloatQuiet = 0x0040;
} // namespace

float mlir::attn::f16BitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> kHalfMantissaBits) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) {
    uint32_t nan = mantissa ? kFloatQuiet : 0;
    return llvm::bit_cast<float>(sign | kFloatInf | nan |
                                 (mantissa << kMantissaDrop));
  }
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float's normal range.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return llvm::bit_cast<float>(sign | llvm::bit_cast<uint32_t>(magnitude));
  }
  uint32_t rebiased = exponent + (kFloatBias - kHalfBias);
  return llvm::bit_cast<float>(sign | (rebiased << kFloatMantissaBits) |
                               (mantissa << kMantissaDrop));
}

uint16_t mlir::attn::floatToF16Bits(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((bits & kFloatSign) >> 16);
  uint32_t magnitude = bits & ~kFloatSign;

  if (magnitude > kFloatInf)
    return sign | kHalfInf | kHalfQuiet |
           static_cast<uint16_t>((magnitude >> kMantissaDrop) & 0x3ff);
  // 65520 is halfway between the largest half, 65504, and 2^16; the tie goes
  // to the even one, 2^16, which overflows.
  constexpr uint32_t kOverflow = 0x477ff000u;
  if (magnitude >= kOverflow)
    return sign | kHalfInf;

  constexpr uint32_t kSmallestNormal = 0x38800000u; // 2^-14
  if (magnitude < kSmallestNormal) {
    // Half subnormals count units of 2^-24; 2^-25 and below round to zero
    // (2^-25 itself ties to the even zero).
    constexpr uint32_t kHalfOfSmallestSubnormal = 0x33000000u; // 2^-25
    if (magnitude <= kHalfOfSmallestSubnormal)
      return sign;
    int exponent = static_cast<int>(magnitude >> kFloatMantissaBits);
    uint32_t significand = (magnitude & 0x7fffff) | 0x800000;
    // significand * 2^(exponent - 150) in units of 2^-24.
    int shift = 126 - exponent;
    uint32_t units = significand >> shift;
    uint32_t remainder = significand & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (units & 1)))
      ++units; // A carry into bit 10 is the smallest normal, as it should be.
    return sign | static_cast<uint16_t>(units);
  }

  // Normal: rebias the exponent, then round the 13 dropped bits to nearest
  // even by adding just under half a unit plus the unit's low bit. A carry
  // propagates into the exponent, which is the right result.
  uint32_t lowBit = (magnitude >> kMantissaDrop) & 1;
  uint32_t rebias = static_cast<uint32_t>(kFloatBias - kHalfBias)
                    << kFloatMantissaBits;
  uint32_t rounded =
      magnitude - rebias + ((1u << (kMantissaDrop - 1)) - 1) + lowBit;
  return sign | static_cast<uint16_t>(rounded >> kMantissaDrop);
}

float mlir::attn::bf16BitsToFloat(uint16_t bits) {
  uint32_t widened = static_cast<uint32_t>(bits) << 16;
  if ((widened & ~kFloatSign) > kFloatInf)
    widened |= kFloatQuiet;
  return llvm::bit_cast<float>(widened);
}

uint16_t mlir::attn::floatToBF16Bits(float value) {
  uint32_t bits = llvm::bit_cast<uint32_t>(value);
  // Setting the quiet bit keeps a NaN whose payload lies only in the low
  // half from turning into infinity.
  if ((bits & ~kFloatSign) > kFloatInf)
    return static_cast<uint16_t>(bits >> 16) | kBFloatQuiet;
  // Round to nearest even; a carry into the exponent, up to infinity, is the
  // right result.
  uint32_t lowBit = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7fff + lowBit) >> 16);
}

uint16_t mlir::attn::floatToHalfBits(float value, HalfFormat format) {
  return format == HalfFormat::F16 ? floatToF16Bits(value)
                                   : floatToBF16Bits(value);
}

float mlir::attn::halfBitsToFloat(uint16_t bits, HalfFormat format) {
  return format == HalfFormat::F16 ? f16BitsToFloat(bits)
                                   : bf16BitsToFloat(bits);
}

float mlir::attn::roundToHalf(float value, HalfFormat format) {
  return halfBitsToFloat(floatToHalfBits(value, format), format);
}
