//===- EmulatorTestSupport.h - Running tiny kernels on the emulator -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What the PTX emulator's unit tests share: a kernel k in the module
// boilerplate, parsing it, packing its parameters, launching one CTA and
// zero-filled device arrays.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_UNITTESTS_PTXEMULATOR_EMULATORTESTSUPPORT_H
#define ATTN_UNITTESTS_PTXEMULATOR_EMULATORTESTSUPPORT_H

#include "attn/PtxEmulator/Device.h"
#include "attn/PtxEmulator/Program.h"

#include "gtest/gtest.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace attn::ptxemu::testing {

/// The bf16 pattern of a float that bf16 holds exactly (its upper half).
inline uint16_t exactBFloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  EXPECT_EQ(bits & 0xffffu, 0u) << value << " is not exact in bf16";
  return static_cast<uint16_t>(bits >> 16);
}

/// A kernel named k with the given parameters and body, in the module
/// boilerplate every test shares.
inline std::string kernelPtx(const std::string &parameters,
                             const std::string &body) {
  return ".version 8.0\n"
         ".target sm_90a\n"
         ".address_size 64\n"
         "\n"
         ".visible .entry k(" +
         parameters + ")\n{\n" + body + "}\n";
}

inline std::unique_ptr<Module> parse(const std::string &ptx) {
  std::string error;
  std::unique_ptr<Module> module = parseModule(ptx, error);
  EXPECT_TRUE(module) << error << "\n" << ptx;
  if (module) {
    EXPECT_TRUE(module->findKernel("k"));
  }
  return module;
}

/// The parameter buffer: each value's low bytes at its parameter's offset.
inline std::vector<uint8_t>
packParameters(const Kernel &kernel, const std::vector<uint64_t> &values) {
  EXPECT_EQ(values.size(), kernel.parameters.size());
  std::vector<uint8_t> buffer(kernel.parameterBytes, 0);
  for (size_t i = 0; i < values.size() && i < kernel.parameters.size(); ++i) {
    const Parameter &p = kernel.parameters[i];
    EXPECT_LE(p.offset + p.bytes, buffer.size());
    EXPECT_LE(p.bytes, 8u);
    std::memcpy(buffer.data() + p.offset, &values[i], p.bytes);
  }
  return buffer;
}

inline uint64_t addressOf(const void *pointer) {
  return reinterpret_cast<uint64_t>(pointer);
}

/// Launches kernel k of MODULE as one CTA of THREADS threads.
inline LaunchResult launch(Device &device, const Module &module,
                           const std::vector<uint64_t> &arguments,
                           uint32_t threads) {
  const Kernel *kernel = module.findKernel("k");
  LaunchShape shape;
  shape.grid = {1, 1, 1};
  shape.block = {threads, 1, 1};
  shape.residentCtas = 1;
  return device.launch(*kernel, shape, packParameters(*kernel, arguments));
}

/// Typed device memory, zero-filled.
template <typename T> T *allocateArray(Device &device, size_t count) {
  void *pointer = device.allocate(count * sizeof(T));
  EXPECT_TRUE(pointer);
  std::memset(pointer, 0, count * sizeof(T));
  return static_cast<T *>(pointer);
}

} // namespace attn::ptxemu::testing

#endif // ATTN_UNITTESTS_PTXEMULATOR_EMULATORTESTSUPPORT_H
