//===- EmulatedDriver.cpp - The CUDA driver API over the PTX emulator -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libattnemu exports the driver entry points libattnrt opens
// (lib/Runtime/CudaDriver.cpp), so that every bundle runs without a GPU:
// ATTNRT_LIBCUDA=emulator (or the library's path) selects it. The device is
// an H100 as the driver reports one; each kernel's registers are those
// ptxas allocates for it (ptxas runs when a module is loaded, as the
// driver's JIT would), so occupancy and persistent-launch checks behave as
// on hardware. Launches run synchronously; a fault (out-of-bounds access,
// race, deadlock...) fails the launch with CUDA_ERROR_LAUNCH_FAILED or
// CUDA_ERROR_ILLEGAL_ADDRESS, and its description is printed to stderr and
// returned by cuGetErrorString. ATTN_EMULATOR_PROFILE=FILE appends each
// launch's instruction profile to FILE.
//
//===----------------------------------------------------------------------===//

#include "attn/PtxEmulator/Device.h"
#include "attn/PtxEmulator/TensorMap.h"
#include "attn/Runtime/CudaDriver.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace attn::runtime;
using namespace attn::ptxemu;


struct attn::runtime::CUctx_st {
  int references = 0;
};

struct attn::runtime::CUfunc_st {
  const Kernel *kernel = nullptr;
  int registers = 0;
  int maxDynamicSharedBytes = 48 * 1024;
};

struct attn::runtime::CUmod_st {
  std::unique_ptr<Module> module;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
};

struct attn::runtime::CUevent_st {
  bool recorded = false;
  std::chrono::steady_clock::time_point time;
};

