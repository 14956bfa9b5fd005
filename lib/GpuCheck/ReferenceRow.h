//===- ReferenceRow.h - The GPU check's reference, for device and host ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The kernel check's own computations (docs/runtime.md), written once and
// compiled twice: by nvcc into the GPU reference kernels
// (ReferenceKernels.cu) and by the host compiler (HostReference.cpp), for
// drivers whose kernels are expensive to run (the PTX emulator, where the
// reference kernels cost ten to a hundred times the checked kernel's
// instructions). Nothing here is shared with the compiler being checked.
//
//  * normalAt: element i of the seeded standard-normal inputs (a
//    counter-based hash and Box-Muller).
//  * referenceRow: one query row of the attention. Every score of the row is
//    kept, then the row is normalised exactly: softmax by max, exp and sum,
//    O = P V / l, LSE = m + log l. In exact mode every intermediate is f32;
//    in naive mode the scores, the probabilities and O are rounded to the
//    inputs' format on the way, as a naive attention on 16-bit tensors does:
//    the error of that against exact mode is the yardstick of the tolerance,
//    as on the CPU backend.
//
// Scores are scale * q.k, then softcap * tanh(s / softcap) when the kernel
// has a softcap, plus the element of an additive mask operand. Masks follow
// attn.attention: key k of query row i (diagonal i + Sk - Sq) is visible
// unless causal and k > diagonal, or a window (left, right) leaves it out,
// or a boolean mask operand's element is 0, or the block mask's block is
// empty (0); in a full block (2) the mask operand does not apply. With
// per-sequence key lengths (non-null keyLengths), Sk is sequence b's
// keyLengths[b] (clamped to [0, Sk]) and keys from there on are hidden. A
// row without visible keys gives O = 0 and LSE = -inf.
//
// The row is computed by a team: on the GPU a CTA's threads, on the host one
// thread. A team has rank() and size(), sync() (a barrier of the team), and
// max(x) and sum(x) (the team's reduction, in every member). Only the order
// of the sums differs between the two: the results agree to rounding.
// Element formats come from a Numbers type: f16(bits), bf16(bits) to float,
// roundF16(x), roundBf16(x) to the nearest value of the format, and
// fma(a, b, c), a * b + c (fmaf on the GPU; on the host, where fmaf is a
// library call, the exact product plus c in double, rounded to float).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_GPUCHECK_REFERENCEROW_H
#define ATTN_LIB_GPUCHECK_REFERENCEROW_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ATTN_REFERENCE_FN __device__ __forceinline__
#else
#include <algorithm>
#include <cmath>
#define ATTN_REFERENCE_FN inline
#endif

