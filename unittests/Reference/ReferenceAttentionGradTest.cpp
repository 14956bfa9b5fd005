//===- ReferenceAttentionGradTest.cpp - Float64 attention gradient --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The gradient against central differences of the forward reference: with
// f(x) = sum gradOut * O(x), each element of dQ, dK, dV and the mask gradient
// must be (f(x + h) - f(x - h)) / 2h in that element. The difference shares
// nothing with the gradient's formulas, so a wrong chain rule factor, a
// missed visibility rule or a misplaced sum shows.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/ReferenceAttentionGrad.h"

#include "attn/Reference/ErrorMetrics.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

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

/// The shape most cases use: grouped heads, Sq != Sk and Dv != D.
AttentionSizes smallShape() {
  AttentionSizes shape;
  shape.batch = 2;
  shape.queryHeads = 4;
  shape.kvHeads = 2;
  shape.queryLen = 5;
  shape.keyLen = 7;
  shape.headDim = 3;
  shape.valueDim = 4;
  return shape;
}

/// Random Q, K, V and gradient of O for `shape`.
struct Inputs {
  explicit Inputs(const AttentionSizes &s, unsigned seed = 1)
      : query(randomValues(s.batch * s.queryHeads * s.queryLen * s.headDim,
                           seed)),
        key(randomValues(s.batch * s.kvHeads * s.keyLen * s.headDim, seed + 1)),
        value(randomValues(s.batch * s.kvHeads * s.keyLen * s.valueDim,
                           seed + 2)),
        gradOut(randomValues(s.batch * s.queryHeads * s.queryLen * s.valueDim,
                             seed + 3)) {}
  std::vector<double> query, key, value, gradOut;
};

AttentionGradResult gradient(const AttentionSizes &shape, const Inputs &inputs,
                             const AttentionOptions &options,
                             const ScoreModifierDerivative &derivative = {}) {
  llvm::Expected<AttentionGradResult> result =
      referenceAttentionGrad(shape, inputs.query, inputs.key, inputs.value,
                             inputs.gradOut, options, derivative);
  if (!result) {
    ADD_FAILURE() << llvm::toString(result.takeError());
    return {};
  }
  return std::move(*result);
}

/// f = sum gradOut * O.
double contracted(const AttentionSizes &shape, const Inputs &inputs,
                  const AttentionOptions &options) {
  llvm::Expected<AttentionResult> forward = referenceAttention(
      shape, inputs.query, inputs.key, inputs.value, options);
  if (!forward) {
    ADD_FAILURE() << llvm::toString(forward.takeError());
    return 0;
  }
  double sum = 0;
  for (size_t i = 0, e = forward->out.size(); i < e; ++i)
    sum += inputs.gradOut[i] * forward->out[i];
  return sum;
}

/// How many elements of each operand have a gradient that is not ~0: a case
/// whose gradients all vanish would check nothing.
struct Significant {
  int64_t query = 0, key = 0, value = 0, mask = 0;
};

/// Checks every element of `grad` against a central difference of
/// `contracted` in the matching element of Q, K, V or the additive mask.
Significant expectMatchesDifferences(const AttentionSizes &shape, Inputs inputs,
                                     AttentionOptions options,
                                     const AttentionGradResult &grad) {
  Significant significant;
  auto check = [&](const char *name, std::vector<double> &operand,
                   const std::vector<double> &analytic, int64_t &count) {
    ASSERT_EQ(analytic.size(), operand.size()) << name;
    for (size_t j = 0; j < operand.size(); ++j) {
      const double saved = operand[j];
      // An infinite mask element has no neighbourhood to difference in.
      if (!std::isfinite(saved))
        continue;
      const double step = 1e-5;
      operand[j] = saved + step;
      const double above = contracted(shape, inputs, options);
      operand[j] = saved - step;
      const double below = contracted(shape, inputs, options);
      operand[j] = saved;
      const double difference = (above - below) / (2 * step);
      EXPECT_NEAR(analytic[j], difference,
                  1e-6 * std::max(1.0, std::abs(difference)))
          << name << "[" << j << "]";
      if (std::abs(difference) > 1e-3)
        ++count;
    }
  };
  check("dQ", inputs.query, grad.dQuery, significant.query);
  check("dK", inputs.key, grad.dKey, significant.key);
  check("dV", inputs.value, grad.dValue, significant.value);
  if (options.mask && options.mask->kind == ScoreMask::Kind::Additive)
    check("dMask", options.mask->values, grad.dMask, significant.mask);
  else
    EXPECT_TRUE(grad.dMask.empty());
  return significant;
}

