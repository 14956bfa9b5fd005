//===- ReferenceAttentionTest.cpp - Float64 attention to check against ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/ReferenceAttention.h"

#include "attn/Reference/ErrorMetrics.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>
#include <tuple>

using namespace mlir::attn;
using namespace mlir::attn::reference;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> randomValues(int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> normal;
  std::vector<double> values(count);
  for (double &value : values)
    value = normal(generator);
  return values;
}

/// Random Q, K and V for `shape`.
struct Operands {
  explicit Operands(const AttentionSizes &s, unsigned seed = 1)
      : query(randomValues(s.batch * s.queryHeads * s.queryLen * s.headDim,
                           seed)),
        key(randomValues(s.batch * s.kvHeads * s.keyLen * s.headDim, seed + 1)),
        value(randomValues(s.batch * s.kvHeads * s.keyLen * s.valueDim,
                           seed + 2)) {}
  std::vector<double> query, key, value;
};

AttentionResult attend(const AttentionSizes &shape, const Operands &operands,
                       const AttentionOptions &options) {
  llvm::Expected<AttentionResult> result = referenceAttention(
      shape, operands.query, operands.key, operands.value, options);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  return std::move(*result);
}

void expectNear(const std::vector<double> &actual,
                const std::vector<double> &expected, double tolerance = 1e-12) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    if (std::isinf(expected[i]))
      EXPECT_EQ(actual[i], expected[i]) << "at " << i;
    else
      EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
  }
}

/// One query against keys whose value is their index: O is the mean index
/// of the keys the query sees, and LSE the log of their count, since the
/// all-zero query gives every key the same score.
AttentionSizes indexShape(int64_t queryLen, int64_t keyLen) {
  AttentionSizes shape;
  shape.queryLen = queryLen;
  shape.keyLen = keyLen;
  return shape;
}

Operands indexOperands(const AttentionSizes &shape) {
  Operands operands(shape);
  std::fill(operands.query.begin(), operands.query.end(), 0.0);
  for (int64_t k = 0; k < shape.keyLen; ++k)
    operands.value[k] = k;
  return operands;
}

TEST(ReferenceAttention, TwoKeys) {
  // Scores 0 and log 3: probabilities 1/4 and 3/4.
  AttentionSizes shape = indexShape(1, 2);
  Operands operands(shape);
  operands.query = {2.0};
  operands.key = {0.0, std::log(3.0)};
  operands.value = {2.0, 6.0};
  AttentionOptions options;
  options.scale = 0.5;
  AttentionResult result = attend(shape, operands, options);
  expectNear(result.out, {0.25 * 2.0 + 0.75 * 6.0});
  expectNear(result.lse, {std::log(4.0)});
}

TEST(ReferenceAttention, LargeScoresAreStable) {
  AttentionSizes shape = indexShape(1, 2);
  Operands operands(shape);
  operands.query = {1.0};
  operands.key = {1000.0, 1000.0 + std::log(3.0)};
  operands.value = {2.0, 6.0};
  AttentionResult result = attend(shape, operands, AttentionOptions());
  expectNear(result.out, {5.0});
  EXPECT_NEAR(result.lse[0], 1000.0 + std::log(4.0), 1e-9);
}

TEST(ReferenceAttention, CausalIsBottomRightAligned) {
  AttentionSizes shape = indexShape(2, 5);
  AttentionOptions options;
  options.causal = true;
  AttentionResult result = attend(shape, indexOperands(shape), options);
  // Row 0 sees keys 0..3, row 1 all five.
  expectNear(result.out, {1.5, 2.0});
  expectNear(result.lse, {std::log(4.0), std::log(5.0)});

  // With more queries than keys the first rows see nothing.
  AttentionSizes tall = indexShape(3, 2);
  AttentionResult tallResult = attend(tall, indexOperands(tall), options);
  expectNear(tallResult.out, {0.0, 0.0, 0.5});
  expectNear(tallResult.lse, {-kInf, 0.0, std::log(2.0)});
}

TEST(ReferenceAttention, SlidingWindow) {
  AttentionSizes shape = indexShape(5, 5);
  AttentionOptions options;
  options.window = {1, 2};
  AttentionResult result = attend(shape, indexOperands(shape), options);
  // Query i sees keys i-1 .. i+2, clipped to 0..4.
  expectNear(result.out, {1.0, 1.5, 2.5, 3.0, 3.5});
  expectNear(result.lse, {std::log(3.0), std::log(4.0), std::log(4.0),
                          std::log(3.0), std::log(2.0)});

  // Causal cuts the right side; the window is relative to the bottom-right
  // diagonal too.
  AttentionSizes wide = indexShape(2, 4);
  options.causal = true;
  options.window = {1, 0};
  AttentionResult causal = attend(wide, indexOperands(wide), options);
  expectNear(causal.out, {1.5, 2.5});
}

