//===- FakeCudaDriver.cpp - A CUDA driver without a GPU, for tests --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The fake follows the real driver where the runtime depends on it: calls
// that need a context fail without a current one, cuDeviceGetCount fails
// before cuInit, a launch with more than 48 KiB of dynamic shared memory
// fails unless the kernel's limit was raised, and memory operations fail
// outside a live allocation. So a runtime that skips a step fails its test
// here as it would on a GPU.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"

#include "attn/Runtime/CudaDriver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <type_traits>

using namespace attn::runtime;
using namespace attn::fakecuda;


// The driver's opaque handles, declared in CudaDriver.h's namespace.
struct attn::runtime::CUctx_st {
  int references = 0;
};

struct attn::runtime::CUfunc_st {
  std::string name;
  int paramCount = 0;
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; -1 until set, which
  /// leaves the default of 48 KiB in all.
  int maxDynamicSharedBytes = -1;
};

struct attn::runtime::CUmod_st {
  std::string ptx;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

struct attn::runtime::CUevent_st {
  unsigned flags = 0;
  bool recorded = false;
  double milliseconds = 0;
};

namespace {

constexpr int kMaxDevices = 8;
constexpr int kDefaultSharedBytes = 48 * 1024;

struct State {
  Config config;
  Records records;
  bool initialized = false;
  uint64_t sequence = 0;
  /// What events read: advanced by every launch.
  double clockMs = 0;
  CUctx_st contexts[kMaxDevices];
  std::map<DevicePtr, size_t> allocations;
  size_t allocatedBytes = 0;
  int modules = 0;
  int events = 0;
};

State &state() {
  static State instance;
  return instance;
}

thread_local CUctx_st *currentContext = nullptr;

CUresult requireContext() {
  return currentContext && currentContext->references > 0
             ? cu::kSuccess
             : cu::kErrorInvalidContext;
}

bool validDevice(CUdevice device) {
  return device >= 0 && device < state().config.deviceCount &&
         device < kMaxDevices;
}

/// Whether [POINTER, POINTER + BYTES) lies in one live allocation.
bool inAllocation(DevicePtr pointer, size_t bytes) {
  const std::map<DevicePtr, size_t> &live = state().allocations;
  auto next = live.upper_bound(pointer);
  if (next == live.begin())
    return false;
  auto it = std::prev(next);
  return pointer + bytes <= it->first + it->second;
}

CUresult fillMemory(CUdeviceptr dst, unsigned value, size_t count,
                    size_t elementBytes, CUstream stream) {
  if (CUresult result = requireContext())
    return result;
  size_t bytes = count * elementBytes;
  if (!inAllocation(dst, bytes))
    return cu::kErrorInvalidValue;
  auto *bytesOut = reinterpret_cast<unsigned char *>(dst);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(bytesOut + i * elementBytes, &value, elementBytes);
  state().records.memsets.push_back(
      {dst, bytes, value, stream, state().sequence++});
  return cu::kSuccess;
}

/// The number of .param in the parameter list of `.entry NAME(` in PTX, or
/// -1 when PTX declares no such kernel.
int entryParamCount(const std::string &ptx, const std::string &name) {
  size_t start = ptx.find(".entry " + name + "(");
  if (start == std::string::npos)
    return -1;
  size_t end = ptx.find(')', start);
  int count = 0;
  for (size_t at = ptx.find(".param", start); at < end;
       at = ptx.find(".param", at + 1))
    ++count;
  return count;
}

} // namespace

//===----------------------------------------------------------------------===//
// The control and record API
//===----------------------------------------------------------------------===//

Config &attn::fakecuda::config() { return state().config; }
Records &attn::fakecuda::records() { return state().records; }

void attn::fakecuda::reset() {
  state().config = Config();
  state().records = Records();
  state().clockMs = 0;
}

size_t attn::fakecuda::liveAllocations() { return state().allocations.size(); }
int attn::fakecuda::liveModules() { return state().modules; }
int attn::fakecuda::liveEvents() { return state().events; }

int attn::fakecuda::liveContextReferences() {
  int references = 0;
  for (const CUctx_st &context : state().contexts)
    references += context.references;
  return references;
}

//===----------------------------------------------------------------------===//
// The driver API
//===----------------------------------------------------------------------===//

extern "C" {

CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return cu::kErrorInvalidValue;
  CUresult result = state().config.initResult;
  state().initialized = result == cu::kSuccess;
  return result;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = cu::errorName(error);
  return *name ? cu::kSuccess : cu::kErrorInvalidValue;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  static const std::map<CUresult, const char *> texts = {
      {0, "no error"},
      {1, "invalid argument"},
      {2, "out of memory"},
      {3, "initialization error"},
      {100, "no CUDA-capable device is detected"},
      {101, "invalid device ordinal"},
      {200, "device kernel image is invalid"},
      {201, "invalid device context"},
      {209, "no kernel image is available for execution on the device"},
      {218, "a PTX JIT compilation failed"},
      {221, "PTX JIT compiler library not found"},
      {222, "the provided PTX was compiled with an unsupported toolchain."},
      {400, "invalid resource handle"},
      {500, "named symbol not found"}};
  auto it = texts.find(error);
  *text = it == texts.end() ? nullptr : it->second;
  return it == texts.end() ? cu::kErrorInvalidValue : cu::kSuccess;
}

CUresult cuDeviceGetCount(int *count) {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  *count = state().config.deviceCount;
  return cu::kSuccess;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!validDevice(ordinal))
    return cu::kErrorInvalidDevice;
  *device = ordinal;
  return cu::kSuccess;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  if (!validDevice(device))
    return cu::kErrorInvalidDevice;
  std::snprintf(name, length, "%s", state().config.deviceName.c_str());
  return cu::kSuccess;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  if (!validDevice(device))
    return cu::kErrorInvalidDevice;
  const Config &c = state().config;
  switch (attribute) {
  case cu::kDeviceMultiprocessorCount:
    *value = c.multiprocessors;
    break;
  case cu::kDeviceL2CacheSize:
    *value = c.l2CacheBytes;
    break;
  case cu::kDeviceComputeCapabilityMajor:
    *value = c.computeMajor;
    break;
  case cu::kDeviceComputeCapabilityMinor:
    *value = c.computeMinor;
    break;
  case cu::kDeviceMaxSharedMemoryPerBlockOptin:
    *value = c.sharedMemoryPerBlockOptin;
    break;
  default:
    return cu::kErrorInvalidValue;
  }
  return cu::kSuccess;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  if (!validDevice(device))
    return cu::kErrorInvalidDevice;
  *bytes = state().config.memoryBytes;
  return cu::kSuccess;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (!validDevice(device))
    return cu::kErrorInvalidDevice;
  *context = &state().contexts[device];
  ++(*context)->references;
  return cu::kSuccess;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (!validDevice(device))
    return cu::kErrorInvalidDevice;
  CUctx_st &context = state().contexts[device];
  if (context.references == 0)
    return cu::kErrorInvalidContext;
  --context.references;
  return cu::kSuccess;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = currentContext;
  return cu::kSuccess;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  currentContext = context;
  return cu::kSuccess;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned numOptions, int *options, void **values) {
  if (CUresult result = requireContext())
    return result;
  ++state().records.moduleLoads;
  const Config &c = state().config;
  if (c.jitResult != cu::kSuccess) {
    char *log = nullptr;
    size_t logBytes = 0;
    for (unsigned i = 0; i < numOptions; ++i) {
      if (options[i] == cu::kJitErrorLogBuffer)
        log = static_cast<char *>(values[i]);
      else if (options[i] == cu::kJitErrorLogBufferSizeBytes)
        logBytes = reinterpret_cast<size_t>(values[i]);
    }
    if (log && logBytes)
      std::snprintf(log, logBytes, "%s", c.jitErrorLog.c_str());
    return c.jitResult;
  }
  auto *loaded = new CUmod_st;
  loaded->ptx = static_cast<const char *>(image);
  *module = loaded;
  ++state().modules;
  return cu::kSuccess;
}

