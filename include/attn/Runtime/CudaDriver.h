//===- CudaDriver.h - The CUDA driver API, opened at run time ---*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The entry points of the CUDA driver API that libattnrt and its tools use,
// resolved with dlopen/dlsym so that nothing links libcuda. The types and
// constants are those of the driver's ABI (cuda.h), declared here so that the
// runtime builds without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_CUDADRIVER_H
#define ATTN_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace attn::runtime {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;

namespace cu {
constexpr CUresult kSuccess = 0;
constexpr CUresult kErrorInvalidValue = 1;
constexpr CUresult kErrorOutOfMemory = 2;
constexpr CUresult kErrorNotInitialized = 3;
constexpr CUresult kErrorNoDevice = 100;
constexpr CUresult kErrorInvalidDevice = 101;
constexpr CUresult kErrorInvalidImage = 200;
constexpr CUresult kErrorInvalidContext = 201;
constexpr CUresult kErrorNoBinaryForGpu = 209;
constexpr CUresult kErrorInvalidPtx = 218;
constexpr CUresult kErrorJitCompilerNotFound = 221;
constexpr CUresult kErrorUnsupportedPtxVersion = 222;
constexpr CUresult kErrorInvalidHandle = 400;
constexpr CUresult kErrorNotFound = 500;
constexpr CUresult kErrorIllegalAddress = 700;
constexpr CUresult kErrorLaunchOutOfResources = 701;
constexpr CUresult kErrorLaunchFailed = 719;

/// cuGetErrorName's text of the codes above; null for others. For the
/// drivers without a GPU (the tests' fake, the PTX emulator's).
inline const char *errorName(CUresult error) {
  switch (error) {
  case kSuccess: return "CUDA_SUCCESS";
  case kErrorInvalidValue: return "CUDA_ERROR_INVALID_VALUE";
  case kErrorOutOfMemory: return "CUDA_ERROR_OUT_OF_MEMORY";
  case kErrorNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
  case kErrorNoDevice: return "CUDA_ERROR_NO_DEVICE";
  case kErrorInvalidDevice: return "CUDA_ERROR_INVALID_DEVICE";
  case kErrorInvalidImage: return "CUDA_ERROR_INVALID_IMAGE";
  case kErrorInvalidContext: return "CUDA_ERROR_INVALID_CONTEXT";
  case kErrorNoBinaryForGpu: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case kErrorInvalidPtx: return "CUDA_ERROR_INVALID_PTX";
  case kErrorJitCompilerNotFound: return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
  case kErrorUnsupportedPtxVersion: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case kErrorInvalidHandle: return "CUDA_ERROR_INVALID_HANDLE";
  case kErrorNotFound: return "CUDA_ERROR_NOT_FOUND";
  case kErrorIllegalAddress: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case kErrorLaunchOutOfResources: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case kErrorLaunchFailed: return "CUDA_ERROR_LAUNCH_FAILED";
  default: return nullptr;
  }
}

// CUdevice_attribute
constexpr int kDeviceMultiprocessorCount = 16;
constexpr int kDeviceL2CacheSize = 38;
constexpr int kDeviceComputeCapabilityMajor = 75;
constexpr int kDeviceComputeCapabilityMinor = 76;
constexpr int kDeviceMaxSharedMemoryPerBlockOptin = 97;

// CUfunction_attribute
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncLocalSizeBytes = 3;
constexpr int kFuncNumRegs = 4;
constexpr int kFuncMaxDynamicSharedSizeBytes = 8;

// CUjit_option
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSizeBytes = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;

// CUevent_flags
constexpr unsigned kEventDefault = 0;
constexpr unsigned kEventDisableTiming = 2;
} // namespace cu

struct CudaDriver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);
  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxGetCurrent)(CUcontext *context);
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image,
                                 unsigned numOptions, int *options,
                                 void **values);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module,
                                  const char *name);
  CUresult (*cuFuncGetAttribute)(int *value, int attribute,
                                 CUfunction function);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute,
                                 int value);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(
      int *blocks, CUfunction function, int blockSize, size_t dynamicShared);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned gridX,
                             unsigned gridY, unsigned gridZ, unsigned blockX,
                             unsigned blockY, unsigned blockZ,
                             unsigned sharedBytes, CUstream stream,
                             void **params, void **extra);
  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src,
                                size_t bytes, CUstream stream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value,
                              size_t count, CUstream stream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr dst, unsigned short value,
                               size_t count, CUstream stream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count,
                               CUstream stream);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event,
                                unsigned flags);
  CUresult (*cuEventCreate)(CUevent *event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float *milliseconds, CUevent start,
                                 CUevent end);
  /// The tiled tensor map encoder (CUDA 12 and later), with the driver's
  /// argument types (CUtensorMap *, and its enums as int); null when the
  /// driver has none, which only a kernel with tensor maps needs.
  CUresult (*cuTensorMapEncodeTiled)(
      void *tensorMap, int dataType, uint32_t rank, void *globalAddress,
      const uint64_t *globalDim, const uint64_t *globalStrides,
      const uint32_t *boxDim, const uint32_t *elementStrides, int interleave,
      int swizzle, int l2Promotion, int oobFill);
  /// Whether the driver is the PTX emulator's (libattnemu exports
  /// attnEmulatedDriver): kernels run on the host, thousands of times
  /// slower than on a GPU.
  bool emulated = false;
};