namespace {

struct State {
  Device device;
  bool initialized = false;
  CUctx_st context;
  /// The description of the last failure, for cuGetErrorString.
  std::string lastError;
  CUresult lastErrorCode = 0;
};

State &state() {
  static State instance;
  return instance;
}

thread_local CUctx_st *currentContext = nullptr;

CUresult requireContext() {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  return currentContext && currentContext->references > 0
             ? cu::kSuccess
             : cu::kErrorInvalidContext;
}

CUresult failWith(CUresult code, const std::string &message) {
  state().lastError = message;
  state().lastErrorCode = code;
  return code;
}

/// ptxas as the emulator finds it: ATTN_EMULATOR_PTXAS, the toolkit's the
/// project was built with, or the one on PATH.
std::string ptxasPath() {
  if (const char *path = std::getenv("ATTN_EMULATOR_PTXAS"); path && *path)
    return path;
#ifdef ATTN_PTXAS_PATH
  if (access(ATTN_PTXAS_PATH, X_OK) == 0)
    return ATTN_PTXAS_PATH;
#endif
  return "ptxas";
}

/// Runs ptxas for the device's architecture and reads the registers of
/// every kernel from its -v report. False with LOG on failure.
bool allocateRegisters(const std::string &ptx, const std::string &target,
                       std::map<std::string, int> &registers,
                       std::string &log) {
  char directory[] = "/tmp/attn-emulator-XXXXXX";
  if (!mkdtemp(directory)) {
    log = "cannot make a temporary directory for ptxas";
    return false;
  }
  std::string input = std::string(directory) + "/module.ptx";
  std::string report = std::string(directory) + "/report.txt";
  {
    std::ofstream out(input, std::ios::binary);
    out << ptx;
  }
  std::string command = "'" + ptxasPath() + "' -arch=" + target +
                        " -v -o /dev/null '" + input + "' >'" + report +
                        "' 2>&1";
  int status = std::system(command.c_str());
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(input.c_str());
  std::remove(report.c_str());
  rmdir(directory);
  if (status != 0) {
    log = "ptxas (" + ptxasPath() + ") failed:\n" + text.str();
    return false;
  }
  std::string line, current;
  while (std::getline(text, line)) {
    size_t at = line.find("Compiling entry function '");
    if (at != std::string::npos) {
      size_t start = at + std::strlen("Compiling entry function '");
      current = line.substr(start, line.find('\'', start) - start);
      continue;
    }
    at = line.find("Used ");
    if (at != std::string::npos && !current.empty())
      registers[current] = std::atoi(line.c_str() + at + 5);
  }
  return true;
}

/// Where ptxas's register counts are kept between processes: one file per
/// ptxas, architecture and module text (named by a hash of the three,
/// holding the text's length to tell collisions), in ATTN_EMULATOR_CACHE or
/// /tmp.
std::string registerCachePath(const std::string &ptx, const std::string &target) {
  uint64_t hash = 14695981039346656037ull; // FNV-1a
  for (char c : ptxasPath() + '\n' + target + '\n' + ptx)
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  const char *directory = std::getenv("ATTN_EMULATOR_CACHE");
  std::string root = directory && *directory
                         ? directory
                         : "/tmp/attn-emulator-" + std::to_string(getuid());
  char name[32];
  std::snprintf(name, sizeof name, "/%016llx", (unsigned long long)hash);
  return root + name;
}

/// The registers ptxas allocates for every kernel of PTX, from the cache
/// or ptxas (whose answer is then cached).
bool kernelRegisters(const std::string &ptx, const std::string &target,
                     std::map<std::string, int> &registers, std::string &log) {
  std::string path = registerCachePath(ptx, target);
  if (std::ifstream in(path); in) {
    size_t length = 0;
    std::string name;
    int count = 0;
    if (in >> length && length == ptx.size()) {
      while (in >> name >> count)
        registers[name] = count;
      return true;
    }
  }
  if (!allocateRegisters(ptx, target, registers, log))
    return false;
  std::string directory = path.substr(0, path.rfind('/'));
  mkdir(directory.c_str(), 0700);
  // Written aside and renamed, so that a concurrent reader sees all or none.
  std::string temporary = path + "." + std::to_string(getpid());
  {
    std::ofstream out(temporary);
    out << ptx.size() << "\n";
    for (const auto &[name, count] : registers)
      out << name << " " << count << "\n";
  }
  std::rename(temporary.c_str(), path.c_str());
  return true;
}

void copyLog(const std::string &log, unsigned numOptions, int *options,
             void **values, int bufferOption, int sizeOption) {
  char *buffer = nullptr;
  size_t size = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == bufferOption)
      buffer = static_cast<char *>(values[i]);
    else if (options[i] == sizeOption)
      size = reinterpret_cast<size_t>(values[i]);
  }
  if (buffer && size) {
    size_t n = std::min(size - 1, log.size());
    std::memcpy(buffer, log.data(), n);
    buffer[n] = '\0';
  }
}

void appendProfile(const Kernel &kernel, const LaunchShape &shape,
                   const Profile &profile, double seconds) {
  const char *path = std::getenv("ATTN_EMULATOR_PROFILE");
  if (!path || !*path)
    return;
  std::ofstream out(path, std::ios::app);
  out << "{\"kernel\": \"" << kernel.name << "\", \"grid\": [" << shape.grid[0]
      << ", " << shape.grid[1] << ", " << shape.grid[2] << "], \"block\": ["
      << shape.block[0] << ", " << shape.block[1] << ", " << shape.block[2]
      << "], \"seconds\": " << seconds
      << ", \"thread_instructions\": " << profile.threadInstructions
      << ", \"warp_instructions\": {";
  for (int c = 0; c < Profile::kClasses; ++c)
    out << (c ? ", " : "") << "\"" << Profile::className(Profile::Class(c))
        << "\": " << profile.warpInstructions[c];
  out << "}, \"shared_requests\": " << profile.sharedRequests
      << ", \"shared_wavefronts\": " << profile.sharedWavefronts
      << ", \"shared_ideal_wavefronts\": " << profile.sharedIdealWavefronts
      << ", \"global_requests\": " << profile.globalRequests
      << ", \"global_sectors\": " << profile.globalSectors
      << ", \"tensor_loads\": " << profile.tensorLoads
      << ", \"tensor_load_bytes\": " << profile.tensorLoadBytes
      << ", \"tensor_stores\": " << profile.tensorStores
      << ", \"tensor_store_bytes\": " << profile.tensorStoreBytes
      << ", \"wgmma_shared_bytes\": " << profile.wgmmaSharedBytes << "}\n";
}

} // namespace