CUresult cuModuleUnload(CUmodule module) {
  if (!module)
    return cu::kErrorInvalidHandle;
  delete module;
  --state().modules;
  return cu::kSuccess;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  if (!module)
    return cu::kErrorInvalidHandle;
  std::unique_ptr<CUfunc_st> &slot = module->functions[name];
  if (!slot) {
    int paramCount = entryParamCount(module->ptx, name);
    if (paramCount < 0) {
      module->functions.erase(name);
      return cu::kErrorNotFound;
    }
    slot = std::make_unique<CUfunc_st>();
    slot->name = name;
    slot->paramCount = paramCount;
  }
  *function = slot.get();
  return cu::kSuccess;
}

CUresult cuFuncGetAttribute(int *value, int attribute, CUfunction function) {
  if (!function)
    return cu::kErrorInvalidHandle;
  const Config &c = state().config;
  switch (attribute) {
  case cu::kFuncMaxThreadsPerBlock:
    *value = c.maxThreadsPerBlock;
    break;
  case cu::kFuncSharedSizeBytes:
    *value = c.staticSharedBytes;
    break;
  case cu::kFuncLocalSizeBytes:
    *value = c.localBytesPerThread;
    break;
  case cu::kFuncNumRegs:
    *value = c.registersPerThread;
    break;
  case cu::kFuncMaxDynamicSharedSizeBytes:
    *value = function->maxDynamicSharedBytes >= 0
                 ? function->maxDynamicSharedBytes
                 : kDefaultSharedBytes - c.staticSharedBytes;
    break;
  default:
    return cu::kErrorInvalidValue;
  }
  return cu::kSuccess;
}