/// The gradient of a case, checked by differences, with each of Q, K and V
/// moving the output in at least a quarter of its elements.
AttentionGradResult checkCase(const AttentionSizes &shape,
                              const AttentionOptions &options,
                              const ScoreModifierDerivative &derivative = {},
                              unsigned seed = 1) {
  Inputs inputs(shape, seed);
  AttentionGradResult grad = gradient(shape, inputs, options, derivative);
  Significant significant =
      expectMatchesDifferences(shape, inputs, options, grad);
  EXPECT_GE(4 * significant.query, int64_t(inputs.query.size()));
  EXPECT_GE(4 * significant.key, int64_t(inputs.key.size()));
  EXPECT_GE(4 * significant.value, int64_t(inputs.value.size()));
  return grad;
}

/// Whether all of dQ's row i of head h in batch b is exactly 0.
bool queryRowIsZero(const AttentionSizes &s, const AttentionGradResult &grad,
                    int64_t b, int64_t h, int64_t i) {
  const double *row =
      &grad.dQuery[((b * s.queryHeads + h) * s.queryLen + i) * s.headDim];
  return std::all_of(row, row + s.headDim, [](double v) { return v == 0.0; });
}

/// Whether dK and dV of key k of KV head g in batch b are exactly 0.
bool keyIsZero(const AttentionSizes &s, const AttentionGradResult &grad,
               int64_t b, int64_t g, int64_t k) {
  const int64_t index = (b * s.kvHeads + g) * s.keyLen + k;
  const double *dk = &grad.dKey[index * s.headDim];
  const double *dv = &grad.dValue[index * s.valueDim];
  auto zero = [](double v) { return v == 0.0; };
  return std::all_of(dk, dk + s.headDim, zero) &&
         std::all_of(dv, dv + s.valueDim, zero);
}

TEST(ReferenceAttentionGrad, Plain) {
  AttentionSizes shape = smallShape();
  shape.kvHeads = 4;
  AttentionOptions options;
  options.scale = 0.7;
  checkCase(shape, options);
}

TEST(ReferenceAttentionGrad, DvDiffersFromD) {
  AttentionSizes shape = smallShape();
  shape.headDim = 5;
  shape.valueDim = 2;
  AttentionOptions options;
  options.scale = 0.5;
  checkCase(shape, options);
}

TEST(ReferenceAttentionGrad, GroupedAndMultiQuery) {
  AttentionOptions options;
  options.scale = 0.6;
  // 2 query heads per KV head.
  checkCase(smallShape(), options);
  // One KV head for all 4 query heads.
  AttentionSizes mqa = smallShape();
  mqa.kvHeads = 1;
  checkCase(mqa, options);
}

TEST(ReferenceAttentionGrad, CausalBothWays) {
  AttentionOptions options;
  options.causal = true;
  // More keys than queries: every row sees some.
  checkCase(smallShape(), options);
  // More queries than keys: the first two rows see nothing, and the third
  // key 0 alone, so that its O is v_0 whatever Q is.
  AttentionSizes tall = smallShape();
  tall.queryLen = 7;
  tall.keyLen = 5;
  AttentionGradResult grad = checkCase(tall, options);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 4; ++h) {
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_TRUE(queryRowIsZero(tall, grad, b, h, i)) << i;
      EXPECT_FALSE(queryRowIsZero(tall, grad, b, h, 3));
    }
}

TEST(ReferenceAttentionGrad, Window) {
  AttentionOptions options;
  options.window = {1, 2};
  checkCase(smallShape(), options);
  options.causal = true;
  options.window = {2, 0};
  checkCase(smallShape(), options, {}, 5);
}

TEST(ReferenceAttentionGrad, Softcap) {
  AttentionOptions options;
  // Large scores, so that the cap bends them.
  options.scale = 1.5;
  options.softcap = 1.2;
  AttentionGradResult capped = checkCase(smallShape(), options);
  // The softcap's factor matters: without it the gradient differs.
  AttentionOptions uncapped = options;
  uncapped.softcap.reset();
  AttentionGradResult plain =
      gradient(smallShape(), Inputs(smallShape()), uncapped);
  EXPECT_GT(computeErrorStats(plain.dQuery, capped.dQuery).relL2, 0.1);
}