extern "C" {

/// Tells libattnrt's callers that kernels run on the host (CudaDriver's
/// `emulated`): the kernel check computes its reference there.
__attribute__((visibility("default"))) extern const char attnEmulatedDriver[] =
    "attn-mlir PTX emulator";

CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return cu::kErrorInvalidValue;
  state().initialized = true;
  return cu::kSuccess;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  *name = cu::errorName(error);
  return *name ? cu::kSuccess : cu::kErrorInvalidValue;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  if (error == state().lastErrorCode && !state().lastError.empty()) {
    *text = state().lastError.c_str();
    return cu::kSuccess;
  }
  const char *name = nullptr;
  if (cuGetErrorName(error, &name) != cu::kSuccess)
    return cu::kErrorInvalidValue;
  *text = "PTX emulator";
  return cu::kSuccess;
}

CUresult cuDeviceGetCount(int *count) {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  *count = 1;
  return cu::kSuccess;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  if (ordinal != 0)
    return cu::kErrorInvalidDevice;
  *device = 0;
  return cu::kSuccess;
}

CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  if (device != 0 || length <= 0)
    return cu::kErrorInvalidDevice;
  std::snprintf(name, length, "%s", state().device.chip().name.c_str());
  return cu::kSuccess;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  if (device != 0)
    return cu::kErrorInvalidDevice;
  const Chip &chip = state().device.chip();
  switch (attribute) {
  case 1: *value = 1024; break;                               // max threads/block
  case 8: *value = 48 * 1024; break;                          // shared/block
  case 10: *value = 32; break;                                // warp size
  case 12: *value = chip.registersPerSm; break;               // regs/block
  case cu::kDeviceMultiprocessorCount: *value = chip.multiprocessors; break;
  case cu::kDeviceL2CacheSize: *value = chip.l2CacheBytes; break;
  case 39: *value = chip.maxThreadsPerSm; break;
  case cu::kDeviceComputeCapabilityMajor: *value = chip.computeMajor; break;
  case cu::kDeviceComputeCapabilityMinor: *value = chip.computeMinor; break;
  case 81: *value = chip.sharedBytesPerSm; break;
  case 82: *value = chip.registersPerSm; break;
  case cu::kDeviceMaxSharedMemoryPerBlockOptin:
    *value = chip.sharedBytesPerBlockOptin;
    break;
  case 106: *value = chip.maxCtasPerSm; break;
  default:
    return cu::kErrorInvalidValue;
  }
  return cu::kSuccess;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  if (device != 0)
    return cu::kErrorInvalidDevice;
  *bytes = state().device.chip().memoryBytes;
  return cu::kSuccess;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  if (device != 0)
    return cu::kErrorInvalidDevice;
  ++state().context.references;
  *context = &state().context;
  return cu::kSuccess;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (device != 0 || state().context.references == 0)
    return cu::kErrorInvalidDevice;
  --state().context.references;
  return cu::kSuccess;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  *context = currentContext;
  return cu::kSuccess;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  if (!state().initialized)
    return cu::kErrorNotInitialized;
  currentContext = context;
  return cu::kSuccess;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned numOptions, int *options, void **values) {
  if (CUresult result = requireContext())
    return result;
  std::string ptx(static_cast<const char *>(image));
  std::string error;
  auto loaded = std::make_unique<CUmod_st>();
  loaded->module = parseModule(ptx, error);
  auto logError = [&](CUresult code, const std::string &log) {
    copyLog(log, numOptions, options, values, cu::kJitErrorLogBuffer,
            cu::kJitErrorLogBufferSizeBytes);
    return failWith(code, log);
  };
  if (!loaded->module)
    return logError(cu::kErrorInvalidPtx, "PTX emulator: " + error);
  const Chip &chip = state().device.chip();
  std::string target = loaded->module->target;
  int capability = chip.computeMajor * 10 + chip.computeMinor;
  // sm_XY: a number past any architecture reads as one no chip runs.
  long wanted =
      target.size() > 3 ? std::strtol(target.c_str() + 3, nullptr, 10) : 0;
  bool archSpecific = !target.empty() && target.back() == 'a';
  if (wanted > capability || (archSpecific && wanted != capability))
    return logError(cu::kErrorNoBinaryForGpu,
                    "PTX emulator: the module's target " + target +
                        " cannot run on sm_" + std::to_string(capability));
  std::string arch = "sm_" + std::to_string(capability) +
                     (archSpecific ? "a" : "");
  std::map<std::string, int> registers;
  std::string log;
  if (!kernelRegisters(ptx, arch, registers, log))
    return logError(log.find("failed:") != std::string::npos
                        ? cu::kErrorInvalidPtx
                        : cu::kErrorJitCompilerNotFound,
                    log);
  for (const auto &variable : loaded->module->globals)
    state().device.addVariable(variable->bytes.data(), variable->bytes.size());
  for (const auto &kernel : loaded->module->kernels) {
    auto function = std::make_unique<CUfunc_st>();
    function->kernel = kernel.get();
    function->registers = registers.count(kernel->name)
                              ? registers[kernel->name]
                              : static_cast<int>(kernel->maxnreg);
    loaded->functions[kernel->name] = std::move(function);
  }
  *module = loaded.release();
  return cu::kSuccess;
}