namespace attn::gpucheck::reference {

/// The attention's description, the parameter block of attn_reference_<t>.
struct Problem {
  int32_t batch, queryHeads, kvHeads, queryLen, keyLen, headDim, valueDim;
  float scale;
  int32_t causal, hasWindow;
  int64_t windowLeft, windowRight;
  /// 0: exact f32; 1: naive, rounded to the inputs' format.
  int32_t naive;
  /// softcap * tanh(s / softcap) on the scaled score; 0 without.
  float softcap;
  /// The mask operand's batch and head strides (0 where it broadcasts); its
  /// rows are keyLen apart.
  int64_t maskBatchStride, maskHeadStride;
  /// -1 without a mask operand, else its attnrtDType: 0 f16, 1 bf16, 2 f32
  /// (added to the score), 4 i1 (one byte, 0 hides the score).
  int32_t maskType;
  /// The block mask's batch and head strides (0 where it broadcasts); its
  /// rows are ceil(keyLen / blockMaskKeys) apart.
  int64_t blockMaskBatchStride, blockMaskHeadStride;
  /// Its blocks: blockMaskRows query rows by blockMaskKeys keys; 0 without a
  /// block mask.
  int32_t blockMaskRows, blockMaskKeys;
};

/// attnrtDType's values for the element formats.
enum : int32_t { kF16 = 0, kBF16 = 1, kF32 = 2, kI1 = 4 };

ATTN_REFERENCE_FN uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

ATTN_REFERENCE_FN float cosPi(float x) {
#ifdef __CUDACC__
  return cospif(x);
#else
  return static_cast<float>(std::cos(3.14159265358979323846 * x));
#endif
}

/// Element I of the standard-normal inputs of SEED.
ATTN_REFERENCE_FN float normalAt(uint64_t seed, uint64_t i) {
  uint64_t bits = mix(seed * 0x9e3779b97f4a7c15ull + i);
  // Two uniforms in (0, 1] and [0, 1) from 24 bits each.
  float u1 = (float((bits >> 40) & 0xffffff) + 1.0f) * (1.0f / 16777216.0f);
  float u2 = float((bits >> 16) & 0xffffff) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cosPi(2.0f * u2);
}

/// Element INDEX of DATA, in format TYPE (an i1 element is 0 or 1).
template <typename Numbers>
ATTN_REFERENCE_FN float elementAt(const void *data, int32_t type,
                                  int64_t index) {
  switch (type) {
  case kF16:
    return Numbers::f16(static_cast<const uint16_t *>(data)[index]);
  case kBF16:
    return Numbers::bf16(static_cast<const uint16_t *>(data)[index]);
  case kF32:
    return static_cast<const float *>(data)[index];
  default:
    return static_cast<const uint8_t *>(data)[index] != 0 ? 1.0f : 0.0f;
  }
}

/// X rounded to format TYPE (f32 unchanged).
template <typename Numbers>
ATTN_REFERENCE_FN float roundTo(float x, int32_t type) {
  return type == kF16 ? Numbers::roundF16(x)
         : type == kBF16 ? Numbers::roundBf16(x)
                         : x;
}

/// Query row ROW (over batch * queryHeads * queryLen) of the attention of
/// QUERY, KEY and VALUE (contiguous, in format TYPE) into OUT and LSE, by
/// TEAM. Q (headDim floats) and SCORES (keyLen floats) are the row's
/// workspace, shared by the team.
template <int32_t TYPE, typename Numbers, typename Team>
ATTN_REFERENCE_FN void
referenceRow(Team &team, int64_t row, float *q, float *scores,
             const void *query, const void *key, const void *value, float *out,
             float *lse, const int32_t *keyLengths, const void *mask,
             const uint8_t *blockMask, const Problem &p) {
  const int i = row % p.queryLen;
  const int64_t bh = row / p.queryLen;
  const int h = bh % p.queryHeads;
  const int b = bh / p.queryHeads;
  const int kvHead = h / (p.queryHeads / p.kvHeads);
  const int64_t keyBase =
      (int64_t(b) * p.kvHeads + kvHead) * p.keyLen * p.headDim;
  const int64_t valueBase =
      (int64_t(b) * p.kvHeads + kvHead) * p.keyLen * p.valueDim;
  const int keyEnd =
      keyLengths ? (keyLengths[b] < 0 ? 0
                    : keyLengths[b] > p.keyLen ? p.keyLen
                                               : keyLengths[b])
                 : p.keyLen;
  const int64_t diagonal = int64_t(i) + keyEnd - p.queryLen;
  const bool naive = p.naive != 0;
  auto maybeRound = [&](float x) {
    return naive ? roundTo<Numbers>(x, TYPE) : x;
  };
  const int64_t maskRow = int64_t(b) * p.maskBatchStride +
                          int64_t(h) * p.maskHeadStride + int64_t(i) * p.keyLen;
  const bool booleanMask = p.maskType == kI1;
  // This row's row of the block mask: 0 empty, 2 full, else partial.
  const uint8_t *blockRow =
      p.blockMaskRows
          ? blockMask + int64_t(b) * p.blockMaskBatchStride +
                int64_t(h) * p.blockMaskHeadStride +
                int64_t(i / p.blockMaskRows) *
                    ((p.keyLen + p.blockMaskKeys - 1) / p.blockMaskKeys)
          : nullptr;

  for (int d = team.rank(); d < p.headDim; d += team.size())
    q[d] = elementAt<Numbers>(query, TYPE, row * p.headDim + d);
  team.sync();

  float localMax = -INFINITY;
  for (int k = team.rank(); k < p.keyLen; k += team.size()) {
    const uint8_t block = blockRow ? blockRow[k / p.blockMaskKeys] : 1;
    const bool masks = p.maskType >= 0 && block != 2;
    bool visible =
        k < keyEnd && block != 0 && !(p.causal && k > diagonal) &&
        !(p.hasWindow &&
          (k < diagonal - p.windowLeft || k > diagonal + p.windowRight)) &&
        !(masks && booleanMask &&
          elementAt<Numbers>(mask, p.maskType, maskRow + k) == 0.0f);
    float score = -INFINITY;
    if (visible) {
      float dot = 0.0f;
      for (int d = 0; d < p.headDim; ++d)
        dot = Numbers::fma(
            q[d],
            elementAt<Numbers>(key, TYPE, keyBase + int64_t(k) * p.headDim + d),
            dot);
      score = maybeRound(p.scale * dot);
      if (p.softcap > 0.0f)
        score = maybeRound(p.softcap * tanhf(score / p.softcap));
      if (masks && !booleanMask)
        score =
            maybeRound(score + elementAt<Numbers>(mask, p.maskType,
                                                  maskRow + k));
      localMax = fmaxf(localMax, score);
    }
    scores[k] = score;
  }

  const float rowMax = team.max(localMax);
  float *outRow = out + row * p.valueDim;
  if (rowMax == -INFINITY) {
    for (int e = team.rank(); e < p.valueDim; e += team.size())
      outRow[e] = 0.0f;
    if (team.rank() == 0)
      lse[row] = -INFINITY;
    return;
  }
  float localSum = 0.0f;
  for (int k = team.rank(); k < p.keyLen; k += team.size()) {
    float weight = scores[k] == -INFINITY ? 0.0f : expf(scores[k] - rowMax);
    scores[k] = weight;
    localSum += weight;
  }
  const float sum = team.sum(localSum);
  const float inverse = 1.0f / sum;
  // Naive: each probability in the format, once.
  if (naive) {
    for (int k = team.rank(); k < p.keyLen; k += team.size())
      scores[k] = roundTo<Numbers>(scores[k] * inverse, TYPE);
    team.sync();
  }
  for (int e = team.rank(); e < p.valueDim; e += team.size()) {
    float acc = 0.0f;
    for (int k = 0; k < p.keyLen; ++k) {
      if (scores[k] == 0.0f)
        continue;
      acc = Numbers::fma(
          scores[k],
          elementAt<Numbers>(value, TYPE,
                             valueBase + int64_t(k) * p.valueDim + e),
          acc);
    }
    outRow[e] = naive ? roundTo<Numbers>(acc, TYPE) : acc * inverse;
  }
  if (team.rank() == 0)
    lse[row] = rowMax + logf(sum);
}

} // namespace attn::gpucheck::reference

#endif // ATTN_LIB_GPUCHECK_REFERENCEROW_H
