//===- ReferenceAttentionGrad.cpp - Float64 attention gradient ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/ReferenceAttentionGrad.h"

#include "ReferenceRules.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::attn;
using namespace mlir::attn::reference;

namespace {

/// referenceAttention checks the operands and options; its checks are private
/// to its file, and calling it keeps the two references rejecting the same
/// inputs. The gradient of the output must have the output's size.
llvm::Error verify(const AttentionSizes &shape, llvm::ArrayRef<double> query,
                   llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
                   llvm::ArrayRef<double> gradOut,
                   const AttentionOptions &options) {
  llvm::Expected<AttentionResult> forward =
      referenceAttention(shape, query, key, value, options);
  if (!forward)
    return forward.takeError();
  if (gradOut.size() == forward->out.size())
    return llvm::Error::success();
  return llvm::createStringError(
      "reference attention: the output gradient has " +
      llvm::Twine(gradOut.size()) + " elements, expected " +
      llvm::Twine(forward->out.size()));
}

/// One key's score in one row, with what its gradient needs.
struct KeyScore {
  /// scale * dot(q, k): the softcap's argument.
  double raw = 0;
  /// After the softcap: the modifier's argument.
  double capped = 0;
  /// The final score; -inf when the key takes no part.
  double score = kNegInf;
  /// The element of the additive mask added to the score; -1 when none was.
  int64_t maskIndex = -1;
};

/// The gradients the file header of ReferenceAttentionGrad.h defines, with
/// intermediates kept as `precision` says. The forward part repeats
/// ReferenceAttention.cpp's `attend` step for step, so that the probabilities
/// are the ones the forward rounds.
template <typename Precision>
AttentionGradResult
attendGrad(const AttentionSizes &shape, llvm::ArrayRef<double> query,
           llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
           llvm::ArrayRef<double> gradOut, const AttentionOptions &options,
           const ScoreModifierDerivative &modifierDerivative,
           Precision precision) {
  using Accumulator = typename Precision::Accumulator;
  const int64_t batch = shape.batch, heads = shape.queryHeads,
                kvHeads = shape.kvHeads, queryLen = shape.queryLen,
                keyLen = shape.keyLen, headDim = shape.headDim,
                valueDim = shape.valueDim;
  const int64_t headsPerKvHead = heads / kvHeads;
  const ScoreMask *mask = options.mask ? &*options.mask : nullptr;
  const bool additive = mask && mask->kind == ScoreMask::Kind::Additive;
  KeyRules rules(shape, options);
  ScoreModifierDerivative derivative = modifierDerivative;
  if (options.scoreModifier && !derivative)
    derivative = centralDifference(options.scoreModifier);
  auto round = [&](double value) { return precision.round(value); };
  auto acc = [](double value) { return static_cast<Accumulator>(value); };

  AttentionGradResult result;
  result.dQuery.assign(batch * heads * queryLen * headDim, 0.0);
  // Sums over a KV head's group and a mask's broadcast slices: a naive
  // attention repeats K, V and the mask per query head, and the backward of
  // the repetition adds up the per-head gradients.
  std::vector<Accumulator> dKey(batch * kvHeads * keyLen * headDim, 0);
  std::vector<Accumulator> dValue(batch * kvHeads * keyLen * valueDim, 0);
  std::vector<Accumulator> dMask(additive ? mask->values.size() : 0, 0);
  // One query head's dK and dV, summed over its rows.
  std::vector<Accumulator> headDKey(keyLen * headDim),
      headDValue(keyLen * valueDim);
  std::vector<KeyScore> row(keyLen);
  std::vector<Accumulator> weights(keyLen);
  std::vector<double> probabilities(keyLen), dProbabilities(keyLen);
  std::vector<Accumulator> dQueryRow(headDim);

  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvHead = h / headsPerKvHead;
      // Pointers rather than indexing, which would assert on empty operands.
      const double *keys =
          key.data() + (b * kvHeads + kvHead) * keyLen * headDim;
      const double *values =
          value.data() + (b * kvHeads + kvHead) * keyLen * valueDim;
      const int64_t keyEnd = rules.select(b, h);
      std::fill(headDKey.begin(), headDKey.end(), Accumulator(0));
      std::fill(headDValue.begin(), headDValue.end(), Accumulator(0));

      for (int64_t i = 0; i < queryLen; ++i) {
        const int64_t rowIndex = (b * heads + h) * queryLen + i;
        const double *q = query.data() + rowIndex * headDim;
        const double *dOut = gradOut.data() + rowIndex * valueDim;

        // The forward: which keys take part, and their scores.
        std::fill(row.begin(), row.end(), KeyScore());
        double rowMax = kNegInf;
        for (int64_t k = 0; k < keyEnd; ++k) {
          std::optional<int64_t> maskIndex = rules.take(i, k);
          if (!maskIndex)
            continue;

          KeyScore &score = row[k];
          Accumulator dot = 0;
          for (int64_t d = 0; d < headDim; ++d)
            dot += acc(q[d]) * acc(keys[k * headDim + d]);
          score.raw = round(options.scale * dot);
          score.capped = score.raw;
          if (options.softcap)
            score.capped = round(*options.softcap *
                                 std::tanh(score.raw / *options.softcap));
          score.score = score.capped;
          if (options.scoreModifier)
            score.score = round(options.scoreModifier(score.score, b, h, i, k));
          if (*maskIndex >= 0) {
            score.score = round(score.score + mask->values[*maskIndex]);
            score.maskIndex = *maskIndex;
          }
          rowMax = maxKeepingNaN(rowMax, score.score);
        }
        // No visible key, or all scores -inf: O is 0 whatever the inputs.
        if (rowMax == kNegInf)
          continue;

        Accumulator sum = 0;
        for (int64_t k = 0; k < keyLen; ++k) {
          weights[k] = row[k].score == kNegInf
                           ? 0
                           : std::exp(acc(row[k].score - rowMax));
          sum += weights[k];
        }
        for (int64_t k = 0; k < keyLen; ++k)
          probabilities[k] = weights[k] == 0 ? 0.0 : round(weights[k] / sum);

        // dV += P dO, dP = dO V^T and D = sum_k P_k dP_k.
        Accumulator rowSum = 0;
        for (int64_t k = 0; k < keyLen; ++k) {
          if (probabilities[k] == 0)
            continue;
          Accumulator p = acc(probabilities[k]), dot = 0;
          for (int64_t e = 0; e < valueDim; ++e) {
            headDValue[k * valueDim + e] += p * acc(dOut[e]);
            dot += acc(dOut[e]) * acc(values[k * valueDim + e]);
          }
          dProbabilities[k] = round(dot);
          rowSum += p * acc(dProbabilities[k]);
        }
        const Accumulator rowD = acc(round(rowSum));

        // Back through the softmax, the mask, the modifier, the softcap and
        // the scale to the dot product, then to Q and K.
        std::fill(dQueryRow.begin(), dQueryRow.end(), Accumulator(0));
        for (int64_t k = 0; k < keyLen; ++k) {
          if (probabilities[k] == 0)
            continue;
          const KeyScore &score = row[k];
          double dScore =
              round(acc(probabilities[k]) * (acc(dProbabilities[k]) - rowD));
          if (score.maskIndex >= 0)
            dMask[score.maskIndex] += acc(dScore);
          if (derivative)
            dScore =
                round(acc(dScore) * acc(derivative(score.capped, b, h, i, k)));
          if (options.softcap) {
            double t = std::tanh(score.raw / *options.softcap);
            dScore = round(acc(dScore) * acc(1.0 - t * t));
          }
          const Accumulator dDot = acc(round(acc(options.scale) * acc(dScore)));
          for (int64_t d = 0; d < headDim; ++d) {
            dQueryRow[d] += dDot * acc(keys[k * headDim + d]);
            headDKey[k * headDim + d] += dDot * acc(q[d]);
          }
        }
        for (int64_t d = 0; d < headDim; ++d)
          result.dQuery[rowIndex * headDim + d] = round(dQueryRow[d]);
      }

      Accumulator *kvDKey =
          dKey.data() + (b * kvHeads + kvHead) * keyLen * headDim;
      Accumulator *kvDValue =
          dValue.data() + (b * kvHeads + kvHead) * keyLen * valueDim;
      for (int64_t j = 0, e = keyLen * headDim; j < e; ++j)
        kvDKey[j] += acc(round(headDKey[j]));
      for (int64_t j = 0, e = keyLen * valueDim; j < e; ++j)
        kvDValue[j] += acc(round(headDValue[j]));
    }
  }

  auto roundAll = [&](const std::vector<Accumulator> &sums) {
    std::vector<double> rounded(sums.size());
    for (size_t j = 0, e = sums.size(); j < e; ++j)
      rounded[j] = round(sums[j]);
    return rounded;
  };
  result.dKey = roundAll(dKey);
  result.dValue = roundAll(dValue);
  result.dMask = roundAll(dMask);
  return result;
}

} // namespace

