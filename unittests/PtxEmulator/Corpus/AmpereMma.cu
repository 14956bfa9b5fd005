// An Ampere matrix product, C = A B, as CUDA C++ with inline PTX writes it:
// compiled to PTX by nvcc (-arch=sm_80) for the PTX emulator's corpus test
// (NvccCorpusTest.cpp), which checks C element by element against the host.
//
// One CTA of four warps computes the 64 x 64 C (f32, row-major) from A
// (64 x K, row-major) and B (K x 64, row-major), f16 or bf16 (CORPUS_BF16),
// K a multiple of 32. The accumulators are f32, or with
// CORPUS_F16_ACCUMULATOR (f16 inputs) f16, converted to f32 for C. Tiles of 32
// k-columns of A and 32 k-rows of B are copied into a two-stage shared ring
// with cp.async (16 bytes a thread, one commit group per tile, the next tile in
// flight while one is computed); each warp computes a 32 x 32 quarter of C with
// ldmatrix.x4 (A as stored, B with .trans, since mma.sync takes B by columns)
// and mma.sync.aligned.m16n8k16.row.col.f32.
//
// Broken variants, each a bug a programmer makes:
//   -DCORPUS_NO_TRANS   B's ldmatrix without .trans: a wrong C;
//   -DCORPUS_NO_WAIT    the tile computed without cp.async.wait_group: a
//                       read of shared memory its cp.async has not written.

#include <cstdint>

#include <cuda_fp16.h>

#ifdef CORPUS_BF16
#define CORPUS_KIND "bf16"
#else
#define CORPUS_KIND "f16"
#endif

namespace {

constexpr int kTileK = 32;
// Rows padded by 8 elements (16 bytes) so that ldmatrix's eight row
// addresses fall in different banks.
constexpr int kAStride = kTileK + 8, kBStride = 64 + 8;

__device__ uint32_t sharedAddress(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ void copy16(void *sharedDst, const void *globalSrc) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   sharedAddress(sharedDst)),
               "l"(globalSrc));
}

/// Copies A's 64 x 32 and B's 32 x 64 tile at k-tile KT into stage S:
/// 256 chunks of 16 bytes each, two of A's and two of B's a thread.
__device__ void loadTile(uint16_t (*as)[64][kAStride],
                         uint16_t (*bs)[kTileK][kBStride], const uint16_t *a,
                         const uint16_t *b, int k, int kt, int s) {
  for (int chunk = threadIdx.x; chunk < 256; chunk += 128) {
    int aRow = chunk / 4, aCol = (chunk % 4) * 8;
    copy16(&as[s][aRow][aCol], a + aRow * k + kt * kTileK + aCol);
    int bRow = chunk / 8, bCol = (chunk % 8) * 8;
    copy16(&bs[s][bRow][bCol], b + (kt * kTileK + bRow) * 64 + bCol);
  }
  asm volatile("cp.async.commit_group;\n" ::);
}

} // namespace

