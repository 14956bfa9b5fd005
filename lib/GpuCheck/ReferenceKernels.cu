//===- ReferenceKernels.cu - Plain GPU attention to check kernels against -===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The GPU side of the kernel check (docs/runtime.md), written in CUDA C and
// compiled by nvcc to PTX at build time: it shares nothing with the compiler
// it checks.
//
//  * attn_fill_normal_<t>: seeded standard-normal values (a counter-based
//    hash and Box-Muller), so that inputs of any size are made on the device.
//  * attn_reference_<t>: one block per query row. Every score of the row is
//    kept in shared memory, then the row is normalised exactly: softmax by
//    max, exp and sum, O = P V / l, LSE = m + log l. In exact mode every
//    intermediate is f32; in naive mode the scores, the probabilities and O
//    are rounded to the inputs' format on the way, as a naive attention on
//    16-bit tensors does: the error of that against exact mode is the
//    yardstick of the tolerance, as on the CPU backend.
//
// Scores are scale * q.k, then softcap * tanh(s / softcap) when the kernel
// has a softcap, plus the element of an additive mask operand. Masks follow
// attn.attention: key k of query row i (diagonal i + Sk - Sq) is visible
// unless causal and k > diagonal, or a window (left, right) leaves it out,
// or a boolean mask operand's element is 0, or the block mask's block is
// empty (0); in a full block (2) the mask operand does not apply. With
// per-sequence key lengths
// (non-null keyLengths), Sk is sequence b's keyLengths[b] (clamped to
// [0, Sk]) and keys from there on are hidden. A row without visible keys
// gives O = 0 and LSE = -inf.
//
//===----------------------------------------------------------------------===//

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

__device__ float toFloat(float x) { return x; }
__device__ float toFloat(__half x) { return __half2float(x); }
__device__ float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename T> __device__ T fromFloat(float x);
template <> __device__ float fromFloat<float>(float x) { return x; }
template <> __device__ __half fromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ __nv_bfloat16 fromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

template <typename T> __device__ float roundTo(float x) {
  return toFloat(fromFloat<T>(x));
}

__device__ uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

