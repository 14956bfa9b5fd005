//===- HalfFloat.h - IEEE binary16 and bfloat16 conversions -----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Conversions between float and the bit patterns of the two 16-bit floating
// point formats attention runs in. They are plain bit manipulation, without
// APFloat, because the host tools convert arrays of millions of elements.
//
// Float to 16 bits rounds to nearest, ties to even; values past the largest
// finite value become infinity. NaNs stay NaN with their sign and the top bits
// of their payload, made quiet, as the hardware conversions do.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_SUPPORT_HALFFLOAT_H
#define ATTN_SUPPORT_HALFFLOAT_H

#include <cstdint>

namespace mlir::attn {

/// The two 16-bit floating-point formats.
enum class HalfFormat {
  /// IEEE 754 binary16: 5 exponent bits, 10 mantissa bits.
  F16,
  /// bfloat16: float's 8 exponent bits, 7 mantissa bits.
  BF16,
};

/// The float an IEEE binary16 bit pattern stands for; exact except that a
/// signalling NaN becomes quiet.
float f16BitsToFloat(uint16_t bits);

/// `value` rounded to IEEE binary16.
uint16_t floatToF16Bits(float value);

/// The float a bfloat16 bit pattern stands for; exact except that a
/// signalling NaN becomes quiet.
float bf16BitsToFloat(uint16_t bits);

/// `value` rounded to bfloat16.
uint16_t floatToBF16Bits(float value);

/// The bit pattern of `value` rounded to `format`.
uint16_t floatToHalfBits(float value, HalfFormat format);

/// The float a bit pattern of `format` stands for.
float halfBitsToFloat(uint16_t bits, HalfFormat format);

/// `value` rounded to `format`, as a float again: how a computation that
/// stores its intermediates in `format` sees them.
float roundToHalf(float value, HalfFormat format);

} // namespace mlir::attn

#endif // ATTN_SUPPORT_HALFFLOAT_H
