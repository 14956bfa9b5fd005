//===- NvccCorpusTest.cpp - Kernels nvcc compiled, on the PTX emulator ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A corpus of kernels the project's generator did not write: CUDA C++ with
// inline PTX (unittests/PtxEmulator/Corpus/*.cu) that nvcc compiles to PTX
// at build time, run on the emulator against results the host computes from
// the documented semantics. Each kernel is also compiled with a -D macro
// that injects a bug a programmer makes, and the emulator must catch it:
// with a fault that names the problem, or with a result the host check
// rejects.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestSupport.h"

#include "attn/PtxEmulator/TensorMap.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

extern const char attnCorpusReducePtx[];
extern const char attnCorpusReduceMissingSyncPtx[];
extern const char attnCorpusAmpereMmaPtx[];
extern const char attnCorpusAmpereMmaBf16Ptx[];
extern const char attnCorpusAmpereMmaNoTransPtx[];
extern const char attnCorpusAmpereMmaNoWaitPtx[];
extern const char attnCorpusAmpereMmaF16AccumulatorPtx[];
extern const char attnCorpusHopperWgmmaPtx[];
extern const char attnCorpusHopperWgmmaNoFullWaitPtx[];
extern const char attnCorpusHopperWgmmaNoEmptyWaitPtx[];
extern const char attnCorpusHopperWgmmaSwizzle64BPtx[];
extern const char attnCorpusHopperWgmmaF16AccumulatorPtx[];
extern const char attnCorpusHopperWgmmaNoEndSyncPtx[];

using namespace attn::ptxemu;
using namespace attn::ptxemu::testing;

namespace {

std::unique_ptr<Module> load(const char *ptx, const char *kernel) {
  std::string error;
  std::unique_ptr<Module> module = parseModule(ptx, error);
  EXPECT_TRUE(module) << error;
  if (module) {
    EXPECT_TRUE(module->findKernel(kernel)) << kernel;
  }
  return module;
}

/// The parameter buffer of KERNEL: each argument's bytes at its
/// parameter's offset, the sizes checked against the declarations.
std::vector<uint8_t>
packArguments(const Kernel &kernel,
              const std::vector<std::vector<uint8_t>> &arguments) {
  EXPECT_EQ(arguments.size(), kernel.parameters.size());
  std::vector<uint8_t> buffer(kernel.parameterBytes, 0);
  for (size_t i = 0; i < arguments.size() && i < kernel.parameters.size();
       ++i) {
    const Parameter &p = kernel.parameters[i];
    EXPECT_EQ(arguments[i].size(), p.bytes) << p.name;
    if (arguments[i].size() == p.bytes)
      std::memcpy(buffer.data() + p.offset, arguments[i].data(), p.bytes);
  }
  return buffer;
}

template <typename T> std::vector<uint8_t> argument(T value) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

LaunchResult run(const Module &module, const char *kernel, Device &device,
                 uint32_t ctas, uint32_t threads,
                 const std::vector<std::vector<uint8_t>> &arguments) {
  const Kernel &k = *module.findKernel(kernel);
  LaunchShape shape;
  shape.grid = {ctas, 1, 1};
  shape.block = {threads, 1, 1};
  shape.residentCtas = ctas;
  return device.launch(k, shape, packArguments(k, arguments));
}

/// Whether the launch failed with a fault naming one of WHAT.
::testing::AssertionResult faultNames(const LaunchResult &result,
                                      const std::vector<std::string> &what) {
  if (result.ok)
    return ::testing::AssertionFailure() << "the launch succeeded";
  for (const std::string &name : what)
    if (result.error.find(name) != std::string::npos)
      return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the fault names none of the expected: " << result.error;
}

/// A deterministic stream of small pseudo-random numbers.
struct Lcg {
  uint32_t state;
  uint32_t next() {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  }
};

//===----------------------------------------------------------------------===//
// Reductions, atomics, ballots, a warp scan
//===----------------------------------------------------------------------===//

struct ReduceData {
  static constexpr unsigned kCtas = 4, kThreads = 256,
                            kElements = kCtas * kThreads;
  std::vector<float> in;
  std::vector<int> ints;
  float *deviceIn, *blockSums, *total;
  int *deviceInts, *intTotal, *scan;
  unsigned *positives;