TEST(ReferenceAttention, FullyMaskedRowIsZeroWithoutNaN) {
  AttentionSizes shape = indexShape(2, 3);
  Operands operands(shape, 7);
  AttentionOptions options;
  ScoreMask mask;
  mask.values = {0, 0, 0, 1, 0, 1};
  options.mask = mask;
  AttentionResult result = attend(shape, operands, options);
  EXPECT_EQ(result.out[0], 0.0);
  EXPECT_EQ(result.lse[0], -kInf);
  EXPECT_FALSE(std::isnan(result.out[1]));
  EXPECT_TRUE(std::isfinite(result.lse[1]));

  // An additive mask of -inf everywhere does the same.
  mask.kind = ScoreMask::Kind::Additive;
  mask.values = {-kInf, -kInf, -kInf, 0, -kInf, 0};
  options.mask = mask;
  AttentionResult additive = attend(shape, operands, options);
  expectNear(additive.out, result.out);
  expectNear(additive.lse, result.lse);
}

TEST(ReferenceAttention, GroupedQueryHeadsShareKVHeads) {
  AttentionSizes gqa;
  gqa.batch = 2;
  gqa.queryHeads = 4;
  gqa.kvHeads = 2;
  gqa.queryLen = 3;
  gqa.keyLen = 5;
  gqa.headDim = 4;
  gqa.valueDim = 3;
  Operands operands(gqa);

  // The same attention with each KV head repeated for its two query heads.
  AttentionSizes mha = gqa;
  mha.kvHeads = 4;
  Operands repeated(mha);
  repeated.query = operands.query;
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t h = 0; h < 4; ++h) {
      int64_t from = (b * 2 + h / 2) * 5, to = (b * 4 + h) * 5;
      std::copy_n(&operands.key[from * 4], 5 * 4, &repeated.key[to * 4]);
      std::copy_n(&operands.value[from * 3], 5 * 3, &repeated.value[to * 3]);
    }
  }
  AttentionOptions options;
  options.scale = 0.5;
  options.causal = true;
  AttentionResult grouped = attend(gqa, operands, options);
  AttentionResult expected = attend(mha, repeated, options);
  expectNear(grouped.out, expected.out);
  expectNear(grouped.lse, expected.lse);
}

TEST(ReferenceAttention, MasksBroadcast) {
  AttentionSizes shape;
  shape.batch = 2;
  shape.queryHeads = 3;
  shape.kvHeads = 3;
  shape.queryLen = 2;
  shape.keyLen = 4;
  shape.headDim = 2;
  shape.valueDim = 2;
  Operands operands(shape);
  const int64_t rows = 2 * 4;

  for (ScoreMask::Kind kind :
       {ScoreMask::Kind::Boolean, ScoreMask::Kind::Additive}) {
    for (auto [maskBatch, maskHeads] :
         {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {1, 3}}) {
      ScoreMask small;
      small.kind = kind;
      small.batch = maskBatch;
      small.heads = maskHeads;
      std::vector<double> random =
          randomValues(maskBatch * maskHeads * rows, 11);
      for (double value : random)
        small.values.push_back(kind == ScoreMask::Kind::Boolean ? value > 0
                                                                : value);
      // The same mask written out for every batch and head.
      ScoreMask full = small;
      full.batch = 2;
      full.heads = 3;
      full.values.clear();
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t h = 0; h < 3; ++h) {
          int64_t from = ((maskBatch == 1 ? 0 : b) * maskHeads +
                          (maskHeads == 1 ? 0 : h)) *
                         rows;
          full.values.insert(full.values.end(), &small.values[from],
                             &small.values[from] + rows);
        }
      AttentionOptions smallOptions, fullOptions;
      smallOptions.mask = small;
      fullOptions.mask = full;
      AttentionResult broadcast = attend(shape, operands, smallOptions);
      AttentionResult expected = attend(shape, operands, fullOptions);
      expectNear(broadcast.out, expected.out);
      expectNear(broadcast.lse, expected.lse);
    }
  }
}