CUresult cuModuleUnload(CUmodule module) {
  if (!module)
    return cu::kErrorInvalidHandle;
  for (const auto &variable : module->module->globals)
    state().device.removeVariable(variable->bytes.data());
  delete module;
  return cu::kSuccess;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  if (!module)
    return cu::kErrorInvalidHandle;
  auto it = module->functions.find(name);
  if (it == module->functions.end())
    return cu::kErrorNotFound;
  *function = it->second.get();
  return cu::kSuccess;
}

CUresult cuFuncGetAttribute(int *value, int attribute, CUfunction function) {
  if (!function)
    return cu::kErrorInvalidHandle;
  const Kernel &kernel = *function->kernel;
  switch (attribute) {
  case cu::kFuncMaxThreadsPerBlock: {
    int limit = 1024;
    if (kernel.maxntid[0])
      limit = kernel.maxntid[0] * kernel.maxntid[1] * kernel.maxntid[2];
    if (kernel.reqntid[0])
      limit = kernel.reqntid[0] * kernel.reqntid[1] * kernel.reqntid[2];
    if (function->registers > 0)
      limit = std::min(limit, state().device.chip().registersPerSm /
                                  ((function->registers * 32 + 255) / 256 *
                                   256) * 32);
    *value = limit;
    return cu::kSuccess;
  }
  case cu::kFuncSharedSizeBytes:
    *value = static_cast<int>(kernel.staticSharedBytes);
    return cu::kSuccess;
  case cu::kFuncLocalSizeBytes:
    *value = static_cast<int>(kernel.localBytes);
    return cu::kSuccess;
  case cu::kFuncNumRegs:
    *value = function->registers;
    return cu::kSuccess;
  case cu::kFuncMaxDynamicSharedSizeBytes:
    *value = function->maxDynamicSharedBytes;
    return cu::kSuccess;
  default:
    return cu::kErrorInvalidValue;
  }
}

