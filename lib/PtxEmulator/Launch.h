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

struct TiledTensorMap;

class Launch {
public:
  Launch(Device &device, const Kernel &kernel, const LaunchShape &shape,
         const std::vector<uint8_t> &params);
  LaunchResult run();

  // Used by Execute.cpp.

  /// Executes one instruction for the lanes of WARP that share the lowest
  /// program counter, passing over suspended lanes while others can run.
  /// False on a fault (already recorded).
  bool step(Warp &warp);
  /// Executes the instruction at PC for the lanes GROUP of WARP.
  bool execute(Warp &warp, uint32_t pc, uint32_t group);
  /// Independent thread scheduling: LANES' path waits while another path
  /// of WARP can run; when none can, the warp's slice ends instead.
  void suspend(Warp &warp, uint32_t lanes);
  /// The lanes among LANES of WARP at their lowest program counter.
  static uint32_t lowestLanes(const Warp &warp, uint32_t lanes);

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
  /// the bounds and alignment checks (to ALIGNMENT, by default BYTES).
  bool sharedOffset(Warp &warp, unsigned lane, uint64_t at, unsigned bytes,
                    uint32_t &offset, const Instruction &in,
                    unsigned alignment = 0);
  /// The race and initialisation checks of a shared access by WARP, or
  /// for a write with ASYNC by the async proxy on its behalf (a bulk copy),
  /// and the shadow's record of it.
  void checkSharedRead(Warp &warp, unsigned lane, uint32_t offset,
                       unsigned bytes, const Instruction &in);
  /// A read of shared memory through the async proxy (a wgmma operand, the
  /// source of a bulk copy to global memory) issued by `warp`: bytes a warp
  /// wrote through the generic proxy (st, atom, cp.async) must have been
  /// followed by a fence.proxy.async of that warp that this read is ordered
  /// after (PTX ISA, memory consistency model: proxies).
  void checkAsyncProxyRead(Warp &warp, unsigned lane, uint32_t offset,
                           unsigned bytes, const Instruction &in);
  /// fence.proxy.async by `warp`.
  void fenceProxyAsync(Warp &warp);
  void markSharedWrite(Warp &warp, unsigned lane, uint32_t offset,
                       unsigned bytes, const Instruction &in,
                       bool async = false);
  static std::string agentName(const Cta &cta, uint32_t agent);

  /// A register of LANE, and an operand's value (register, special
  /// register or constant).
  static uint64_t &registerOf(Warp &warp, int32_t slot, unsigned lane) {
    return warp.registers[static_cast<size_t>(slot) * 32 + lane];
  }
  uint64_t operandValue(const Warp &warp, const Operand &operand,
                        unsigned lane) const;
  /// The address an Address operand names for LANE.
  static uint64_t addressOf(const Warp &warp, const Operand &address,
                            unsigned lane) {
    return (address.reg >= 0
                ? warp.registers[static_cast<size_t>(address.reg) * 32 + lane]
                : 0) +
           address.value;
  }

  // Mbarriers.cpp: mbarrier objects and the bulk copies that complete on
  // them. False on a fault.
  bool executeMbarrier(Warp &warp, const Instruction &in, uint32_t exec);
  bool executeBulkCopy(Warp &warp, const Instruction &in, uint32_t exec);
  bool executeBulkStore(Warp &warp, const Instruction &in, uint32_t exec);
  /// What a copy moves: BYTES between shared SHAREDOFFSET and GLOBAL, or,
  /// for a load of an element outside the tensor (GLOBAL null), FILL's low
  /// bytes into shared memory.
  struct CopyPiece {
    uint32_t sharedOffset, bytes;
    uint8_t *global;
    uint64_t fill;
  };
  /// The tensor map of the tensor copy or prefetch IN of LANE (a kernel
  /// parameter or global memory), after the checks that the encoder wrote
  /// it and that its rank is the instruction's.
  bool tensorMapOf(Warp &warp, unsigned lane, const Instruction &in,
                   TiledTensorMap &map);
  /// The pieces of the tensor copy IN of LANE between the box and shared
  /// memory at SHARED, and the box's bytes. A load fills the elements
  /// outside the tensor; a store skips them.
  bool tensorCopyPieces(Warp &warp, unsigned lane, const Instruction &in,
                        uint32_t shared, std::vector<CopyPiece> &pieces,
                        uint64_t &bytes);
  /// The live mbarrier at AT (in SPACE) that NAME uses, after the checks
  /// that it is one and that its init is ordered before; null on a fault.
  MBarrier *findMbarrier(Warp &warp, unsigned lane, Space space, uint64_t at,
                         const Instruction &in, const std::string &name,
                         uint32_t &offset);
  // Wgmma.cpp: warpgroup matrix multiply-accumulate.
  bool executeWgmma(Warp &warp, const Instruction &in, uint32_t exec);
  /// Faults when IN (not a wgmma) touches a register an unretired wgmma
  /// writes.
  bool checkWgmmaRegisters(Warp &warp, const Instruction &in, uint32_t group);
  /// Faults when a write of shared [OFFSET, +BYTES) hits bytes an
  /// unretired wgmma or bulk copy to global memory reads.
  void checkAsyncReads(Warp &warp, unsigned lane, uint32_t offset,
                       unsigned bytes, const Instruction &in);
  /// Retires the oldest of GROUPS until KEEP are left.
  void retireGroups(Warp &warp, std::deque<AsyncGroup> &groups, size_t keep);
  /// Records that the open group OPEN reads shared [BEGIN, END).
  void recordAsyncRead(Cta &cta, AsyncGroup &open, uint32_t begin, uint32_t end,
                       uint32_t line);
  /// Why a plain access of shared OFFSET, part of an mbarrier, is refused.
  std::string mbarrierAccess(uint32_t offset) const;
  /// The mbarrier at OFFSET and its state, for deadlock reports.
  std::string describeMbarrier(const Cta &cta, int64_t offset) const;

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
  /// Warp instructions executed so far, for the instruction limit.
  uint64_t executedInstructions = 0;
};

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_LAUNCH_H