TEST(ReferenceAttentionGrad, AdditiveMaskBroadcasts) {
  AttentionSizes shape = smallShape();
  for (auto [maskBatch, maskHeads] :
       {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {1, 4}, {2, 4}}) {
    SCOPED_TRACE(testing::Message() << maskBatch << " x " << maskHeads);
    ScoreMask mask;
    mask.kind = ScoreMask::Kind::Additive;
    mask.batch = maskBatch;
    mask.heads = maskHeads;
    mask.values = randomValues(maskBatch * maskHeads * 5 * 7, 9);
    // A hidden key takes no part and gets no gradient.
    mask.values[3] = -kInf;
    AttentionOptions options;
    options.scale = 0.8;
    options.mask = mask;
    AttentionGradResult grad = checkCase(shape, options);
    ASSERT_EQ(grad.dMask.size(), mask.values.size());
    // A broadcast slice gathers the gradients of every batch and head it
    // serves, which are different: no slice's gradient vanishes.
    for (size_t j = 0; j < grad.dMask.size(); ++j)
      EXPECT_EQ(grad.dMask[j] == 0.0, j == 3) << j;
  }
}

TEST(ReferenceAttentionGrad, BooleanMaskWithAFullyMaskedRow) {
  AttentionSizes shape = smallShape();
  ScoreMask mask;
  mask.heads = 4;
  for (double value : randomValues(4 * 5 * 7, 3))
    mask.values.push_back(value > -0.6);
  // Head 2's row 1 sees nothing.
  std::fill_n(&mask.values[(2 * 5 + 1) * 7], 7, 0.0);
  AttentionOptions options;
  options.mask = mask;
  AttentionGradResult grad = checkCase(shape, options);
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_TRUE(queryRowIsZero(shape, grad, b, 2, 1));
    EXPECT_FALSE(queryRowIsZero(shape, grad, b, 2, 0));
  }
}

TEST(ReferenceAttentionGrad, KeyLengths) {
  AttentionSizes shape = smallShape();
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    AttentionOptions options;
    options.causal = causal;
    // Batch 0 has no keys at all, batch 1 four of seven.
    options.keyLengths = {0, 4};
    Inputs inputs(shape);
    AttentionGradResult grad = gradient(shape, inputs, options);
    Significant significant =
        expectMatchesDifferences(shape, inputs, options, grad);
    EXPECT_GT(significant.query, 0);
    EXPECT_GT(significant.key, 0);
    EXPECT_GT(significant.value, 0);
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t k = 0; k < 7; ++k)
        EXPECT_EQ(keyIsZero(shape, grad, 1, g, k), k >= 4) << g << ", " << k;
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 5; ++i)
        EXPECT_TRUE(queryRowIsZero(shape, grad, 0, h, i));
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t k = 0; k < 7; ++k)
        EXPECT_TRUE(keyIsZero(shape, grad, 0, g, k));
  }
}

TEST(ReferenceAttentionGrad, BlockMask) {
  // 5 x 7 scores in 2 x 3 blocks: 3 x 3 blocks per head, of every kind, for
  // batch 0 and 1 alike.
  AttentionSizes shape = smallShape();
  BlockMask blocks;
  blocks.blockRows = 2;
  blocks.blockKeys = 3;
  blocks.heads = 4;
  blocks.values = {1, 0, 2, /**/ 2, 1, 0, /**/ 0, 2, 7, //
                   2, 2, 2, /**/ 1, 1, 1, /**/ 1, 0, 1, //
                   0, 0, 0, /**/ 2, 2, 2, /**/ 1, 2, 1, //
                   1, 1, 1, /**/ 1, 0, 1, /**/ 2, 1, 0};
  ScoreMask mask;
  mask.kind = ScoreMask::Kind::Additive;
  mask.heads = 4;
  mask.values = randomValues(4 * 5 * 7, 13);
  AttentionOptions options;
  options.mask = mask;
  options.blockMask = blocks;
  AttentionGradResult grad = checkCase(shape, options);
  // The mask takes part in partial blocks alone.
  for (int64_t h = 0; h < 4; ++h)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t k = 0; k < 7; ++k) {
        int8_t block = blocks.values[h * 9 + i / 2 * 3 + k / 3];
        double d = grad.dMask[(h * 5 + i) * 7 + k];
        if (block == 0 || block == 2)
          EXPECT_EQ(d, 0.0) << h << ", " << i << ", " << k;
        else
          EXPECT_NE(d, 0.0) << h << ", " << i << ", " << k;
      }
  // Head 2's rows 0 and 1 see nothing.
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 2; ++i)
      EXPECT_TRUE(queryRowIsZero(shape, grad, b, 2, i));
}

