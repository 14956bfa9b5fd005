// A Hopper matrix product, C = A B, as CUDA C++ with inline PTX writes it:
// compiled to PTX by nvcc (-arch=sm_90a) for the PTX emulator's corpus test
// (NvccCorpusTest.cpp), which checks C element by element against the host.
//
// One CTA of two warpgroups computes the 64 x 64 C (f32, row-major) from A
// (64 x K, row-major bf16) and B given K-major, as Bt (64 x K, row-major:
// Bt[n][k] = B[k][n]), K a multiple of 64; with CORPUS_F16_ACCUMULATOR, A
// and Bt are f16 and the accumulators f16, converted to f32 for C. Warpgroup 0
// is the producer: its first warp waits for a stage of the two-stage ring to be
// empty and lane 0 issues the tensor copies of A's and Bt's 64 x 64 tiles into
// it (128-byte swizzle, `const __grid_constant__ CUtensorMap` parameters),
// expecting their 16 KiB on the stage's full mbarrier. Warpgroup 1 is the
// consumer: it waits for the stage's full phase, multiplies it with four
// wgmma.mma_async.m64n64k16 k-steps (matrix descriptors of the 128-byte
// swizzle, advanced 32 bytes a step), waits for them and arrives on the
// stage's empty mbarrier.
//
// corpusHopperWgmmaOneWarpgroup computes the same with one warpgroup in the
// common shape `if (threadIdx.x == 0) { expect_tx; copy } wait(full)`:
// thread 0 issues the next k-tile's copies into the other stage before
// every thread waits for this one, and a __syncthreads() ends each step so
// that no stage is refilled while a warp still reads it.
//
// Broken variants, each a bug a programmer makes:
//   -DCORPUS_NO_FULL_WAIT  the consumers do not wait for the full phase:
//                          they read shared memory the copies have not
//                          written (both kernels);
//   -DCORPUS_NO_EMPTY_WAIT the producer refills a stage without waiting for
//                          its release: the full mbarriers' phases run
//                          past the consumer's parity waits (a deadlock),
//                          or the copy races with the wgmma reads;
//   -DCORPUS_NO_END_SYNC   the one-warpgroup kernel without the
//                          __syncthreads() that ends a step: thread 0
//                          refills a stage another warp may still read (a
//                          deadlock or a race, as above);
//   -DCORPUS_SWIZZLE_64B   the descriptors say the 64-byte swizzle where the
//                          copies wrote the 128-byte one: a wrong C (both
//                          kernels).

#include <cstdint>
#include <cuda.h>
#include <cuda_fp16.h>

namespace {

constexpr int kStages = 2, kTileK = 64;
constexpr uint32_t kTileBytes = 64 * kTileK * 2;

#ifdef CORPUS_SWIZZLE_64B
constexpr uint64_t kSwizzle = 2; // 64B
#else
constexpr uint64_t kSwizzle = 1; // 128B
#endif

__device__ uint32_t sharedAddress(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ void waitParity(uint64_t *bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(sharedAddress(bar)), "r"(parity)
                 : "memory");
  } while (!done);
}

__device__ void copyTile(void *dst, const CUtensorMap *map, int k0, int row0,
                         uint64_t *bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile."
      "mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          sharedAddress(dst)),
      "l"(map), "r"(k0), "r"(row0), "r"(sharedAddress(bar))
      : "memory");
}

/// A K-major matrix descriptor: start address, leading byte offset 16
/// (unused by swizzled K-major), stride byte offset 1024 (8 rows of 128
/// bytes), the swizzle in bits 62-63.
__device__ uint64_t descriptor(const void *tile) {
  return (uint64_t(sharedAddress(tile)) >> 4) | (uint64_t(1) << 16) |
         (uint64_t(1024 >> 4) << 32) | (kSwizzle << 62);
}

#define CORPUS_D8(c, i)                                                        \
  c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3]), c(d[i + 4]), c(d[i + 5]),    \
      c(d[i + 6]), c(d[i + 7])

#ifdef CORPUS_F16_ACCUMULATOR
/// The accumulators: 32 f16 a thread, two to a register.
using Accumulators = uint32_t[16];
#define CORPUS_ACCUMULATOR(x) "+r"(x)

/// d (+)= A B^T over one k16 step: 64 x 16 of A and 64 x 16 of Bt.
__device__ void wgmma(Accumulators &d, uint64_t a, uint64_t b, int scaleD) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15}, %16, %17, p, 1, 1, 0, 0;\n}\n"
      : CORPUS_D8(CORPUS_ACCUMULATOR, 0), CORPUS_D8(CORPUS_ACCUMULATOR, 8)
      : "l"(a), "l"(b), "r"(scaleD)
      : "memory");
}

/// Accumulator q (of the f32 layout below) is half q % 2 of register q / 2.
__device__ float accumulator(const Accumulators &d, int q) {
  return __half2float(__ushort_as_half(
      static_cast<unsigned short>(d[q / 2] >> (16 * (q % 2)))));
}
#else
using Accumulators = float[32];
#define CORPUS_ACCUMULATOR(x) "+f"(x)

