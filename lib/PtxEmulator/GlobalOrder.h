//===- GlobalOrder.h - Happens-before between CTAs in global memory -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A read of global memory that another CTA of the same launch wrote must be
// ordered after that write by the PTX memory model's synchronisation: the
// writer fences (membar.gl, fence) and then performs an atomic (or a
// volatile/release store) on some location, and the reader performs an
// atomic (or a volatile/acquire load) on that location that observes it.
// Vector clocks, one agent per CTA (bar.sync orders the threads of a CTA):
//
//   a CTA's writes carry its own clock component;
//   fence:        released = now; now[self] += 1;
//   atomic on L:  now = max(now, clock[L]); clock[L] = max(clock[L], released);
//   read:         ordered iff now[writer] >= the write's clock.
//
// An unordered read is what a Lean host reading partials before their
// contributors' flags, or a contributor setting its flag without a fence,
// would be; on hardware it reads stale data only sometimes.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PTXEMULATOR_GLOBALORDER_H
#define ATTN_LIB_PTXEMULATOR_GLOBALORDER_H

#include <cstdint>
#include <string>
#include <unordered_map>

namespace attn::ptxemu {

class GlobalOrder {
public:
  /// A plain write of [ADDRESS, +BYTES) by CTA at PTX line LINE.
  void write(uint32_t cta, uint64_t address, unsigned bytes, uint32_t line);
  /// A plain read; false with WHY when a byte was written by another CTA
  /// and no synchronisation orders that write before this read.
  bool read(uint32_t cta, uint64_t address, unsigned bytes, std::string &why);
  /// membar.gl / fence by CTA.
  void fence(uint32_t cta);
  /// An atomic, or a volatile or acquire/release access, of ADDRESS by CTA.
  void synchronise(uint32_t cta, uint64_t address);

private:
  using Clock = std::unordered_map<uint32_t, uint32_t>;
  struct Agent {
    Clock now, released;
  };
  struct Write {
    uint32_t cta, clock, line;
  };
  Agent &agent(uint32_t cta);
  static void join(Clock &into, const Clock &from);

  std::unordered_map<uint32_t, Agent> agents;
  std::unordered_map<uint64_t, Clock> locations;
  /// The last CTA write of each 4-byte word.
  std::unordered_map<uint64_t, Write> writes;
};

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_GLOBALORDER_H