template <typename T>
__device__ void fillNormal(T *out, uint64_t count, uint64_t seed) {
  uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    uint64_t bits = mix(seed * 0x9e3779b97f4a7c15ull + i);
    // Two uniforms in (0, 1] and [0, 1) from 24 bits each.
    float u1 = (float((bits >> 40) & 0xffffff) + 1.0f) * (1.0f / 16777216.0f);
    float u2 = float((bits >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    out[i] = fromFloat<T>(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

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

/// Element `index` of the mask operand: 0 or 1 for a boolean mask, the
/// value added to the score for an additive one.
__device__ float maskElement(const void *mask, int32_t type, int64_t index) {
  switch (type) {
  case 0:
    return toFloat(static_cast<const __half *>(mask)[index]);
  case 1:
    return toFloat(static_cast<const __nv_bfloat16 *>(mask)[index]);
  case 2:
    return static_cast<const float *>(mask)[index];
  default:
    return static_cast<const uint8_t *>(mask)[index] != 0 ? 1.0f : 0.0f;
  }
}

template <typename T>
__device__ float maybeRound(float x, bool naive) {
  return naive ? roundTo<T>(x) : x;
}

template <typename T>
__device__ void reference(const T *query, const T *key, const T *value,
                          float *out, float *lse, const int32_t *keyLengths,
                          const void *mask, const uint8_t *blockMask,
                          Problem p) {
  extern __shared__ float shared[];
  float *q = shared;                // headDim
  float *scores = q + p.headDim;    // keyLen
  __shared__ float reduction[32];

  const int64_t row = blockIdx.x; // over batch * heads * queryLen
  const int i = row % p.queryLen;
  const int64_t bh = row / p.queryLen;
  const int h = bh % p.queryHeads;
  const int b = bh / p.queryHeads;
  const int kvHead = h / (p.queryHeads / p.kvHeads);
  const T *keys = key + (int64_t(b) * p.kvHeads + kvHead) * p.keyLen * p.headDim;
  const T *values =
      value + (int64_t(b) * p.kvHeads + kvHead) * p.keyLen * p.valueDim;
  const int keyEnd = keyLengths ? min(max(keyLengths[b], 0), p.keyLen) : p.keyLen;
  const int64_t diagonal = int64_t(i) + keyEnd - p.queryLen;
  const bool naive = p.naive != 0;
  const int64_t maskRow = int64_t(b) * p.maskBatchStride +
                          int64_t(h) * p.maskHeadStride + int64_t(i) * p.keyLen;
  const bool booleanMask = p.maskType == 4;
  // This row's row of the block mask: 0 empty, 2 full, else partial.
  const uint8_t *blockRow =
      p.blockMaskRows
          ? blockMask + int64_t(b) * p.blockMaskBatchStride +
                int64_t(h) * p.blockMaskHeadStride +
                int64_t(i / p.blockMaskRows) *
                    ((p.keyLen + p.blockMaskKeys - 1) / p.blockMaskKeys)
          : nullptr;

  for (int d = threadIdx.x; d < p.headDim; d += blockDim.x)
    q[d] = toFloat(query[row * p.headDim + d]);
  __syncthreads();

  float localMax = -INFINITY;
  for (int k = threadIdx.x; k < p.keyLen; k += blockDim.x) {
    const uint8_t block = blockRow ? blockRow[k / p.blockMaskKeys] : 1;
    const bool masks = p.maskType >= 0 && block != 2;
    bool visible = k < keyEnd && block != 0 && !(p.causal && k > diagonal) &&
                   !(p.hasWindow && (k < diagonal - p.windowLeft ||
                                     k > diagonal + p.windowRight)) &&
                   !(masks && booleanMask &&
                     maskElement(mask, p.maskType, maskRow + k) == 0.0f);
    float score = -INFINITY;
    if (visible) {
      float dot = 0.0f;
      for (int d = 0; d < p.headDim; ++d)
        dot = fmaf(q[d], toFloat(keys[int64_t(k) * p.headDim + d]), dot);
      score = maybeRound<T>(p.scale * dot, naive);
      if (p.softcap > 0.0f)
        score = maybeRound<T>(p.softcap * tanhf(score / p.softcap), naive);
      if (masks && !booleanMask)
        score = maybeRound<T>(
            score + maskElement(mask, p.maskType, maskRow + k), naive);
      localMax = fmaxf(localMax, score);
    }
    scores[k] = score;
  }

  // Block-wide max, then sum.
  auto blockReduce = [&](float x, bool isMax) {
    for (int offset = 16; offset > 0; offset /= 2) {
      float other = __shfl_xor_sync(0xffffffffu, x, offset);
      x = isMax ? fmaxf(x, other) : x + other;
    }
    __syncthreads();
    if (threadIdx.x % 32 == 0)
      reduction[threadIdx.x / 32] = x;
    __syncthreads();
    x = isMax ? -INFINITY : 0.0f;
    for (int w = 0; w < int(blockDim.x / 32); ++w)
      x = isMax ? fmaxf(x, reduction[w]) : x + reduction[w];
    return x;
  };
  const float rowMax = blockReduce(localMax, true);
  float *outRow = out + row * p.valueDim;
  if (rowMax == -INFINITY) {
    for (int e = threadIdx.x; e < p.valueDim; e += blockDim.x)
      outRow[e] = 0.0f;
    if (threadIdx.x == 0)
      lse[row] = -INFINITY;
    return;
  }
  float localSum = 0.0f;
  for (int k = threadIdx.x; k < p.keyLen; k += blockDim.x) {
    float weight = scores[k] == -INFINITY ? 0.0f : expf(scores[k] - rowMax);
    scores[k] = weight;
    localSum += weight;
  }
  const float sum = blockReduce(localSum, false);
  const float inverse = 1.0f / sum;
  for (int e = threadIdx.x; e < p.valueDim; e += blockDim.x) {
    float acc = 0.0f;
    for (int k = 0; k < p.keyLen; ++k) {
      float weight = scores[k];
      if (weight == 0.0f)
        continue;
      float probability = naive ? roundTo<T>(weight * inverse) : weight;
      acc = fmaf(probability, toFloat(values[int64_t(k) * p.valueDim + e]),
                 acc);
    }
    outRow[e] = naive ? roundTo<T>(acc) : acc * inverse;
  }
  if (threadIdx.x == 0)
    lse[row] = rowMax + logf(sum);
}

} // namespace

#define ATTN_REFERENCE_KERNELS(suffix, T)                                      \
  extern "C" __global__ void attn_fill_normal_##suffix(T *out, uint64_t count, \
                                                       uint64_t seed) {        \
    fillNormal(out, count, seed);                                              \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128) attn_reference_##suffix(   \
      const T *query, const T *key, const T *value, float *out, float *lse,    \
      const int32_t *keyLengths, const void *mask, const uint8_t *blockMask,   \
      Problem problem) {                                                       \
    reference(query, key, value, out, lse, keyLengths, mask, blockMask,        \
              problem);                                                        \
  }

ATTN_REFERENCE_KERNELS(f16, __half)
ATTN_REFERENCE_KERNELS(bf16, __nv_bfloat16)
ATTN_REFERENCE_KERNELS(f32, float)
