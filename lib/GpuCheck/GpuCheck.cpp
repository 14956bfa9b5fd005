//===- GpuCheck.cpp - Run, check and time a bundle kernel on a GPU --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/GpuCheck/GpuCheck.h"

#include "HostReference.h"

#include "attn/Reference/ErrorMetrics.h"
#include "attn/Runtime/CudaDriver.h"
#include "attn/Support/HalfFloat.h"
#include "attn/Support/Npy.h"
#include "attn/Support/SizeLimits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <tuple>

using namespace attn::gpucheck;
using namespace attn::runtime;
using attnrt::Status;
using attn::gpucheck::reference::Problem;

/// The PTX of ReferenceKernels.cu, embedded at build time.
extern const char attnReferenceKernelsPtx[];

namespace {

Status driverError(const CudaDriver &d, CUresult result,
                   const std::string &what) {
  return Status::failure(result == cu::kErrorOutOfMemory
                             ? ATTNRT_ERROR_OUT_OF_MEMORY
                             : ATTNRT_ERROR_DRIVER,
                         what + ": " + describeCudaError(d, result));
}

#define CHECK_CU(call, what)                                                   \
  do {                                                                         \
    if (CUresult result_ = (call); result_ != cu::kSuccess)                    \
      return driverError(d, result_, what);                                    \
  } while (false)

#define CHECK_STATUS(expr)                                                     \
  do {                                                                         \
    if (Status status_ = (expr); !status_.ok())                                \
      return status_;                                                          \
  } while (false)

/// The reference kernels, loaded once per CUDA context.
struct ReferenceModule {
  CUmodule module = nullptr;
  std::map<std::string, CUfunction> functions;
};

Status referenceFunction(const CudaDriver &d, const std::string &name,
                         CUfunction &function) {
  static std::map<CUcontext, ReferenceModule> modules;
  CUcontext current = nullptr;
  CHECK_CU(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  ReferenceModule &loaded = modules[current];
  if (!loaded.module) {
    std::vector<char> log(1 << 14, '\0');
    int options[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes};
    void *values[] = {log.data(), reinterpret_cast<void *>(log.size())};
    if (CUresult result = d.cuModuleLoadDataEx(
            &loaded.module, attnReferenceKernelsPtx, 2, options, values))
      return Status::failure(ATTNRT_ERROR_JIT,
                             "the CUDA driver cannot load the reference "
                             "kernels: " +
                                 describeCudaError(d, result) + "\n" +
                                 log.data());
  }
  CUfunction &cached = loaded.functions[name];
  if (!cached)
    CHECK_CU(d.cuModuleGetFunction(&cached, loaded.module, name.c_str()),
             "reference kernel " + name);
  function = cached;
  return Status();
}

/// Whether the check's inputs and reference are computed on the host
/// (CheckOptions::reference).
bool checksOnHost(const CheckOptions &options, const CudaDriver &d) {
  return options.reference == ReferenceSide::Host ||
         (options.reference == ReferenceSide::Automatic && d.emulated);
}

/// COUNT seeded standard-normal values of format DTYPE at DATA: by
/// attn_fill_normal_<t>, or computed ON_HOST and copied.
Status fillNormal(const CudaDriver &d, attnrtContext context, bool onHost,
                  attnrtDType dtype, CUdeviceptr data, uint64_t count,
                  uint64_t seed) {
  if (onHost) {
    std::vector<uint8_t> values(count * attnrtDTypeSize(dtype));
    fillNormalOnHost(dtype, values.data(), count, seed);
    return Status::of(
        attnrtCopyToDevice(context, data, values.data(), values.size()));
  }
  CUfunction function;
  CHECK_STATUS(referenceFunction(
      d, std::string("attn_fill_normal_") + attnrtDTypeName(dtype), function));
  void *params[] = {&data, &count, &seed};
  unsigned blocks =
      static_cast<unsigned>(std::min<uint64_t>((count + 255) / 256, 8192));
  CHECK_CU(d.cuLaunchKernel(function, std::max(blocks, 1u), 1, 1, 256, 1, 1, 0,
                            nullptr, params, nullptr),
           "attn_fill_normal");
  return Status();
}

/// Fills with NaN, so that an element the kernel does not write shows.
Status poison(const CudaDriver &d, attnrtDType dtype, CUdeviceptr data,
              uint64_t count) {
  if (dtype == ATTNRT_F32)
    CHECK_CU(d.cuMemsetD32Async(data, 0x7FC00000u, count, nullptr),
             "cuMemsetD32Async");
  else
    CHECK_CU(d.cuMemsetD16Async(data, dtype == ATTNRT_F16 ? 0x7E00 : 0x7FC0,
                                count, nullptr),
             "cuMemsetD16Async");
  return Status();
}

/// NaN in the rows of K and V (contiguous, [B, Hkv, Sk, D]) past each
/// sequence's key length: no output may depend on them, so a kernel that
/// lets them into a product shows (the padding of a cache is whatever was
/// there).
Status poisonPastKeyLengths(const CudaDriver &d, const attnrtParamInfo &key,
                            CUdeviceptr keyData, const attnrtParamInfo &value,
                            CUdeviceptr valueData, const int32_t *keyLengths) {
  for (auto [param, data] : {std::pair{&key, keyData}, {&value, valueData}}) {
    int64_t heads = param->sizes[1], keys = param->sizes[2],
            width = param->sizes[3];
    size_t elementBytes = attnrtDTypeSize(param->dtype);
    for (int64_t b = 0; b < param->sizes[0]; ++b) {
      int64_t length = std::clamp<int64_t>(keyLengths[b], 0, keys);
      for (int64_t h = 0; h < heads; ++h) {
        uint64_t first = ((b * heads + h) * keys + length) * width;
        uint64_t count = (keys - length) * width;
        if (count)
          CHECK_STATUS(
              poison(d, param->dtype, data + first * elementBytes, count));
      }
    }
  }
  return Status();
}

std::vector<float> decode(const std::vector<uint8_t> &raw, attnrtDType dtype) {
  size_t count = raw.size() / attnrtDTypeSize(dtype);
  std::vector<float> values(count);
  if (dtype == ATTNRT_F32) {
    std::memcpy(values.data(), raw.data(), raw.size());
    return values;
  }
  mlir::attn::HalfFormat format = dtype == ATTNRT_F16
                                      ? mlir::attn::HalfFormat::F16
                                      : mlir::attn::HalfFormat::BF16;
  for (size_t i = 0; i < count; ++i) {
    uint16_t bits;
    std::memcpy(&bits, raw.data() + 2 * i, 2);
    values[i] = mlir::attn::halfBitsToFloat(bits, format);
  }
  return values;
}

Status copyOut(attnrtContext context, CUdeviceptr data, size_t bytes,
               attnrtDType dtype, std::vector<float> &values) {
  std::vector<uint8_t> raw(bytes);
  CHECK_STATUS(
      Status::of(attnrtCopyToHost(context, raw.data(), data, bytes)));
  values = decode(raw, dtype);
  return Status();
}

/// The most parameters an attention kernel has: Q, K, V, O, LSE, mask,
/// block_mask, key_lengths.
constexpr int32_t kMaxParams = 8;

/// The tensors of one launch: Q, K, V, O and, if the kernel has them, LSE,
/// the mask, the block mask and the key lengths.
struct TensorSet {
  attnrt::DeviceBuffer buffers[kMaxParams];
  attnrtTensor tensors[kMaxParams];
};

/// The elements and the bytes of a parameter of static (or resolved)
/// sizes.
uint64_t elementsOf(const attnrtParamInfo &param) {
  uint64_t count = 1;
  for (int32_t d = 0; d < param.rank; ++d)
    count *= param.sizes[d];
  return count;
}
size_t bytesOf(const attnrtParamInfo &param) {
  return elementsOf(param) * attnrtDTypeSize(param.dtype);
}

/// The kernel's parameters: Q, K, V, O (0 to 3), then LSE, the mask, the
/// block mask and key_lengths when it has them.
struct Layout {
  attnrtParamInfo params[kMaxParams];
  int32_t count = 0;
  /// Indices of LSE, the mask, the block mask and key_lengths, or -1.
  int32_t lse = -1, mask = -1, blockMask = -1, keyLengths = -1;
  /// Whether parameter `index` is an output (O, LSE).
  bool isOutput(int32_t index) const { return index == 3 || index == lse; }
  size_t elements(int32_t index) const { return elementsOf(params[index]); }
  size_t bytes(int32_t index) const { return bytesOf(params[index]); }
  size_t totalBytes() const {
    size_t total = 0;
    for (int32_t i = 0; i < count; ++i)
      total += bytes(i);
    return total;
  }
};

/// Reads the kernel's parameters: Q, K, V, O of rank 4, then optionally LSE
/// of rank 3, the mask and the block mask of rank 4 and key_lengths of rank
/// 1; dynamic sizes (batch, Sq, Sk, and the block mask's blocks of them)
/// come from `lengths`.
Status readLayout(attnrtKernel kernel,
                  const std::optional<CheckOptions::Lengths> &lengths,
                  Layout &layout) {
  layout.count = attnrtKernelParamCount(kernel);
  std::string name = attnrtKernelName(kernel);
  const char *expected = ": expected parameters Q, K, V, O[, LSE][, mask][, "
                         "block_mask][, key_lengths]";
  attnrtAttentionInfo attention;
  CHECK_STATUS(Status::of(attnrtKernelGetAttention(kernel, &attention)));
  if (layout.count < 4 || layout.count > kMaxParams)
    return Status::failure(ATTNRT_ERROR_INVALID_BUNDLE,
                           "kernel " + name + expected);
  for (int32_t i = 0; i < layout.count; ++i) {
    attnrtParamInfo &param = layout.params[i];
    CHECK_STATUS(Status::of(attnrtKernelGetParam(kernel, i, &param)));
    static const char *tensors[] = {"Q", "K", "V", "O"};
    std::string paramName = param.name;
    int32_t rank = 4;
    if (i >= 4 && paramName == "LSE" && layout.lse < 0 && layout.mask < 0 &&
        layout.blockMask < 0 && layout.keyLengths < 0) {
      layout.lse = i;
      rank = 3;
    } else if (i >= 4 && paramName == "mask" && layout.mask < 0 &&
               layout.blockMask < 0 && layout.keyLengths < 0 &&
               param.dtype != ATTNRT_I32 && param.dtype != ATTNRT_I8) {
      layout.mask = i;
    } else if (i >= 4 && paramName == "block_mask" && layout.blockMask < 0 &&
               layout.keyLengths < 0 && param.dtype == ATTNRT_I8) {
      layout.blockMask = i;
    } else if (i >= 4 && paramName == "key_lengths" && layout.keyLengths < 0 &&
               param.dtype == ATTNRT_I32) {
      layout.keyLengths = i;
      rank = 1;
    } else if (i >= 4 || paramName != tensors[i]) {
      return Status::failure(ATTNRT_ERROR_INVALID_BUNDLE,
                             "kernel " + name + ": parameter " +
                                 std::to_string(i) + " is " + paramName +
                                 expected);
    }
    if (param.rank != rank)
      return Status::failure(ATTNRT_ERROR_INVALID_BUNDLE,
                             "kernel " + name + ": parameter " + paramName +
                                 " has rank " + std::to_string(param.rank) +
                                 ", expected " + std::to_string(rank));
    for (int32_t d = 0; d < param.rank; ++d) {
      if (param.sizes[d] >= 0)
        continue;
      if (!lengths)
        return Status::failure(ATTNRT_ERROR_INVALID_ARGUMENT,
                               "kernel " + name +
                                   " takes its lengths at run time: give "
                                   "them (attn-launch --lengths=B,Sq,Sk)");
      // Dimension 0 is the batch, 2 the sequence (Sk for K and V), and the
      // mask's 3 its keys; the block mask's 2 and 3 count blocks of them.
      auto blocks = [](int64_t length, int64_t side) {
        return (length + side - 1) / side;
      };
      if (d == 0)
        param.sizes[d] = lengths->batch;
      else if (d == 2 && i == layout.blockMask)
        param.sizes[d] = blocks(lengths->queryLen, attention.blockMaskRows);
      else if (d == 3 && i == layout.blockMask)
        param.sizes[d] = blocks(lengths->keyLen, attention.blockMaskKeys);
      else if (d == 2)
        param.sizes[d] = i == 1 || i == 2 ? lengths->keyLen : lengths->queryLen;
      else if (d == 3 && i == layout.mask)
        param.sizes[d] = lengths->keyLen;
      else
        return Status::failure(ATTNRT_ERROR_UNSUPPORTED,
                               "kernel " + name + ": parameter " + param.name +
                                   " has a dynamic size " + std::to_string(d) +
                                   ", which is not a length");
    }
    // The lengths times the manifest's heads and dims, checked before the
    // buffers and the reference's row counts multiply them (a manifest's
    // static sizes were checked when it was read).
    if (lengths && !mlir::attn::checkedTensorBytes(
                       std::vector<int64_t>(param.sizes,
                                            param.sizes + param.rank),
                       static_cast<int64_t>(attnrtDTypeSize(param.dtype))))
      return Status::failure(
          ATTNRT_ERROR_INVALID_ARGUMENT,
          "kernel " + name + ": --lengths=" + std::to_string(lengths->batch) +
              "," + std::to_string(lengths->queryLen) + "," +
              std::to_string(lengths->keyLen) + " make parameter " +
              paramName + " hold more than 2^48 bytes (256 TiB), more than "
              "any machine addresses");
  }
  if (layout.params[1].dtype != layout.params[0].dtype ||
      layout.params[2].dtype != layout.params[0].dtype)
    return Status::failure(ATTNRT_ERROR_INVALID_BUNDLE,
                           "kernel " + name + ": Q, K and V differ in type");
  return Status();
}

Status allocateSet(attnrtContext context, const Layout &layout,
                   TensorSet &set) {
  for (int32_t i = 0; i < layout.count; ++i) {
    CHECK_STATUS(set.buffers[i].allocate(context, layout.bytes(i)));
    set.tensors[i] =
        attnrt::contiguousTensor(set.buffers[i].data(), layout.params[i].dtype,
                                 layout.params[i].sizes, layout.params[i].rank);
  }
  return Status();
}

/// The key lengths `host` gives, or seeded sampleKeyLengths for `batch`
/// sequences of at most `keys` keys.
std::vector<int32_t> keyLengthsOf(const HostInputs &host, int64_t batch,
                                  int64_t keys, uint64_t seed) {
  if (host.keyLengths)
    return std::vector<int32_t>(host.keyLengths, host.keyLengths + batch);
  std::mt19937_64 rng(seed);
  return sampleKeyLengths(batch, keys, rng);
}

/// Q, K and V from `host` or seeded random values, the mask, the block mask
/// and the key lengths (when the kernel has them) from `host`, NaN in K and
/// V past the key lengths, and NaN in the outputs.
Status fillInputs(const CudaDriver &d, attnrtContext context, bool onHost,
                  const Layout &layout, const HostInputs &host, uint64_t seed,
                  TensorSet &set) {
  const void *given[] = {host.query, host.key, host.value};
  for (int32_t i = 0; i < 3; ++i) {
    if (given[i])
      CHECK_STATUS(Status::of(attnrtCopyToDevice(
          context, set.buffers[i].data(), given[i], layout.bytes(i))));
    else
      CHECK_STATUS(fillNormal(d, context, onHost, layout.params[i].dtype,
                              set.buffers[i].data(),
                              layout.elements(i), seed + i));
  }
  std::pair<int32_t, const void *> hostOnly[] = {
      {layout.mask, host.mask},
      {layout.blockMask, host.blockMask},
      {layout.keyLengths, host.keyLengths}};
  for (auto [index, data] : hostOnly)
    if (index >= 0)
      CHECK_STATUS(Status::of(attnrtCopyToDevice(
          context, set.buffers[index].data(), data, layout.bytes(index))));
  if (layout.keyLengths >= 0)
    CHECK_STATUS(poisonPastKeyLengths(d, layout.params[1],
                                      set.buffers[1].data(), layout.params[2],
                                      set.buffers[2].data(), host.keyLengths));
  for (int32_t i = 3; i < layout.count; ++i)
    if (layout.isOutput(i))
      CHECK_STATUS(poison(d, layout.params[i].dtype, set.buffers[i].data(),
                          layout.elements(i)));
  return Status();
}

/// A second launch's outputs against the first's, bit for bit.
OutputCheck compareRepeat(const std::vector<float> &out,
                          const std::vector<float> &outAgain,
                          const std::vector<float> &lse,
                          const std::vector<float> &lseAgain) {
  OutputCheck check;
  check.name = "repeat";
  check.toleranceOrigin = "bitwise, O and LSE of a second launch";
  auto compareBits = [&](const std::vector<float> &a,
                         const std::vector<float> &b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::isfinite(a[i]) && std::isfinite(b[i]))
        check.maxAbs = std::max<double>(check.maxAbs, std::fabs(a[i] - b[i]));
      if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
        ++check.differing;
    }
    return true;
  };
  check.passed = compareBits(out, outAgain) && compareBits(lse, lseAgain) &&
                 check.differing == 0;
  return check;
}