TEST(ReferenceAttention, BlockMaskIsAnElementMask) {
  // 5 x 7 scores in 2 x 3 blocks (the last ones short): 3 x 3 blocks, per
  // head, of every kind.
  AttentionSizes shape;
  shape.queryHeads = 2;
  shape.kvHeads = 2;
  shape.queryLen = 5;
  shape.keyLen = 7;
  shape.headDim = 3;
  shape.valueDim = 2;
  Operands operands(shape);
  BlockMask blocks;
  blocks.blockRows = 2;
  blocks.blockKeys = 3;
  blocks.heads = 2;
  blocks.values = {1, 0, 2, /**/ 2, 1, 0, /**/ 0, 2, 7,
                   0, 0, 0, /**/ 2, 2, 2, /**/ 1, 0, 1};
  for (ScoreMask::Kind kind :
       {ScoreMask::Kind::Boolean, ScoreMask::Kind::Additive}) {
    ScoreMask mask;
    mask.kind = kind;
    for (double value : randomValues(5 * 7, 5))
      mask.values.push_back(kind == ScoreMask::Kind::Boolean ? value > -0.5
                                                             : value);
    // The same attention with the blocks written into a per-head mask:
    // empty blocks hide, full blocks keep (adding 0), others take the mask.
    ScoreMask written = mask;
    written.heads = 2;
    written.values.clear();
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t k = 0; k < 7; ++k) {
          int8_t block = blocks.values[h * 9 + i / 2 * 3 + k / 3];
          double value = mask.values[i * 7 + k];
          if (block == 0)
            value = kind == ScoreMask::Kind::Boolean ? 0.0 : -kInf;
          else if (block == 2)
            value = kind == ScoreMask::Kind::Boolean ? 1.0 : 0.0;
          written.values.push_back(value);
        }
    AttentionOptions withBlocks, expectedOptions;
    withBlocks.mask = mask;
    withBlocks.blockMask = blocks;
    expectedOptions.mask = written;
    AttentionResult actual = attend(shape, operands, withBlocks);
    AttentionResult expected = attend(shape, operands, expectedOptions);
    expectNear(actual.out, expected.out);
    expectNear(actual.lse, expected.lse);
    // Head 1's second query block is all empty: its rows see nothing.
    EXPECT_EQ(actual.lse[1 * 5 + 0], -kInf);
  }
  // The blocks' count must match the shape.
  AttentionOptions wrong;
  wrong.blockMask = blocks;
  wrong.blockMask->blockKeys = 2;
  llvm::Expected<AttentionResult> rejected = referenceAttention(
      shape, operands.query, operands.key, operands.value, wrong);
  ASSERT_FALSE(static_cast<bool>(rejected)) << "4 key blocks of 2 need 24";
  EXPECT_NE(llvm::toString(rejected.takeError()).find("the block mask"),
            std::string::npos);
}

TEST(ReferenceAttention, Softcap) {
  AttentionSizes shape = indexShape(1, 2);
  Operands operands(shape);
  operands.query = {1.0};
  operands.key = {3.0, -1.0};
  operands.value = {1.0, 0.0};
  AttentionOptions options;
  options.scale = 2.0;
  options.softcap = 5.0;
  double s0 = 5.0 * std::tanh(6.0 / 5.0), s1 = 5.0 * std::tanh(-2.0 / 5.0);
  AttentionResult result = attend(shape, operands, options);
  expectNear(result.out, {std::exp(s0) / (std::exp(s0) + std::exp(s1))});
  expectNear(result.lse, {std::log(std::exp(s0) + std::exp(s1))});
}

TEST(ReferenceAttention, ScoreModifierSeesItsCoordinates) {
  AttentionSizes shape;
  shape.batch = 2;
  shape.queryHeads = 2;
  shape.kvHeads = 1;
  shape.queryLen = 3;
  shape.keyLen = 4;
  shape.headDim = 2;
  shape.valueDim = 2;
  Operands operands(shape);

  // An ALiBi-like bias through the modifier equals it as an additive mask.
  auto bias = [](int64_t b, int64_t h, int64_t q, int64_t k) {
    return 0.5 * (h + 1) * (k - q) + 0.1 * b;
  };
  std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> calls;
  AttentionOptions modified;
  modified.softcap = 2.0;
  modified.scoreModifier = [&](double score, int64_t b, int64_t h, int64_t q,
                               int64_t k) {
    calls.emplace_back(b, h, q, k);
    return score + bias(b, h, q, k);
  };
  AttentionOptions masked;
  masked.softcap = 2.0;
  ScoreMask mask;
  mask.kind = ScoreMask::Kind::Additive;
  mask.batch = 2;
  mask.heads = 2;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t q = 0; q < 3; ++q)
        for (int64_t k = 0; k < 4; ++k)
          mask.values.push_back(bias(b, h, q, k));
  masked.mask = mask;

  AttentionResult viaModifier = attend(shape, operands, modified);
  AttentionResult viaMask = attend(shape, operands, masked);
  expectNear(viaModifier.out, viaMask.out);
  expectNear(viaModifier.lse, viaMask.lse);
  EXPECT_EQ(calls.size(), 2u * 2 * 3 * 4);
  EXPECT_EQ(calls.back(), std::make_tuple(1, 1, 2, 3));
}

