//===- Machine.h - The emulated CTAs, warps and their checks ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The state of a launch: resident CTAs with their shared memory and its
// shadow (who wrote and read each byte, at which of their vector clocks,
// whether a cp.async still owns it), their mbarrier objects, warps with a
// register file laid out register by register (32 lanes side by side) and
// one program counter per lane.
//
// The race checks order a CTA's shared-memory accesses by happens-before:
// each agent (a warp, and the asynchronous proxy that performs bulk copies)
// has a vector clock; a barrier release joins its participants' clocks, an
// mbarrier phase's completion carries its arrivals' (and its bulk copies')
// clocks to whoever waits on the phase. An access races with an earlier one
// by another agent unless the earlier one happens before it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PTXEMULATOR_MACHINE_H
#define ATTN_LIB_PTXEMULATOR_MACHINE_H

#include "attn/PtxEmulator/Device.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace attn::ptxemu {

/// Generic addresses of shared and local memory and of the kernel's
/// parameters (cvta.param: a __grid_constant__ parameter's address, as
/// LLVM's NVPTX backend takes it for a by-value tensor map): windows far
/// from any host pointer, as the hardware's generic address space has them.
constexpr uint64_t kSharedWindow = 0xF100000000000000ull;
constexpr uint64_t kLocalWindow = 0xF200000000000000ull;
constexpr uint64_t kParamWindow = 0xF300000000000000ull;
constexpr uint64_t kWindowSize = 1ull << 32;

/// N zero-filled T whose pages the OS maps on first touch (an anonymous
/// mapping): a CTA's shared memory, its shadow and its warps' registers are
/// megabytes, which a CTA with little to do (most of a persistent grid over a
/// small problem) would otherwise spend its time clearing. T must be valid
/// as all zero bytes.
template <typename T> class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> &&
                std::is_trivially_destructible_v<T>);

public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t count) : count(count) {
    if (count == 0)
      return;
    void *pages = mmap(nullptr, count * sizeof(T), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED)
      throw std::bad_alloc();
    // Huge pages where the kernel offers them: a shadow of megabytes
    // faults in a few pages rather than a thousand.
    if (count * sizeof(T) >= (size_t(2) << 20))
      madvise(pages, count * sizeof(T), MADV_HUGEPAGE);
    values = static_cast<T *>(pages);
  }
  ZeroedArray(ZeroedArray &&other) noexcept
      : values(std::exchange(other.values, nullptr)),
        count(std::exchange(other.count, 0)) {}
  ZeroedArray &operator=(ZeroedArray &&other) noexcept {
    std::swap(values, other.values);
    std::swap(count, other.count);
    return *this;
  }
  ZeroedArray(const ZeroedArray &) = delete;
  ZeroedArray &operator=(const ZeroedArray &) = delete;
  ~ZeroedArray() {
    if (values)
      munmap(values, count * sizeof(T));
  }
  T *data() { return values; }
  const T *data() const { return values; }
  size_t size() const { return count; }
  T &operator[](size_t i) { return values[i]; }
  const T &operator[](size_t i) const { return values[i]; }

private:
  T *values = nullptr;
  size_t count = 0;
};