extern "C" __global__ void __launch_bounds__(128)
    corpusAmpereMma(const uint16_t *a, const uint16_t *b, float *c, int k) {
  __shared__ __align__(16) uint16_t as[2][64][kAStride];
  __shared__ __align__(16) uint16_t bs[2][kTileK][kBStride];
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int warpRow = (warp / 2) * 32, warpCol = (warp % 2) * 32;
  // acc[mi][ni]: the m16n8 accumulator fragment of rows warpRow + 16 mi,
  // columns warpCol + 8 ni: four f32, or two f16x2 (c0, c1 and c2, c3).
#ifdef CORPUS_F16_ACCUMULATOR
  uint32_t acc[2][4][2] = {};
#else
  float acc[2][4][4] = {};
#endif
  int tiles = k / kTileK;

  loadTile(as, bs, a, b, k, 0, 0);
  for (int kt = 0; kt < tiles; ++kt) {
    int s = kt % 2;
    if (kt + 1 < tiles) {
      loadTile(as, bs, a, b, k, kt + 1, s ^ 1);
#ifndef CORPUS_NO_WAIT
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
#endif
    }
    __syncthreads();

    for (int kk = 0; kk < kTileK; kk += 16) {
      uint32_t af[2][4], bf[4][2];
      for (int mi = 0; mi < 2; ++mi) {
        // Lanes 0-15 address rows 0-15 at k 0, lanes 16-31 at k 8: the four
        // 8 x 8 matrices are a0-a3 of the m16n8k16 A fragment.
        const uint16_t *row =
            &as[s][warpRow + 16 * mi + lane % 16][kk + (lane / 16) * 8];
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
                     "{%0, %1, %2, %3}, [%4];\n"
                     : "=r"(af[mi][0]), "=r"(af[mi][1]), "=r"(af[mi][2]),
                       "=r"(af[mi][3])
                     : "r"(sharedAddress(row)));
      }
      for (int nj = 0; nj < 2; ++nj) {
        // Lanes 0-7 address k rows 0-7, lanes 8-15 rows 8-15, lanes 16-31
        // the same rows 8 columns on: b0, b1 of two n8 tiles, transposed.
        const uint16_t *row =
            &bs[s][kk + lane % 16][warpCol + 16 * nj + (lane / 16) * 8];
#ifdef CORPUS_NO_TRANS
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 "
#else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 "
#endif
                     "{%0, %1, %2, %3}, [%4];\n"
                     : "=r"(bf[2 * nj][0]), "=r"(bf[2 * nj][1]),
                       "=r"(bf[2 * nj + 1][0]), "=r"(bf[2 * nj + 1][1])
                     : "r"(sharedAddress(row)));
      }
      for (int mi = 0; mi < 2; ++mi)
        for (int ni = 0; ni < 4; ++ni)
#ifdef CORPUS_F16_ACCUMULATOR
          asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
                       "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};\n"
                       : "+r"(acc[mi][ni][0]), "+r"(acc[mi][ni][1])
                       : "r"(af[mi][0]), "r"(af[mi][1]), "r"(af[mi][2]),
                         "r"(af[mi][3]), "r"(bf[ni][0]), "r"(bf[ni][1]));
#else
          asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." CORPUS_KIND
                       "." CORPUS_KIND
                       ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                       "{%8, %9}, {%0, %1, %2, %3};\n"
                       : "+f"(acc[mi][ni][0]), "+f"(acc[mi][ni][1]),
                         "+f"(acc[mi][ni][2]), "+f"(acc[mi][ni][3])
                       : "r"(af[mi][0]), "r"(af[mi][1]), "r"(af[mi][2]),
                         "r"(af[mi][3]), "r"(bf[ni][0]), "r"(bf[ni][1]));
#endif
    }
    // Every warp is done with stage s before the next iteration's copies
    // refill it.
    __syncthreads();
  }

  // The accumulator fragment: c0, c1 at row lane / 4, columns 2 (lane % 4)
  // and + 1; c2, c3 eight rows below.
  for (int mi = 0; mi < 2; ++mi)
    for (int ni = 0; ni < 4; ++ni) {
      int row = warpRow + 16 * mi + lane / 4;
      int col = warpCol + 8 * ni + 2 * (lane % 4);
#ifdef CORPUS_F16_ACCUMULATOR
      // The even column in each register's low half.
      float values[4];
      for (int i = 0; i < 4; ++i)
        values[i] = __half2float(__ushort_as_half(
            static_cast<unsigned short>(acc[mi][ni][i / 2] >> (16 * (i % 2)))));
#else
      const float *values = acc[mi][ni];
#endif
      c[row * 64 + col] = values[0];
      c[row * 64 + col + 1] = values[1];
      c[(row + 8) * 64 + col] = values[2];
      c[(row + 8) * 64 + col + 1] = values[3];
    }
}
