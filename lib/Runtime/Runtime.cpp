//===- Runtime.cpp - libattnrt's C API ------------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/attnrt.h"
#include "attn/Support/Files.h"
#include "attn/Support/SizeLimits.h"

#include "BundleCheck.h"
#include "Manifest.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using namespace attn::runtime;

struct attnrtContext_ {
  const CudaDriver *driver = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  attnrtDeviceInfo info = {};
};

struct attnrtKernel_ {
  attnrtContext_ *context = nullptr;
  KernelSpec spec;
  CUfunction function = nullptr;
  /// The manifest's workspaces, allocated on first launch and reused
  /// (reallocated when a larger grid needs more of a per-CTA one).
  struct Workspace {
    CUdeviceptr pointer = 0;
    int64_t bytes = 0;
  };
  std::vector<Workspace> workspaces;
  /// Recorded after each launch that used the workspaces, on lastStream.
  CUevent lastUse = nullptr;
  CUstream lastStream = nullptr;
  bool launched = false;
  /// The driver's occupancy, for persistent launches; -1 until asked.
  int32_t ctasPerMultiprocessor = -1;
  /// The manifest's tensor maps as last encoded, with the tensor they were
  /// encoded from: a launch on the same tensor reuses its map.
  struct TensorMap {
    alignas(64) uint8_t bytes[128] = {};
    bool valid = false;
    uint64_t data = 0;
    int64_t sizes[ATTNRT_MAX_RANK] = {}, strides[ATTNRT_MAX_RANK] = {};
  };
  std::vector<TensorMap> tensorMaps;
};

struct attnrtBundle_ {
  attnrtContext_ *context = nullptr;
  CUmodule module = nullptr;
  std::vector<std::unique_ptr<attnrtKernel_>> kernels;
};

struct attnrtTimer_ {
  attnrtContext_ *context = nullptr;
  CUevent start = nullptr;
  CUevent stop = nullptr;
};

namespace {

thread_local std::string lastError;

attnrtStatus fail(attnrtStatus status, std::string message) {
  lastError = std::move(message);
  return status;
}

attnrtStatus driverFailure(const CudaDriver &driver, CUresult result,
                           const std::string &what) {
  attnrtStatus status = result == cu::kErrorOutOfMemory
                            ? ATTNRT_ERROR_OUT_OF_MEMORY
                            : ATTNRT_ERROR_DRIVER;
  return fail(status, what + ": " + describeCudaError(driver, result));
}

#define ATTNRT_CALL(driver, call, what)                                        \
  do {                                                                         \
    if (CUresult result_ = (call); result_ != cu::kSuccess)                    \
      return driverFailure(driver, result_, what);                             \
  } while (false)

attnrtStatus makeCurrent(attnrtContext_ *context) {
  const CudaDriver &d = *context->driver;
  CUcontext current = nullptr;
  ATTNRT_CALL(d, d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != context->context)
    ATTNRT_CALL(d, d.cuCtxSetCurrent(context->context), "cuCtxSetCurrent");
  return ATTNRT_SUCCESS;
}

std::string formatExtents(const int64_t *values, int32_t rank) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += ", ";
    text += values[i] < 0 ? std::string("?") : std::to_string(values[i]);
  }
  return text + "]";
}

/// Whether two elements of `tensor` share an address: dimensions (of more
/// than one element) sorted by stride must each step past the extent of
/// those before.
bool overlaps(const attnrtTensor &tensor) {
  std::pair<int64_t, int64_t> dims[ATTNRT_MAX_RANK]; // (stride, size)
  int32_t count = 0;
  for (int32_t d = 0; d < tensor.rank; ++d)
    if (tensor.sizes[d] > 1)
      dims[count++] = {tensor.strides[d], tensor.sizes[d]};
  std::sort(dims, dims + count);
  int64_t extent = 1;
  for (int32_t i = 0; i < count; ++i) {
    auto [stride, size] = dims[i];
    if (stride < extent)
      return true;
    // At most the tensor's reach: checkArguments bounded it by 2^48 bytes.
    extent += stride * (size - 1);
  }
  return false;
}

