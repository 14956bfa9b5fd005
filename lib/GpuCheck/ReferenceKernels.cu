//===- ReferenceKernels.cu - Plain GPU attention to check kernels against -===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The GPU side of the kernel check (docs/runtime.md), written in CUDA C and
// compiled by nvcc to PTX at build time: it shares nothing with the compiler
// it checks. What the kernels compute is ReferenceRow.h's, which the host
// side (HostReference.cpp) compiles too; here it is spread over the GPU:
//
//  * attn_fill_normal_<t>: the seeded standard-normal inputs (normalAt), a
//    grid-stride loop.
//  * attn_reference_<t>: one block of 128 threads per query row
//    (referenceRow), the row's query and scores in shared memory.
//
//===----------------------------------------------------------------------===//

#include "ReferenceRow.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

using namespace attn::gpucheck::reference;

/// The formats' conversions, by the GPU's instructions.
struct DeviceNumbers {
  static __device__ float f16(uint16_t bits) {
    return __half2float(__ushort_as_half(bits));
  }
  static __device__ float bf16(uint16_t bits) {
    return __bfloat162float(__ushort_as_bfloat16(bits));
  }
  static __device__ float roundF16(float x) {
    return __half2float(__float2half_rn(x));
  }
  static __device__ float roundBf16(float x) {
    return __bfloat162float(__float2bfloat16_rn(x));
  }
  static __device__ float fma(float a, float b, float c) {
    return fmaf(a, b, c);
  }
};

/// A CTA's threads computing one row: reductions by shuffles within each
/// warp, then across the warps through shared memory.
struct BlockTeam {
  float *reduction; // 32 floats of shared memory
  __device__ int rank() const { return threadIdx.x; }
  __device__ int size() const { return blockDim.x; }
  __device__ void sync() const { __syncthreads(); }
  __device__ float reduce(float x, bool isMax) const {
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
  }
  __device__ float max(float x) const { return reduce(x, true); }
  __device__ float sum(float x) const { return reduce(x, false); }
};

__device__ void store(__half *to, float x) { *to = __float2half_rn(x); }
__device__ void store(__nv_bfloat16 *to, float x) {
  *to = __float2bfloat16_rn(x);
}
__device__ void store(float *to, float x) { *to = x; }

template <typename T>
__device__ void fillNormal(T *out, uint64_t count, uint64_t seed) {
  uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    store(out + i, normalAt(seed, i));
}

template <int32_t TYPE>
__device__ void reference(const void *query, const void *key,
                          const void *value, float *out, float *lse,
                          const int32_t *keyLengths, const void *mask,
                          const uint8_t *blockMask, Problem p) {
  extern __shared__ float shared[];
  __shared__ float reduction[32];
  BlockTeam team{reduction};
  referenceRow<TYPE, DeviceNumbers>(team, blockIdx.x, shared,
                                    shared + p.headDim, query, key, value, out,
                                    lse, keyLengths, mask, blockMask, p);
}

} // namespace

#define ATTN_REFERENCE_KERNELS(suffix, T, TYPE)                                \
  extern "C" __global__ void attn_fill_normal_##suffix(T *out, uint64_t count, \
                                                       uint64_t seed) {        \
    fillNormal(out, count, seed);                                              \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128) attn_reference_##suffix(   \
      const T *query, const T *key, const T *value, float *out, float *lse,    \
      const int32_t *keyLengths, const void *mask, const uint8_t *blockMask,   \
      Problem problem) {                                                       \
    reference<TYPE>(query, key, value, out, lse, keyLengths, mask, blockMask,  \
                    problem);                                                  \
  }

ATTN_REFERENCE_KERNELS(f16, __half, kF16)
ATTN_REFERENCE_KERNELS(bf16, __nv_bfloat16, kBF16)
ATTN_REFERENCE_KERNELS(f32, float, kF32)