/// An ALiBi-like bias and a nonlinear bend, so that the modifier's
/// derivative depends on the score and on the coordinates it is given. The
/// sine keeps it from being a polynomial of degree 2, whose central
/// differences would be exact at any step.
double bias(int64_t b, int64_t h, int64_t q, int64_t k) {
  return 0.25 * (h + 1) * (k - q) + 0.1 * b;
}
double modifier(double s, int64_t b, int64_t h, int64_t q, int64_t k) {
  return s - 0.1 * s * s + 0.2 * std::sin(s) +
         bias(b, h, q, k) * (1 + 0.05 * s);
}
double modifierDerivative(double s, int64_t b, int64_t h, int64_t q,
                          int64_t k) {
  return 1 - 0.2 * s + 0.2 * std::cos(s) + 0.05 * bias(b, h, q, k);
}

TEST(ReferenceAttentionGrad, ScoreModifier) {
  AttentionSizes shape = smallShape();
  AttentionOptions options;
  options.scale = 0.9;
  options.scoreModifier = modifier;
  AttentionGradResult given = checkCase(shape, options, modifierDerivative);
  // Without the derivative the reference differences the modifier itself.
  AttentionGradResult differenced = checkCase(shape, options);
  EXPECT_LT(computeErrorStats(differenced.dQuery, given.dQuery).relL2, 1e-8);
  EXPECT_LT(computeErrorStats(differenced.dKey, given.dKey).relL2, 1e-8);

  // After a softcap the modifier sees the capped score.
  options.softcap = 1.5;
  checkCase(shape, options, modifierDerivative);

  // The derivative given is the one used: a wrong one gives a wrong
  // gradient.
  AttentionGradResult wrong =
      gradient(shape, Inputs(shape), options,
               [](double, int64_t, int64_t, int64_t, int64_t) { return 1.0; });
  AttentionGradResult right =
      gradient(shape, Inputs(shape), options, modifierDerivative);
  EXPECT_GT(computeErrorStats(wrong.dQuery, right.dQuery).relL2, 0.05);
  EXPECT_EQ(computeErrorStats(wrong.dValue, right.dValue).relL2, 0.0)
      << "dV depends on the probabilities alone";
}

TEST(ReferenceAttentionGrad, RejectsBadInputs) {
  AttentionSizes shape = smallShape();
  Inputs inputs(shape);
  auto error = [&](const Inputs &in, const AttentionOptions &options) {
    llvm::Expected<AttentionGradResult> exact = referenceAttentionGrad(
        shape, in.query, in.key, in.value, in.gradOut, options);
    std::string message =
        exact ? "no error" : llvm::toString(exact.takeError());
    llvm::Expected<AttentionGradResult> half =
        naiveHalfAttentionGrad(shape, in.query, in.key, in.value, in.gradOut,
                               options, HalfFormat::BF16);
    EXPECT_EQ(half ? "no error" : llvm::toString(half.takeError()), message);
    return message;
  };
  Inputs shortGrad = inputs;
  shortGrad.gradOut.pop_back();
  EXPECT_EQ(error(shortGrad, {}), "reference attention: the output gradient "
                                  "has 159 elements, expected 160");
  // The forward's checks apply too.
  Inputs shortQuery = inputs;
  shortQuery.query.pop_back();
  EXPECT_EQ(error(shortQuery, {}),
            "reference attention: Q has 119 elements, expected 120");
  AttentionOptions softcap;
  softcap.softcap = -1.0;
  EXPECT_EQ(error(inputs, softcap), "reference attention: softcap must be > 0");
}

/// The relative L2 error of each naive 16-bit gradient against the exact one
/// on the same, unrounded, inputs.
struct HalfErrors {
  double query, key, value, mask;
};

HalfErrors halfErrors(const AttentionSizes &shape, const Inputs &inputs,
                      const AttentionOptions &options, HalfFormat format) {
  AttentionGradResult exact = gradient(shape, inputs, options);
  llvm::Expected<AttentionGradResult> naive =
      naiveHalfAttentionGrad(shape, inputs.query, inputs.key, inputs.value,
                             inputs.gradOut, options, format);
  if (!naive) {
    ADD_FAILURE() << llvm::toString(naive.takeError());
    return {};
  }
  HalfErrors errors;
  double *slots[] = {&errors.query, &errors.key, &errors.value, &errors.mask};
  const std::vector<double> *naiveParts[] = {&naive->dQuery, &naive->dKey,
                                             &naive->dValue, &naive->dMask};
  const std::vector<double> *exactParts[] = {&exact.dQuery, &exact.dKey,
                                             &exact.dValue, &exact.dMask};
  for (int part = 0; part < 4; ++part) {
    ErrorStats stats = computeErrorStats(*naiveParts[part], *exactParts[part]);
    EXPECT_EQ(stats.nanCount, 0) << "part " << part;
    *slots[part] = stats.relL2;
  }
  return errors;
}