CUresult cuFuncSetAttribute(CUfunction function, int attribute, int value) {
  if (!function)
    return cu::kErrorInvalidHandle;
  const Config &c = state().config;
  if (attribute != cu::kFuncMaxDynamicSharedSizeBytes || value < 0 ||
      value + c.staticSharedBytes > c.sharedMemoryPerBlockOptin)
    return cu::kErrorInvalidValue;
  function->maxDynamicSharedBytes = value;
  return cu::kSuccess;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks,
                                                     CUfunction function,
                                                     int blockSize,
                                                     size_t dynamicShared) {
  if (!function)
    return cu::kErrorInvalidHandle;
  if (blockSize < 1)
    return cu::kErrorInvalidValue;
  // The limits of an sm_80 multiprocessor: 32 CTAs, 2048 threads, 64 Ki
  // registers, and the opt-in shared memory plus the 1 KiB the driver
  // reserves per CTA.
  const Config &c = state().config;
  int fit = std::min(32, 2048 / blockSize);
  fit = std::min(fit, 65536 / (c.registersPerThread * blockSize));
  size_t shared = c.staticSharedBytes + dynamicShared;
  if (shared)
    fit = std::min<int>(fit, (c.sharedMemoryPerBlockOptin + 1024) / shared);
  *blocks = fit;
  return cu::kSuccess;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned sharedBytes, CUstream stream,
                        void **params, void **extra) {
  if (CUresult result = requireContext())
    return result;
  if (!function)
    return cu::kErrorInvalidHandle;
  const Config &c = state().config;
  int maxDynamic = function->maxDynamicSharedBytes >= 0
                       ? function->maxDynamicSharedBytes
                       : kDefaultSharedBytes - c.staticSharedBytes;
  unsigned threads = blockX * blockY * blockZ;
  if (!gridX || !gridY || !gridZ || !threads ||
      threads > static_cast<unsigned>(c.maxThreadsPerBlock) ||
      sharedBytes > static_cast<unsigned>(maxDynamic) || extra ||
      (function->paramCount && !params))
    return cu::kErrorInvalidValue;
  LaunchRecord launch{function->name,
                      {gridX, gridY, gridZ},
                      {blockX, blockY, blockZ},
                      sharedBytes,
                      stream,
                      {},
                      state().sequence++};
  for (int i = 0; i < function->paramCount; ++i)
    launch.args.push_back(*static_cast<const CUdeviceptr *>(params[i]));
  state().records.launches.push_back(std::move(launch));
  state().clockMs += c.millisecondsPerLaunch;
  return cu::kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (CUresult result = requireContext())
    return result;
  if (!bytes)
    return cu::kErrorInvalidValue;
  State &s = state();
  if (bytes >
      s.config.memoryBytes - std::min(s.allocatedBytes, s.config.memoryBytes))
    return cu::kErrorOutOfMemory;
  // cudaMalloc's alignment, which the runtime's alignment checks rely on.
  constexpr size_t kAlignment = 256;
  void *memory = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) /
                                                    kAlignment * kAlignment);
  if (!memory)
    return cu::kErrorOutOfMemory;
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  s.allocations[*pointer] = bytes;
  s.allocatedBytes += bytes;
  s.records.allocations.push_back({*pointer, bytes});
  return cu::kSuccess;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  State &s = state();
  auto it = s.allocations.find(pointer);
  if (it == s.allocations.end())
    return cu::kErrorInvalidValue;
  s.allocatedBytes -= it->second;
  s.allocations.erase(it);
  std::free(reinterpret_cast<void *>(pointer));
  s.records.frees.push_back(pointer);
  return cu::kSuccess;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (CUresult result = requireContext())
    return result;
  if (!inAllocation(dst, bytes))
    return cu::kErrorInvalidValue;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return cu::kSuccess;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (CUresult result = requireContext())
    return result;
  if (!inAllocation(src, bytes))
    return cu::kErrorInvalidValue;
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return cu::kSuccess;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              CUstream stream) {
  if (CUresult result = requireContext())
    return result;
  if (!inAllocation(dst, bytes) || !inAllocation(src, bytes))
    return cu::kErrorInvalidValue;
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), bytes);
  return cu::kSuccess;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count,
                         CUstream stream) {
  return fillMemory(dst, value, count, 1, stream);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          CUstream stream) {
  return fillMemory(dst, value, count, 2, stream);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          CUstream stream) {
  return fillMemory(dst, value, count, 4, stream);
}

