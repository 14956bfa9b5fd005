//===- ErrorMetricsTest.cpp - How far an output is from the reference -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/ErrorMetrics.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace mlir::attn::reference;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ErrorMetrics, ExactMatch) {
  std::vector<double> ref = {1.0, -2.0, 0.5};
  ErrorStats stats =
      computeErrorStats(std::vector<float>{1.0f, -2.0f, 0.5f}, ref);
  EXPECT_EQ(stats.maxAbs, 0.0);
  EXPECT_EQ(stats.relL2, 0.0);
  EXPECT_EQ(stats.nanCount, 0);
  EXPECT_TRUE(withinTolerance(stats, 0.0));
}

TEST(ErrorMetrics, AbsoluteAndRelativeError) {
  ErrorStats stats = computeErrorStats(std::vector<double>{1.0, 2.0, 0.0},
                                       std::vector<double>{1.0, 1.0, 0.0});
  EXPECT_EQ(stats.maxAbs, 1.0);
  EXPECT_DOUBLE_EQ(stats.relL2, 1.0 / std::sqrt(2.0));
  EXPECT_TRUE(withinTolerance(stats, 0.75));
  EXPECT_FALSE(withinTolerance(stats, 0.7));
}

TEST(ErrorMetrics, ZeroReferenceFallsBackToMaxAbs) {
  std::vector<double> zeros = {0.0, 0.0};
  EXPECT_EQ(computeErrorStats(std::vector<float>{0.0f, 0.0f}, zeros).relL2,
            0.0);
  ErrorStats stats = computeErrorStats(std::vector<float>{0.25f, -0.5f}, zeros);
  EXPECT_EQ(stats.relL2, 0.5);
  EXPECT_EQ(stats.maxAbs, 0.5);
}

TEST(ErrorMetrics, NaNNeverPasses) {
  std::vector<double> ref = {1.0, 2.0, 3.0};
  ErrorStats stats =
      computeErrorStats(std::vector<float>{1.0f, kNaN, 3.0f}, ref);
  EXPECT_EQ(stats.nanCount, 1);
  // The other elements are still measured.
  EXPECT_EQ(stats.maxAbs, 0.0);
  EXPECT_FALSE(withinTolerance(stats, 1e30));
  EXPECT_FALSE(withinTolerance(stats, kInf));
}

TEST(ErrorMetrics, InfinitiesMatchOnlyTheSameInfinity) {
  // The -inf LSE of a fully masked row matches -inf, nothing else.
  std::vector<double> ref = {-kInf, -kInf, -kInf, 1.0, 1.0};
  ErrorStats stats = computeErrorStats(
      std::vector<float>{-INFINITY, INFINITY, 0.0f, INFINITY, 1.0f}, ref);
  EXPECT_EQ(stats.nanCount, 3);
  EXPECT_EQ(stats.maxAbs, 0.0);
  EXPECT_FALSE(withinTolerance(stats, 1.0));

  ErrorStats masked = computeErrorStats(std::vector<float>{-INFINITY, 2.0f},
                                        std::vector<double>{-kInf, 2.0});
  EXPECT_EQ(masked.nanCount, 0);
  EXPECT_TRUE(withinTolerance(masked, 0.0));
}

TEST(ErrorMetrics, NaNInTheReferenceFails) {
  ErrorStats stats = computeErrorStats(std::vector<double>{std::nan("")},
                                       std::vector<double>{std::nan("")});
  EXPECT_EQ(stats.nanCount, 1);
  EXPECT_FALSE(withinTolerance(stats, 1.0));
}

} // namespace
