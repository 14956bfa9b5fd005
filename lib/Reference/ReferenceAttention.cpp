//===- ReferenceAttention.cpp - Float64 attention to check against --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Reference/ReferenceAttention.h"

#include "ReferenceRules.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir::attn;
using namespace mlir::attn::reference;

namespace {

llvm::Error invalid(const llvm::Twine &message) {
  return llvm::createStringError("reference attention: " + message);
}

llvm::Error checkSize(llvm::StringRef name, size_t size, int64_t expected) {
  if (static_cast<int64_t>(size) == expected)
    return llvm::Error::success();
  return invalid(name + " has " + llvm::Twine(size) + " elements, expected " +
                 llvm::Twine(expected));
}

llvm::Error verify(const AttentionSizes &shape, llvm::ArrayRef<double> query,
                   llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
                   const AttentionOptions &options) {
  const AttentionSizes &s = shape;
  for (int64_t dim : {s.batch, s.queryHeads, s.kvHeads, s.queryLen, s.keyLen,
                      s.headDim, s.valueDim})
    if (dim < 0)
      return invalid("negative size");
  if (s.kvHeads == 0 || s.queryHeads % s.kvHeads != 0)
    return invalid(llvm::Twine(s.queryHeads) + " query heads are not a " +
                   "multiple of " + llvm::Twine(s.kvHeads) + " KV heads");
  if (llvm::Error err = checkSize(
          "Q", query.size(), s.batch * s.queryHeads * s.queryLen * s.headDim))
    return err;
  if (llvm::Error err = checkSize("K", key.size(),
                                  s.batch * s.kvHeads * s.keyLen * s.headDim))
    return err;
  if (llvm::Error err = checkSize("V", value.size(),
                                  s.batch * s.kvHeads * s.keyLen * s.valueDim))
    return err;
  if (options.window &&
      (options.window->first < 0 || options.window->second < 0))
    return invalid("window sizes must be >= 0");
  if (options.softcap && !(*options.softcap > 0))
    return invalid("softcap must be > 0");
  if (!options.keyLengths.empty()) {
    if (llvm::Error err =
            checkSize("the key lengths", options.keyLengths.size(), s.batch))
      return err;
    for (int64_t length : options.keyLengths)
      if (length < 0 || length > s.keyLen)
        return invalid("key length " + llvm::Twine(length) +
                       " is outside [0, " + llvm::Twine(s.keyLen) + "]");
  }
  // A mask's batch and head counts are 1 (broadcast) or the attention's.
  auto checkBroadcast = [&](llvm::StringRef name, int64_t batch,
                            int64_t heads) -> llvm::Error {
    if (batch != 1 && batch != s.batch)
      return invalid(name + " batch " + llvm::Twine(batch) +
                     " is neither 1 nor " + llvm::Twine(s.batch));
    if (heads != 1 && heads != s.queryHeads)
      return invalid(name + " heads " + llvm::Twine(heads) +
                     " is neither 1 nor " + llvm::Twine(s.queryHeads));
    return llvm::Error::success();
  };
  if (const std::optional<ScoreMask> &mask = options.mask) {
    if (llvm::Error err = checkBroadcast("mask", mask->batch, mask->heads))
      return err;
    if (llvm::Error err =
            checkSize("the mask", mask->values.size(),
                      mask->batch * mask->heads * s.queryLen * s.keyLen))
      return err;
  }
  if (const std::optional<BlockMask> &blocks = options.blockMask) {
    if (blocks->blockRows < 1 || blocks->blockKeys < 1)
      return invalid("block mask blocks must be at least 1 x 1");
    if (llvm::Error err =
            checkBroadcast("block mask", blocks->batch, blocks->heads))
      return err;
    if (llvm::Error err =
            checkSize("the block mask", blocks->values.size(),
                      blocks->batch * blocks->heads *
                          llvm::divideCeil(s.queryLen, blocks->blockRows) *
                          llvm::divideCeil(s.keyLen, blocks->blockKeys)))
      return err;
  }
  return llvm::Error::success();
}

/// The attention the file header defines, with intermediates kept as
/// `precision` says.
template <typename Precision>
AttentionResult attend(const AttentionSizes &shape,
                       llvm::ArrayRef<double> query, llvm::ArrayRef<double> key,
                       llvm::ArrayRef<double> value,
                       const AttentionOptions &options, Precision precision) {
  using Accumulator = typename Precision::Accumulator;
  const int64_t batch = shape.batch, heads = shape.queryHeads,
                kvHeads = shape.kvHeads, queryLen = shape.queryLen,
                keyLen = shape.keyLen, headDim = shape.headDim,
                valueDim = shape.valueDim;
  const int64_t headsPerKvHead = heads / kvHeads;
  KeyRules rules(shape, options);

  AttentionResult result;
  result.out.assign(batch * heads * queryLen * valueDim, 0.0);
  result.lse.assign(batch * heads * queryLen, kNegInf);
  std::vector<double> scores(keyLen);
  // The unnormalized weight exp(s_k - m) of each key, 0 when it takes no
  // part.
  std::vector<Accumulator> weights(keyLen);
  std::vector<Accumulator> acc(valueDim);

  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      int64_t kvHead = h / headsPerKvHead;
      // Pointers rather than indexing, which would assert on empty operands.
      const double *keys =
          key.data() + (b * kvHeads + kvHead) * keyLen * headDim;
      const double *values =
          value.data() + (b * kvHeads + kvHead) * keyLen * valueDim;
      // The keys this sequence attends to.
      const int64_t keyEnd = rules.select(b, h);
      for (int64_t i = 0; i < queryLen; ++i) {
        const double *q =
            query.data() + ((b * heads + h) * queryLen + i) * headDim;

        std::fill(scores.begin(), scores.end(), kNegInf);
        double rowMax = kNegInf;
        for (int64_t k = 0; k < keyEnd; ++k) {
          std::optional<int64_t> maskIndex = rules.take(i, k);
          if (!maskIndex)
            continue;

          Accumulator dot = 0;
          for (int64_t d = 0; d < headDim; ++d)
            dot += static_cast<Accumulator>(q[d]) *
                   static_cast<Accumulator>(keys[k * headDim + d]);
          double score = precision.round(options.scale * dot);
          if (options.softcap)
            score = precision.round(*options.softcap *
                                    std::tanh(score / *options.softcap));
          if (options.scoreModifier)
            score = precision.round(options.scoreModifier(score, b, h, i, k));
          if (*maskIndex >= 0)
            score = precision.round(score + options.mask->values[*maskIndex]);
          scores[k] = score;
          rowMax = maxKeepingNaN(rowMax, score);
        }
        // No visible key, or all scores -inf: O stays 0 and LSE -inf.
        if (rowMax == kNegInf)
          continue;

        Accumulator sum = 0;
        for (int64_t k = 0; k < keyLen; ++k) {
          weights[k] =
              scores[k] == kNegInf
                  ? 0
                  : std::exp(static_cast<Accumulator>(scores[k] - rowMax));
          sum += weights[k];
        }
        std::fill(acc.begin(), acc.end(), Accumulator(0));
        for (int64_t k = 0; k < keyLen; ++k) {
          if (weights[k] == 0)
            continue;
          auto probability =
              static_cast<Accumulator>(precision.round(weights[k] / sum));
          for (int64_t d = 0; d < valueDim; ++d)
            acc[d] += probability *
                      static_cast<Accumulator>(values[k * valueDim + d]);
        }
        double *out =
            result.out.data() + ((b * heads + h) * queryLen + i) * valueDim;
        for (int64_t d = 0; d < valueDim; ++d)
          out[d] = precision.round(acc[d]);
        result.lse[(b * heads + h) * queryLen + i] =
            static_cast<Accumulator>(rowMax) + std::log(sum);
      }
    }
  }
  return result;
}

} // namespace

llvm::Expected<AttentionResult> mlir::attn::reference::referenceAttention(
    const AttentionSizes &shape, llvm::ArrayRef<double> query,
    llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
    const AttentionOptions &options) {
  if (llvm::Error err = verify(shape, query, key, value, options))
    return std::move(err);
  return attend(shape, query, key, value, options, ExactPrecision());
}

llvm::Expected<AttentionResult> mlir::attn::reference::naiveHalfAttention(
    const AttentionSizes &shape, llvm::ArrayRef<double> query,
    llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
    const AttentionOptions &options, HalfFormat format) {
  if (llvm::Error err = verify(shape, query, key, value, options))
    return std::move(err);
  return attend(shape, roundAll(query, format), roundAll(key, format),
                roundAll(value, format), options, HalfPrecision{format});
}
