// Reductions, atomics, ballots and a warp scan, as CUDA C++ writes them:
// compiled to PTX by nvcc (-arch=sm_80) for the PTX emulator's corpus test
// (NvccCorpusTest.cpp), which checks every output against the host.
//
// Each block of 256 threads reads 256 floats and 256 ints and writes:
//   blockSums[blockIdx.x]  the block's float sum: a warp reduction with
//                          __shfl_xor_sync, the warps' sums through shared
//                          memory, warp 0 reducing them with __shfl_down_sync;
//   *total                 atomicAdd of every block's sum (float);
//   *intTotal              atomicAdd of every thread's int;
//   positives[warp]        __popc(__ballot_sync(...)) of the warp's ints > 0;
//   scan[i]                the inclusive prefix sum of the ints within each
//                          warp (__shfl_up_sync, Hillis-Steele).
//
// -DCORPUS_MISSING_SYNC drops the __syncthreads() between the warps writing
// their sums to shared memory and warp 0 reading them, which the emulator
// must report: a read of shared memory nothing wrote yet when warp 0 runs
// first, a race otherwise.

extern "C" __global__ void __launch_bounds__(256)
    corpusReduce(const float *in, const int *ints, float *blockSums,
                 float *total, int *intTotal, unsigned *positives, int *scan) {
  __shared__ float warpSums[8];
  const unsigned full = 0xffffffffu;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  float sum = in[i];
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(full, sum, offset);
  if (lane == 0)
    warpSums[warp] = sum;
#ifndef CORPUS_MISSING_SYNC
  __syncthreads();
#endif
  if (warp == 0) {
    float blockSum = lane < blockDim.x / 32 ? warpSums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2)
      blockSum += __shfl_down_sync(full, blockSum, offset);
    if (lane == 0) {
      blockSums[blockIdx.x] = blockSum;
      atomicAdd(total, blockSum);
    }
  }

  int value = ints[i];
  atomicAdd(intTotal, value);
  unsigned ballot = __ballot_sync(full, value > 0);
  if (lane == 0)
    positives[i / 32] = __popc(ballot);

  int prefix = value;
  for (int offset = 1; offset < 32; offset *= 2) {
    int before = __shfl_up_sync(full, prefix, offset);
    if (lane >= offset)
      prefix += before;
  }
  scan[i] = prefix;
}
