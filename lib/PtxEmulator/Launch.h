//===- Launch.h - One kernel launch on the emulated device ------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Launch.cpp schedules CTAs and warps and owns memory accesses and their
// checks; Execute.cpp gives each instruction its meaning.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PTXEMULATOR_LAUNCH_H
#define ATTN_LIB_PTXEMULATOR_LAUNCH_H

#include "GlobalOrder.h"
#include "Machine.h"

namespace attn::ptxemu {

class Launch {
public:
  Launch(Device &device, const Kernel &kernel, const LaunchShape &shape,
         const std::vector<uint8_t> &params);
  LaunchResult run();

  // Used by Execute.cpp.

  /// Executes one instruction for the lanes of WARP that share the lowest
  /// program counter. False on a fault (already recorded).
  bool step(Warp &warp);
  /// Executes the instruction at PC for the lanes GROUP of WARP.
  bool execute(Warp &warp, uint32_t pc, uint32_t group);

  /// A generic address's state space, ADDRESS becoming the offset in it
  /// (the shared and local windows; global otherwise). Other spaces stay.
  static Space resolve(Space space, uint64_t &address);
  /// Memory accesses of LANE; false on a fault. SPACE Generic resolves the
  /// windows.
  bool load(Warp &warp, unsigned lane, Space space, uint64_t address,
            unsigned bytes, void *out, const Instruction &in);
  bool store(Warp &warp, unsigned lane, Space space, uint64_t address,
             unsigned bytes, const void *value, const Instruction &in);
  /// How an access of global memory takes part in ordering between CTAs.
  enum class GlobalAccess { Read, Write, Synchronising };
  /// A host pointer to global memory [ADDRESS, +BYTES) after the bounds,
  /// alignment and ordering checks.
  uint8_t *globalPointer(Warp &warp, unsigned lane, uint64_t address,
                         unsigned bytes, GlobalAccess access,
                         const Instruction &in);
  /// How ld/st IN orders: volatile, relaxed, acquire and release accesses
  /// synchronise; others read or write.
  static GlobalAccess accessOf(const Instruction &in, bool isStore);
  /// LANE's local memory at OFFSET, after the bounds check.
  uint8_t *localPointer(Warp &warp, unsigned lane, uint64_t offset,
                        unsigned bytes, const Instruction &in);
  /// The shared offset AT as an index into the CTA's shared memory, after
  /// the bounds and alignment checks.
  bool sharedOffset(Warp &warp, unsigned lane, uint64_t at, unsigned bytes,
                    uint32_t &offset, const Instruction &in);
  void checkSharedRead(Warp &warp, unsigned lane, uint32_t offset,
                       unsigned bytes, const Instruction &in);
  void markSharedWrite(Warp &warp, unsigned lane, uint32_t offset,
                       unsigned bytes, const Instruction &in);

  /// Counts one warp request of BYTES per lane at ADDRESSES (the lanes of
  /// LANES): shared wavefronts with bank conflicts, or global sectors.
  void countRequest(Space space, const uint64_t *addresses, uint32_t lanes,
                    unsigned bytes);

  /// Completes WARP's cp.async groups but the newest KEEP.
  bool completeCopies(Warp &warp, size_t keep);

  /// Records the first fault.
  bool fault(const Warp &warp, unsigned lane, const Instruction *in,
             const std::string &what);
  /// Something that ends a spin happened (a store, a barrier release...).
  void progressed() { progress = true; }
  uint64_t specialRegister(const Warp &warp, unsigned lane,
                           SpecialRegister special) const;
  void arriveAtBarrier(Warp &warp, uint32_t id, uint32_t threads,
                       bool wait);

  Device &device;
  const Kernel &kernel;
  const LaunchShape &shape;
  const std::vector<uint8_t> &params;
  Profile profile;
  /// Whether memory requests are profiled (bank conflicts, sectors).
  bool profileTraffic = false;
  GlobalOrder order;
  uint32_t sharedBytes = 0; // per CTA: static, aligned, plus dynamic
  bool failed = false;
  std::string error;

private:
  std::unique_ptr<Cta> startCta(uint32_t linear);
  std::string describeWarp(const Warp &warp) const;
  bool progress = false;
};

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_LAUNCH_H