/// The reference's description of the attention of REPORT and LAYOUT.
Problem problemOf(const Layout &layout, const KernelReport &report,
                  bool naive) {
  Problem problem = {static_cast<int32_t>(report.sizes.batch),
                     static_cast<int32_t>(report.sizes.queryHeads),
                     static_cast<int32_t>(report.sizes.kvHeads),
                     static_cast<int32_t>(report.sizes.queryLen),
                     static_cast<int32_t>(report.sizes.keyLen),
                     static_cast<int32_t>(report.sizes.headDim),
                     static_cast<int32_t>(report.sizes.valueDim),
                     static_cast<float>(report.attention.scale),
                     report.attention.causal,
                     report.attention.hasWindow,
                     report.attention.windowLeft,
                     report.attention.windowRight,
                     naive ? 1 : 0,
                     static_cast<float>(report.attention.softcap),
                     0,
                     0,
                     -1,
                     0,
                     0,
                     0,
                     0};
  // A mask and a block mask are contiguous [B or 1, Hq or 1, rows, columns]:
  // their batch and head strides, 0 where the dimension broadcasts.
  auto broadcastStrides = [](const attnrtParamInfo &param) {
    int64_t plane = param.sizes[2] * param.sizes[3];
    return std::make_pair(param.sizes[0] == 1 ? 0 : param.sizes[1] * plane,
                          param.sizes[1] == 1 ? 0 : plane);
  };
  if (layout.mask >= 0) {
    const attnrtParamInfo &mask = layout.params[layout.mask];
    std::tie(problem.maskBatchStride, problem.maskHeadStride) =
        broadcastStrides(mask);
    problem.maskType = static_cast<int32_t>(mask.dtype);
  }
  if (layout.blockMask >= 0) {
    std::tie(problem.blockMaskBatchStride, problem.blockMaskHeadStride) =
        broadcastStrides(layout.params[layout.blockMask]);
    problem.blockMaskRows =
        static_cast<int32_t>(report.attention.blockMaskRows);
    problem.blockMaskKeys =
        static_cast<int32_t>(report.attention.blockMaskKeys);
  }
  return problem;
}