CUresult cuStreamSynchronize(CUstream stream) { return requireContext(); }

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned flags) {
  if (CUresult result = requireContext())
    return result;
  if (!event)
    return cu::kErrorInvalidHandle;
  state().records.streamWaits.push_back({stream, event, state().sequence++});
  return cu::kSuccess;
}

CUresult cuEventCreate(CUevent *event, unsigned flags) {
  if (CUresult result = requireContext())
    return result;
  *event = new CUevent_st;
  (*event)->flags = flags;
  ++state().events;
  return cu::kSuccess;
}

CUresult cuEventDestroy_v2(CUevent event) {
  if (!event)
    return cu::kErrorInvalidHandle;
  delete event;
  --state().events;
  return cu::kSuccess;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  if (!event)
    return cu::kErrorInvalidHandle;
  event->recorded = true;
  event->milliseconds = state().clockMs;
  state().records.eventRecords.push_back({event, stream, state().sequence++});
  return cu::kSuccess;
}

CUresult cuEventSynchronize(CUevent event) {
  ++state().records.eventSynchronizations;
  return event ? cu::kSuccess : cu::kErrorInvalidHandle;
}

CUresult cuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  // As the driver: both events recorded, neither without timing.
  if (!start || !end || !start->recorded || !end->recorded ||
      (start->flags | end->flags) & cu::kEventDisableTiming)
    return cu::kErrorInvalidHandle;
  *milliseconds = static_cast<float>(end->milliseconds - start->milliseconds);
  return cu::kSuccess;
}

CUresult cuTensorMapEncodeTiled(void *tensorMap, int dataType, uint32_t rank,
                                void *globalAddress, const uint64_t *globalDim,
                                const uint64_t *globalStrides,
                                const uint32_t *boxDim,
                                const uint32_t *elementStrides, int interleave,
                                int swizzle, int l2Promotion, int oobFill) {
  if (!tensorMap || rank < 1 || rank > 5 ||
      reinterpret_cast<uintptr_t>(tensorMap) % 64 != 0)
    return cu::kErrorInvalidValue;
  if (state().config.tensorMapResult != cu::kSuccess)
    return state().config.tensorMapResult;
  TensorMapRecord record{dataType,
                         rank,
                         reinterpret_cast<DevicePtr>(globalAddress),
                         {globalDim, globalDim + rank},
                         {globalStrides, globalStrides + rank - 1},
                         {boxDim, boxDim + rank},
                         {elementStrides, elementStrides + rank},
                         interleave,
                         swizzle,
                         l2Promotion,
                         oobFill};
  DevicePtr mark = kTensorMapMark + state().records.tensorMaps.size();
  std::memset(tensorMap, 0, 128);
  std::memcpy(tensorMap, &mark, sizeof(mark));
  state().records.tensorMaps.push_back(std::move(record));
  return cu::kSuccess;
}

} // extern "C"

// Each entry point has the type of the CudaDriver member that the runtime
// calls it through.
ATTN_CHECK_DRIVER_ENTRIES();