/// Checks that the attention's tensors agree where the manifest leaves
/// sizes to run time: Q [B, Hq, Sq, D], K [B, Hkv, Sk, D], V [B, Hkv, Sk,
/// Dv], O [B, Hq, Sq, Dv], LSE [B, Hq, Sq], mask [B or 1, Hq or 1, Sq, Sk],
/// block_mask [B or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)] (the rules
/// naming LSE or a mask apply when the kernel has it; a mask dimension the
/// manifest fixes to 1 broadcasts). Static sizes were checked against the
/// manifest.
attnrtStatus checkAttentionShapes(const KernelSpec &spec,
                                  const attnrtTensor *args) {
  struct Rule {
    const char *what, *a;
    int aDim;
    const char *b;
    int bDim;
    /// Whether `b` broadcasts where the manifest fixes its size to 1.
    bool broadcasts = false;
    /// Whether `b` counts the block mask's blocks of `a`'s size: its query
    /// blocks (ceil(Sq / Bq)) or key blocks (ceil(Sk / Bk)).
    enum Count { kSame, kQueryBlocks, kKeyBlocks } count = kSame;
  };
  static const Rule rules[] = {
      {"batch size", "Q", 0, "K", 0},
      {"batch size", "Q", 0, "V", 0},
      {"batch size", "Q", 0, "O", 0},
      {"query heads", "Q", 1, "O", 1},
      {"key/value heads", "K", 1, "V", 1},
      {"query length", "Q", 2, "O", 2},
      {"key length", "K", 2, "V", 2},
      {"head dimension", "Q", 3, "K", 3},
      {"value dimension", "V", 3, "O", 3},
      {"batch size", "Q", 0, "LSE", 0},
      {"query heads", "Q", 1, "LSE", 1},
      {"query length", "Q", 2, "LSE", 2},
      {"batch size", "Q", 0, "key_lengths", 0},
      {"batch size", "Q", 0, "mask", 0, true},
      {"query heads", "Q", 1, "mask", 1, true},
      {"query length", "Q", 2, "mask", 2},
      {"key length", "K", 2, "mask", 3},
      {"batch size", "Q", 0, "block_mask", 0, true},
      {"query heads", "Q", 1, "block_mask", 1, true},
      {"query length", "Q", 2, "block_mask", 2, false, Rule::kQueryBlocks},
      {"key length", "K", 2, "block_mask", 3, false, Rule::kKeyBlocks}};
  // An attention kernel: Q, K, V and O of rank 4, LSE (if any) of rank 3.
  for (const char *name : {"Q", "K", "V", "O", "LSE"}) {
    int32_t index = spec.paramIndex(name);
    if (index < 0 ? name != std::string("LSE")
                  : args[index].rank != (name == std::string("LSE") ? 3 : 4))
      return ATTNRT_SUCCESS;
  }
  for (const Rule &rule : rules) {
    int32_t a = spec.paramIndex(rule.a), b = spec.paramIndex(rule.b);
    if (b < 0 || (rule.broadcasts && spec.params[b].sizes[rule.bDim] == 1))
      continue;
    int64_t aSize = args[a].sizes[rule.aDim], bSize = args[b].sizes[rule.bDim];
    if (rule.count != Rule::kSame) {
      int64_t side = rule.count == Rule::kQueryBlocks
                         ? spec.attention.blockMaskRows
                         : spec.attention.blockMaskKeys;
      int64_t blocks = (aSize + side - 1) / side;
      if (blocks != bSize)
        return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                    "kernel " + spec.name + ": " + rule.b + " has " +
                        std::to_string(bSize) + " blocks along the " +
                        rule.what + " of " + rule.a + " (" +
                        std::to_string(aSize) + "), which blocks of " +
                        std::to_string(side) + " cut into " +
                        std::to_string(blocks));
      continue;
    }
    if (aSize != bSize)
      return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                  "kernel " + spec.name + ": the " + rule.what + " of " +
                      rule.a + " (" + std::to_string(aSize) + ") and " +
                      rule.b + " (" + std::to_string(bSize) + ") differ");
  }
  return ATTNRT_SUCCESS;
}

/// Checks ARGS against the kernel's parameters; the message names the
/// kernel, the parameter and both values.
attnrtStatus checkArguments(const KernelSpec &spec, const attnrtTensor *args,
                            int32_t numArgs) {
  auto invalid = [&](const std::string &message) {
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "kernel " + spec.name + ": " + message);
  };
  if (numArgs != static_cast<int32_t>(spec.params.size()))
    return invalid("takes " + std::to_string(spec.params.size()) +
                   " tensors, got " + std::to_string(numArgs));
  if (!args)
    return invalid("no tensors");
  for (int32_t i = 0; i < numArgs; ++i) {
    const ParamSpec &param = spec.params[i];
    const attnrtTensor &arg = args[i];
    std::string name = "parameter " + param.name + ": ";
    if (arg.dtype != param.dtype)
      return invalid(name + "dtype " + attnrtDTypeName(arg.dtype) +
                     " does not match the manifest's " +
                     attnrtDTypeName(param.dtype));
    if (arg.rank != param.rank)
      return invalid(name + "rank " + std::to_string(arg.rank) +
                     " does not match the manifest's " +
                     std::to_string(param.rank));
    for (int32_t dim = 0; dim < param.rank; ++dim) {
      if (arg.sizes[dim] < 1 ||
          (param.sizes[dim] >= 0 && arg.sizes[dim] != param.sizes[dim]))
        return invalid(name + "shape " + formatExtents(arg.sizes, arg.rank) +
                       " does not match the manifest's " +
                       formatExtents(param.sizes, param.rank));
    }
    for (int32_t dim = 0; dim < param.rank; ++dim) {
      // The stride of a dimension of size 1 is never used.
      if (arg.sizes[dim] == 1)
        continue;
      if (param.strides[dim] >= 0 && arg.strides[dim] != param.strides[dim])
        return invalid(name + "strides " +
                       formatExtents(arg.strides, arg.rank) +
                       " do not match the manifest's " +
                       formatExtents(param.strides, param.rank));
      // As in a manifest: the kernels step forward from the data pointer.
      if (arg.strides[dim] < 0)
        return invalid(name + "stride " + std::to_string(arg.strides[dim]) +
                       " of dimension " + std::to_string(dim) +
                       " is negative; a stride is at least 0");
    }
    // The run-time sizes and strides bounded as a manifest's static ones
    // are, so that the grid formulas and the overlap check cannot overflow.
    if (!mlir::attn::checkedStridedBytes(
            arg.sizes, arg.strides, arg.rank,
            static_cast<int64_t>(attnrtDTypeSize(arg.dtype))))
      return invalid(name + "shape " + formatExtents(arg.sizes, arg.rank) +
                     " with strides " + formatExtents(arg.strides, arg.rank) +
                     " spans more than 2^48 bytes (256 TiB), more than any "
                     "machine addresses");
    // Run-time strides: any for inputs (0 broadcasts), but the elements of
    // an output must not overlap, or CTAs would race on them.
    if (spec.isOutput(param.name) && overlaps(arg))
      return invalid(name + "strides " + formatExtents(arg.strides, arg.rank) +
                     " make elements of shape " +
                     formatExtents(arg.sizes, arg.rank) +
                     " overlap; an output needs distinct elements");
    if (!arg.data)
      return invalid(name + "null data pointer");
    if (arg.data % static_cast<uint64_t>(param.alignment))
      return invalid(name + "data pointer is not aligned to " +
                     std::to_string(param.alignment) + " bytes");
  }
  return checkAttentionShapes(spec, args);
}