/// Host copies of a launch's inputs, for the reference on the host: read
/// once, for the exact and the naive reference both.
struct HostOperands {
  std::vector<uint8_t> bytes[kMaxParams];
  const void *data(int32_t index) const {
    return index >= 0 ? bytes[index].data() : nullptr;
  }
};

/// Q, K, V and, if the kernel has them, the key lengths, the mask and the
/// block mask of SET into HOST.
Status readOperands(attnrtContext context, const Layout &layout,
                    const TensorSet &set, HostOperands &host) {
  for (int32_t index :
       {0, 1, 2, layout.keyLengths, layout.mask, layout.blockMask}) {
    if (index < 0)
      continue;
    host.bytes[index].resize(layout.bytes(index));
    CHECK_STATUS(Status::of(attnrtCopyToHost(context, host.bytes[index].data(),
                                             set.buffers[index].data(),
                                             host.bytes[index].size())));
  }
  return Status();
}

/// O and LSE of the reference attention (f32) for the inputs of SET: by
/// attn_reference_<t>, or on the host from HOST, their copies, when given.
Status runReference(const CudaDriver &d, attnrtContext context,
                    const attnrtDeviceInfo &device, const HostOperands *host,
                    const Layout &layout, const TensorSet &set,
                    const KernelReport &report, bool naive,
                    std::vector<float> &out, std::vector<float> &lse) {
  Problem problem = problemOf(layout, report, naive);
  int64_t rows =
      report.sizes.batch * report.sizes.queryHeads * report.sizes.queryLen;
  if (host) {
    out.assign(rows * report.sizes.valueDim, 0.0f);
    lse.assign(rows, 0.0f);
    referenceOnHost(
        report.dtype, host->data(0), host->data(1), host->data(2),
        static_cast<const int32_t *>(host->data(layout.keyLengths)),
        host->data(layout.mask),
        static_cast<const uint8_t *>(host->data(layout.blockMask)), problem,
        out.data(), lse.data());
    return Status();
  }
  CUfunction function;
  CHECK_STATUS(referenceFunction(
      d, std::string("attn_reference_") + attnrtDTypeName(report.dtype),
      function));
  int64_t shared = (report.sizes.headDim + report.sizes.keyLen) * 4;
  int staticShared = 0;
  CHECK_CU(d.cuFuncGetAttribute(&staticShared, cu::kFuncSharedSizeBytes,
                                function),
           "cuFuncGetAttribute");
  if (shared + staticShared > device.sharedMemoryPerBlockOptin)
    return Status::failure(
        ATTNRT_ERROR_UNSUPPORTED,
        "the reference keeps a query row's scores in shared memory: Sk = " +
            std::to_string(report.sizes.keyLen) + " needs " +
            std::to_string(shared) + " bytes, the device offers " +
            std::to_string(device.sharedMemoryPerBlockOptin - staticShared));
  CHECK_CU(d.cuFuncSetAttribute(function, cu::kFuncMaxDynamicSharedSizeBytes,
                                static_cast<int>(shared)),
           "cuFuncSetAttribute");
  attnrt::DeviceBuffer outBuffer, lseBuffer;
  CHECK_STATUS(outBuffer.allocate(context, rows * report.sizes.valueDim * 4));
  CHECK_STATUS(lseBuffer.allocate(context, rows * 4));
  CUdeviceptr q = set.buffers[0].data(), k = set.buffers[1].data(),
              v = set.buffers[2].data(), o = outBuffer.data(),
              l = lseBuffer.data(),
              lengths = layout.keyLengths >= 0
                            ? set.buffers[layout.keyLengths].data()
                            : CUdeviceptr(0),
              mask = layout.mask >= 0 ? set.buffers[layout.mask].data()
                                      : CUdeviceptr(0),
              blockMask = layout.blockMask >= 0
                              ? set.buffers[layout.blockMask].data()
                              : CUdeviceptr(0);
  void *params[] = {&q, &k, &v, &o, &l, &lengths, &mask, &blockMask, &problem};
  CHECK_CU(d.cuLaunchKernel(function, static_cast<unsigned>(rows), 1, 1, 128,
                            1, 1, static_cast<unsigned>(shared), nullptr,
                            params, nullptr),
           "attn_reference");
  CHECK_STATUS(copyOut(context, o, outBuffer.size(), ATTNRT_F32, out));
  CHECK_STATUS(copyOut(context, l, lseBuffer.size(), ATTNRT_F32, lse));
  return Status();
}

