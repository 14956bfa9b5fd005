//===- HalfFloatTest.cpp - IEEE binary16 and bfloat16 conversions ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/HalfFloat.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/bit.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace mlir::attn;

namespace {

const llvm::fltSemantics &semanticsOf(HalfFormat format) {
  return format == HalfFormat::F16 ? llvm::APFloat::IEEEhalf()
                                   : llvm::APFloat::BFloat();
}

/// APFloat's widening of a 16-bit pattern, as float bits.
uint32_t apFloatWiden(uint16_t bits, HalfFormat format) {
  llvm::APFloat value(semanticsOf(format), llvm::APInt(16, bits));
  bool losesInfo = false;
  value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return static_cast<uint32_t>(value.bitcastToAPInt().getZExtValue());
}

/// APFloat's rounding of a float to a 16-bit pattern.
uint16_t apFloatNarrow(float input, HalfFormat format) {
  llvm::APFloat value(input);
  bool losesInfo = false;
  value.convert(semanticsOf(format), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return static_cast<uint16_t>(value.bitcastToAPInt().getZExtValue());
}

bool isNaNBits(uint16_t bits, HalfFormat format) {
  return format == HalfFormat::F16 ? (bits & 0x7fff) > 0x7c00
                                   : (bits & 0x7fff) > 0x7f80;
}

class HalfFloatTest : public testing::TestWithParam<HalfFormat> {};

TEST_P(HalfFloatTest, WidensEveryBitPatternLikeAPFloat) {
  HalfFormat format = GetParam();
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t pattern = static_cast<uint16_t>(bits);
    uint32_t ours = llvm::bit_cast<uint32_t>(halfBitsToFloat(pattern, format));
    uint32_t expected = apFloatWiden(pattern, format);
    if (isNaNBits(pattern, format)) {
      // Both give a NaN of the same sign and payload; ours is always quiet.
      EXPECT_EQ(ours, expected | 0x00400000u) << "bits 0x" << std::hex << bits;
      continue;
    }
    EXPECT_EQ(ours, expected) << "bits 0x" << std::hex << bits;
  }
}

TEST_P(HalfFloatTest, EveryBitPatternSurvivesARoundTrip) {
  HalfFormat format = GetParam();
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t pattern = static_cast<uint16_t>(bits);
    if (isNaNBits(pattern, format))
      continue;
    EXPECT_EQ(floatToHalfBits(halfBitsToFloat(pattern, format), format),
              pattern)
        << "bits 0x" << std::hex << bits;
  }
}

/// Floats near every 16-bit value: the value itself, its neighbours in float,
/// and the exact midpoints to the next value, which must tie to even.
std::vector<float> interestingFloats(HalfFormat format) {
  std::vector<float> values;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    uint16_t pattern = static_cast<uint16_t>(bits);
    if (isNaNBits(pattern, format))
      continue;
    float value = halfBitsToFloat(pattern, format);
    values.push_back(value);
    values.push_back(std::nextafter(value, 0.0f));
    values.push_back(std::nextafter(value, value * 2));
    if (std::isinf(value) ||
        (bits & 0x7fff) == (format == HalfFormat::F16 ? 0x7bff : 0x7f7f))
      continue;
    float next = halfBitsToFloat(static_cast<uint16_t>(bits + 1), format);
    float midpoint = (value + next) / 2; // exact: float has spare bits
    values.push_back(midpoint);
    values.push_back(std::nextafter(midpoint, 0.0f));
    values.push_back(std::nextafter(midpoint, midpoint * 2));
  }
  return values;
}

TEST_P(HalfFloatTest, RoundsLikeAPFloat) {
  HalfFormat format = GetParam();
  for (float value : interestingFloats(format)) {
    EXPECT_EQ(floatToHalfBits(value, format), apFloatNarrow(value, format))
        << "value " << value;
  }
}

TEST_P(HalfFloatTest, RoundsRandomFloatsLikeAPFloat) {
  HalfFormat format = GetParam();
  std::mt19937 generator(42);
  for (int i = 0; i < 1000000; ++i) {
    float value = llvm::bit_cast<float>(static_cast<uint32_t>(generator()));
    if (std::isnan(value))
      continue;
    EXPECT_EQ(floatToHalfBits(value, format), apFloatNarrow(value, format))
        << "value " << value;
  }
}

TEST_P(HalfFloatTest, NaNStaysNaN) {
  HalfFormat format = GetParam();
  float quiet = std::numeric_limits<float>::quiet_NaN();
  // A signalling NaN whose payload is only in bits that are dropped.
  float lowPayload = llvm::bit_cast<float>(0xff800001u);
  for (float nan : {quiet, -quiet, lowPayload}) {
    uint16_t bits = floatToHalfBits(nan, format);
    EXPECT_TRUE(isNaNBits(bits, format)) << std::hex << bits;
    EXPECT_EQ(bits >> 15, llvm::bit_cast<uint32_t>(nan) >> 31);
    EXPECT_TRUE(std::isnan(halfBitsToFloat(bits, format)));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, HalfFloatTest,
                         testing::Values(HalfFormat::F16, HalfFormat::BF16),
                         [](const testing::TestParamInfo<HalfFormat> &info) {
                           return info.param == HalfFormat::F16 ? "F16"
                                                                : "BF16";
                         });

TEST(HalfFloat, KnownValues) {
  EXPECT_EQ(floatToF16Bits(1.0f), 0x3c00);
  EXPECT_EQ(floatToF16Bits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16Bits(65519.0f), 0x7bff);
  EXPECT_EQ(floatToF16Bits(65520.0f), 0x7c00);
  EXPECT_EQ(floatToF16Bits(-1e10f), 0xfc00);
  EXPECT_EQ(floatToF16Bits(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToF16Bits(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToF16Bits(0x1.8p-24f), 0x0002);
  EXPECT_EQ(floatToF16Bits(-0.0f), 0x8000);
  EXPECT_EQ(f16BitsToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(f16BitsToFloat(0x3555), 0x1.554p-2f);

  EXPECT_EQ(floatToBF16Bits(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even 1.
  EXPECT_EQ(floatToBF16Bits(1.00390625f), 0x3f80);
  EXPECT_EQ(floatToBF16Bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16BitsToFloat(0xc000), -2.0f);

  EXPECT_EQ(roundToHalf(1.0009765625f, HalfFormat::F16), 1.0009765625f);
  EXPECT_EQ(roundToHalf(1.0009765625f, HalfFormat::BF16), 1.0f);
}

} // namespace