attnrtStatus evaluateGrid(const KernelSpec &spec, const attnrtTensor *args,
                          uint32_t grid[3]) {
  static const int64_t limits[3] = {2147483647, 65535, 65535};
  for (int axis = 0; axis < 3; ++axis) {
    const GridTerm &term = spec.grid[axis];
    int64_t size = term.constant;
    if (term.param >= 0)
      size =
          (args[term.param].sizes[term.dim] * term.times + term.ceilDiv - 1) /
          term.ceilDiv;
    if (size < 1 || size > limits[axis])
      return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                  "kernel " + spec.name + ": grid dimension " +
                      std::to_string(axis) + " is " + std::to_string(size) +
                      ", outside [1, " + std::to_string(limits[axis]) + "]");
    grid[axis] = static_cast<uint32_t>(size);
  }
  return ATTNRT_SUCCESS;
}

/// The largest manifest and PTX a bundle may have: far above what
/// attn-compile writes (kilobytes and megabytes), far below what would
/// exhaust memory.
constexpr uint64_t kMaxManifestBytes = uint64_t(64) << 20;
constexpr uint64_t kMaxPtxBytes = uint64_t(1) << 30;

/// Reads DIRECTORY's manifest and PTX.
attnrtStatus readBundle(const std::string &dir, Manifest &manifest,
                        std::string &ptx) {
  std::string manifestPath = dir + "/manifest.json";
  std::string manifestText, error;
  if (std::string readError = mlir::attn::files::readFile(
          manifestPath, kMaxManifestBytes, manifestText);
      !readError.empty())
    return fail(ATTNRT_ERROR_INVALID_BUNDLE,
                readError + " (is " + dir +
                    " a kernel bundle written by attn-compile?)");
  if (!parseManifest(manifestText, manifest, error))
    return fail(ATTNRT_ERROR_INVALID_BUNDLE, manifestPath + ": " + error);
  std::string ptxPath = dir + "/" + manifest.ptx;
  if (manifest.ptx.empty())
    return fail(ATTNRT_ERROR_INVALID_BUNDLE,
                manifestPath + ": names no PTX file");
  if (std::string readError =
          mlir::attn::files::readFile(ptxPath, kMaxPtxBytes, ptx);
      !readError.empty())
    return fail(ATTNRT_ERROR_INVALID_BUNDLE, readError);
  if (!checkBundle(manifest, ptx, manifestPath, ptxPath, error))
    return fail(ATTNRT_ERROR_INVALID_BUNDLE, error);
  return ATTNRT_SUCCESS;
}

/// Reads and checks a manifest and PTX given in memory (error messages name
/// them "manifest" and "the bundle's PTX").
attnrtStatus readBundleFromMemory(const char *manifestJson, const char *ptxText,
                                  Manifest &manifest, std::string &ptx) {
  std::string error;
  if (!parseManifest(manifestJson, manifest, error))
    return fail(ATTNRT_ERROR_INVALID_BUNDLE, error);
  ptx = ptxText;
  if (!checkBundle(manifest, ptx, "manifest", "the bundle's PTX", error))
    return fail(ATTNRT_ERROR_INVALID_BUNDLE, error);
  return ATTNRT_SUCCESS;
}

attnrtStatus loadKernels(attnrtContext_ *context, Manifest &manifest,
                         const std::string &ptx, attnrtBundle *out) {
  const CudaDriver &d = *context->driver;
  const attnrtDeviceInfo &info = context->info;
  int deviceCapability = info.computeMajor * 10 + info.computeMinor;
  std::string deviceTarget = "sm_" + std::to_string(deviceCapability);
  for (const KernelSpec &kernel : manifest.kernels) {
    int capability = targetComputeCapability(kernel.target);
    bool archSpecific = kernel.target.back() == 'a';
    if (capability > deviceCapability ||
        (archSpecific && capability != deviceCapability))
      return fail(ATTNRT_ERROR_JIT,
                  "kernel " + kernel.name + " was compiled for " +
                      kernel.target + ", which " + info.name + " (" +
                      deviceTarget + ") cannot run; recompile it with "
                      "attn-compile --chip=" + deviceTarget);
  }

  std::unique_ptr<attnrtBundle_> bundle(new attnrtBundle_);
  bundle->context = context;
  std::vector<char> errorLog(1 << 16, '\0'), infoLog(1 << 16, '\0');
  int options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes,
                   cu::kJitInfoLogBuffer, cu::kJitInfoLogBufferSizeBytes};
  void *values[] = {errorLog.data(),
                    reinterpret_cast<void *>(errorLog.size()),
                    infoLog.data(), reinterpret_cast<void *>(infoLog.size())};
  CUresult result = d.cuModuleLoadDataEx(&bundle->module, ptx.c_str(), 4,
                                         options, values);
  if (result != cu::kSuccess) {
    std::string log(errorLog.data());
    attnrtStatus status = result == cu::kErrorOutOfMemory
                              ? ATTNRT_ERROR_OUT_OF_MEMORY
                              : ATTNRT_ERROR_JIT;
    return fail(status, "the CUDA driver cannot load the bundle's PTX for " +
                            std::string(info.name) + " (" + deviceTarget +
                            "): " + describeCudaError(d, result) +
                            (log.empty() ? "" : "\n" + log));
  }
  for (KernelSpec &spec : manifest.kernels) {
    auto kernel = std::make_unique<attnrtKernel_>();
    kernel->context = context;
    kernel->spec = std::move(spec);
    const KernelSpec &k = kernel->spec;
    if (d.cuModuleGetFunction(&kernel->function, bundle->module,
                              k.name.c_str()) != cu::kSuccess) {
      d.cuModuleUnload(bundle->module);
      return fail(ATTNRT_ERROR_INVALID_BUNDLE,
                  "the bundle's PTX has no kernel " + k.name +
                      ", which its manifest lists");
    }
    int staticShared = 0, maxThreads = 0;
    d.cuFuncGetAttribute(&staticShared, cu::kFuncSharedSizeBytes,
                         kernel->function);
    d.cuFuncGetAttribute(&maxThreads, cu::kFuncMaxThreadsPerBlock,
                         kernel->function);
    int64_t shared = staticShared + k.dynamicSharedBytes;
    unsigned threads = k.block[0] * k.block[1] * k.block[2];
    std::string problem;
    if (shared > info.sharedMemoryPerBlockOptin)
      problem = "needs " + std::to_string(shared) +
                " bytes of shared memory per block, the device offers " +
                std::to_string(info.sharedMemoryPerBlockOptin);
    else if (threads > static_cast<unsigned>(maxThreads))
      problem = "launches " + std::to_string(threads) +
                " threads per block, the device can run at most " +
                std::to_string(maxThreads) + " of it";
    else if (d.cuFuncSetAttribute(kernel->function,
                                  cu::kFuncMaxDynamicSharedSizeBytes,
                                  static_cast<int>(k.dynamicSharedBytes)) !=
             cu::kSuccess)
      problem = "cannot raise its dynamic shared memory to " +
                std::to_string(k.dynamicSharedBytes) + " bytes";
    if (!problem.empty()) {
      d.cuModuleUnload(bundle->module);
      return fail(ATTNRT_ERROR_UNSUPPORTED, "kernel " + k.name + " " + problem +
                                                " on " + info.name);
    }
    bundle->kernels.push_back(std::move(kernel));
  }
  *out = bundle.release();
  return ATTNRT_SUCCESS;
}

