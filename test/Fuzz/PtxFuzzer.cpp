//===- PtxFuzzer.cpp - Fuzz the PTX emulator ------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target attn-fuzz-ptx. The input is PTX text, parsed and decoded
// by the emulator (lib/PtxEmulator); each kernel of a module that loads is
// launched as one CTA of 128 threads with 4 KiB of dynamic shared memory,
// every 8-byte parameter slot holding the address of a 4 KiB zeroed device
// allocation (so loads and stores through parameters land in memory) and
// at most 200,000 warp instructions (the watchdog), twice on one arena. A
// launch may fail (a fault, a deadlock, the watchdog), but with a message, and
// the two launches of one kernel must give the same answer and leave the same
// bytes: the emulator keeps no state between launches and runs the same
// schedule.
//
//===----------------------------------------------------------------------===//

#include "attn/PtxEmulator/Device.h"
#include "attn/PtxEmulator/Program.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "attn-fuzz-ptx: %s\n", what);
  std::abort();
}

constexpr size_t kArena = 4096;

struct Run {
  attn::ptxemu::LaunchResult result;
  std::vector<uint8_t> memory;
};

/// Launches KERNEL on DEVICE with every parameter slot pointing at ARENA,
/// zeroed first.
Run launch(attn::ptxemu::Device &device, uint8_t *arena,
           const attn::ptxemu::Kernel &kernel) {
  using namespace attn::ptxemu;
  std::memset(arena, 0, kArena);
  std::vector<uint8_t> params(kernel.parameterBytes, 0);
  uint64_t address = reinterpret_cast<uint64_t>(arena);
  for (size_t at = 0; at + 8 <= params.size(); at += 8)
    std::memcpy(params.data() + at, &address, 8);
  LaunchShape shape;
  shape.block = {128, 1, 1};
  shape.dynamicSharedBytes = 4096;
  shape.residentCtas = 1;
  shape.instructionLimit = 200000;
  Run run;
  run.result = device.launch(kernel, shape, params);
  run.memory.assign(arena, arena + kArena);
  return run;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string error;
  std::unique_ptr<attn::ptxemu::Module> module =
      attn::ptxemu::parseModule(text, error);
  if (!module) {
    if (error.empty())
      fail("a module was refused without a message");
    return 0;
  }
  attn::ptxemu::Device device;
  auto *arena = static_cast<uint8_t *>(device.allocate(kArena));
  for (const auto &kernel : module->kernels) {
    Run first = launch(device, arena, *kernel);
    Run second = launch(device, arena, *kernel);
    if (!first.result.ok && first.result.error.empty())
      fail("a launch failed without a message");
    if (first.result.ok != second.result.ok ||
        first.result.error != second.result.error ||
        first.memory != second.memory)
      fail("two launches of one kernel differ");
  }
  return 0;
}
