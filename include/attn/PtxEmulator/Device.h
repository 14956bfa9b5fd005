//===- Device.h - An emulated GPU that runs PTX kernels on the CPU -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Device memory is host memory whose allocations the device knows, so every
// global access is checked against them. A launch runs the grid's CTAs, at
// most the occupancy's many resident at a time, their warps interleaved in
// slices; each warp's lanes execute together where their program counters
// agree. A launch ends in success or in the first fault, described as
// compute-sanitizer would: out-of-bounds or misaligned accesses, shared
// memory races between barriers, reads of shared memory never written,
// reads of cp.async destinations before their wait, collectives with missing
// lanes, and deadlocks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PTXEMULATOR_DEVICE_H
#define ATTN_PTXEMULATOR_DEVICE_H

#include "attn/PtxEmulator/Program.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace attn::ptxemu {

/// What a chip offers, as the driver reports it. H100 SXM by default.
struct Chip {
  std::string name = "NVIDIA H100 (PTX emulator)";
  int computeMajor = 9, computeMinor = 0;
  int multiprocessors = 132;
  int sharedBytesPerSm = 228 * 1024;
  int sharedBytesPerBlockOptin = 227 * 1024;
  int registersPerSm = 64 * 1024;
  int maxThreadsPerSm = 2048;
  int maxCtasPerSm = 32;
  int l2CacheBytes = 50 << 20;
  size_t memoryBytes = size_t(80) << 30;
};

/// Dynamic instruction counts by class, and memory-traffic shape.
struct Profile {
  enum Class { Mma, Ldmatrix, Exp2, OtherFloat, Integer, Memory, Control,
               Synchronisation, Conversion, kClasses };
  std::array<uint64_t, kClasses> warpInstructions{};
  uint64_t threadInstructions = 0;
  /// Shared-memory requests and the wavefronts they took (a request free of
  /// bank conflicts takes as many as its bytes need: one per 128).
  uint64_t sharedRequests = 0, sharedWavefronts = 0,
           sharedIdealWavefronts = 0;
  /// Global requests and the 32-byte sectors they touched.
  uint64_t globalRequests = 0, globalSectors = 0;
  /// Tensor copies (cp.async.bulk.tensor), each a box the copy engine
  /// moves: those into shared memory and the bytes of global memory they
  /// read (the box's elements inside the tensor), those out of it and the
  /// bytes they wrote. Not in the requests above.
  uint64_t tensorLoads = 0, tensorLoadBytes = 0, tensorStores = 0,
           tensorStoreBytes = 0;
  /// Bytes wgmma read from shared memory by descriptor: A's (when not from
  /// registers) for each warp's 16 rows, B's once a warpgroup. Not in the
  /// shared requests above.
  uint64_t wgmmaSharedBytes = 0;

  static const char *className(Class c);
};

struct LaunchShape {
  std::array<uint32_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// How many CTAs may be resident at once (SMs times CTAs per SM).
  uint32_t residentCtas = 1;
  /// A watchdog: the launch fails once its warps have executed this many
  /// instructions (0: no limit), as a GPU's watchdog ends a kernel that
  /// runs too long. For callers that run untrusted code (the fuzzer).
  uint64_t instructionLimit = 0;
};

struct LaunchResult {
  bool ok = true;
  /// The fault, with kernel, CTA, thread and instruction.
  std::string error;
  Profile profile;
};

class Device {
public:
  explicit Device(Chip chip = Chip()) : chipInfo(std::move(chip)) {}
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const Chip &chip() const { return chipInfo; }

  /// Device memory: null when BYTES would exceed the chip's memory.
  void *allocate(size_t bytes);
  /// False when POINTER is not the start of a live allocation.
  bool release(void *pointer);
  /// Memory the device does not own but kernels may address (a module's
  /// .global and .const variables), checked as allocations are.
  void addVariable(const void *pointer, size_t bytes);
  void removeVariable(const void *pointer);
  /// Whether [POINTER, POINTER + BYTES) lies inside one live allocation.
  bool contains(uint64_t pointer, size_t bytes) const;
  /// The live allocation holding ADDRESS, as (start, bytes); (0, 0) if none.
  std::pair<uint64_t, size_t> allocationOf(uint64_t address) const;
  /// Where ADDRESS lies: "offset N of an allocation of M bytes", "N bytes
  /// past the end of an allocation of M bytes" (the nearest below), or "in
  /// no allocation".
  std::string describeAddress(uint64_t address) const;

  /// Whether launches profile memory requests (shared wavefronts, global
  /// sectors): off by default, it costs time. Instruction counts are
  /// always kept.
  void setProfileTraffic(bool on) { profileTraffic = on; }
  bool profilesTraffic() const { return profileTraffic; }

  /// Runs KERNEL over SHAPE with its parameter buffer PARAMS (the bytes of
  /// every .param at its offset).
  LaunchResult launch(const Kernel &kernel, const LaunchShape &shape,
                      const std::vector<uint8_t> &params);

  /// CTAs of KERNEL that fit one SM with BLOCKTHREADS threads, REGISTERS
  /// registers per thread and SHAREDBYTES of shared memory per CTA.
  int occupancy(int blockThreads, int registers, size_t sharedBytes) const;

private:
  Chip chipInfo;
  std::map<uint64_t, size_t> allocations;
  std::map<uint64_t, size_t> variables;
  size_t allocatedBytes = 0;
  bool profileTraffic = false;
};

} // namespace attn::ptxemu

#endif // ATTN_PTXEMULATOR_DEVICE_H
