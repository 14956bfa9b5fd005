//===- GlobalOrder.cpp - Happens-before between CTAs in global memory -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "GlobalOrder.h"

using namespace attn::ptxemu;

GlobalOrder::Agent &GlobalOrder::agent(uint32_t cta) {
  auto [it, inserted] = agents.try_emplace(cta);
  if (inserted)
    it->second.now[cta] = 1;
  return it->second;
}

void GlobalOrder::join(Clock &into, const Clock &from) {
  for (auto [who, time] : from) {
    uint32_t &mine = into[who];
    if (time > mine)
      mine = time;
  }
}

void GlobalOrder::write(uint32_t cta, uint64_t address, unsigned bytes,
                        uint32_t line) {
  uint32_t clock = agent(cta).now[cta];
  for (uint64_t word = address / 4; word <= (address + bytes - 1) / 4; ++word)
    writes[word] = {cta, clock, line};
}

bool GlobalOrder::read(uint32_t cta, uint64_t address, unsigned bytes,
                       std::string &why) {
  for (uint64_t word = address / 4; word <= (address + bytes - 1) / 4; ++word) {
    auto it = writes.find(word);
    if (it == writes.end() || it->second.cta == cta)
      continue;
    const Write &w = it->second;
    Clock &now = agent(cta).now;
    auto seen = now.find(w.cta);
    if (seen != now.end() && seen->second >= w.clock)
      continue;
    why = "reads global memory that CTA " + std::to_string(w.cta) +
          " wrote (line " + std::to_string(w.line) +
          ") with no fence and atomic ordering that write before this read";
    return false;
  }
  return true;
}

void GlobalOrder::fence(uint32_t cta) {
  Agent &a = agent(cta);
  a.released = a.now;
  ++a.now[cta];
}

void GlobalOrder::synchronise(uint32_t cta, uint64_t address) {
  Agent &a = agent(cta);
  Clock &location = locations[address];
  join(a.now, location);
  join(location, a.released);
}