/// OUT against EXACT within TOLERANCE (its origin for the report).
OutputCheck compare(const std::string &name, const std::vector<float> &out,
                    const std::vector<float> &exact, double tolerance,
                    std::string toleranceOrigin) {
  namespace ref = mlir::attn::reference;
  OutputCheck check;
  check.name = name;
  ref::ErrorStats stats = ref::computeErrorStats(
      out, std::vector<double>(exact.begin(), exact.end()));
  check.maxAbs = stats.maxAbs;
  check.relL2 = stats.relL2;
  check.nanCount = stats.nanCount;
  check.tolerance = tolerance;
  check.toleranceOrigin = std::move(toleranceOrigin);
  check.passed = ref::withinTolerance(stats, tolerance);
  return check;
}

/// OUT against the GPU reference's EXACT output: within --tolerance, else
/// twice the error of the NAIVE 16-bit attention where there is one, else
/// the f32 tolerance.
OutputCheck compareWithGpuReference(const std::string &name,
                                    const std::vector<float> &out,
                                    const std::vector<float> &exact,
                                    const std::vector<float> *naive,
                                    attnrtDType dtype,
                                    const std::optional<double> &tolerance) {
  namespace ref = mlir::attn::reference;
  if (tolerance)
    return compare(name, out, exact, *tolerance, "--tolerance");
  if (!naive)
    return compare(name, out, exact, ref::kF32Tolerance, "f32");
  double naiveError =
      ref::computeErrorStats(*naive,
                             std::vector<double>(exact.begin(), exact.end()))
          .relL2;
  char origin[96];
  std::snprintf(origin, sizeof(origin), "2x naive %s: %.2e",
                attnrtDTypeName(dtype), naiveError);
  return compare(name, out, exact, ref::toleranceFromNaive(naiveError), origin);
}

/// OUT against a reference case's output, within --tolerance or the case's.
OutputCheck compareWithCase(const std::string &name,
                            const std::vector<float> &out,
                            const ReferenceOutput &expected,
                            const std::optional<double> &tolerance) {
  std::vector<float> exact = mlir::attn::npyToFloats(expected.values);
  if (tolerance)
    return compare(name, out, exact, *tolerance, "--tolerance; reference case");
  return compare(name, out, exact, expected.tolerance,
                 "reference case, " + expected.toleranceOrigin);
}

/// Checks that REFERENCE holds KERNEL's parameters (LAYOUT, its dynamic
/// sizes resolved from the case): Q, K, V, the mask, the block mask and the
/// key lengths in the parameter's type and shape, O and LSE in its shape.
Status matchReferenceCase(const std::string &kernel, const Layout &layout,
                          const ReferenceCase &reference) {
  auto mismatch = [&](const std::string &what) {
    return Status::failure(ATTNRT_ERROR_INVALID_ARGUMENT,
                           "the reference case of kernel " + reference.kernel +
                               " does not fit kernel " + kernel + ": " + what);
  };
  if (reference.kernel != kernel)
    return mismatch("it checks another kernel");
  const mlir::attn::NpyArray *arrays[kMaxParams] = {
      &reference.query, &reference.key, &reference.value,
      &reference.out.values};
  std::pair<int32_t, const mlir::attn::NpyArray *> optional[] = {
      {layout.lse, reference.lse ? &reference.lse->values : nullptr},
      {layout.mask, reference.mask ? &*reference.mask : nullptr},
      {layout.blockMask, reference.blockMask ? &*reference.blockMask : nullptr},
      {layout.keyLengths,
       reference.keyLengths ? &*reference.keyLengths : nullptr}};
  const char *optionalNames[] = {"an LSE", "a mask", "a block mask",
                                 "key lengths"};
  for (size_t i = 0; i < std::size(optional); ++i) {
    auto [index, array] = optional[i];
    if ((index >= 0) != (array != nullptr))
      return mismatch(std::string(index >= 0 ? "the kernel has "
                                             : "the case "
                                               "has ") +
                      optionalNames[i] + ", the " +
                      (index >= 0 ? "case" : "kernel") + " has none");
    if (index >= 0)
      arrays[index] = array;
  }
  for (int32_t i = 0; i < layout.count; ++i) {
    const attnrtParamInfo &param = layout.params[i];
    const mlir::attn::NpyArray &array = *arrays[i];
    std::vector<int64_t> sizes(param.sizes, param.sizes + param.rank);
    if (array.shape != sizes)
      return mismatch(std::string(param.name) + " has shape " +
                      shapeText(array.shape) + ", the kernel's is " +
                      shapeText(sizes));
    // The outputs are the reference's f32 values, whatever the kernel
    // writes.
    if (layout.isOutput(i))
      continue;
    std::optional<attnrtDType> type = attnrtTypeOf(array.elementType);
    if (type != param.dtype)
      return mismatch(std::string(param.name) + " holds " +
                      (type ? attnrtDTypeName(*type) : "f64") +
                      ", the kernel takes " + attnrtDTypeName(param.dtype));
  }
  return Status();
}

/// How many sets of a launch's tensors (`setBytes` each) a timing rotates
/// through: enough that the ones in flight never fit in L2 together,
/// within a quarter of the device's memory.
int benchSets(const attnrtDeviceInfo &device, size_t setBytes) {
  size_t wanted = 2 * static_cast<size_t>(device.l2CacheBytes) / setBytes + 2;
  size_t affordable = static_cast<size_t>(device.totalMemoryBytes) / 4 /
                      setBytes;
  return static_cast<int>(
      std::max<size_t>(1, std::min<size_t>({wanted, affordable, 64})));
}

/// Times `kernel` (options.warmup launches, then options.iterations timed
/// one by one with CUDA events), launch i on the `params` tensors of
/// tensorsOf(i): report.timing, from the median.
Status timeLaunches(attnrtContext context, attnrtKernel kernel, int32_t params,
                    const std::function<attnrtTensor *(int)> &tensorsOf,
                    int sets, const CheckOptions &options,
                    KernelReport &report) {
  for (int i = 0; i < options.warmup; ++i)
    CHECK_STATUS(
        Status::of(attnrtLaunch(kernel, tensorsOf(i), params, nullptr)));
  std::vector<attnrt::Timer> timers(options.iterations);
  for (attnrt::Timer &timer : timers)
    CHECK_STATUS(Status::of(attnrtTimerCreate(context, timer.out())));
  for (int i = 0; i < options.iterations; ++i) {
    CHECK_STATUS(Status::of(attnrtTimerStart(timers[i].get(), nullptr)));
    CHECK_STATUS(Status::of(
        attnrtLaunch(kernel, tensorsOf(options.warmup + i), params, nullptr)));
    CHECK_STATUS(Status::of(attnrtTimerStop(timers[i].get(), nullptr)));
  }
  std::vector<double> times;
  for (attnrt::Timer &timer : timers) {
    float ms = 0;
    CHECK_STATUS(Status::of(attnrtTimerElapsedMs(timer.get(), &ms)));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  Timing timing;
  size_t n = times.size();
  timing.medianMs =
      n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  timing.minMs = times.front();
  timing.tflops = report.flops() / timing.medianMs / 1e9;
  if (options.peakTflops > 0)
    timing.fractionOfPeak = timing.tflops / options.peakTflops;
  timing.inputSets = sets;
  timing.iterations = options.iterations;
  report.timing = timing;
  return Status();
}

Status bench(const CudaDriver &d, attnrtContext context,
             const attnrtDeviceInfo &device, attnrtKernel kernel,
             const Layout &layout, const CheckOptions &options,
             TensorSet &first, const HostInputs &launchInputs,
             KernelReport &report) {
  int sets = benchSets(device, layout.totalBytes());
  std::vector<std::unique_ptr<TensorSet>> extra;
  // Other inputs, the same masks and key lengths: every launch does the
  // same work.
  HostInputs others = launchInputs;
  others.query = others.key = others.value = nullptr;
  for (int s = 1; s < sets; ++s) {
    auto set = std::make_unique<TensorSet>();
    CHECK_STATUS(allocateSet(context, layout, *set));
    CHECK_STATUS(
        fillInputs(d, context, checksOnHost(options, d), layout, others,
                   options.seed + 3 * s, *set));
    extra.push_back(std::move(set));
  }
  auto tensorsOf = [&](int i) {
    return i % sets == 0 ? first.tensors : extra[i % sets - 1]->tensors;
  };
  return timeLaunches(context, kernel, layout.count, tensorsOf, sets, options,
                      report);
}

} // namespace

