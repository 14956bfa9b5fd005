//===- launch_overhead.cpp - libattnrt's cost per launch ------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What attnrtLaunch costs the host over a bare cuLaunchKernel of the same
// kernel with the same arguments: each round enqueues BATCH launches and
// reads the wall clock around them (not around the synchronisation that
// follows), so the time per call is the host's cost of enqueueing; BATCH is
// small enough that the launch queue never fills. Prints the median over the
// rounds of the time per call, for both, and their difference.
//
// Usage: attnrt-launch-overhead BUNDLE [--rounds=N] [--batch=N]
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/attnrt.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace attn::runtime;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "attnrt-launch-overhead: error: %s\n", message.c_str());
  return 1;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace

int main(int argc, char **argv) {
  std::string bundlePath;
  int rounds = 200, batch = 100;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--rounds=", 0) == 0)
      rounds = std::atoi(arg.c_str() + 9);
    else if (arg.rfind("--batch=", 0) == 0)
      batch = std::atoi(arg.c_str() + 8);
    else if (arg[0] != '-' && bundlePath.empty())
      bundlePath = arg;
    else
      return fail("usage: attnrt-launch-overhead BUNDLE [--rounds=N] "
                  "[--batch=N]");
  }
  if (bundlePath.empty() || rounds < 1 || batch < 1 || batch > 1000)
    return fail("usage: attnrt-launch-overhead BUNDLE [--rounds=N] "
                "[--batch=N <= 1000]");

  attnrt::Context context;
  attnrt::Bundle bundle;
  attnrtKernel kernel = nullptr;
  if (attnrtContextCreate(0, context.out()) ||
      attnrtBundleLoad(context.get(), bundlePath.c_str(), bundle.out()) ||
      attnrtBundleGetKernel(bundle.get(), 0, &kernel))
    return fail(attnrtLastErrorMessage());
  std::string error;
  bool noDevice = false;
  const CudaDriver *driver = openCudaDriver(error, noDevice);

  // Tensors as the manifest declares them (values do not matter here).
  int32_t count = attnrtKernelParamCount(kernel);
  std::vector<attnrt::DeviceBuffer> buffers(count);
  std::vector<attnrtTensor> tensors(count);
  for (int32_t i = 0; i < count; ++i) {
    attnrtParamInfo param;
    attnrtKernelGetParam(kernel, i, &param);
    size_t bytes = attnrtDTypeSize(param.dtype);
    for (int32_t d = 0; d < param.rank; ++d)
      bytes *= param.sizes[d];
    attnrt::Status status = buffers[i].allocate(context.get(), bytes);
    if (!status.ok())
      return fail(status.message);
    tensors[i] = attnrt::contiguousTensor(buffers[i].data(), param.dtype,
                                          param.sizes, param.rank);
  }
  uint32_t grid[3];
  if (attnrtKernelGetGrid(kernel, tensors.data(), count, grid))
    return fail(attnrtLastErrorMessage());
  attnrtKernelResources resources;
  attnrtKernelGetResources(kernel, &resources);
  std::vector<CUdeviceptr> pointers(count);
  std::vector<void *> params(count);
  for (int32_t i = 0; i < count; ++i) {
    pointers[i] = tensors[i].data;
    params[i] = &pointers[i];
  }
  auto function = static_cast<CUfunction>(attnrtKernelGetFunction(kernel));

  auto viaRuntime = [&]() -> bool {
    return attnrtLaunch(kernel, tensors.data(), count, nullptr) ==
           ATTNRT_SUCCESS;
  };
  auto bare = [&]() -> bool {
    return driver->cuLaunchKernel(
               function, grid[0], grid[1], grid[2], resources.threadsPerBlock,
               1, 1, static_cast<unsigned>(resources.dynamicSharedBytes),
               nullptr, params.data(), nullptr) == cu::kSuccess;
  };
  // Microseconds per call, one value per round.
  auto measure = [&](auto launch, std::vector<double> &perCall) -> bool {
    for (int round = 0; round < rounds; ++round) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < batch; ++i)
        if (!launch())
          return false;
      auto end = std::chrono::steady_clock::now();
      if (attnrtSynchronize(context.get(), nullptr))
        return false;
      perCall.push_back(
          std::chrono::duration<double, std::micro>(end - start).count() /
          batch);
    }
    return true;
  };
  std::vector<double> warm, runtimeTimes, bareTimes;
  // Alternate the two so that drift in clocks or load affects both.
  if (!measure(viaRuntime, warm) || !measure(bare, warm) ||
      !measure(bare, bareTimes) || !measure(viaRuntime, runtimeTimes))
    return fail(std::string("launch failed: ") + attnrtLastErrorMessage());
  double bareUs = median(bareTimes), runtimeUs = median(runtimeTimes);
  std::printf("kernel %s, grid %ux%ux%u, %d rounds of %d launches\n",
              attnrtKernelName(kernel), grid[0], grid[1], grid[2], rounds,
              batch);
  std::printf("  cuLaunchKernel:  %.3f us per call (median)\n", bareUs);
  std::printf("  attnrtLaunch:    %.3f us per call (median)\n", runtimeUs);
  std::printf("  overhead:        %.3f us per call\n", runtimeUs - bareUs);
  return 0;
}