/// d/dscore of `modifier` by a central difference. A step of cbrt(epsilon)
/// relative to the score balances the truncation error (step^2) against the
/// rounding error (epsilon / step).
ScoreModifierDerivative
mlir::attn::reference::centralDifference(const ScoreModifier &modifier) {
  return [modifier](double score, int64_t b, int64_t h, int64_t q, int64_t k) {
    double step = std::cbrt(std::numeric_limits<double>::epsilon()) *
                  std::max(1.0, std::abs(score));
    // Divide by the distance actually taken, which rounding may change.
    double above = score + step, below = score - step;
    return (modifier(above, b, h, q, k) - modifier(below, b, h, q, k)) /
           (above - below);
  };
}

llvm::Expected<AttentionGradResult>
mlir::attn::reference::referenceAttentionGrad(
    const AttentionSizes &shape, llvm::ArrayRef<double> query,
    llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
    llvm::ArrayRef<double> gradOut, const AttentionOptions &options,
    const ScoreModifierDerivative &modifierDerivative) {
  if (llvm::Error err = verify(shape, query, key, value, gradOut, options))
    return std::move(err);
  return attendGrad(shape, query, key, value, gradOut, options,
                    modifierDerivative, ExactPrecision());
}

llvm::Expected<AttentionGradResult>
mlir::attn::reference::naiveHalfAttentionGrad(
    const AttentionSizes &shape, llvm::ArrayRef<double> query,
    llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
    llvm::ArrayRef<double> gradOut, const AttentionOptions &options,
    HalfFormat format, const ScoreModifierDerivative &modifierDerivative) {
  if (llvm::Error err = verify(shape, query, key, value, gradOut, options))
    return std::move(err);
  return attendGrad(shape, roundAll(query, format), roundAll(key, format),
                    roundAll(value, format), roundAll(gradOut, format), options,
                    modifierDerivative, HalfPrecision{format});
}