/// A vector clock: for each agent of a CTA (its warps, then the async
/// proxy), the last of its clock values known to the holder.
using VectorClock = std::vector<uint32_t>;
inline void join(VectorClock &into, const VectorClock &from) {
  for (size_t i = 0; i < into.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

/// What the race and initialisation checks know of one shared byte. The
/// clocks at which the `readers` read are kept per 4-byte word in
/// Cta::readClocks.
struct SharedShadow {
  uint32_t writeClock = 0; // the writer's own clock; 0: never written
  uint32_t writerLine = 0, readerLine = 0; // PTX lines, for messages
  uint8_t writer = 0, reader = 0;          // agents: the last ones
  bool pendingCopy = false; // a cp.async owns it until its wait
  bool mbarrier = false;    // part of a live mbarrier object
  uint64_t readers = 0;     // agents that read it since its last write
};

/// An mbarrier object (PTX ISA, "Parallel Synchronization and Communication
/// Instructions: mbarrier"): its phase, the arrivals the current phase
/// still expects and the transaction bytes it still waits for. The phase
/// completes when both reach zero.
struct MBarrier {
  uint32_t expected = 0, pending = 0;
  int64_t txCount = 0;
  /// Phases completed so far: the current phase's parity is phase % 2.
  uint32_t phase = 0;
  /// Clocks of the current phase's arrivals and completed transactions,
  /// and of the last completed phase of each parity.
  VectorClock arrivals, completed[2];
  /// Who initialised it, for the check that its users see the init.
  uint8_t initAgent = 0;
  uint32_t initClock = 0, initLine = 0;
};

struct PendingCopy {
  uint32_t sharedOffset;
  uint64_t source;
  uint8_t bytes, sourceBytes;
  uint32_t instruction;
};

struct Cta;

/// The asynchronous instructions of one commit group, wgmma.mma_async's or
/// bulk copies' to global memory: the accumulator registers they write and
/// the shared bytes they read ([begin, end) ranges), which stay theirs until
/// a wgmma.wait_group or a cp.async.bulk.wait_group retires the group.
struct AsyncGroup {
  std::vector<int32_t> registers;
  std::vector<std::pair<uint32_t, uint32_t>> reads;
  uint32_t line = 0;
};

struct Warp {
  Cta *cta = nullptr;
  uint32_t index = 0;      // within the CTA
  uint32_t liveMask = 0;   // lanes that exist and have not exited
  uint32_t pc[32] = {};
  /// Lanes waiting at a warp collective for the others to reach it.
  uint32_t parked = 0;
  /// Independent thread scheduling: lanes whose path waits (a failed
  /// mbarrier wait, or a whole slice that changed nothing) while another
  /// path of the warp can run. The scheduler passes them over until no
  /// other lane can run or the warp's slice ends.
  uint32_t suspended = 0;
  /// Whether the live lanes may be at different program counters (a
  /// branch split them); until then all are at pc[first live lane].
  bool diverged = false;
  ZeroedArray<uint64_t> registers; // [slot * 32 + lane]
  std::vector<uint8_t> local;      // [lane * localBytes + offset]
  bool atBarrier = false;
  uint32_t barrier = 0;
  /// The warp's vector clock (its own entry is clock[index]).
  VectorClock clock;
  /// The warp's own clock at each fence.proxy.async, ascending: its
  /// generic writes of shared memory before one are visible to the async
  /// proxy to whoever synchronises with the warp after it.
  std::vector<uint32_t> proxyFences;
  /// Per lane, the mbarrier (shared offset) whose wait last failed, until
  /// one succeeds (-1): where a spinning lane waits, for deadlock reports.
  int32_t waitingOn[32];
  /// Ends the warp's slice (a failed mbarrier wait: let the others run).
  bool yield = false;
  /// wgmma and bulk copies to global memory: the group being issued, then
  /// the committed ones, oldest first; per register slot, how many
  /// unretired wgmma groups write it.
  AsyncGroup wgmmaOpen, bulkOpen;
  std::deque<AsyncGroup> wgmmaGroups, bulkGroups;
  std::vector<uint16_t> wgmmaPending;
  uint32_t wgmmaPendingRegisters = 0;
  // cp.async: copies not yet committed, then the committed groups.
  std::vector<PendingCopy> openGroup;
  std::deque<std::vector<PendingCopy>> groups;
  Warp() { std::fill(std::begin(waitingOn), std::end(waitingOn), -1); }
  bool done() const { return liveMask == 0; }
};

struct Barrier {
  uint32_t arrivedThreads = 0;
  uint32_t expectedThreads = 0;
  std::vector<Warp *> waiting;
  /// The join of the arriving warps' clocks.
  VectorClock arrivals;
  // bar.red: the running reduction.
  uint32_t popc = 0;
  bool andValue = true, orValue = false;
};

struct Cta {
  uint32_t id[3] = {0, 0, 0};
  uint32_t linear = 0;
  uint32_t threads = 0;
  ZeroedArray<uint8_t> shared;
  ZeroedArray<SharedShadow> shadow;
  /// [word * agents + agent]: the agent's clock at its last read of the
  /// 4-byte word.
  ZeroedArray<uint32_t> readClocks;
  std::vector<std::unique_ptr<Warp>> warps;
  Barrier barriers[16];
  /// Agents: the warps, then the async proxy (asyncAgent()).
  uint32_t agents = 0;
  uint32_t asyncAgent() const { return agents - 1; }
  /// The async proxy's clock: bulk copies are its accesses.
  VectorClock asyncClock;
  /// Live mbarrier objects by shared offset.
  std::map<uint32_t, MBarrier> mbarriers;
  /// Groups of the CTA's warps that read shared memory and are not yet
  /// retired (the bytes they read must not be written until then).
  uint32_t asyncReadsInFlight = 0;
  uint32_t liveWarps = 0;
};

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_MACHINE_H
