//===- Numerics.cpp - PTX's floating-point conversions and functions ------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "Numerics.h"

#include <cmath>
#include <cstring>

using namespace attn::ptxemu;

uint16_t attn::ptxemu::floatToHalf(float value) {
  uint32_t bits = floatToBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xff;
  uint32_t mantissa = bits & 0x7fffff;
  if (exponent == 0xff)
    return mantissa ? 0x7fff : static_cast<uint16_t>(sign | 0x7c00);
  // Unbiased exponent; f16's normal range is [-14, 15].
  int e = static_cast<int>(exponent) - 127;
  if (e > 15)
    return static_cast<uint16_t>(sign | 0x7c00);
  uint32_t significand = mantissa | (exponent ? 0x800000u : 0);
  // The number of low bits of the 24-bit significand that f16 drops: 13 for
  // normals, more below f16's normal range.
  int shift = e >= -14 ? 13 : 13 + (-14 - e);
  if (exponent == 0 || shift > 24)
    return sign; // f32 subnormals and anything below half of f16's least
                 // subnormal round to zero
  uint32_t kept = significand >> shift;
  uint32_t rest = significand & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1)))
    ++kept;
  // For normals KEPT carries the implicit bit at 2^10: adding the biased
  // exponent (e + 14 counts from 1) lets a carry roll into the exponent.
  uint32_t result = e >= -14 ? (static_cast<uint32_t>(e + 14) << 10) + kept
                             : kept;
  return static_cast<uint16_t>(sign | result);
}

uint16_t attn::ptxemu::doubleToHalf(double value) {
  if (std::isnan(value))
    return 0x7fff;
  // At or past f16's largest finite value plus half an ulp: infinity.
  if (std::fabs(value) >= 65520.0)
    return std::signbit(value) ? 0xfc00 : 0x7c00;
  // Rounding to f32 toward zero with the inexact bit kept in the lowest
  // place (round to odd), then to f16, rounds once: f32 keeps 13 bits more
  // than f16, so the sticky bit can only break what would be a tie.
  float narrow = static_cast<float>(value);
  if (std::fabs(static_cast<double>(narrow)) > std::fabs(value))
    narrow = std::nextafter(narrow, 0.0f);
  uint32_t bits = floatToBits(narrow);
  if (static_cast<double>(narrow) != value)
    bits |= 1;
  return floatToHalf(bitsToFloat(bits));
}

uint16_t attn::ptxemu::floatToBFloat(float value) {
  uint32_t bits = floatToBits(value);
  if ((bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff))
    return 0x7fff;
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float attn::ptxemu::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f)
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float attn::ptxemu::bfloatToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

float attn::ptxemu::flushToZero(float value) {
  if (std::fpclassify(value) == FP_SUBNORMAL)
    return std::signbit(value) ? -0.0f : 0.0f;
  return value;
}

// The ISA gives ex2.approx.f32 a maximum relative error of 2^-22 and
// lg2.approx.f32 an absolute error of 2^-22 near 1; the correctly rounded
// values computed in double precision lie within both.
float attn::ptxemu::approxEx2(float x) {
  return static_cast<float>(std::exp2(static_cast<double>(x)));
}

float attn::ptxemu::approxLg2(float x) {
  return static_cast<float>(std::log2(static_cast<double>(x)));
}

float attn::ptxemu::approxTanh(float x) {
  return static_cast<float>(std::tanh(static_cast<double>(x)));
}