std::vector<int32_t> attn::gpucheck::sampleKeyLengths(int64_t batch,
                                                      int64_t keys,
                                                      std::mt19937_64 &rng) {
  std::uniform_int_distribution<int64_t> level(1, keys);
  std::vector<int32_t> lengths(batch);
  for (int64_t b = 0; b < batch; ++b)
    lengths[b] = static_cast<int32_t>(b == 0                ? keys
                                      : b == 1 && batch > 2 ? 0
                                                            : level(rng));
  return lengths;
}

std::vector<uint8_t> attn::gpucheck::sampleMask(attnrtDType dtype,
                                                const int64_t sizes[4],
                                                std::mt19937_64 &rng) {
  int64_t planes = sizes[0] * sizes[1], rows = sizes[2], keys = sizes[3];
  size_t bytes = attnrtDTypeSize(dtype);
  std::vector<uint8_t> mask(static_cast<size_t>(planes * rows * keys) * bytes);
  std::uniform_int_distribution<int> eighth(0, 7);
  std::normal_distribution<float> normal;
  auto store = [&](size_t index, float value) {
    uint8_t *at = mask.data() + index * bytes;
    if (dtype == ATTNRT_F32) {
      std::memcpy(at, &value, 4);
    } else {
      uint16_t bits = mlir::attn::floatToHalfBits(
          value, dtype == ATTNRT_F16 ? mlir::attn::HalfFormat::F16
                                     : mlir::attn::HalfFormat::BF16);
      std::memcpy(at, &bits, 2);
    }
  };
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t row = 0; row < rows; ++row)
      for (int64_t key = 0; key < keys; ++key) {
        size_t index = static_cast<size_t>((plane * rows + row) * keys + key);
        bool hidden = row == 1 || eighth(rng) < (dtype == ATTNRT_I1 ? 2 : 1);
        if (dtype == ATTNRT_I1)
          mask[index] = hidden ? 0 : 1;
        else
          store(index,
                hidden ? -std::numeric_limits<float>::infinity() : normal(rng));
      }
  return mask;
}

std::vector<uint8_t> attn::gpucheck::sampleBlockMask(const int64_t sizes[4],
                                                     std::mt19937_64 &rng) {
  // 0 empty, 1 partial, 2 full (BlockMaskValue).
  std::discrete_distribution<int> kind({1, 2, 1});
  int64_t rows = sizes[2], columns = sizes[3];
  std::vector<uint8_t> blocks(
      static_cast<size_t>(sizes[0] * sizes[1] * rows * columns));
  for (int64_t index = 0, e = blocks.size(); index < e; ++index) {
    bool firstRow = rows > 1 && (index / columns) % rows == 0;
    blocks[index] = firstRow ? 0 : static_cast<uint8_t>(kind(rng));
  }
  return blocks;
}

bool KernelReport::passed() const {
  return std::all_of(checks.begin(), checks.end(),
                     [](const OutputCheck &check) { return check.passed; });
}

double KernelReport::flops() const {
  double keys = static_cast<double>(sizes.batch) * sizes.keyLen;
  if (!keyLengths.empty())
    keys = std::accumulate(keyLengths.begin(), keyLengths.end(), 0.0);
  double flops = 4.0 * sizes.queryHeads * sizes.queryLen * keys * sizes.headDim;
  return (attention.causal ? flops / 2 : flops) * (gradient ? 2.5 : 1.0);
}