TEST(NaiveHalfAttentionGrad, ErrsAsMuchAsItsPrecision) {
  AttentionSizes shape;
  shape.batch = 1;
  shape.queryHeads = 2;
  shape.kvHeads = 1;
  shape.queryLen = 17;
  shape.keyLen = 33;
  shape.headDim = 32;
  shape.valueDim = 32;
  Inputs inputs(shape);
  AttentionOptions options;
  options.scale = 1.0 / std::sqrt(32.0);
  options.causal = true;

  HalfErrors f16 = halfErrors(shape, inputs, options, HalfFormat::F16);
  HalfErrors bf16 = halfErrors(shape, inputs, options, HalfFormat::BF16);
  for (const HalfErrors &errors : {f16, bf16})
    for (double error : {errors.query, errors.key, errors.value}) {
      // Not the exact gradient under another name...
      EXPECT_GT(error, 0.0);
      // ... but close to it. A unit roundoff is 2^-11 in f16, 2^-8 in bf16.
      EXPECT_LT(error, 2e-2);
    }
  EXPECT_LT(f16.query, 5e-3);
  EXPECT_LT(f16.key, 5e-3);
  EXPECT_LT(f16.value, 5e-3);
  EXPECT_GT(bf16.query, 2 * f16.query);
  EXPECT_GT(bf16.key, 2 * f16.key);
  EXPECT_GT(bf16.value, 2 * f16.value);
}

TEST(NaiveHalfAttentionGrad, RoundsItsInputs) {
  // Inputs already in the format give the same bits: Q, K, V and dO are
  // rounded before anything else.
  AttentionSizes shape = smallShape();
  Inputs inputs(shape, 31);
  AttentionOptions options;
  options.scale = 0.5;
  for (HalfFormat format : {HalfFormat::F16, HalfFormat::BF16}) {
    Inputs rounded = inputs;
    for (std::vector<double> *values :
         {&rounded.query, &rounded.key, &rounded.value, &rounded.gradOut})
      for (double &value : *values)
        value = roundToHalf(static_cast<float>(value), format);
    auto naive = [&](const Inputs &in) {
      llvm::Expected<AttentionGradResult> result = naiveHalfAttentionGrad(
          shape, in.query, in.key, in.value, in.gradOut, options, format);
      EXPECT_TRUE(bool(result));
      return result ? std::move(*result) : AttentionGradResult();
    };
    AttentionGradResult fromRaw = naive(inputs);
    AttentionGradResult fromRounded = naive(rounded);
    EXPECT_EQ(fromRaw.dQuery, fromRounded.dQuery);
    EXPECT_EQ(fromRaw.dKey, fromRounded.dKey);
    EXPECT_EQ(fromRaw.dValue, fromRounded.dValue);
    // And every result is a value of the format.
    for (double value : fromRaw.dQuery)
      EXPECT_EQ(value, roundToHalf(static_cast<float>(value), format));
  }
}

TEST(NaiveHalfAttentionGrad, EveryFeature) {
  // Grouped heads, a broadcast additive mask, a softcap, a modifier (with
  // and without its derivative) and key lengths at once.
  AttentionSizes shape;
  shape.batch = 2;
  shape.queryHeads = 4;
  shape.kvHeads = 2;
  shape.queryLen = 9;
  shape.keyLen = 13;
  shape.headDim = 16;
  shape.valueDim = 8;
  Inputs inputs(shape, 21);
  AttentionOptions options;
  options.scale = 0.25;
  options.softcap = 3.0;
  options.causal = true;
  options.keyLengths = {13, 10};
  options.scoreModifier = modifier;
  ScoreMask mask;
  mask.kind = ScoreMask::Kind::Additive;
  mask.heads = 4;
  mask.values = randomValues(4 * 9 * 13, 23);
  options.mask = mask;
  for (HalfFormat format : {HalfFormat::F16, HalfFormat::BF16}) {
    SCOPED_TRACE(format == HalfFormat::F16 ? "f16" : "bf16");
    HalfErrors errors = halfErrors(shape, inputs, options, format);
    for (double error : {errors.query, errors.key, errors.value, errors.mask}) {
      EXPECT_GT(error, 0.0);
      // Well under 5e-2, at most a few unit roundoffs.
      EXPECT_LT(error, 2e-2);
    }
  }
}

} // namespace