  explicit ReduceData(Device &device) {
    // Floats in eighths between -4 and 4: every partial sum is exact in
    // f32, so any order of the reduction and the atomics gives one result.
    Lcg lcg{7};
    for (unsigned i = 0; i < kElements; ++i) {
      in.push_back(static_cast<float>(int(lcg.next() % 65) - 32) / 8);
      ints.push_back(int(lcg.next() % 201) - 100);
    }
    deviceIn = allocateArray<float>(device, kElements);
    deviceInts = allocateArray<int>(device, kElements);
    std::memcpy(deviceIn, in.data(), kElements * 4);
    std::memcpy(deviceInts, ints.data(), kElements * 4);
    blockSums = allocateArray<float>(device, kCtas);
    total = allocateArray<float>(device, 1);
    intTotal = allocateArray<int>(device, 1);
    positives = allocateArray<unsigned>(device, kElements / 32);
    scan = allocateArray<int>(device, kElements);
  }

  std::vector<std::vector<uint8_t>> arguments() const {
    return {argument(addressOf(deviceIn)),  argument(addressOf(deviceInts)),
            argument(addressOf(blockSums)), argument(addressOf(total)),
            argument(addressOf(intTotal)),  argument(addressOf(positives)),
            argument(addressOf(scan))};
  }
};

TEST(PtxEmulatorNvccCorpus, ReductionsAtomicsBallotsScan) {
  Device device;
  auto module = load(attnCorpusReducePtx, "corpusReduce");
  ASSERT_TRUE(module);
  ReduceData data(device);
  LaunchResult result = run(*module, "corpusReduce", device, data.kCtas,
                            data.kThreads, data.arguments());
  ASSERT_TRUE(result.ok) << result.error;

  float total = 0;
  int intTotal = 0;
  for (unsigned cta = 0; cta < data.kCtas; ++cta) {
    float sum = 0;
    for (unsigned t = 0; t < data.kThreads; ++t)
      sum += data.in[cta * data.kThreads + t];
    EXPECT_EQ(data.blockSums[cta], sum) << "block " << cta;
    total += sum;
  }
  EXPECT_EQ(*data.total, total);
  for (unsigned warp = 0; warp < data.kElements / 32; ++warp) {
    unsigned positives = 0;
    int prefix = 0;
    for (unsigned lane = 0; lane < 32; ++lane) {
      int value = data.ints[warp * 32 + lane];
      intTotal += value;
      positives += value > 0;
      prefix += value;
      EXPECT_EQ(data.scan[warp * 32 + lane], prefix)
          << "warp " << warp << " lane " << lane;
    }
    EXPECT_EQ(data.positives[warp], positives) << "warp " << warp;
  }
  EXPECT_EQ(*data.intTotal, intTotal);
}

TEST(PtxEmulatorNvccCorpus, ReductionWithoutSyncthreadsIsCaught) {
  // Warp 0 reads the other warps' sums with no barrier after their
  // writes: a read of memory nothing wrote yet when warp 0 runs first, a
  // race when a writer ran before it without ordering its write.
  Device device;
  auto module = load(attnCorpusReduceMissingSyncPtx, "corpusReduce");
  ASSERT_TRUE(module);
  ReduceData data(device);
  LaunchResult result = run(*module, "corpusReduce", device, data.kCtas,
                            data.kThreads, data.arguments());
  EXPECT_TRUE(
      faultNames(result, {"which nothing wrote", "shared-memory race"}));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

/// A random 16-bit float's bits, of magnitude between 1/8 and 2, and its
/// value: f16 (1 sign, 5 exponent, 10 mantissa bits, bias 15) or bf16 (the
/// upper half of an f32).
uint16_t randomHalf(Lcg &lcg, bool bf16, float &value) {
  uint32_t sign = lcg.next() % 2, exponent = lcg.next() % 4;
  uint32_t mantissa = lcg.next() % (bf16 ? 128 : 1024);
  float magnitude = std::ldexp(1.0f + mantissa / (bf16 ? 128.0f : 1024.0f),
                               int(exponent) - 3);
  value = sign ? -magnitude : magnitude;
  if (bf16)
    return static_cast<uint16_t>(sign << 15 | (exponent + 124) << 7 | mantissa);
  return static_cast<uint16_t>(sign << 15 | (exponent + 12) << 10 | mantissa);
}

/// A random f16 integer from -2 to 2, and its value.
uint16_t randomSmallInteger(Lcg &lcg, float &value) {
  static const uint16_t bits[] = {0xc000, 0xbc00, 0, 0x3c00, 0x4000};
  unsigned i = lcg.next() % 5;
  value = static_cast<float>(int(i) - 2);
  return bits[i];
}

/// C = A B for A (64 x K) and B (K x 64): the operands as the device holds
/// them and their values.
struct Product {
  static constexpr unsigned kM = 64, kN = 64;
  unsigned k;
  std::vector<float> a, b; // row-major values
  uint16_t *deviceA, *deviceB, *deviceBt;
  float *c;

  /// Random 16-bit floats, or (SMALLINTEGERS, f16) integers from -2 to 2,
  /// whose every partial sum (at most 4 K) f16 holds exactly.
  Product(Device &device, unsigned k, bool bf16, bool smallIntegers = false)
      : k(k) {
    auto random = [&](Lcg &lcg, float &value) {
      return smallIntegers ? randomSmallInteger(lcg, value)
                           : randomHalf(lcg, bf16, value);
    };
    Lcg lcg{k * 31 + bf16};
    deviceA = allocateArray<uint16_t>(device, kM * k);
    deviceB = allocateArray<uint16_t>(device, k * kN);
    deviceBt = allocateArray<uint16_t>(device, kN * k);
    a.resize(kM * k);
    b.resize(k * kN);
    for (unsigned i = 0; i < kM * k; ++i)
      deviceA[i] = random(lcg, a[i]);
    for (unsigned kk = 0; kk < k; ++kk)
      for (unsigned n = 0; n < kN; ++n) {
        uint16_t bits = random(lcg, b[kk * kN + n]);
        deviceB[kk * kN + n] = bits;
        deviceBt[n * k + kk] = bits;
      }
    c = allocateArray<float>(device, kM * kN);
  }

  /// Empty when every element of C is within f32 accumulation's error of
  /// the exact product (the 16-bit products are exact in f32; each of at
  /// most K roundings errs by 2^-24 of a partial sum, bounded by
  /// sum |a b|); else the first mismatch and how many there are.
  std::string mismatches() const {
    unsigned count = 0;
    std::ostringstream first;
    for (unsigned m = 0; m < kM; ++m)
      for (unsigned n = 0; n < kN; ++n) {
        double exact = 0, magnitude = 0;
        for (unsigned kk = 0; kk < k; ++kk) {
          double term = double(a[m * k + kk]) * b[kk * kN + n];
          exact += term;
          magnitude += std::fabs(term);
        }
        double got = c[m * kN + n];
        if (std::fabs(got - exact) <= std::ldexp(magnitude * k, -24))
          continue;
        if (count++ == 0)
          first << "C(" << m << ", " << n << ") = " << got << ", expected "
                << exact;
      }
    if (count == 0)
      return "";
    return first.str() + " (" + std::to_string(count) + " of " +
           std::to_string(kM * kN) + " wrong)";
  }
};

LaunchResult runAmpere(const char *ptx, Device &device, const Product &p) {
  auto module = load(ptx, "corpusAmpereMma");
  if (!module)
    return {false, "no module", {}};
  return run(*module, "corpusAmpereMma", device, 1, 128,
             {argument(addressOf(p.deviceA)), argument(addressOf(p.deviceB)),
              argument(addressOf(p.c)), argument(int32_t(p.k))});
}

TEST(PtxEmulatorNvccCorpus, AmpereMmaF16) {
  Device device;
  Product p(device, 128, /*bf16=*/false);
  LaunchResult result = runAmpere(attnCorpusAmpereMmaPtx, device, p);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(p.mismatches(), "");
}

TEST(PtxEmulatorNvccCorpus, AmpereMmaBf16) {
  Device device;
  Product p(device, 128, /*bf16=*/true);
  LaunchResult result = runAmpere(attnCorpusAmpereMmaBf16Ptx, device, p);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(p.mismatches(), "");
}

TEST(PtxEmulatorNvccCorpus, AmpereMmaF16Accumulator) {
  // mma.sync's f16.f16.f16.f16 form, and the f16-to-f32 conversions nvcc
  // writes for __half2float, on values whose sums f16 holds exactly.
  Device device;
  Product p(device, 128, /*bf16=*/false, /*smallIntegers=*/true);
  LaunchResult result =
      runAmpere(attnCorpusAmpereMmaF16AccumulatorPtx, device, p);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(p.mismatches(), "");
}

TEST(PtxEmulatorNvccCorpus, AmpereMmaWithoutTransIsWrong) {
  // B's ldmatrix without .trans hands mma.sync rows of B where it takes
  // columns: the kernel runs clean and C is wrong.
  Device device;
  Product p(device, 128, /*bf16=*/false);
  LaunchResult result = runAmpere(attnCorpusAmpereMmaNoTransPtx, device, p);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_NE(p.mismatches(), "");
}

TEST(PtxEmulatorNvccCorpus, AmpereMmaWithoutWaitGroupReadsEarly) {
  Device device;
  Product p(device, 128, /*bf16=*/false);
  LaunchResult result = runAmpere(attnCorpusAmpereMmaNoWaitPtx, device, p);
  EXPECT_TRUE(faultNames(result, {"cp.async"}));
}

/// A row-major 64 x K 16-bit matrix's map, a 64 x 64 box with the 128-byte
/// swizzle, as a 128-byte kernel argument.
std::vector<uint8_t> tensorMapArgument(const void *data, unsigned k,
                                       bool bf16) {
  TiledTensorMap t;
  t.dataType = bf16 ? TiledTensorMap::BF16 : TiledTensorMap::F16;
  t.rank = 2;
  t.globalAddress = addressOf(data);
  t.globalDim[0] = k;
  t.globalDim[1] = 64;
  t.globalStrides[0] = k * 2;
  t.boxDim[0] = 64;
  t.boxDim[1] = 64;
  t.elementStrides[0] = t.elementStrides[1] = 1;
  t.swizzle = TiledTensorMap::Swizzle128B;
  alignas(kTensorMapAlignment) uint8_t map[kTensorMapBytes];
  std::string error;
  EXPECT_TRUE(encodeTensorMap(map, t, error)) << error;
  return std::vector<uint8_t>(map, map + kTensorMapBytes);
}

/// The warp-specialised kernel (two warpgroups) or, with ONEWARPGROUP,
/// corpusHopperWgmmaOneWarpgroup.
LaunchResult runHopper(const char *ptx, Device &device, const Product &p,
                       bool bf16 = true, bool oneWarpgroup = false) {
  const char *kernel =
      oneWarpgroup ? "corpusHopperWgmmaOneWarpgroup" : "corpusHopperWgmma";
  auto module = load(ptx, kernel);
  if (!module)
    return {false, "no module", {}};
  return run(*module, kernel, device, 1, oneWarpgroup ? 128 : 256,
             {tensorMapArgument(p.deviceA, p.k, bf16),
              tensorMapArgument(p.deviceBt, p.k, bf16),
              argument(addressOf(p.c)), argument(int32_t(p.k))});
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaBf16) {
  // K = 256: four k-tiles through the two stages, each stage filled twice.
  Device device;
  device.setProfileTraffic(true);
  Product p(device, 256, /*bf16=*/true);
  LaunchResult result = runHopper(attnCorpusHopperWgmmaPtx, device, p);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(p.mismatches(), "");
  EXPECT_EQ(result.profile.tensorLoads, 8u);
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaOneWarpgroupBf16) {
  Device device;
  Product p(device, 256, /*bf16=*/true);
  LaunchResult result = runHopper(attnCorpusHopperWgmmaPtx, device, p,
                                  /*bf16=*/true, /*oneWarpgroup=*/true);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(p.mismatches(), "");
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaF16Accumulator) {
  // wgmma's f16.f16.f16 form, on values whose sums f16 holds exactly.
  Device device;
  Product p(device, 256, /*bf16=*/false, /*smallIntegers=*/true);
  LaunchResult result = runHopper(attnCorpusHopperWgmmaF16AccumulatorPtx,
                                  device, p, /*bf16=*/false);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(p.mismatches(), "");
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaWithoutFullWaitReadsEarly) {
  for (bool oneWarpgroup : {false, true}) {
    Device device;
    Product p(device, 256, /*bf16=*/true);
    LaunchResult result = runHopper(attnCorpusHopperWgmmaNoFullWaitPtx, device,
                                    p, /*bf16=*/true, oneWarpgroup);
    EXPECT_TRUE(
        faultNames(result, {"which nothing wrote", "shared-memory race"}))
        << "one warpgroup: " << oneWarpgroup;
  }
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaWithoutEndOfStepSyncIsCaught) {
  // Without the __syncthreads() that ends a step, warp 0 runs ahead and
  // thread 0 refills stages the other warps have not read yet: their full
  // mbarriers go through phases the other warps' parity waits never see,
  // a deadlock (on a GPU, a hang or a stage overwritten under a wgmma);
  // had the others read the stage first, the refill would be a race.
  Device device;
  Product p(device, 256, /*bf16=*/true);
  LaunchResult result = runHopper(attnCorpusHopperWgmmaNoEndSyncPtx, device, p,
                                  /*bf16=*/true, /*oneWarpgroup=*/true);
  EXPECT_TRUE(faultNames(result, {"deadlock", "shared-memory race"}));
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaWithoutEmptyWaitDeadlocks) {
  // The producer issues every k-tile at once, so each full mbarrier goes
  // through two phases before the consumer waits for the first: its parity
  // wait never succeeds. (On a GPU, a hang or, when the consumer is quick
  // enough, a stage overwritten while wgmma reads it.)
  Device device;
  Product p(device, 256, /*bf16=*/true);
  LaunchResult result =
      runHopper(attnCorpusHopperWgmmaNoEmptyWaitPtx, device, p);
  EXPECT_TRUE(faultNames(result, {"deadlock"}));
  EXPECT_TRUE(faultNames(result, {"waits on the mbarrier at shared offset"}));
}

TEST(PtxEmulatorNvccCorpus, HopperWgmmaWithTheWrongSwizzleIsWrong) {
  for (bool oneWarpgroup : {false, true}) {
    Device device;
    Product p(device, 256, /*bf16=*/true);
    LaunchResult result = runHopper(attnCorpusHopperWgmmaSwizzle64BPtx, device,
                                    p, /*bf16=*/true, oneWarpgroup);
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_NE(p.mismatches(), "") << "one warpgroup: " << oneWarpgroup;
  }
}

} // namespace
