//===- FakeCudaDriver.h - A CUDA driver without a GPU, for tests -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libAttnFakeCudaDriver exports the entry points of the CUDA driver that
// libattnrt resolves (CudaDriver.cpp), so that the runtime's logic can be
// tested where there is no GPU: the tests point ATTNRT_LIBCUDA at it. Device
// memory is host memory (a CUdeviceptr is the host address), kernels run
// nothing, and every call the runtime makes is recorded.
//
// This header is the other side: the tests link the same library and call
// these functions directly to configure the fake device and read what the
// runtime did. dlopen of the same file returns the already loaded library,
// so both sides share one state. Not thread-safe: the tests call the driver
// from one thread.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_RUNTIME_FAKECUDADRIVER_H
#define ATTN_UNITTESTS_RUNTIME_FAKECUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::fakecuda {

using DevicePtr = unsigned long long;

/// What the fake device reports and how the fake driver behaves. Every
/// device of the fake has these properties.
struct Config {
  /// What cuInit returns. The runtime calls it once per process.
  int initResult = 0;
  int deviceCount = 1;
  std::string deviceName = "Fake GPU";
  int computeMajor = 8;
  int computeMinor = 0;
  int multiprocessors = 108;
  /// An A100's 163 KiB.
  int sharedMemoryPerBlockOptin = 166912;
  int l2CacheBytes = 40 << 20;
  /// The device memory: cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY once
  /// the live allocations would exceed it. Also what cuDeviceTotalMem says.
  size_t memoryBytes = size_t(80) << 30;
  /// When not CUDA_SUCCESS, cuModuleLoadDataEx fails with it and writes
  /// JITERRORLOG into the CU_JIT_ERROR_LOG_BUFFER option's buffer.
  int jitResult = 0;
  std::string jitErrorLog;
  /// The attributes of every kernel (cuFuncGetAttribute).
  int registersPerThread = 128;
  int staticSharedBytes = 0;
  int localBytesPerThread = 0;
  int maxThreadsPerBlock = 1024;
  /// What cuTensorMapEncodeTiled returns when not CUDA_SUCCESS (as the
  /// driver does for arguments it refuses).
  int tensorMapResult = 0;
  /// How far the clock that events read advances per launch.
  float millisecondsPerLaunch = 0.5f;
};

/// Every record carries a number from one counter shared by all kinds, so
/// that tests can check the order of operations across them.
struct LaunchRecord {
  std::string function;
  unsigned grid[3];
  unsigned block[3];
  unsigned sharedBytes;
  void *stream;
  /// The kernel arguments, read as CUdeviceptr values; as many as the
  /// kernel's .entry declares .param.
  std::vector<DevicePtr> args;
  uint64_t sequence;
};

struct MemsetRecord {
  DevicePtr pointer;
  size_t bytes;
  unsigned value;
  void *stream;
  uint64_t sequence;
};

struct StreamWaitRecord {
  void *stream;
  void *event;
  uint64_t sequence;
};

struct EventRecordRecord {
  void *event;
  void *stream;
  uint64_t sequence;
};

struct AllocationRecord {
  DevicePtr pointer;
  size_t bytes;
};

/// A call of cuTensorMapEncodeTiled. The fake writes kTensorMapMark + the
/// record's index into the map's first 8 bytes, so a launch's argument
/// shows which map it passed.
constexpr DevicePtr kTensorMapMark = 0x7e45000000000000ull;
struct TensorMapRecord {
  int dataType;
  uint32_t rank;
  DevicePtr address;
  std::vector<uint64_t> dims, strides;
  std::vector<uint32_t> box, elementStrides;
  int interleave, swizzle, l2Promotion, oobFill;
};

struct Records {
  std::vector<LaunchRecord> launches;
  std::vector<TensorMapRecord> tensorMaps;
  std::vector<MemsetRecord> memsets;
  std::vector<StreamWaitRecord> streamWaits;
  std::vector<EventRecordRecord> eventRecords;
  std::vector<AllocationRecord> allocations;
  std::vector<DevicePtr> frees;
  /// Calls of cuEventSynchronize.
  int eventSynchronizations = 0;
  /// Calls of cuModuleLoadDataEx, failed ones included.
  int moduleLoads = 0;
};

/// The configuration the next driver calls use; change it freely.
Config &config();
Records &records();
/// Restores the default configuration and clears the records. Live
/// allocations, modules, events and contexts are left alone: they belong to
/// whoever created them.
void reset();

/// What is still allocated or retained, to find leaks.
size_t liveAllocations();
int liveModules();
int liveEvents();
int liveContextReferences();

} // namespace attn::fakecuda

#endif // ATTN_UNITTESTS_RUNTIME_FAKECUDADRIVER_H
