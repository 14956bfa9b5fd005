//===- Numerics.h - PTX's floating-point conversions and functions -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The emulator's own f16/bf16 conversions (round to nearest even, with
// subnormals, overflow to infinity and PTX's canonical NaN), flush-to-zero,
// and the approximate functions of the PTX ISA computed to within their
// stated error. Written from the IEEE 754 formats and the ISA's
// definitions; shared with nothing else in the project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PTXEMULATOR_NUMERICS_H
#define ATTN_LIB_PTXEMULATOR_NUMERICS_H

#include "attn/PtxEmulator/Program.h"

#include <cstdint>
#include <cstring>

namespace attn::ptxemu {

inline float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}
inline uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}
inline double bitsToDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, 8);
  return value;
}
inline uint64_t doubleToBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  return bits;
}

/// f32 -> f16 / bf16 bits, rounding to nearest even; NaN becomes 0x7FFF.
uint16_t floatToHalf(float value);
uint16_t floatToBFloat(float value);
/// f64 -> f16 bits, rounding to nearest even once (an mma's f16
/// accumulator); NaN becomes 0x7FFF.
uint16_t doubleToHalf(double value);
/// Exact widening.
float halfToFloat(uint16_t bits);
float bfloatToFloat(uint16_t bits);
/// A 16-bit float of TYPE (F16 or BF16, or their x2 pairs) to f32 and
/// back.
inline float unpackHalf(uint16_t bits, Type t) {
  return t == Type::BF16 || t == Type::BF16x2 ? bfloatToFloat(bits)
                                              : halfToFloat(bits);
}
inline uint16_t packHalf(float value, Type t) {
  return t == Type::BF16 || t == Type::BF16x2 ? floatToBFloat(value)
                                              : floatToHalf(value);
}

/// Subnormal f32 to a zero of the same sign (.ftz).
float flushToZero(float value);

/// The .approx functions (PTX ISA: ex2.approx.f32, lg2.approx.f32,
/// rcp.approx.f32, rsqrt.approx.f32, tanh.approx.f32, sin/cos.approx.f32),
/// with their special values.
float approxEx2(float x);
float approxLg2(float x);
float approxTanh(float x);

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_NUMERICS_H