/// Gives the kernel its workspaces for a launch over `grid`: allocated on
/// first use, reallocated when a larger grid needs more bytes of a per-CTA
/// one (once the last launch that used it is done), zero-filled as the
/// manifest asks (before every launch, or when allocated if the kernel
/// leaves it zero), and ordered after the previous launch when the stream
/// changes.
attnrtStatus prepareWorkspaces(attnrtKernel_ *kernel, const uint32_t grid[3],
                               CUstream stream) {
  const CudaDriver &d = *kernel->context->driver;
  const std::vector<WorkspaceSpec> &specs = kernel->spec.workspaces;
  if (!kernel->lastUse)
    ATTNRT_CALL(d, d.cuEventCreate(&kernel->lastUse, cu::kEventDisableTiming),
                "cuEventCreate");
  kernel->workspaces.resize(specs.size());
  int64_t ctas = int64_t(grid[0]) * grid[1] * grid[2];
  bool idle = false;
  for (size_t i = 0; i < specs.size(); ++i) {
    const WorkspaceSpec &spec = specs[i];
    attnrtKernel_::Workspace &workspace = kernel->workspaces[i];
    std::optional<int64_t> checkedBytes =
        spec.perCta ? mlir::attn::checkedMul(spec.bytes, ctas) : spec.bytes;
    if (!checkedBytes)
      return fail(ATTNRT_ERROR_OUT_OF_MEMORY,
                  "workspace " + spec.name + " of kernel " + kernel->spec.name +
                      ": " + std::to_string(spec.bytes) + " bytes x " +
                      std::to_string(ctas) + " CTAs overflow 64 bits");
    int64_t bytes = *checkedBytes;
    if (workspace.bytes >= bytes)
      continue;
    if (workspace.pointer) {
      if (!idle)
        ATTNRT_CALL(d, d.cuEventSynchronize(kernel->lastUse),
                    "cuEventSynchronize");
      idle = true;
      ATTNRT_CALL(d, d.cuMemFree(workspace.pointer), "cuMemFree");
      workspace = {};
    }
    ATTNRT_CALL(d, d.cuMemAlloc(&workspace.pointer, bytes),
                "workspace " + spec.name + " of kernel " + kernel->spec.name +
                    " (" + std::to_string(bytes) + " bytes)");
    workspace.bytes = bytes;
    // A new buffer no earlier launch used: zeroed here, once, when the
    // kernel leaves it zero.
    if (spec.zeroInit && spec.kernelResets)
      ATTNRT_CALL(d, d.cuMemsetD8Async(workspace.pointer, 0, bytes, stream),
                  "zero-filling workspace " + spec.name);
  }
  if (kernel->launched && stream != kernel->lastStream)
    ATTNRT_CALL(d, d.cuStreamWaitEvent(stream, kernel->lastUse, 0),
                "cuStreamWaitEvent");
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].zeroInit && !specs[i].kernelResets)
      ATTNRT_CALL(d,
                  d.cuMemsetD8Async(kernel->workspaces[i].pointer, 0,
                                    kernel->workspaces[i].bytes, stream),
                  "zero-filling workspace " + specs[i].name);
  return ATTNRT_SUCCESS;
}

} // namespace

/// The integer a C caller passed as an enum: C lets it be any int, while in
/// C++ loading a value outside the enumeration's range is undefined; the
/// bytes are copied, never loaded as the enum.
template <typename Enum> static int enumValue(const Enum &value) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are ints here");
  int result;
  std::memcpy(&result, &value, sizeof result);
  return result;
}

