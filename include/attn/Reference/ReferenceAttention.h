//===- ReferenceAttention.h - Float64 attention for checking ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Attention computed with plain loops, to check compiled attention against.
// It shares no code with the compiler, so that a mistake in the lowering
// cannot hide by being made twice.
//
// For query i of head h in batch b, with Q [B, Hq, Sq, D], K [B, Hkv, Sk, D]
// and V [B, Hkv, Sk, Dv] (query head h reads KV head h / (Hq / Hkv)):
//   s_k = scale * dot(q_i, k_k)
//   s_k = softcap * tanh(s_k / softcap)        with a softcap
//   s_k = modifier(s_k, b, h, i, k)            with a score modifier
//   s_k = s_k + mask[b, h, i, k]               with an additive mask
// With per-sequence key lengths L_b, batch b's keys end at L_b: Sk below
// stands for L_b and keys from L_b on take no part.
// Key k is visible when, with d = i + Sk - Sq (the bottom-right diagonal),
//   k <= d                                     if causal,
//   d - left <= k <= d + right                 with a window (left, right),
//   mask[b, h, i, k] is true                   with a boolean mask,
//   blocks[b, h, i / Bq, k / Bk] != 0          with a block mask;
// a block-mask element of 2 (a full block) drops the mask operand there.
// Invisible keys and keys whose score is -inf take no part:
//   O_i = sum_k exp(s_k - m) v_k / sum_k exp(s_k - m),   m = max_k s_k
//   LSE_i = m + log(sum_k exp(s_k - m))
// A row without any such key has O_i = 0 and LSE_i = -inf.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_REFERENCEATTENTION_H
#define ATTN_REFERENCE_REFERENCEATTENTION_H

#include "attn/Support/AttentionSizes.h"
#include "attn/Support/HalfFloat.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace mlir::attn::reference {

/// An explicit mask, [batch, heads, Sq, Sk] row-major, where a size-1 batch
/// or head dimension broadcasts.
struct ScoreMask {
  enum class Kind {
    /// A nonzero value keeps the key.
    Boolean,
    /// The value is added to the score.
    Additive,
  };
  Kind kind = Kind::Boolean;
  /// 1 or the attention's batch.
  int64_t batch = 1;
  /// 1 or the attention's query heads.
  int64_t heads = 1;
  std::vector<double> values;
};

/// A block-sparse mask, [batch, heads, ceil(Sq / blockRows),
/// ceil(Sk / blockKeys)] row-major, where a size-1 batch or head dimension
/// broadcasts: 0 hides every score of the block, 2 makes the ScoreMask not
/// apply in it, anything else changes nothing.
struct BlockMask {
  int64_t blockRows = 1;
  int64_t blockKeys = 1;
  /// 1 or the attention's batch.
  int64_t batch = 1;
  /// 1 or the attention's query heads.
  int64_t heads = 1;
  std::vector<int8_t> values;
};

/// Rewrites the score of query `q` and key `k` of query head `h` in batch
/// `b`.
using ScoreModifier = std::function<double(double score, int64_t b, int64_t h,
                                           int64_t q, int64_t k)>;

/// What the attention computes besides its sizes: the masks by position
/// (causal, window), then the rest.
struct AttentionOptions : PositionMask {
  /// Multiplies the dot products; there is no implicit 1/sqrt(D).
  double scale = 1.0;
  /// > 0.
  std::optional<double> softcap;
  std::optional<ScoreMask> mask;
  std::optional<BlockMask> blockMask;
  /// Per-sequence key lengths, one per batch, each in [0, Sk]; none when
  /// empty.
  std::vector<int64_t> keyLengths;
  /// None when empty.
  ScoreModifier scoreModifier;
};

struct AttentionResult {
  /// [B, Hq, Sq, Dv].
  std::vector<double> out;
  /// [B, Hq, Sq], natural log.
  std::vector<double> lse;
};

/// The attention of Q, K and V (row-major, shapes as above) in float64.
/// Fails, saying why, when the operands or options do not fit `shape`.
llvm::Expected<AttentionResult>
referenceAttention(const AttentionSizes &shape, llvm::ArrayRef<double> query,
                   llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
                   const AttentionOptions &options);

/// The same attention computed naively in `format`, the yardstick of
/// flash-attention's rule for 16-bit inputs (an output may be at most twice
/// as far from the float64 reference as this one is). Q, K and V are rounded
/// to `format`; dot products and sums accumulate in float, and every
/// intermediate is rounded to `format`: each score after each step above,
/// each probability exp(s_k - m) / sum, and each output. LSE, which kernels
/// keep in float, is m + log(sum) in float.
llvm::Expected<AttentionResult>
naiveHalfAttention(const AttentionSizes &shape, llvm::ArrayRef<double> query,
                   llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
                   const AttentionOptions &options, HalfFormat format);

} // namespace mlir::attn::reference

#endif // ATTN_REFERENCE_REFERENCEATTENTION_H