TEST(ReferenceAttention, NaNScoresReachTheOutput) {
  AttentionSizes shape = indexShape(1, 2);
  AttentionOptions options;
  options.scoreModifier = [](double, int64_t, int64_t, int64_t, int64_t) {
    return std::nan("");
  };
  AttentionResult result = attend(shape, indexOperands(shape), options);
  EXPECT_TRUE(std::isnan(result.out[0]));
  EXPECT_TRUE(std::isnan(result.lse[0]));
}

TEST(ReferenceAttention, RejectsMismatchedOperands) {
  AttentionSizes shape = indexShape(2, 3);
  Operands operands(shape);
  auto error = [&](const AttentionSizes &s, const AttentionOptions &options) {
    llvm::Expected<AttentionResult> result = referenceAttention(
        s, operands.query, operands.key, operands.value, options);
    return result ? std::string("no error")
                  : llvm::toString(result.takeError());
  };
  AttentionSizes wrongLength = shape;
  wrongLength.queryLen = 4;
  EXPECT_EQ(error(wrongLength, {}),
            "reference attention: Q has 2 elements, expected 4");
  AttentionSizes wrongHeads = shape;
  wrongHeads.queryHeads = 3;
  wrongHeads.kvHeads = 2;
  EXPECT_EQ(error(wrongHeads, {}),
            "reference attention: 3 query heads are not a multiple of 2 KV "
            "heads");

  AttentionOptions window;
  window.window = {-1, 0};
  EXPECT_EQ(error(shape, window),
            "reference attention: window sizes must be >= 0");
  AttentionOptions softcap;
  softcap.softcap = 0.0;
  EXPECT_EQ(error(shape, softcap), "reference attention: softcap must be > 0");
  AttentionOptions mask;
  mask.mask = ScoreMask();
  mask.mask->batch = 2;
  mask.mask->values.resize(12);
  EXPECT_EQ(error(shape, mask),
            "reference attention: mask batch 2 is neither 1 nor 1");
  mask.mask->batch = 1;
  EXPECT_EQ(error(shape, mask),
            "reference attention: the mask has 12 elements, expected 6");
}

TEST(NaiveHalfAttention, ErrsAsMuchAsItsPrecision) {
  AttentionSizes shape;
  shape.batch = 1;
  shape.queryHeads = 2;
  shape.kvHeads = 1;
  shape.queryLen = 17;
  shape.keyLen = 33;
  shape.headDim = 32;
  shape.valueDim = 32;
  Operands operands(shape);
  AttentionOptions options;
  options.scale = 1.0 / std::sqrt(32.0);
  options.causal = true;

  // Against the reference on the same, already rounded, inputs the error is
  // that of the rounding of intermediates alone.
  double errors[2];
  for (HalfFormat format : {HalfFormat::F16, HalfFormat::BF16}) {
    Operands rounded = operands;
    for (std::vector<double> *values :
         {&rounded.query, &rounded.key, &rounded.value})
      for (double &value : *values)
        value = roundToHalf(static_cast<float>(value), format);
    AttentionResult exact = attend(shape, rounded, options);
    llvm::Expected<AttentionResult> naive = naiveHalfAttention(
        shape, operands.query, operands.key, operands.value, options, format);
    ASSERT_TRUE(bool(naive)) << llvm::toString(naive.takeError());
    ErrorStats stats = computeErrorStats(naive->out, exact.out);
    EXPECT_EQ(stats.nanCount, 0);
    EXPECT_GT(stats.relL2, 0.0);
    errors[format == HalfFormat::BF16] = stats.relL2;
    // LSE is kept in float.
    EXPECT_LT(computeErrorStats(naive->lse, exact.lse).relL2, 1e-2);
  }
  // A unit roundoff is 2^-11 in f16 and 2^-8 in bf16.
  EXPECT_LT(errors[0], 4e-3);
  EXPECT_LT(errors[1], 3e-2);
  EXPECT_GT(errors[1], 2 * errors[0]);
}

TEST(NaiveHalfAttention, FullyMaskedRowIsZero) {
  AttentionSizes shape = indexShape(3, 2);
  AttentionOptions options;
  options.causal = true;
  Operands operands = indexOperands(shape);
  llvm::Expected<AttentionResult> naive =
      naiveHalfAttention(shape, operands.query, operands.key, operands.value,
                         options, HalfFormat::BF16);
  ASSERT_TRUE(bool(naive)) << llvm::toString(naive.takeError());
  expectNear(naive->out, {0.0, 0.0, 0.5});
  // LSE is computed in float.
  expectNear(naive->lse, {-kInf, 0.0, std::log(2.0)}, 1e-6);
}

} // namespace