namespace {

/// Opens the CUDA driver for a check; a timed one first needs at least one
/// timed launch and no negative warm-up.
Status openCheckDriver(const CheckOptions &options, bool timed,
                       const CudaDriver *&driver) {
  if (timed && (options.iterations < 1 || options.warmup < 0))
    return Status::failure(ATTNRT_ERROR_INVALID_ARGUMENT,
                           "iterations must be positive, warm-up not negative");
  std::string error;
  bool noDevice = false;
  driver = openCudaDriver(error, noDevice);
  if (!driver)
    return Status::failure(ATTNRT_ERROR_NO_DRIVER, error);
  return Status();
}

/// runKernel, checked against REFERENCE's outputs when it is given (whose
/// inputs INPUTS are), else against the GPU reference.
Status runAndCheck(attnrtContext context, attnrtKernel kernel,
                   const CheckOptions &options, const HostInputs &inputs,
                   const ReferenceCase *reference, KernelReport &report) {
  const CudaDriver *driver = nullptr;
  CHECK_STATUS(openCheckDriver(options, /*timed=*/true, driver));
  const CudaDriver &d = *driver;
  attnrtDeviceInfo device;
  CHECK_STATUS(Status::of(attnrtContextGetDeviceInfo(context, &device)));

  Layout layout;
  CHECK_STATUS(readLayout(kernel, options.lengths, layout));
  report.kernel = attnrtKernelName(kernel);
  if (reference)
    CHECK_STATUS(matchReferenceCase(report.kernel, layout, *reference));
  report.target = attnrtKernelTarget(kernel);
  report.dtype = layout.params[0].dtype;
  const int64_t *q = layout.params[0].sizes, *v = layout.params[2].sizes;
  report.sizes.batch = q[0];
  report.sizes.queryHeads = q[1];
  report.sizes.kvHeads = v[1];
  report.sizes.queryLen = q[2];
  report.sizes.keyLen = v[2];
  report.sizes.headDim = q[3];
  report.sizes.valueDim = v[3];
  CHECK_STATUS(
      Status::of(attnrtKernelGetAttention(kernel, &report.attention)));
  CHECK_STATUS(
      Status::of(attnrtKernelGetResources(kernel, &report.resources)));

  // The mask and key lengths of every launch: the caller's or the default
  // ones.
  HostInputs launchInputs = inputs;
  if (layout.keyLengths >= 0) {
    report.keyLengths = keyLengthsOf(inputs, report.sizes.batch,
                                     report.sizes.keyLen, options.seed + 3);
    launchInputs.keyLengths = report.keyLengths.data();
  }
  std::vector<uint8_t> sampledMask, sampledBlockMask;
  if (layout.mask >= 0 && !inputs.mask) {
    std::mt19937_64 rng(options.seed + 4);
    const attnrtParamInfo &mask = layout.params[layout.mask];
    sampledMask = sampleMask(mask.dtype, mask.sizes, rng);
    launchInputs.mask = sampledMask.data();
  }
  if (layout.blockMask >= 0 && !inputs.blockMask) {
    std::mt19937_64 rng(options.seed + 5);
    sampledBlockMask =
        sampleBlockMask(layout.params[layout.blockMask].sizes, rng);
    launchInputs.blockMask = sampledBlockMask.data();
  }
  TensorSet set;
  CHECK_STATUS(allocateSet(context, layout, set));
  const bool onHost = checksOnHost(options, d);
  CHECK_STATUS(fillInputs(d, context, onHost, layout, launchInputs,
                          options.seed, set));
  CHECK_STATUS(Status::of(
      attnrtKernelGetGrid(kernel, set.tensors, layout.count, report.grid)));
  CHECK_STATUS(
      Status::of(attnrtLaunch(kernel, set.tensors, layout.count, nullptr)));
  CHECK_STATUS(Status::of(attnrtSynchronize(context, nullptr)));
  CHECK_STATUS(copyOut(context, set.buffers[3].data(), layout.bytes(3),
                       layout.params[3].dtype, report.out));
  bool hasLse = layout.lse >= 0;
  if (hasLse)
    CHECK_STATUS(copyOut(context, set.buffers[layout.lse].data(),
                         layout.bytes(layout.lse),
                         layout.params[layout.lse].dtype, report.lse));

  // Run to run, the outputs must be the same bits (Lean attention's hosts
  // merge in a fixed order, whichever contributor finishes first).
  for (int32_t i = 3; i < layout.count; ++i)
    if (layout.isOutput(i))
      CHECK_STATUS(poison(d, layout.params[i].dtype, set.buffers[i].data(),
                          layout.elements(i)));
  CHECK_STATUS(
      Status::of(attnrtLaunch(kernel, set.tensors, layout.count, nullptr)));
  CHECK_STATUS(Status::of(attnrtSynchronize(context, nullptr)));
  std::vector<float> again, againLse;
  CHECK_STATUS(copyOut(context, set.buffers[3].data(), layout.bytes(3),
                       layout.params[3].dtype, again));
  if (hasLse)
    CHECK_STATUS(copyOut(context, set.buffers[layout.lse].data(),
                         layout.bytes(layout.lse),
                         layout.params[layout.lse].dtype, againLse));
  report.checks.push_back(
      compareRepeat(report.out, again, report.lse, againLse));

  // A score region is IR the GPU reference cannot evaluate, and a constant
  // block mask's values are in the module only: such a kernel is checked
  // against a reference case.
  if (options.check && reference) {
    report.checks.push_back(
        compareWithCase("O", report.out, reference->out, options.tolerance));
    if (hasLse)
      report.checks.push_back(compareWithCase(
          "LSE", report.lse, *reference->lse, options.tolerance));
  } else if (options.check &&
             (report.attention.scoreRegion || report.attention.blockMask)) {
    report.unchecked =
        std::string("the kernel ") +
        (report.attention.scoreRegion ? "inlines a score region, which"
                                      : "has a block mask, whose values") +
        " the GPU reference cannot know; check it against a reference case "
        "(attn-run --write-reference) or with attn-run --device=gpu";
  } else if (options.check) {
    std::vector<float> exactOut, exactLse, naiveOut, naiveLse;
    std::optional<HostOperands> host;
    if (onHost)
      CHECK_STATUS(readOperands(context, layout, set, host.emplace()));
    const HostOperands *hostOperands = host ? &*host : nullptr;
    CHECK_STATUS(runReference(d, context, device, hostOperands, layout, set,
                              report, false, exactOut, exactLse));
    bool half = report.dtype != ATTNRT_F32 ||
                layout.params[3].dtype != ATTNRT_F32;
    bool useNaive = half && !options.tolerance;
    if (useNaive)
      CHECK_STATUS(runReference(d, context, device, hostOperands, layout, set,
                                report, true, naiveOut, naiveLse));
    report.checks.push_back(compareWithGpuReference(
        "O", report.out, exactOut, useNaive ? &naiveOut : nullptr, report.dtype,
        options.tolerance));
    if (hasLse)
      report.checks.push_back(compareWithGpuReference(
          "LSE", report.lse, exactLse, useNaive ? &naiveLse : nullptr,
          report.dtype, options.tolerance));
  }
  if (options.bench)
    CHECK_STATUS(bench(d, context, device, kernel, layout, options, set,
                       launchInputs, report));
  return Status();
}

} // namespace

Status attn::gpucheck::runKernel(attnrtContext context, attnrtKernel kernel,
                                 const CheckOptions &options,
                                 const HostInputs &inputs,
                                 KernelReport &report) {
  return runAndCheck(context, kernel, options, inputs, nullptr, report);
}

Status attn::gpucheck::runReferenceCase(attnrtContext context,
                                        attnrtKernel kernel,
                                        const CheckOptions &options,
                                        const ReferenceCase &reference,
                                        KernelReport &report) {
  if (options.lengths)
    return Status::failure(ATTNRT_ERROR_INVALID_ARGUMENT,
                           "the reference case of kernel " + reference.kernel +
                               " fixes the lengths: give no --lengths");
  const std::vector<int64_t> &q = reference.query.shape,
                             &k = reference.key.shape;
  if (q.size() != 4 || k.size() != 4)
    return Status::failure(ATTNRT_ERROR_INVALID_ARGUMENT,
                           "the reference case of kernel " + reference.kernel +
                               ": Q and K must be [B, H, S, D] (read it with "
                               "readReferenceCase)");
  // A kernel compiled for run-time lengths runs at the case's.
  CheckOptions caseOptions = options;
  caseOptions.lengths = CheckOptions::Lengths{q[0], q[2], k[2]};
  HostInputs inputs;
  inputs.query = reference.query.data.data();
  inputs.key = reference.key.data.data();
  inputs.value = reference.value.data.data();
  if (reference.mask)
    inputs.mask = reference.mask->data.data();
  if (reference.blockMask)
    inputs.blockMask = reference.blockMask->data.data();
  if (reference.keyLengths)
    inputs.keyLengths =
        reinterpret_cast<const int32_t *>(reference.keyLengths->data.data());
  return runAndCheck(context, kernel, caseOptions, inputs, &reference, report);
}

namespace {

/// A backward kernel's parameters, in order: inputs Q, K, V, O, LSE, dO,
/// outputs dQ, dK, dV, then the inputs mask, block_mask and key_lengths,
/// those it has.
constexpr int32_t kGradFixedParams = 9, kGradMaxParams = 12;
constexpr int32_t kGradFirstOutput = 6, kGradOutputs = 3;
const char *const kGradNames[kGradFixedParams] = {"Q",  "K",  "V",  "O", "LSE",
                                                  "dO", "dQ", "dK", "dV"};
constexpr int32_t kGradOptionalParams = 3;
const char *const kGradOptionalNames[kGradOptionalParams] = {
    "mask", "block_mask", "key_lengths"};

struct GradientParams {
  attnrtParamInfo info[kGradMaxParams];
  int32_t count = 0;
  /// The indices of the mask, block_mask and key_lengths, or -1.
  int32_t mask = -1, blockMask = -1, keyLengths = -1;