extern "C" {

const char *attnrtStatusName(attnrtStatus status) {
  switch (enumValue(status)) {
  case ATTNRT_SUCCESS: return "ATTNRT_SUCCESS";
  case ATTNRT_ERROR_INVALID_ARGUMENT: return "ATTNRT_ERROR_INVALID_ARGUMENT";
  case ATTNRT_ERROR_INVALID_BUNDLE: return "ATTNRT_ERROR_INVALID_BUNDLE";
  case ATTNRT_ERROR_NO_DRIVER: return "ATTNRT_ERROR_NO_DRIVER";
  case ATTNRT_ERROR_NO_DEVICE: return "ATTNRT_ERROR_NO_DEVICE";
  case ATTNRT_ERROR_JIT: return "ATTNRT_ERROR_JIT";
  case ATTNRT_ERROR_OUT_OF_MEMORY: return "ATTNRT_ERROR_OUT_OF_MEMORY";
  case ATTNRT_ERROR_NOT_FOUND: return "ATTNRT_ERROR_NOT_FOUND";
  case ATTNRT_ERROR_DRIVER: return "ATTNRT_ERROR_DRIVER";
  case ATTNRT_ERROR_UNSUPPORTED: return "ATTNRT_ERROR_UNSUPPORTED";
  }
  return "ATTNRT_ERROR_UNKNOWN";
}

const char *attnrtLastErrorMessage(void) { return lastError.c_str(); }

const char *attnrtDTypeName(attnrtDType dtype) {
  switch (enumValue(dtype)) {
  case ATTNRT_F16: return "f16";
  case ATTNRT_BF16: return "bf16";
  case ATTNRT_F32: return "f32";
  case ATTNRT_I32:
    return "i32";
  case ATTNRT_I1:
    return "i1";
  case ATTNRT_I8:
    return "i8";
  }
  return "?";
}

size_t attnrtDTypeSize(attnrtDType dtype) {
  switch (enumValue(dtype)) {
  case ATTNRT_F32:
  case ATTNRT_I32:
    return 4;
  case ATTNRT_I1:
  case ATTNRT_I8:
    return 1;
  }
  return 2;
}

attnrtStatus attnrtContextCreate(int32_t device, attnrtContext *context) {
  if (!context)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT, "attnrtContextCreate: null out");
  *context = nullptr;
  std::string error;
  bool noDevice = false;
  const CudaDriver *driver = openCudaDriver(error, noDevice);
  if (!driver)
    return fail(noDevice ? ATTNRT_ERROR_NO_DEVICE : ATTNRT_ERROR_NO_DRIVER,
                error);
  const CudaDriver &d = *driver;
  int count = 0;
  ATTNRT_CALL(d, d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0)
    return fail(ATTNRT_ERROR_NO_DEVICE, "the CUDA driver sees no device");
  if (device < 0 || device >= count)
    return fail(ATTNRT_ERROR_NO_DEVICE,
                "no CUDA device " + std::to_string(device) + " (there are " +
                    std::to_string(count) + ")");
  auto created = std::make_unique<attnrtContext_>();
  created->driver = driver;
  ATTNRT_CALL(d, d.cuDeviceGet(&created->device, device), "cuDeviceGet");
  attnrtDeviceInfo &info = created->info;
  ATTNRT_CALL(d, d.cuDeviceGetName(info.name, sizeof(info.name),
                                   created->device),
              "cuDeviceGetName");
  struct {
    int attribute;
    int32_t *out;
  } attributes[] = {
      {cu::kDeviceComputeCapabilityMajor, &info.computeMajor},
      {cu::kDeviceComputeCapabilityMinor, &info.computeMinor},
      {cu::kDeviceMultiprocessorCount, &info.multiprocessors}};
  for (auto &[attribute, out] : attributes) {
    int value = 0;
    ATTNRT_CALL(d, d.cuDeviceGetAttribute(&value, attribute, created->device),
                "cuDeviceGetAttribute");
    *out = value;
  }
  int optin = 0, l2 = 0;
  ATTNRT_CALL(d,
              d.cuDeviceGetAttribute(&optin,
                                     cu::kDeviceMaxSharedMemoryPerBlockOptin,
                                     created->device),
              "cuDeviceGetAttribute");
  ATTNRT_CALL(d, d.cuDeviceGetAttribute(&l2, cu::kDeviceL2CacheSize,
                                        created->device),
              "cuDeviceGetAttribute");
  info.sharedMemoryPerBlockOptin = optin;
  info.l2CacheBytes = l2;
  size_t total = 0;
  ATTNRT_CALL(d, d.cuDeviceTotalMem(&total, created->device),
              "cuDeviceTotalMem");
  info.totalMemoryBytes = static_cast<int64_t>(total);
  ATTNRT_CALL(d, d.cuDevicePrimaryCtxRetain(&created->context,
                                            created->device),
              "cuDevicePrimaryCtxRetain");
  if (attnrtStatus status = makeCurrent(created.get())) {
    d.cuDevicePrimaryCtxRelease(created->device);
    return status;
  }
  *context = created.release();
  return ATTNRT_SUCCESS;
}

void attnrtContextDestroy(attnrtContext context) {
  if (!context)
    return;
  context->driver->cuDevicePrimaryCtxRelease(context->device);
  delete context;
}

