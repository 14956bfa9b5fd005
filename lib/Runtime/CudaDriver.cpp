//===- CudaDriver.cpp - The CUDA driver API, opened at run time -----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace attn::runtime;

namespace {

struct OpenedDriver {
  CudaDriver driver{};
  std::string error;
  bool ok = false;
  bool noDevice = false;
};

template <typename Fn>
bool resolve(void *library, const char *symbol, Fn &entry,
             std::string &error) {
  entry = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!entry && error.empty())
    error = std::string("the CUDA driver has no entry point ") + symbol;
  return entry != nullptr;
}

/// ATTNRT_LIBCUDA=emulator names the PTX emulator's driver, libattnemu.so,
/// installed beside this library.
std::string emulatorPath() {
  Dl_info info;
  std::string directory = ".";
  if (dladdr(reinterpret_cast<void *>(&attn::runtime::openCudaDriver), &info) &&
      info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      directory = self.substr(0, slash);
  }
  return directory + "/libattnemu.so";
}

OpenedDriver open() {
  OpenedDriver opened;
  const char *chosen = std::getenv("ATTNRT_LIBCUDA");
  std::string name = chosen && *chosen ? chosen : "libcuda.so.1";
  if (name == "emulator")
    name = emulatorPath();
  const char *path = name.c_str();
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    opened.error = std::string("cannot open the CUDA driver (") + path +
                   "): " + (reason ? reason : "unknown reason") +
                   "; is an NVIDIA driver installed?";
    return opened;
  }
  CudaDriver &d = opened.driver;
  std::string &e = opened.error;
  // The versioned names are those cuda.h maps the plain ones to.
  resolve(library, "cuInit", d.cuInit, e);
  resolve(library, "cuGetErrorName", d.cuGetErrorName, e);
  resolve(library, "cuGetErrorString", d.cuGetErrorString, e);
  resolve(library, "cuDeviceGetCount", d.cuDeviceGetCount, e);
  resolve(library, "cuDeviceGet", d.cuDeviceGet, e);
  resolve(library, "cuDeviceGetName", d.cuDeviceGetName, e);
  resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, e);
  resolve(library, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem, e);
  resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, e);
  resolve(library, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease,
          e);
  resolve(library, "cuCtxGetCurrent", d.cuCtxGetCurrent, e);
  resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, e);
  resolve(library, "cuModuleLoadDataEx", d.cuModuleLoadDataEx, e);
  resolve(library, "cuModuleUnload", d.cuModuleUnload, e);
  resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, e);
  resolve(library, "cuFuncGetAttribute", d.cuFuncGetAttribute, e);
  resolve(library, "cuFuncSetAttribute", d.cuFuncSetAttribute, e);
  resolve(library, "cuOccupancyMaxActiveBlocksPerMultiprocessor",
          d.cuOccupancyMaxActiveBlocksPerMultiprocessor, e);
  resolve(library, "cuLaunchKernel", d.cuLaunchKernel, e);
  resolve(library, "cuMemAlloc_v2", d.cuMemAlloc, e);
  resolve(library, "cuMemFree_v2", d.cuMemFree, e);
  resolve(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, e);
  resolve(library, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, e);
  resolve(library, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync, e);
  resolve(library, "cuMemsetD8Async", d.cuMemsetD8Async, e);
  resolve(library, "cuMemsetD16Async", d.cuMemsetD16Async, e);
  resolve(library, "cuMemsetD32Async", d.cuMemsetD32Async, e);
  resolve(library, "cuStreamSynchronize", d.cuStreamSynchronize, e);
  resolve(library, "cuStreamWaitEvent", d.cuStreamWaitEvent, e);
  resolve(library, "cuEventCreate", d.cuEventCreate, e);
  resolve(library, "cuEventDestroy_v2", d.cuEventDestroy, e);
  resolve(library, "cuEventRecord", d.cuEventRecord, e);
  resolve(library, "cuEventSynchronize", d.cuEventSynchronize, e);
  resolve(library, "cuEventElapsedTime", d.cuEventElapsedTime, e);
  if (!e.empty())
    return opened;
  // Optional: a driver before CUDA 12 has no tensor maps.
  d.cuTensorMapEncodeTiled =
      reinterpret_cast<decltype(d.cuTensorMapEncodeTiled)>(
          dlsym(library, "cuTensorMapEncodeTiled"));
  d.emulated = dlsym(library, "attnEmulatedDriver") != nullptr;
  if (CUresult result = d.cuInit(0); result != cu::kSuccess) {
    e = "the CUDA driver (" + std::string(path) +
        ") failed to initialise: " + describeCudaError(d, result);
    opened.noDevice = result == cu::kErrorNoDevice;
    return opened;
  }
  opened.ok = true;
  return opened;
}

} // namespace

const CudaDriver *attn::runtime::openCudaDriver(std::string &error,
                                               bool &noDevice) {
  static OpenedDriver opened = open();
  if (!opened.ok) {
    error = opened.error;
    noDevice = opened.noDevice;
    return nullptr;
  }
  return &opened.driver;
}

std::string attn::runtime::describeCudaError(const CudaDriver &driver,
                                             CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (driver.cuGetErrorName)
    driver.cuGetErrorName(result, &name);
  if (driver.cuGetErrorString)
    driver.cuGetErrorString(result, &text);
  std::string message = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    message += std::string(" (") + text + ")";
  return message;
}
