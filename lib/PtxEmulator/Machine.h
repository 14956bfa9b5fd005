//===- Machine.h - The emulated CTAs, warps and their checks ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The state of a launch: resident CTAs with their shared memory and its
// shadow (who wrote and read each byte since the last barrier, whether a
// cp.async still owns it), warps with a register file laid out register by
// register (32 lanes side by side) and one program counter per lane.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PTXEMULATOR_MACHINE_H
#define ATTN_LIB_PTXEMULATOR_MACHINE_H

#include "attn/PtxEmulator/Device.h"

#include <deque>
#include <memory>
#include <vector>

namespace attn::ptxemu {

/// Generic addresses of shared and local memory: windows far from any host
/// pointer, as the hardware's generic address space has them.
constexpr uint64_t kSharedWindow = 0xF100000000000000ull;
constexpr uint64_t kLocalWindow = 0xF200000000000000ull;
constexpr uint64_t kWindowSize = 1ull << 32;

/// What the race and initialisation checks know of one shared byte.
struct SharedShadow {
  uint32_t writeEpoch = 0; // 0: never written
  uint32_t readEpoch = 0;
  uint16_t writer = 0, reader = 0; // warp indices
  uint32_t writerLine = 0, readerLine = 0; // PTX lines, for messages
  bool manyReaders = false;
  bool pendingCopy = false; // a cp.async owns it until its wait
};

struct PendingCopy {
  uint32_t sharedOffset;
  uint64_t source;
  uint8_t bytes, sourceBytes;
  uint32_t instruction;
};

struct Cta;

struct Warp {
  Cta *cta = nullptr;
  uint32_t index = 0;      // within the CTA
  uint32_t liveMask = 0;   // lanes that exist and have not exited
  uint32_t pc[32] = {};
  /// Lanes waiting at a warp collective for the others to reach it.
  uint32_t parked = 0;
  /// Whether the live lanes may be at different program counters (a
  /// branch split them); until then all are at pc[first live lane].
  bool diverged = false;
  std::vector<uint64_t> registers; // [slot * 32 + lane]
  std::vector<uint8_t> local;      // [lane * localBytes + offset]
  bool atBarrier = false;
  uint32_t barrier = 0;
  // cp.async: copies not yet committed, then the committed groups.
  std::vector<PendingCopy> openGroup;
  std::deque<std::vector<PendingCopy>> groups;
  bool done() const { return liveMask == 0; }
};

struct Barrier {
  uint32_t arrivedThreads = 0;
  uint32_t expectedThreads = 0;
  std::vector<Warp *> waiting;
  // bar.red: the running reduction.
  uint32_t popc = 0;
  bool andValue = true, orValue = false;
};

struct Cta {
  uint32_t id[3] = {0, 0, 0};
  uint32_t linear = 0;
  uint32_t threads = 0;
  std::vector<uint8_t> shared;
  std::vector<SharedShadow> shadow;
  std::vector<std::unique_ptr<Warp>> warps;
  Barrier barriers[16];
  /// Barrier releases so far, plus one: the race checks' epoch.
  uint32_t epoch = 1;
  uint32_t liveWarps = 0;
};

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_MACHINE_H