/// d (+)= A B^T over one k16 step: 64 x 16 of A and 64 x 16 of Bt.
__device__ void wgmma(Accumulators &d, uint64_t a, uint64_t b, int scaleD) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
      "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, "
      "%29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : CORPUS_D8(CORPUS_ACCUMULATOR, 0), CORPUS_D8(CORPUS_ACCUMULATOR, 8),
        CORPUS_D8(CORPUS_ACCUMULATOR, 16), CORPUS_D8(CORPUS_ACCUMULATOR, 24)
      : "l"(a), "l"(b), "r"(scaleD)
      : "memory");
}

__device__ float accumulator(const Accumulators &d, int q) { return d[q]; }
#endif

/// The accumulator layout: warp w of the warpgroup holds rows 16 w to
/// 16 w + 15; accumulators 4 j and 4 j + 1 row lane / 4, columns 8 j + 2
/// (lane % 4) and + 1; 4 j + 2 and 4 j + 3 eight rows below.
__device__ void storeC(const Accumulators &d, float *c) {
  int lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
  for (int j = 0; j < 8; ++j) {
    int row = 16 * warp + lane / 4, col = 8 * j + 2 * (lane % 4);
    c[row * 64 + col] = accumulator(d, 4 * j);
    c[row * 64 + col + 1] = accumulator(d, 4 * j + 1);
    c[(row + 8) * 64 + col] = accumulator(d, 4 * j + 2);
    c[(row + 8) * 64 + col + 1] = accumulator(d, 4 * j + 3);
  }
}

/// d (+)= the product of stage tiles A and Bt (64 x 64 each): four k-steps,
/// waited for.
__device__ void multiplyStage(Accumulators &d, const uint16_t *a,
                              const uint16_t *bt, bool accumulate) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  uint64_t aDesc = descriptor(a), btDesc = descriptor(bt);
  for (int kk = 0; kk < kTileK / 16; ++kk)
    // 16 elements are 32 bytes: 2 in the descriptor's address field.
    wgmma(d, aDesc + 2 * kk, btDesc + 2 * kk, accumulate || kk > 0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

/// Thread 0's part of a step: expect the two tiles' bytes on FULL and copy
/// k-tile KT of A and Bt into the stage.
__device__ void fillStage(uint16_t *a, uint16_t *bt, uint64_t *full,
                          const CUtensorMap *aMap, const CUtensorMap *btMap,
                          int kt) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   sharedAddress(full)),
               "r"(2 * kTileBytes)
               : "memory");
  copyTile(a, aMap, kt * kTileK, 0, full);
  copyTile(bt, btMap, kt * kTileK, 0, full);
}

} // namespace

extern "C" __global__ void __launch_bounds__(256)
    corpusHopperWgmma(const __grid_constant__ CUtensorMap aMap,
                      const __grid_constant__ CUtensorMap btMap, float *c,
                      int k) {
  __shared__ __align__(1024) uint16_t as[kStages][64 * kTileK];
  __shared__ __align__(1024) uint16_t bs[kStages][64 * kTileK];
  __shared__ __align__(8) uint64_t full[kStages], empty[kStages];
  int tiles = k / kTileK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(
          sharedAddress(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 128;\n" ::"r"(
          sharedAddress(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x < 32) {
    // The producer warp.
    for (int kt = 0; kt < tiles; ++kt) {
      int s = kt % kStages;
#ifndef CORPUS_NO_EMPTY_WAIT
      if (kt >= kStages)
        waitParity(&empty[s], (kt / kStages - 1) % 2);
#endif
      if (threadIdx.x == 0)
        fillStage(as[s], bs[s], &full[s], &aMap, &btMap, kt);
    }
  } else if (threadIdx.x >= 128) {
    // The consumer warpgroup.
    Accumulators d;
    for (int kt = 0; kt < tiles; ++kt) {
      int s = kt % kStages;
#ifndef CORPUS_NO_FULL_WAIT
      waitParity(&full[s], (kt / kStages) % 2);
#endif
      multiplyStage(d, as[s], bs[s], kt > 0);
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(
                       sharedAddress(&empty[s]))
                   : "memory");
    }
    storeC(d, c);
  }
}

extern "C" __global__ void __launch_bounds__(128)
    corpusHopperWgmmaOneWarpgroup(const __grid_constant__ CUtensorMap aMap,
                                  const __grid_constant__ CUtensorMap btMap,
                                  float *c, int k) {
  __shared__ __align__(1024) uint16_t as[kStages][64 * kTileK];
  __shared__ __align__(1024) uint16_t bs[kStages][64 * kTileK];
  __shared__ __align__(8) uint64_t full[kStages];
  int tiles = k / kTileK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(
          sharedAddress(&full[s])));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  Accumulators d;
  if (threadIdx.x == 0)
    fillStage(as[0], bs[0], &full[0], &aMap, &btMap, 0);
  for (int kt = 0; kt < tiles; ++kt) {
    int s = kt % kStages;
    // The other stage was last read in the step before, which ended in a
    // __syncthreads().
    if (threadIdx.x == 0 && kt + 1 < tiles)
      fillStage(as[s ^ 1], bs[s ^ 1], &full[s ^ 1], &aMap, &btMap, kt + 1);
#ifndef CORPUS_NO_FULL_WAIT
    waitParity(&full[s], (kt / kStages) % 2);
#endif
    multiplyStage(d, as[s], bs[s], kt > 0);
#ifndef CORPUS_NO_END_SYNC
    __syncthreads();
#endif
  }
  storeC(d, c);
}