CUresult cuFuncSetAttribute(CUfunction function, int attribute, int value) {
  if (!function)
    return cu::kErrorInvalidHandle;
  if (attribute != cu::kFuncMaxDynamicSharedSizeBytes)
    return cu::kErrorInvalidValue;
  if (value < 0 ||
      value + function->kernel->staticSharedBytes >
          static_cast<uint32_t>(state().device.chip().sharedBytesPerBlockOptin))
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
  *blocks = state().device.occupancy(
      blockSize, function->registers,
      function->kernel->dynamicSharedOffset + dynamicShared);
  return cu::kSuccess;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned sharedBytes, CUstream stream,
                        void **params, void **extra) {
  (void)stream;
  if (CUresult result = requireContext())
    return result;
  if (!function)
    return cu::kErrorInvalidHandle;
  if (extra)
    return cu::kErrorInvalidValue;
  const Kernel &kernel = *function->kernel;
  if (static_cast<int>(sharedBytes) > function->maxDynamicSharedBytes)
    return failWith(cu::kErrorInvalidValue,
                    "dynamic shared memory beyond the kernel's limit");
  unsigned threads = blockX * blockY * blockZ;
  int maxThreads = 0;
  cuFuncGetAttribute(&maxThreads, cu::kFuncMaxThreadsPerBlock, function);
  if (threads == 0 || gridX * gridY * gridZ == 0 ||
      threads > static_cast<unsigned>(maxThreads))
    return failWith(threads > static_cast<unsigned>(maxThreads)
                        ? cu::kErrorLaunchOutOfResources
                        : cu::kErrorInvalidValue,
                    "launch shape");
  if (kernel.parameterBytes > 0 && !params)
    return cu::kErrorInvalidValue;
  std::vector<uint8_t> buffer(kernel.parameterBytes, 0);
  for (size_t i = 0; i < kernel.parameters.size(); ++i) {
    const Parameter &p = kernel.parameters[i];
    std::memcpy(buffer.data() + p.offset, params[i], p.bytes);
  }
  LaunchShape shape;
  shape.grid = {gridX, gridY, gridZ};
  shape.block = {blockX, blockY, blockZ};
  shape.dynamicSharedBytes = sharedBytes;
  int perSm = state().device.occupancy(
      static_cast<int>(threads), function->registers,
      kernel.dynamicSharedOffset + sharedBytes);
  if (perSm == 0)
    return failWith(cu::kErrorLaunchOutOfResources,
                    "the block does not fit one SM");
  shape.residentCtas =
      static_cast<uint32_t>(perSm * state().device.chip().multiprocessors);
  const char *profilePath = std::getenv("ATTN_EMULATOR_PROFILE");
  state().device.setProfileTraffic(profilePath && *profilePath);
  auto start = std::chrono::steady_clock::now();
  LaunchResult result = state().device.launch(kernel, shape, buffer);
  appendProfile(kernel, shape, result.profile,
                std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              start)
                    .count());
  if (!result.ok) {
    std::fprintf(stderr, "========= PTX emulator: %s\n", result.error.c_str());
    bool address = result.error.find("out-of-bounds") != std::string::npos ||
                   result.error.find("misaligned") != std::string::npos;
    return failWith(address ? cu::kErrorIllegalAddress : cu::kErrorLaunchFailed,
                    result.error);
  }
  return cu::kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  if (CUresult result = requireContext())
    return result;
  if (bytes == 0)
    return cu::kErrorInvalidValue;
  void *allocated = state().device.allocate(bytes);
  if (!allocated)
    return cu::kErrorOutOfMemory;
  *pointer = reinterpret_cast<CUdeviceptr>(allocated);
  return cu::kSuccess;
}

CUresult cuMemFree_v2(CUdeviceptr pointer) {
  if (CUresult result = requireContext())
    return result;
  return state().device.release(reinterpret_cast<void *>(pointer))
             ? cu::kSuccess
             : cu::kErrorInvalidValue;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  if (CUresult result = requireContext())
    return result;
  if (!state().device.contains(dst, bytes))
    return cu::kErrorInvalidValue;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return cu::kSuccess;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  if (CUresult result = requireContext())
    return result;
  if (!state().device.contains(src, bytes))
    return cu::kErrorInvalidValue;
  std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  return cu::kSuccess;
}

CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              CUstream) {
  if (CUresult result = requireContext())
    return result;
  if (!state().device.contains(dst, bytes) ||
      !state().device.contains(src, bytes))
    return cu::kErrorInvalidValue;
  std::memmove(reinterpret_cast<void *>(dst),
               reinterpret_cast<const void *>(src), bytes);
  return cu::kSuccess;
}

static CUresult fill(CUdeviceptr dst, unsigned value, size_t count,
                     size_t elementBytes) {
  if (CUresult result = requireContext())
    return result;
  if (!state().device.contains(dst, count * elementBytes))
    return cu::kErrorInvalidValue;
  auto *out = reinterpret_cast<unsigned char *>(dst);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(out + i * elementBytes, &value, elementBytes);
  return cu::kSuccess;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t count,
                         CUstream) {
  return fill(dst, value, count, 1);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          CUstream) {
  return fill(dst, value, count, 2);
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          CUstream) {
  return fill(dst, value, count, 4);
}

CUresult cuStreamSynchronize(CUstream) { return requireContext(); }

CUresult cuStreamWaitEvent(CUstream, CUevent event, unsigned) {
  return event ? requireContext() : cu::kErrorInvalidHandle;
}

CUresult cuEventCreate(CUevent *event, unsigned) {
  if (CUresult result = requireContext())
    return result;
  *event = new CUevent_st;
  return cu::kSuccess;
}

CUresult cuEventDestroy_v2(CUevent event) {
  if (!event)
    return cu::kErrorInvalidHandle;
  delete event;
  return cu::kSuccess;
}

CUresult cuEventRecord(CUevent event, CUstream) {
  if (!event)
    return cu::kErrorInvalidHandle;
  event->recorded = true;
  event->time = std::chrono::steady_clock::now();
  return cu::kSuccess;
}

CUresult cuEventSynchronize(CUevent event) {
  return event ? cu::kSuccess : cu::kErrorInvalidHandle;
}

CUresult cuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  if (!start || !end || !start->recorded || !end->recorded)
    return cu::kErrorInvalidHandle;
  *milliseconds = std::chrono::duration<float, std::milli>(end->time -
                                                           start->time)
                      .count();
  return cu::kSuccess;
}

/// cuTensorMapEncodeTiled, with the driver API's argument types (the enums
/// are ints): the fields, checked as the driver checks them, in the map for
/// the emulator's tensor copies to read.
CUresult cuTensorMapEncodeTiled(void *tensorMap, int dataType, uint32_t rank,
                                void *globalAddress, const uint64_t *globalDim,
                                const uint64_t *globalStrides,
                                const uint32_t *boxDim,
                                const uint32_t *elementStrides, int interleave,
                                int swizzle, int l2Promotion, int oobFill) {
  if (!globalDim || !boxDim || !elementStrides || rank < 1 || rank > 5 ||
      (rank > 1 && !globalStrides))
    return failWith(cu::kErrorInvalidValue,
                    "cuTensorMapEncodeTiled: a missing array or rank " +
                        std::to_string(rank));
  TiledTensorMap fields;
  fields.dataType = static_cast<uint32_t>(dataType);
  fields.rank = rank;
  fields.globalAddress = reinterpret_cast<uint64_t>(globalAddress);
  for (uint32_t i = 0; i < rank; ++i) {
    fields.globalDim[i] = globalDim[i];
    fields.boxDim[i] = boxDim[i];
    fields.elementStrides[i] = elementStrides[i];
    if (i > 0)
      fields.globalStrides[i - 1] = globalStrides[i - 1];
  }
  fields.interleave = static_cast<uint32_t>(interleave);
  fields.swizzle = static_cast<uint32_t>(swizzle);
  fields.l2Promotion = static_cast<uint32_t>(l2Promotion);
  fields.oobFill = static_cast<uint32_t>(oobFill);
  std::string error;
  if (!encodeTensorMap(tensorMap, fields, error))
    return failWith(cu::kErrorInvalidValue, error);
  return cu::kSuccess;
}

} // extern "C"

ATTN_CHECK_DRIVER_ENTRIES();