attnrtStatus attnrtContextGetDeviceInfo(attnrtContext context,
                                        attnrtDeviceInfo *info) {
  if (!context || !info)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtContextGetDeviceInfo: null argument");
  *info = context->info;
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtMalloc(attnrtContext context, size_t bytes,
                          attnrtDevicePtr *pointer) {
  if (!context || !pointer)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT, "attnrtMalloc: null argument");
  if (attnrtStatus status = makeCurrent(context))
    return status;
  CUdeviceptr allocated = 0;
  ATTNRT_CALL(*context->driver, context->driver->cuMemAlloc(&allocated, bytes),
              "allocating " + std::to_string(bytes) + " bytes on the device");
  *pointer = allocated;
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtFree(attnrtContext context, attnrtDevicePtr pointer) {
  if (!context)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT, "attnrtFree: null context");
  if (!pointer)
    return ATTNRT_SUCCESS;
  if (attnrtStatus status = makeCurrent(context))
    return status;
  ATTNRT_CALL(*context->driver, context->driver->cuMemFree(pointer),
              "cuMemFree");
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtCopyToDevice(attnrtContext context, attnrtDevicePtr dst,
                                const void *src, size_t bytes) {
  if (!context || (!src && bytes))
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtCopyToDevice: null argument");
  if (attnrtStatus status = makeCurrent(context))
    return status;
  ATTNRT_CALL(*context->driver, context->driver->cuMemcpyHtoD(dst, src, bytes),
              "cuMemcpyHtoD");
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtCopyToHost(attnrtContext context, void *dst,
                              attnrtDevicePtr src, size_t bytes) {
  if (!context || (!dst && bytes))
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtCopyToHost: null argument");
  if (attnrtStatus status = makeCurrent(context))
    return status;
  ATTNRT_CALL(*context->driver, context->driver->cuMemcpyDtoH(dst, src, bytes),
              "cuMemcpyDtoH");
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtSynchronize(attnrtContext context, attnrtStream stream) {
  if (!context)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtSynchronize: null context");
  if (attnrtStatus status = makeCurrent(context))
    return status;
  ATTNRT_CALL(*context->driver,
              context->driver->cuStreamSynchronize(
                  static_cast<CUstream>(stream)),
              "cuStreamSynchronize");
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtBundleLoadFromMemory(attnrtContext context,
                                        const char *manifestJson,
                                        const char *ptx,
                                        attnrtBundle *bundle) {
  if (!context || !manifestJson || !ptx || !bundle)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtBundleLoadFromMemory: null argument");
  *bundle = nullptr;
  Manifest manifest;
  std::string ptxText;
  if (attnrtStatus status =
          readBundleFromMemory(manifestJson, ptx, manifest, ptxText))
    return status;
  if (attnrtStatus status = makeCurrent(context))
    return status;
  return loadKernels(context, manifest, ptxText, bundle);
}

attnrtStatus attnrtBundleValidateFromMemory(const char *manifestJson,
                                            const char *ptx,
                                            int32_t *kernelCount) {
  if (!manifestJson || !ptx)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtBundleValidateFromMemory: null argument");
  Manifest manifest;
  std::string ptxText;
  if (attnrtStatus status =
          readBundleFromMemory(manifestJson, ptx, manifest, ptxText))
    return status;
  if (kernelCount)
    *kernelCount = static_cast<int32_t>(manifest.kernels.size());
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtBundleValidate(const char *directory,
                                  int32_t *kernelCount) {
  if (!directory)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtBundleValidate: null directory");
  Manifest manifest;
  std::string ptx;
  if (attnrtStatus status = readBundle(directory, manifest, ptx))
    return status;
  if (kernelCount)
    *kernelCount = static_cast<int32_t>(manifest.kernels.size());
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtBundleLoad(attnrtContext context, const char *directory,
                              attnrtBundle *bundle) {
  if (!context || !directory || !bundle)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtBundleLoad: null argument");
  *bundle = nullptr;
  Manifest manifest;
  std::string ptx;
  if (attnrtStatus status = readBundle(directory, manifest, ptx))
    return status;
  if (attnrtStatus status = makeCurrent(context))
    return status;
  return loadKernels(context, manifest, ptx, bundle);
}

void attnrtBundleDestroy(attnrtBundle bundle) {
  if (!bundle)
    return;
  const CudaDriver &d = *bundle->context->driver;
  makeCurrent(bundle->context);
  for (auto &kernel : bundle->kernels) {
    for (const attnrtKernel_::Workspace &workspace : kernel->workspaces)
      if (workspace.pointer)
        d.cuMemFree(workspace.pointer);
    if (kernel->lastUse)
      d.cuEventDestroy(kernel->lastUse);
  }
  d.cuModuleUnload(bundle->module);
  delete bundle;
}

int32_t attnrtBundleKernelCount(attnrtBundle bundle) {
  return bundle ? static_cast<int32_t>(bundle->kernels.size()) : 0;
}

attnrtStatus attnrtBundleGetKernel(attnrtBundle bundle, int32_t index,
                                   attnrtKernel *kernel) {
  if (!bundle || !kernel)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtBundleGetKernel: null argument");
  if (index < 0 || index >= static_cast<int32_t>(bundle->kernels.size()))
    return fail(ATTNRT_ERROR_NOT_FOUND,
                "no kernel " + std::to_string(index) + " in a bundle of " +
                    std::to_string(bundle->kernels.size()));
  *kernel = bundle->kernels[index].get();
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtBundleFindKernel(attnrtBundle bundle, const char *name,
                                    attnrtKernel *kernel) {
  if (!bundle || !name || !kernel)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtBundleFindKernel: null argument");
  std::string names;
  for (auto &candidate : bundle->kernels) {
    if (candidate->spec.name == name) {
      *kernel = candidate.get();
      return ATTNRT_SUCCESS;
    }
    names += (names.empty() ? "" : ", ") + candidate->spec.name;
  }
  return fail(ATTNRT_ERROR_NOT_FOUND, "no kernel " + std::string(name) +
                                          " in the bundle (it has " + names +
                                          ")");
}

const char *attnrtKernelName(attnrtKernel kernel) {
  return kernel ? kernel->spec.name.c_str() : "";
}

const char *attnrtKernelTarget(attnrtKernel kernel) {
  return kernel ? kernel->spec.target.c_str() : "";
}

int32_t attnrtKernelParamCount(attnrtKernel kernel) {
  return kernel ? static_cast<int32_t>(kernel->spec.params.size()) : 0;
}

attnrtStatus attnrtKernelGetParam(attnrtKernel kernel, int32_t index,
                                  attnrtParamInfo *info) {
  if (!kernel || !info)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtKernelGetParam: null argument");
  if (index < 0 || index >= static_cast<int32_t>(kernel->spec.params.size()))
    return fail(ATTNRT_ERROR_NOT_FOUND,
                "kernel " + kernel->spec.name + " has no parameter " +
                    std::to_string(index));
  const ParamSpec &param = kernel->spec.params[index];
  info->name = param.name.c_str();
  info->dtype = param.dtype;
  info->rank = param.rank;
  for (int32_t i = 0; i < ATTNRT_MAX_RANK; ++i) {
    info->sizes[i] = i < param.rank ? param.sizes[i] : 0;
    info->strides[i] = i < param.rank ? param.strides[i] : 0;
  }
  info->alignment = param.alignment;
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtKernelGetAttention(attnrtKernel kernel,
                                      attnrtAttentionInfo *info) {
  if (!kernel || !info)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtKernelGetAttention: null argument");
  *info = kernel->spec.attention;
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtKernelGetResources(attnrtKernel kernel,
                                      attnrtKernelResources *resources) {
  if (!kernel || !resources)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtKernelGetResources: null argument");
  const CudaDriver &d = *kernel->context->driver;
  if (attnrtStatus status = makeCurrent(kernel->context))
    return status;
  int registers = 0, shared = 0, local = 0, ctas = 0;
  ATTNRT_CALL(d, d.cuFuncGetAttribute(&registers, cu::kFuncNumRegs,
                                      kernel->function),
              "cuFuncGetAttribute");
  ATTNRT_CALL(d, d.cuFuncGetAttribute(&shared, cu::kFuncSharedSizeBytes,
                                      kernel->function),
              "cuFuncGetAttribute");
  ATTNRT_CALL(d, d.cuFuncGetAttribute(&local, cu::kFuncLocalSizeBytes,
                                      kernel->function),
              "cuFuncGetAttribute");
  const KernelSpec &spec = kernel->spec;
  int threads = static_cast<int>(spec.block[0] * spec.block[1] * spec.block[2]);
  ATTNRT_CALL(d,
              d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                  &ctas, kernel->function, threads, spec.dynamicSharedBytes),
              "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  resources->registersPerThread = registers;
  resources->threadsPerBlock = threads;
  resources->staticSharedBytes = shared;
  resources->dynamicSharedBytes = spec.dynamicSharedBytes;
  resources->localBytesPerThread = local;
  resources->ctasPerMultiprocessor = ctas;
  return ATTNRT_SUCCESS;
}

void *attnrtKernelGetFunction(attnrtKernel kernel) {
  return kernel ? kernel->function : nullptr;
}

attnrtStatus attnrtKernelGetGrid(attnrtKernel kernel, const attnrtTensor *args,
                                 int32_t numArgs, uint32_t grid[3]) {
  if (!kernel || !grid)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtKernelGetGrid: null argument");
  if (attnrtStatus status = checkArguments(kernel->spec, args, numArgs))
    return status;
  return evaluateGrid(kernel->spec, args, grid);
}

/// A persistent kernel's CTAs wait for each other: refuse, rather than hang,
/// when the device cannot hold all of them at once.
static attnrtStatus checkResidency(attnrtKernel kernel,
                                   const uint32_t grid[3]) {
  // The occupancy of a loaded kernel does not change: asked once.
  if (kernel->ctasPerMultiprocessor < 0) {
    attnrtKernelResources resources;
    if (attnrtStatus status = attnrtKernelGetResources(kernel, &resources))
      return status;
    kernel->ctasPerMultiprocessor = resources.ctasPerMultiprocessor;
  }
  int64_t ctas = int64_t(grid[0]) * grid[1] * grid[2];
  int64_t resident = int64_t(kernel->ctasPerMultiprocessor) *
                     kernel->context->info.multiprocessors;
  if (ctas <= resident)
    return ATTNRT_SUCCESS;
  return fail(ATTNRT_ERROR_UNSUPPORTED,
              "persistent kernel " + kernel->spec.name + " needs its " +
                  std::to_string(ctas) +
                  " CTAs resident at once; the device holds " +
                  std::to_string(resident) + " (" +
                  std::to_string(kernel->ctasPerMultiprocessor) +
                  " per multiprocessor x " +
                  std::to_string(kernel->context->info.multiprocessors) +
                  "): compile with fewer Lean CTAs");
}

/// Encodes the kernel's tensor maps for ARGS (checked), unless the map of
/// the same tensor (pointer, sizes and strides) is already encoded.
static attnrtStatus encodeTensorMaps(attnrtKernel kernel,
                                     const attnrtTensor *args) {
  const KernelSpec &spec = kernel->spec;
  kernel->tensorMaps.resize(spec.tensorMaps.size());
  const CudaDriver &d = *kernel->context->driver;
  for (size_t i = 0; i < spec.tensorMaps.size(); ++i) {
    const TensorMapSpec &map = spec.tensorMaps[i];
    const ParamSpec &param = spec.params[map.param];
    const attnrtTensor &tensor = args[map.param];
    attnrtKernel_::TensorMap &encoded = kernel->tensorMaps[i];
    int32_t rank = param.rank;
    if (encoded.valid && encoded.data == tensor.data &&
        std::equal(tensor.sizes, tensor.sizes + rank, encoded.sizes) &&
        std::equal(tensor.strides, tensor.strides + rank, encoded.strides))
      continue;
    std::string what = "tensor map " + map.name + " of kernel " + spec.name +
                       " (over " + param.name + ")";
    if (!d.cuTensorMapEncodeTiled)
      return fail(ATTNRT_ERROR_UNSUPPORTED,
                  what + ": the CUDA driver has no cuTensorMapEncodeTiled "
                         "(CUDA 12 or later)");
    if (tensor.strides[rank - 1] != 1)
      return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                  what +
                      ": the innermost dimension must be contiguous "
                      "(stride 1), not stride " +
                      std::to_string(tensor.strides[rank - 1]));
    // The driver's dimensions run innermost first; its strides are in
    // bytes, for dimensions 1 and up, each a multiple of 16 below 2^40. A
    // dimension of size 1 is never stepped along: whatever stride the
    // tensor gives it (any, for the kernel), the map gets the contiguous
    // one, rounded up to 16 bytes.
    uint64_t elementBytes = attnrtDTypeSize(param.dtype);
    uint64_t dims[ATTNRT_MAX_RANK], strides[ATTNRT_MAX_RANK];
    uint32_t box[ATTNRT_MAX_RANK], elementStrides[ATTNRT_MAX_RANK];
    for (int32_t j = 0; j < rank; ++j) {
      dims[j] = static_cast<uint64_t>(tensor.sizes[rank - 1 - j]);
      box[j] = static_cast<uint32_t>(map.box[j]);
      elementStrides[j] = 1;
      if (j == 0)
        continue;
      uint64_t inner =
          j == 1 ? dims[0] * elementBytes : strides[j - 2] * dims[j - 1];
      strides[j - 1] =
          dims[j] == 1 ? (inner + 15) / 16 * 16
                       : static_cast<uint64_t>(tensor.strides[rank - 1 - j]) *
                             elementBytes;
      if (strides[j - 1] % 16 != 0 || strides[j - 1] >= (uint64_t(1) << 40))
        return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                    what + ": dimension " + std::to_string(rank - 1 - j) +
                        " has a stride of " +
                        std::to_string(tensor.strides[rank - 1 - j]) +
                        " elements (" + std::to_string(strides[j - 1]) +
                        " bytes); a tensor copy needs a multiple of 16 "
                        "bytes, below 2^40");
    }
    // CUtensorMapDataType: FLOAT16 6, FLOAT32 7, BFLOAT16 9;
    // CUtensorMapSwizzle: none, 32B, 64B, 128B; L2 promotion 128B (2).
    int dataType = param.dtype == ATTNRT_F16   ? 6
                   : param.dtype == ATTNRT_F32 ? 7
                                               : 9;
    int swizzle = map.swizzleBytes == 0    ? 0
                  : map.swizzleBytes == 32 ? 1
                  : map.swizzleBytes == 64 ? 2
                                           : 3;
    encoded.valid = false;
    ATTNRT_CALL(d,
                d.cuTensorMapEncodeTiled(
                    encoded.bytes, dataType, static_cast<uint32_t>(rank),
                    reinterpret_cast<void *>(tensor.data), dims, strides, box,
                    elementStrides, /*interleave=*/0, swizzle,
                    /*l2Promotion=*/2, /*oobFill=*/0),
                "encoding " + what);
    encoded.valid = true;
    encoded.data = tensor.data;
    std::copy(tensor.sizes, tensor.sizes + rank, encoded.sizes);
    std::copy(tensor.strides, tensor.strides + rank, encoded.strides);
  }
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtLaunch(attnrtKernel kernel, const attnrtTensor *args,
                          int32_t numArgs, attnrtStream stream) {
  if (!kernel)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT, "attnrtLaunch: null kernel");
  const KernelSpec &spec = kernel->spec;
  uint32_t grid[3];
  if (attnrtStatus status = checkArguments(spec, args, numArgs))
    return status;
  if (attnrtStatus status = evaluateGrid(spec, args, grid))
    return status;
  if (attnrtStatus status = makeCurrent(kernel->context))
    return status;
  if (spec.persistent)
    if (attnrtStatus status = checkResidency(kernel, grid))
      return status;
  auto cuStream = static_cast<CUstream>(stream);
  if (!spec.workspaces.empty())
    if (attnrtStatus status = prepareWorkspaces(kernel, grid, cuStream))
      return status;
  // The kernel's parameters: the tensors' pointers, the workspaces', then
  // the run-time sizes and strides the manifest names, each 64 bits.
  std::vector<uint64_t> values;
  for (size_t i = 0; i < spec.params.size(); ++i)
    values.push_back(args[i].data);
  for (const attnrtKernel_::Workspace &workspace : kernel->workspaces)
    values.push_back(workspace.pointer);
  for (const ScalarSpec &scalar : spec.scalars) {
    const attnrtTensor &arg = args[scalar.param];
    values.push_back(static_cast<uint64_t>(
        scalar.stride ? arg.strides[scalar.dim] : arg.sizes[scalar.dim]));
  }
  // Then the tensor maps, by value.
  if (attnrtStatus status = encodeTensorMaps(kernel, args))
    return status;
  std::vector<void *> params;
  for (uint64_t &value : values)
    params.push_back(&value);
  for (attnrtKernel_::TensorMap &map : kernel->tensorMaps)
    params.push_back(map.bytes);
  const CudaDriver &d = *kernel->context->driver;
  ATTNRT_CALL(d,
              d.cuLaunchKernel(kernel->function, grid[0], grid[1], grid[2],
                               spec.block[0], spec.block[1], spec.block[2],
                               static_cast<unsigned>(spec.dynamicSharedBytes),
                               cuStream, params.data(), nullptr),
              "launching kernel " + spec.name);
  if (!spec.workspaces.empty()) {
    ATTNRT_CALL(d, d.cuEventRecord(kernel->lastUse, cuStream),
                "cuEventRecord");
    kernel->lastStream = cuStream;
    kernel->launched = true;
  }
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtTimerCreate(attnrtContext context, attnrtTimer *timer) {
  if (!context || !timer)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtTimerCreate: null argument");
  *timer = nullptr;
  if (attnrtStatus status = makeCurrent(context))
    return status;
  const CudaDriver &d = *context->driver;
  auto created = std::make_unique<attnrtTimer_>();
  created->context = context;
  ATTNRT_CALL(d, d.cuEventCreate(&created->start, cu::kEventDefault),
              "cuEventCreate");
  if (CUresult result = d.cuEventCreate(&created->stop, cu::kEventDefault)) {
    d.cuEventDestroy(created->start);
    return driverFailure(d, result, "cuEventCreate");
  }
  *timer = created.release();
  return ATTNRT_SUCCESS;
}

void attnrtTimerDestroy(attnrtTimer timer) {
  if (!timer)
    return;
  timer->context->driver->cuEventDestroy(timer->start);
  timer->context->driver->cuEventDestroy(timer->stop);
  delete timer;
}

attnrtStatus attnrtTimerStart(attnrtTimer timer, attnrtStream stream) {
  if (!timer)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT, "attnrtTimerStart: null timer");
  ATTNRT_CALL(*timer->context->driver,
              timer->context->driver->cuEventRecord(
                  timer->start, static_cast<CUstream>(stream)),
              "cuEventRecord");
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtTimerStop(attnrtTimer timer, attnrtStream stream) {
  if (!timer)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT, "attnrtTimerStop: null timer");
  ATTNRT_CALL(*timer->context->driver,
              timer->context->driver->cuEventRecord(
                  timer->stop, static_cast<CUstream>(stream)),
              "cuEventRecord");
  return ATTNRT_SUCCESS;
}

attnrtStatus attnrtTimerElapsedMs(attnrtTimer timer, float *milliseconds) {
  if (!timer || !milliseconds)
    return fail(ATTNRT_ERROR_INVALID_ARGUMENT,
                "attnrtTimerElapsedMs: null argument");
  const CudaDriver &d = *timer->context->driver;
  ATTNRT_CALL(d, d.cuEventSynchronize(timer->stop), "cuEventSynchronize");
  ATTNRT_CALL(d, d.cuEventElapsedTime(milliseconds, timer->start, timer->stop),
              "cuEventElapsedTime");
  return ATTNRT_SUCCESS;
}

} // extern "C"