  bool isInput(int32_t i) const {
    return i < kGradFirstOutput || i >= kGradFirstOutput + kGradOutputs;
  }
  uint64_t elements(int32_t i) const { return elementsOf(info[i]); }
  size_t bytes(int32_t i) const { return bytesOf(info[i]); }
};

/// Reads a backward kernel's parameters; why they are not Q, K, V, O, LSE,
/// dO, dQ, dK, dV[, mask][, block_mask][, key_lengths], or empty.
std::string readGradientParams(attnrtKernel kernel, GradientParams &params) {
  params.count = attnrtKernelParamCount(kernel);
  if (params.count < kGradFixedParams || params.count > kGradMaxParams)
    return "a backward kernel has 9 parameters (Q, K, V, O, LSE, dO, dQ, dK, "
           "dV), then mask, block_mask and key_lengths when it has them";
  int32_t optional = 0;
  for (int32_t i = 0; i < params.count; ++i) {
    if (attnrtKernelGetParam(kernel, i, &params.info[i]) != ATTNRT_SUCCESS)
      return attnrtLastErrorMessage();
    std::string name = params.info[i].name;
    if (i < kGradFixedParams) {
      if (name != kGradNames[i])
        return "parameter " + std::to_string(i) + " is " + name + ", not " +
               kGradNames[i];
      continue;
    }
    while (optional < kGradOptionalParams &&
           name != kGradOptionalNames[optional])
      ++optional;
    if (optional == kGradOptionalParams)
      return "parameter " + std::to_string(i) + " is " + name +
             ", not mask, block_mask or key_lengths (in that order, after "
             "dV)";
    int32_t *indices[] = {&params.mask, &params.blockMask, &params.keyLengths};
    *indices[optional++] = i;
  }
  return {};
}

/// What `report` says of a backward kernel launched on `tensors`.
Status describeGradientKernel(attnrtKernel kernel, const GradientParams &params,
                              attnrtTensor *tensors, KernelReport &report) {
  report.gradient = true;
  report.target = attnrtKernelTarget(kernel);
  report.dtype = params.info[0].dtype;
  const int64_t *q = params.info[0].sizes, *v = params.info[2].sizes;
  report.sizes = {q[0], q[1], v[1], q[2], v[2], q[3], v[3]};
  CHECK_STATUS(Status::of(attnrtKernelGetAttention(kernel, &report.attention)));
  CHECK_STATUS(Status::of(attnrtKernelGetResources(kernel, &report.resources)));
  return Status::of(
      attnrtKernelGetGrid(kernel, tensors, params.count, report.grid));
}

} // namespace

Status attn::gpucheck::runGradientCase(attnrtContext context,
                                       attnrtKernel kernel,
                                       const CheckOptions &options,
                                       const GradientCase &reference,
                                       KernelReport &report) {
  const CudaDriver *driver = nullptr;
  CHECK_STATUS(openCheckDriver(options, /*timed=*/false, driver));
  report.kernel = attnrtKernelName(kernel);
  auto mismatch = [&](const std::string &what) {
    return Status::failure(ATTNRT_ERROR_INVALID_ARGUMENT,
                           "the gradient case of kernel " + reference.kernel +
                               " does not fit kernel " + report.kernel + ": " +
                               what);
  };
  if (reference.kernel != report.kernel)
    return mismatch("it checks another kernel");
  GradientParams params;
  if (std::string why = readGradientParams(kernel, params); !why.empty())
    return mismatch(why);
  // The case's array of each parameter.
  const mlir::attn::NpyArray *arrays[kGradMaxParams] = {
      &reference.query,
      &reference.key,
      &reference.value,
      &reference.out,
      &reference.lse,
      &reference.gradOut,
      &reference.gradQuery.values,
      &reference.gradKey.values,
      &reference.gradValue.values};
  for (auto [index, array, what] :
       {std::tuple{params.mask, &reference.mask, "a mask operand"},
        std::tuple{params.blockMask, &reference.blockMask, "a block mask"},
        std::tuple{params.keyLengths, &reference.keyLengths, "key lengths"}}) {
    if ((index >= 0) != array->has_value())
      return mismatch(
          std::string(index >= 0 ? "the kernel takes " : "the case has ") +
          what +
          (index >= 0 ? ", the case has none" : ", the kernel takes none"));
    if (index >= 0)
      arrays[index] = &**array;
  }
  attnrt::DeviceBuffer buffers[kGradMaxParams];
  attnrtTensor tensors[kGradMaxParams];
  for (int32_t i = 0; i < params.count; ++i) {
    const attnrtParamInfo &param = params.info[i];
    std::vector<int64_t> sizes(param.sizes, param.sizes + param.rank);
    if (arrays[i]->shape != sizes)
      return mismatch(std::string(param.name) + " has shape " +
                      shapeText(arrays[i]->shape) + ", the kernel's is " +
                      shapeText(sizes));
    if (params.isInput(i) &&
        attnrtTypeOf(arrays[i]->elementType) != param.dtype)
      return mismatch(std::string(param.name) + " is not in the kernel's " +
                      attnrtDTypeName(param.dtype));
    CHECK_STATUS(buffers[i].allocate(context, params.bytes(i)));
    tensors[i] = attnrt::contiguousTensor(buffers[i].data(), param.dtype,
                                          param.sizes, param.rank);
    if (params.isInput(i))
      CHECK_STATUS(Status::of(attnrtCopyToDevice(context, buffers[i].data(),
                                                 arrays[i]->data.data(),
                                                 params.bytes(i))));
  }
  CHECK_STATUS(describeGradientKernel(kernel, params, tensors, report));
  if (reference.keyLengths) {
    const int32_t *lengths =
        reinterpret_cast<const int32_t *>(reference.keyLengths->data.data());
    report.keyLengths.assign(lengths, lengths + report.sizes.batch);
    CHECK_STATUS(poisonPastKeyLengths(*driver, params.info[1],
                                      buffers[1].data(), params.info[2],
                                      buffers[2].data(), lengths));
  }
  // Two launches on outputs filled with NaN (an element no CTA writes
  // shows): the second's bits must be the first's.
  std::vector<float> results[2][kGradOutputs];
  for (auto &launch : results) {
    for (int32_t o = 0; o < kGradOutputs; ++o)
      CHECK_STATUS(poison(*driver, params.info[kGradFirstOutput + o].dtype,
                          buffers[kGradFirstOutput + o].data(),
                          params.elements(kGradFirstOutput + o)));
    CHECK_STATUS(
        Status::of(attnrtLaunch(kernel, tensors, params.count, nullptr)));
    CHECK_STATUS(Status::of(attnrtSynchronize(context, nullptr)));
    for (int32_t o = 0; o < kGradOutputs; ++o)
      CHECK_STATUS(copyOut(context, buffers[kGradFirstOutput + o].data(),
                           params.bytes(kGradFirstOutput + o),
                           params.info[kGradFirstOutput + o].dtype, launch[o]));
  }
  OutputCheck repeat =
      compareRepeat(results[0][0], results[1][0], results[0][1], results[1][1]);
  OutputCheck valueRepeat = compareRepeat(results[0][2], results[1][2], {}, {});
  repeat.differing += valueRepeat.differing;
  repeat.maxAbs = std::max(repeat.maxAbs, valueRepeat.maxAbs);
  repeat.passed &= valueRepeat.passed;
  repeat.toleranceOrigin = "bitwise, dQ, dK and dV of a second launch";
  report.checks.push_back(repeat);
  const ReferenceOutput *expected[] = {&reference.gradQuery, &reference.gradKey,
                                       &reference.gradValue};
  if (options.check)
    for (int32_t o = 0; o < kGradOutputs; ++o)
      report.checks.push_back(compareWithCase(kGradNames[kGradFirstOutput + o],
                                              results[0][o], *expected[o],
                                              options.tolerance));
  return Status();
}