/// In a library that implements the driver's entry points (a driver without
/// a GPU): checks that the entry point SYMBOL has the type of the CudaDriver
/// member the runtime calls it through.
#define ATTN_CHECK_DRIVER_ENTRY(member, symbol)                                \
  static_assert(std::is_same_v<decltype(::attn::runtime::CudaDriver::member),  \
                               decltype(&symbol)>,                             \
                #symbol " does not match CudaDriver::" #member)

/// Every entry point's check, for a library that implements them all.
#define ATTN_CHECK_DRIVER_ENTRIES()                                            \
  ATTN_CHECK_DRIVER_ENTRY(cuInit, cuInit);                                     \
  ATTN_CHECK_DRIVER_ENTRY(cuGetErrorName, cuGetErrorName);                     \
  ATTN_CHECK_DRIVER_ENTRY(cuGetErrorString, cuGetErrorString);                 \
  ATTN_CHECK_DRIVER_ENTRY(cuDeviceGetCount, cuDeviceGetCount);                 \
  ATTN_CHECK_DRIVER_ENTRY(cuDeviceGet, cuDeviceGet);                           \
  ATTN_CHECK_DRIVER_ENTRY(cuDeviceGetName, cuDeviceGetName);                   \
  ATTN_CHECK_DRIVER_ENTRY(cuDeviceGetAttribute, cuDeviceGetAttribute);         \
  ATTN_CHECK_DRIVER_ENTRY(cuDeviceTotalMem, cuDeviceTotalMem_v2);              \
  ATTN_CHECK_DRIVER_ENTRY(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain); \
  ATTN_CHECK_DRIVER_ENTRY(cuDevicePrimaryCtxRelease,                           \
                          cuDevicePrimaryCtxRelease_v2);                       \
  ATTN_CHECK_DRIVER_ENTRY(cuCtxGetCurrent, cuCtxGetCurrent);                   \
  ATTN_CHECK_DRIVER_ENTRY(cuCtxSetCurrent, cuCtxSetCurrent);                   \
  ATTN_CHECK_DRIVER_ENTRY(cuModuleLoadDataEx, cuModuleLoadDataEx);             \
  ATTN_CHECK_DRIVER_ENTRY(cuModuleUnload, cuModuleUnload);                     \
  ATTN_CHECK_DRIVER_ENTRY(cuModuleGetFunction, cuModuleGetFunction);           \
  ATTN_CHECK_DRIVER_ENTRY(cuFuncGetAttribute, cuFuncGetAttribute);             \
  ATTN_CHECK_DRIVER_ENTRY(cuFuncSetAttribute, cuFuncSetAttribute);             \
  ATTN_CHECK_DRIVER_ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor,         \
                          cuOccupancyMaxActiveBlocksPerMultiprocessor);        \
  ATTN_CHECK_DRIVER_ENTRY(cuLaunchKernel, cuLaunchKernel);                     \
  ATTN_CHECK_DRIVER_ENTRY(cuMemAlloc, cuMemAlloc_v2);                          \
  ATTN_CHECK_DRIVER_ENTRY(cuMemFree, cuMemFree_v2);                            \
  ATTN_CHECK_DRIVER_ENTRY(cuMemcpyHtoD, cuMemcpyHtoD_v2);                      \
  ATTN_CHECK_DRIVER_ENTRY(cuMemcpyDtoH, cuMemcpyDtoH_v2);                      \
  ATTN_CHECK_DRIVER_ENTRY(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2);            \
  ATTN_CHECK_DRIVER_ENTRY(cuMemsetD8Async, cuMemsetD8Async);                   \
  ATTN_CHECK_DRIVER_ENTRY(cuMemsetD16Async, cuMemsetD16Async);                 \
  ATTN_CHECK_DRIVER_ENTRY(cuMemsetD32Async, cuMemsetD32Async);                 \
  ATTN_CHECK_DRIVER_ENTRY(cuStreamSynchronize, cuStreamSynchronize);           \
  ATTN_CHECK_DRIVER_ENTRY(cuStreamWaitEvent, cuStreamWaitEvent);               \
  ATTN_CHECK_DRIVER_ENTRY(cuEventCreate, cuEventCreate);                       \
  ATTN_CHECK_DRIVER_ENTRY(cuEventDestroy, cuEventDestroy_v2);                  \
  ATTN_CHECK_DRIVER_ENTRY(cuEventRecord, cuEventRecord);                       \
  ATTN_CHECK_DRIVER_ENTRY(cuEventSynchronize, cuEventSynchronize);             \
  ATTN_CHECK_DRIVER_ENTRY(cuEventElapsedTime, cuEventElapsedTime);             \
  ATTN_CHECK_DRIVER_ENTRY(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled)

/// The driver, opened and initialised (cuInit) once per process from the
/// file named by ATTNRT_LIBCUDA, else libcuda.so.1. Null when that fails:
/// ERROR then says why, and NODEVICE whether the driver was there but found
/// no device.
const CudaDriver *openCudaDriver(std::string &error, bool &noDevice);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string describeCudaError(const CudaDriver &driver, CUresult result);

} // namespace attn::runtime

#endif // ATTN_RUNTIME_CUDADRIVER_H