Status attn::gpucheck::benchGradientKernel(attnrtContext context,
                                           attnrtKernel kernel,
                                           const CheckOptions &options,
                                           KernelReport &report) {
  const CudaDriver *driver = nullptr;
  CHECK_STATUS(openCheckDriver(options, /*timed=*/true, driver));
  report.kernel = attnrtKernelName(kernel);
  GradientParams params;
  if (std::string why = readGradientParams(kernel, params); !why.empty())
    return Status::failure(ATTNRT_ERROR_INVALID_BUNDLE,
                           "kernel " + report.kernel + ": " + why);
  size_t setBytes = 0;
  for (int32_t i = 0; i < params.count; ++i)
    setBytes += params.bytes(i);
  attnrtDeviceInfo device;
  CHECK_STATUS(Status::of(attnrtContextGetDeviceInfo(context, &device)));
  int sets = benchSets(device, setBytes);
  // Key lengths: every sequence full (Sk keys), the work of the kernel's
  // shapes; a seeded mask and block mask.
  const attnrtParamInfo &value = params.info[2];
  std::vector<int32_t> lengths(params.info[0].sizes[0],
                               static_cast<int32_t>(value.sizes[2]));
  std::vector<uint8_t> mask;
  if (params.mask >= 0) {
    std::mt19937_64 rng(options.seed + kGradMaxParams);
    mask = sampleMask(params.info[params.mask].dtype,
                      params.info[params.mask].sizes, rng);
  }
  std::vector<uint8_t> blocks;
  if (params.blockMask >= 0) {
    std::mt19937_64 rng(options.seed + kGradMaxParams + 1);
    blocks = sampleBlockMask(params.info[params.blockMask].sizes, rng);
  }
  struct GradientSet {
    attnrt::DeviceBuffer buffers[kGradMaxParams];
    attnrtTensor tensors[kGradMaxParams];
  };
  std::vector<std::unique_ptr<GradientSet>> launchSets;
  for (int s = 0; s < sets; ++s) {
    auto set = std::make_unique<GradientSet>();
    for (int32_t i = 0; i < params.count; ++i) {
      const attnrtParamInfo &param = params.info[i];
      CHECK_STATUS(set->buffers[i].allocate(context, params.bytes(i)));
      set->tensors[i] = attnrt::contiguousTensor(
          set->buffers[i].data(), param.dtype, param.sizes, param.rank);
      const void *host = i == params.mask        ? mask.data()
                         : i == params.blockMask ? blocks.data()
                         : i == params.keyLengths
                             ? static_cast<const void *>(lengths.data())
                             : nullptr;
      if (host)
        CHECK_STATUS(Status::of(attnrtCopyToDevice(
            context, set->buffers[i].data(), host, params.bytes(i))));
      else if (params.isInput(i))
        CHECK_STATUS(fillNormal(*driver, context,
                                checksOnHost(options, *driver), param.dtype,
                                set->buffers[i].data(),
                                params.elements(i),
                                options.seed + kGradMaxParams * s + i));
    }
    launchSets.push_back(std::move(set));
  }
  CHECK_STATUS(
      describeGradientKernel(kernel, params, launchSets[0]->tensors, report));
  if (params.keyLengths >= 0)
    report.keyLengths = lengths;
  return timeLaunches(
      context, kernel, params.count,
      [&](int i) { return launchSets[i % sets]->tensors; }, sets, options,
      report);
}

void attn::gpucheck::printReport(const KernelReport &r, std::FILE *stream) {
  std::fprintf(stream, "kernel %s (%s)\n", r.kernel.c_str(), r.target.c_str());
  std::fprintf(stream,
               "  problem  %s B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld D=%lld "
               "Dv=%lld scale=%.6g%s",
               attnrtDTypeName(r.dtype), (long long)r.sizes.batch,
               (long long)r.sizes.queryHeads, (long long)r.sizes.kvHeads,
               (long long)r.sizes.queryLen, (long long)r.sizes.keyLen,
               (long long)r.sizes.headDim, (long long)r.sizes.valueDim,
               r.attention.scale, r.attention.causal ? " causal" : "");
  if (r.attention.hasWindow)
    std::fprintf(stream, " window=(%lld, %lld)",
                 (long long)r.attention.windowLeft,
                 (long long)r.attention.windowRight);
  if (r.attention.softcap > 0)
    std::fprintf(stream, " softcap=%.6g", r.attention.softcap);
  if (r.attention.scoreRegion)
    std::fprintf(stream, " score-region");
  if (r.attention.blockMaskRows)
    std::fprintf(stream, " block-mask=%lldx%lld%s",
                 (long long)r.attention.blockMaskRows,
                 (long long)r.attention.blockMaskKeys,
                 r.attention.blockMask ? " (constant)" : "");
  if (!r.keyLengths.empty()) {
    std::fprintf(stream, " key-lengths=");
    for (size_t b = 0; b < r.keyLengths.size(); ++b)
      std::fprintf(stream, b ? ",%d" : "%d", r.keyLengths[b]);
  }
  const attnrtKernelResources &res = r.resources;
  std::fprintf(stream,
               "\n  launch   grid %ux%ux%u, %d threads, %lld B dynamic shared "
               "memory\n",
               r.grid[0], r.grid[1], r.grid[2], res.threadsPerBlock,
               (long long)res.dynamicSharedBytes);
  std::fprintf(stream,
               "  kernel   %d registers/thread, %lld B local/thread, %lld B "
               "static shared, %d CTA(s)/SM\n",
               res.registersPerThread, (long long)res.localBytesPerThread,
               (long long)res.staticSharedBytes, res.ctasPerMultiprocessor);
  for (const OutputCheck &c : r.checks) {
    std::fprintf(stream,
                 "  %-8s max abs %.3e, rel L2 %.3e, tolerance %.3e (%s)",
                 c.name.c_str(), c.maxAbs, c.relL2, c.tolerance,
                 c.toleranceOrigin.c_str());
    if (c.nanCount)
      std::fprintf(stream, ", %lld elements NaN or mismatched infinities",
                   (long long)c.nanCount);
    if (c.differing)
      std::fprintf(stream, ", %lld elements differ", (long long)c.differing);
    std::fprintf(stream, ": %s\n", c.passed ? "PASS" : "FAIL");
  }
  if (!r.unchecked.empty())
    std::fprintf(stream, "  check    not made: %s\n", r.unchecked.c_str());
  if (r.timing) {
    const Timing &t = *r.timing;
    std::fprintf(stream,
                 "  time     %.4f ms median (min %.4f) of %d launches over %d "
                 "input set(s): %.1f TFLOP/s",
                 t.medianMs, t.minMs, t.iterations, t.inputSets, t.tflops);
    if (t.fractionOfPeak > 0)
      std::fprintf(stream, ", %.1f%% of the measured matmul peak",
                   100 * t.fractionOfPeak);
    std::fprintf(stream, "\n");
  }
}

void attn::gpucheck::printCsvHeader(std::FILE *stream) {
  std::fprintf(
      stream, "device,kernel,target,dtype,batch,query_heads,kv_heads,query_len,"
              "key_len,"
              "head_dim,causal,registers,ctas_per_sm,o_rel_l2,o_tolerance,"
              "lse_rel_l2,passed,median_ms,tflops,fraction_of_peak\n");
}

void attn::gpucheck::printCsvRow(const KernelReport &r,
                                 const attnrtDeviceInfo &device,
                                 std::FILE *stream) {
  // A field of the check `name` ("O", "LSE"), or "" without one.
  auto field = [&](const char *name, double OutputCheck::*member) {
    for (const OutputCheck &c : r.checks)
      if (c.name == name) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.3e", c.*member);
        return std::string(text);
      }
    return std::string();
  };
  std::fprintf(
      stream, "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%d,%s,%s,%s,%s,",
      device.name, r.kernel.c_str(), r.target.c_str(), attnrtDTypeName(r.dtype),
      (long long)r.sizes.batch, (long long)r.sizes.queryHeads,
      (long long)r.sizes.kvHeads, (long long)r.sizes.queryLen,
      (long long)r.sizes.keyLen, (long long)r.sizes.headDim, r.attention.causal,
      r.resources.registersPerThread, r.resources.ctasPerMultiprocessor,
      field("O", &OutputCheck::relL2).c_str(),
      field("O", &OutputCheck::tolerance).c_str(),
      field("LSE", &OutputCheck::relL2).c_str(),
      r.checks.empty() ? "" : (r.passed() ? "yes" : "no"));
  if (r.timing)
    std::fprintf(stream, "%.4f,%.1f,%.3f\n", r.timing->medianMs,
                 r.timing->tflops, r.timing->fractionOfPeak);
  else
    std::fprintf(stream, ",,\n");
}
