//===- Launch.cpp - CTAs, warps, memory and checks of one launch ----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// CTAs are started in linear order while fewer than the resident limit run;
// every resident CTA's warps take turns in slices of instructions, so a
// persistent grid's CTAs run together and a CTA that spins on a flag lets
// the others reach it. A round in which no warp could run, or many rounds
// in which nothing changed memory, passed a barrier or exited, is a
// deadlock, reported with where each warp waits.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace attn::ptxemu;

namespace {
constexpr unsigned kSliceInstructions = 512;
constexpr const char *kUnordered =
    "with no barrier or mbarrier wait ordering them";
/// Rounds without progress before a deadlock is declared.
constexpr unsigned kIdleRounds = 200;
} // namespace

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

Device::~Device() {
  for (auto &[pointer, bytes] : allocations)
    std::free(reinterpret_cast<void *>(pointer));
}

void *Device::allocate(size_t bytes) {
  if (allocatedBytes + bytes > chipInfo.memoryBytes)
    return nullptr;
  // 256-byte aligned, as cuMemAlloc's are.
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  void *pointer = std::aligned_alloc(256, rounded);
  if (!pointer)
    return nullptr;
  allocations[reinterpret_cast<uint64_t>(pointer)] = bytes;
  allocatedBytes += bytes;
  return pointer;
}

bool Device::release(void *pointer) {
  auto it = allocations.find(reinterpret_cast<uint64_t>(pointer));
  if (it == allocations.end())
    return false;
  allocatedBytes -= it->second;
  allocations.erase(it);
  std::free(pointer);
  return true;
}

void Device::addVariable(const void *pointer, size_t bytes) {
  variables[reinterpret_cast<uint64_t>(pointer)] = bytes;
}

void Device::removeVariable(const void *pointer) {
  variables.erase(reinterpret_cast<uint64_t>(pointer));
}

std::pair<uint64_t, size_t> Device::allocationOf(uint64_t address) const {
  for (const std::map<uint64_t, size_t> *ranges : {&allocations, &variables}) {
    auto next = ranges->upper_bound(address);
    if (next == ranges->begin())
      continue;
    auto it = std::prev(next);
    if (address < it->first + std::max<size_t>(it->second, 1))
      return *it;
  }
  return {0, 0};
}

std::string Device::describeAddress(uint64_t address) const {
  uint64_t nearest = 0;
  size_t nearestBytes = 0;
  bool isVariable = false;
  for (const std::map<uint64_t, size_t> *ranges : {&allocations, &variables}) {
    auto next = ranges->upper_bound(address);
    if (next == ranges->begin())
      continue;
    auto it = std::prev(next);
    if (it->first >= nearest) {
      nearest = it->first;
      nearestBytes = it->second;
      isVariable = ranges == &variables;
    }
  }
  if (!nearest)
    return "in no allocation";
  std::string what = std::string(isVariable ? "a module variable" : "an allocation") +
                     " of " + std::to_string(nearestBytes) + " bytes";
  uint64_t offset = address - nearest;
  if (offset < nearestBytes)
    return "offset " + std::to_string(offset) + " of " + what;
  if (offset - nearestBytes < (1u << 20))
    return std::to_string(offset - nearestBytes) + " bytes past the end of " +
           what;
  return "in no allocation";
}

bool Device::contains(uint64_t pointer, size_t bytes) const {
  auto [start, size] = allocationOf(pointer);
  return size > 0 && pointer + bytes <= start + size;
}

int Device::occupancy(int blockThreads, int registers,
                      size_t sharedBytes) const {
  if (blockThreads <= 0)
    return 0;
  int warps = (blockThreads + 31) / 32;
  // Registers are allocated per warp in units of 256.
  int registersPerWarp = (std::max(registers, 1) * 32 + 255) / 256 * 256;
  int byRegisters = chipInfo.registersPerSm / (registersPerWarp * warps);
  int byThreads = chipInfo.maxThreadsPerSm / (warps * 32);
  // The hardware reserves 1 KiB of shared memory per CTA.
  size_t perCta = sharedBytes + 1024;
  int byShared = static_cast<int>(chipInfo.sharedBytesPerSm / perCta);
  return std::max(0, std::min(std::min(byRegisters, byThreads),
                              std::min(byShared, chipInfo.maxCtasPerSm)));
}

LaunchResult Device::launch(const Kernel &kernel, const LaunchShape &shape,
                            const std::vector<uint8_t> &params) {
  Launch launch(*this, kernel, shape, params);
  return launch.run();
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

Launch::Launch(Device &device, const Kernel &kernel, const LaunchShape &shape,
               const std::vector<uint8_t> &params)
    : device(device), kernel(kernel), shape(shape), params(params),
      profileTraffic(device.profilesTraffic()) {
  sharedBytes = kernel.dynamicSharedOffset + shape.dynamicSharedBytes;
}

std::unique_ptr<Cta> Launch::startCta(uint32_t linear) {
  auto cta = std::make_unique<Cta>();
  cta->linear = linear;
  cta->id[0] = linear % shape.grid[0];
  cta->id[1] = (linear / shape.grid[0]) % shape.grid[1];
  cta->id[2] = linear / (shape.grid[0] * shape.grid[1]);
  cta->threads = shape.block[0] * shape.block[1] * shape.block[2];
  cta->shared = ZeroedArray<uint8_t>(sharedBytes);
  cta->shadow = ZeroedArray<SharedShadow>(sharedBytes);
  uint32_t warps = (cta->threads + 31) / 32;
  cta->agents = warps + 1;
  cta->readClocks = ZeroedArray<uint32_t>(
      static_cast<size_t>(sharedBytes / 4 + 1) * cta->agents);
  cta->asyncClock.assign(cta->agents, 0);
  cta->asyncClock[cta->asyncAgent()] = 1;
  for (uint32_t i = 0; i < warps; ++i) {
    auto warp = std::make_unique<Warp>();
    warp->cta = cta.get();
    warp->index = i;
    uint32_t lanes = std::min<uint32_t>(32, cta->threads - 32 * i);
    warp->liveMask = lanes == 32 ? ~0u : (1u << lanes) - 1;
    warp->registers =
        ZeroedArray<uint64_t>(static_cast<size_t>(kernel.registerCount()) * 32);
    warp->local.assign(static_cast<size_t>(kernel.localBytes) * 32, 0);
    warp->clock.assign(cta->agents, 0);
    warp->clock[i] = 1;
    cta->warps.push_back(std::move(warp));
  }
  cta->liveWarps = warps;
  return cta;
}

namespace {
/// "lane 3", "lanes 1-31", "lanes 0, 2-5, 9".
std::string laneList(uint32_t lanes) {
  std::string text;
  for (uint64_t m = lanes; m;) {
    unsigned first = __builtin_ctzll(m), last = first;
    while ((m >> (last + 1)) & 1)
      ++last;
    text += (text.empty() ? "" : ", ") + std::to_string(first) +
            (last > first ? "-" + std::to_string(last) : std::string());
    m &= ~((uint64_t(2) << last) - 1);
  }
  return (__builtin_popcount(lanes) == 1 ? "lane " : "lanes ") + text;
}
} // namespace

std::string Launch::describeWarp(const Warp &warp) const {
  std::string text = "CTA (" + std::to_string(warp.cta->id[0]) + "," +
                     std::to_string(warp.cta->id[1]) + "," +
                     std::to_string(warp.cta->id[2]) + ") warp " +
                     std::to_string(warp.index);
  // The lanes by where they are: program counter, the mbarrier their last
  // wait failed on, parked at a collective or not. One such place for a
  // converged warp; one for each path of a diverged one, lowest program
  // counter first.
  struct Place {
    uint32_t pc;
    int32_t waitingOn;
    bool parked;
    uint32_t lanes;
  };
  std::vector<Place> places;
  for (uint32_t m = warp.liveMask; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    Place place{warp.pc[lane], warp.waitingOn[lane],
                ((warp.parked >> lane) & 1) != 0, 1u << lane};
    auto same = std::find_if(places.begin(), places.end(), [&](const Place &p) {
      return p.pc == place.pc && p.waitingOn == place.waitingOn &&
             p.parked == place.parked;
    });
    if (same == places.end())
      places.push_back(place);
    else
      same->lanes |= place.lanes;
  }
  std::stable_sort(places.begin(), places.end(),
                   [](const Place &a, const Place &b) { return a.pc < b.pc; });
  auto describe = [&](const Place &place, bool plural) {
    std::string where;
    if (warp.atBarrier)
      where += " waits at barrier " + std::to_string(warp.barrier);
    if (place.waitingOn >= 0)
      where += std::string(plural ? " wait" : " waits") + " on " +
               describeMbarrier(*warp.cta, place.waitingOn);
    else if (place.parked)
      where += std::string(plural ? " wait" : " waits") +
               " for the rest of the warp at a warp collective";
    if (place.pc < kernel.code.size()) {
      // The barrier's pc was advanced past it.
      const Instruction &in =
          kernel.code[warp.atBarrier && place.pc > 0 ? place.pc - 1
                                                     : place.pc];
      where += " at line " + std::to_string(in.line) + " (" + in.text + ")";
    }
    return where;
  };
  // "warp 4 waits on ... at line L (...)", and for a diverged warp "in
  // lane 0; lanes 1-31 wait ... at line M (...)" for its other paths.
  text += describe(places[0], false);
  if (places.size() > 1) {
    text += " in " + laneList(places[0].lanes);
    for (size_t i = 1; i < places.size(); ++i)
      text += "; " + laneList(places[i].lanes) +
              describe(places[i], __builtin_popcount(places[i].lanes) > 1);
  }
  return text;
}

bool Launch::fault(const Warp &warp, unsigned lane, const Instruction *in,
                   const std::string &what) {
  if (failed)
    return false;
  failed = true;
  uint32_t thread = warp.index * 32 + lane;
  error = "kernel " + kernel.name + ": " + what + "; CTA (" +
          std::to_string(warp.cta->id[0]) + "," +
          std::to_string(warp.cta->id[1]) + "," +
          std::to_string(warp.cta->id[2]) + ") thread " +
          std::to_string(thread);
  if (in)
    error += ", line " + std::to_string(in->line) + ": " + in->text;
  return false;
}

uint64_t Launch::specialRegister(const Warp &warp, unsigned lane,
                                 SpecialRegister special) const {
  uint32_t thread = warp.index * 32 + lane;
  const Cta &cta = *warp.cta;
  switch (special) {
  case SpecialRegister::TidX: return thread % shape.block[0];
  case SpecialRegister::TidY: return (thread / shape.block[0]) % shape.block[1];
  case SpecialRegister::TidZ: return thread / (shape.block[0] * shape.block[1]);
  case SpecialRegister::NtidX: return shape.block[0];
  case SpecialRegister::NtidY: return shape.block[1];
  case SpecialRegister::NtidZ: return shape.block[2];
  case SpecialRegister::CtaidX: return cta.id[0];
  case SpecialRegister::CtaidY: return cta.id[1];
  case SpecialRegister::CtaidZ: return cta.id[2];
  case SpecialRegister::NctaidX: return shape.grid[0];
  case SpecialRegister::NctaidY: return shape.grid[1];
  case SpecialRegister::NctaidZ: return shape.grid[2];
  case SpecialRegister::LaneId: return lane;
  case SpecialRegister::WarpId: return warp.index;
  case SpecialRegister::NwarpId: return 64;
  case SpecialRegister::SmId:
    return cta.linear % static_cast<uint32_t>(device.chip().multiprocessors);
  case SpecialRegister::NsmId: return device.chip().multiprocessors;
  case SpecialRegister::Clock:
  case SpecialRegister::Clock64:
  case SpecialRegister::GlobalTimer:
    return profile.threadInstructions;
  case SpecialRegister::DynamicSmemSize: return shape.dynamicSharedBytes;
  case SpecialRegister::TotalSmemSize: return sharedBytes;
  case SpecialRegister::LanemaskEq: return 1u << lane;
  case SpecialRegister::LanemaskLt: return (1u << lane) - 1;
  case SpecialRegister::LanemaskLe: return (2ull << lane) - 1;
  case SpecialRegister::LanemaskGt: return ~((2ull << lane) - 1) & 0xffffffffu;
  case SpecialRegister::LanemaskGe: return ~((1ull << lane) - 1) & 0xffffffffu;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Launch::GlobalAccess Launch::accessOf(const Instruction &in, bool isStore) {
  if (in.flags & (mod::Volatile | mod::Relaxed | mod::Acquire | mod::Release))
    return GlobalAccess::Synchronising;
  return isStore ? GlobalAccess::Write : GlobalAccess::Read;
}

uint8_t *Launch::globalPointer(Warp &warp, unsigned lane, uint64_t address,
                               unsigned bytes, GlobalAccess access,
                               const Instruction &in) {
  if (!device.contains(address, bytes)) {
    std::string where = " (" + device.describeAddress(address) + ")";
    fault(warp, lane, &in,
          "out-of-bounds global access of " + std::to_string(bytes) +
              " bytes at 0x" + [&] {
                char hex[32];
                std::snprintf(hex, sizeof hex, "%llx",
                              static_cast<unsigned long long>(address));
                return std::string(hex);
              }() + where);
    return nullptr;
  }
  if (address % bytes != 0 && bytes <= 16) {
    fault(warp, lane, &in,
          "misaligned global access of " + std::to_string(bytes) +
              " bytes at offset " +
              std::to_string(address - device.allocationOf(address).first));
    return nullptr;
  }
  uint32_t cta = warp.cta->linear;
  std::string why;
  switch (access) {
  case GlobalAccess::Read:
    if (!order.read(cta, address, bytes, why)) {
      fault(warp, lane, &in, why);
      return nullptr;
    }
    break;
  case GlobalAccess::Write:
    order.write(cta, address, bytes, in.line);
    break;
  case GlobalAccess::Synchronising:
    order.synchronise(cta, address);
    break;
  }
  return reinterpret_cast<uint8_t *>(address);
}

bool Launch::sharedOffset(Warp &warp, unsigned lane, uint64_t at,
                          unsigned bytes, uint32_t &offset,
                          const Instruction &in, unsigned alignment) {
  if (alignment == 0)
    alignment = bytes;
  if (at + bytes > sharedBytes || at >= kWindowSize)
    return fault(warp, lane, &in,
                 "out-of-bounds shared access of " + std::to_string(bytes) +
                     " bytes at offset " + std::to_string(int64_t(at)) +
                     " (the CTA has " + std::to_string(sharedBytes) + ")");
  if (at % alignment != 0)
    return fault(warp, lane, &in,
                 "misaligned shared access of " + std::to_string(bytes) +
                     " bytes at offset " + std::to_string(at));
  offset = static_cast<uint32_t>(at);
  return true;
}

std::string Launch::agentName(const Cta &cta, uint32_t agent) {
  return agent == cta.asyncAgent()
             ? std::string("the async proxy (a bulk copy)")
             : "warp " + std::to_string(agent);
}

void Launch::checkSharedRead(Warp &warp, unsigned lane, uint32_t offset,
                             unsigned bytes, const Instruction &in) {
  Cta &cta = *warp.cta;
  uint32_t agent = warp.index;
  const VectorClock &clock = warp.clock;
  for (unsigned i = 0; i < bytes; ++i) {
    SharedShadow &s = cta.shadow[offset + i];
    if (s.mbarrier) {
      fault(warp, lane, &in, mbarrierAccess(offset + i));
      return;
    }
    if (s.pendingCopy) {
      fault(warp, lane, &in,
            "reads shared offset " + std::to_string(offset + i) +
                " that a cp.async writes before waiting for it "
                "(cp.async.wait_group)");
      return;
    }
    if (s.writeClock == 0) {
      fault(warp, lane, &in,
            "reads shared offset " + std::to_string(offset + i) +
                ", which nothing wrote");
      return;
    }
    if (s.writer != agent && clock[s.writer] < s.writeClock) {
      fault(warp, lane, &in,
            "shared-memory race: reads offset " + std::to_string(offset + i) +
                " written by " + agentName(cta, s.writer) + " (line " +
                std::to_string(s.writerLine) + ") " + kUnordered);
      return;
    }
    s.readers |= 1ull << agent;
    s.reader = static_cast<uint8_t>(agent);
    s.readerLine = in.line;
    cta.readClocks[(offset + i) / 4 * cta.agents + agent] = clock[agent];
  }
}

void Launch::fenceProxyAsync(Warp &warp) {
  // The warp's writes so far carry clocks up to its own; the fence takes
  // that value and the warp moves on, so later writes are after it.
  uint32_t &own = warp.clock[warp.index];
  if (warp.proxyFences.empty() || warp.proxyFences.back() != own)
    warp.proxyFences.push_back(own);
  ++own;
}

void Launch::checkAsyncProxyRead(Warp &warp, unsigned lane, uint32_t offset,
                                 unsigned bytes, const Instruction &in) {
  Cta &cta = *warp.cta;
  for (unsigned i = 0; i < bytes; ++i) {
    const SharedShadow &s = cta.shadow[offset + i];
    if (s.writeClock == 0 || s.writer == cta.asyncAgent())
      continue;
    // The writer's first fence after the write, and whether this warp has
    // synchronised with the writer since.
    const std::vector<uint32_t> &fences = cta.warps[s.writer]->proxyFences;
    auto fence = std::lower_bound(fences.begin(), fences.end(), s.writeClock);
    if (fence != fences.end() && warp.clock[s.writer] > *fence)
      continue;
    fault(warp, lane, &in,
          "reads shared offset " + std::to_string(offset + i) +
              " through the async proxy, which warp " +
              std::to_string(s.writer) + " wrote (line " +
              std::to_string(s.writerLine) +
              ") through the generic proxy with no fence.proxy.async of " +
              "that warp after the write and ordered before this read");
    return;
  }
}

void Launch::markSharedWrite(Warp &warp, unsigned lane, uint32_t offset,
                             unsigned bytes, const Instruction &in,
                             bool async) {
  Cta &cta = *warp.cta;
  uint32_t agent = async ? cta.asyncAgent() : warp.index;
  const VectorClock &clock = async ? cta.asyncClock : warp.clock;
  std::string who = async ? "a bulk copy writes" : "writes";
  progressed();
  if (cta.asyncReadsInFlight) {
    checkAsyncReads(warp, lane, offset, bytes, in);
    if (failed)
      return;
  }
  for (unsigned i = 0; i < bytes; ++i) {
    SharedShadow &s = cta.shadow[offset + i];
    if (s.mbarrier) {
      fault(warp, lane, &in, mbarrierAccess(offset + i));
      return;
    }
    if (s.pendingCopy) {
      fault(warp, lane, &in,
            who + " shared offset " + std::to_string(offset + i) +
                " that a cp.async has not finished writing");
      return;
    }
    if (s.writeClock != 0 && s.writer != agent &&
        clock[s.writer] < s.writeClock) {
      fault(warp, lane, &in,
            "shared-memory race: " + who + " offset " +
                std::to_string(offset + i) + " also written by " +
                agentName(cta, s.writer) + " (line " +
                std::to_string(s.writerLine) + ") " + kUnordered);
      return;
    }
    const uint32_t *readClocks = &cta.readClocks[(offset + i) / 4 * cta.agents];
    for (uint64_t m = s.readers & ~(1ull << agent); m; m &= m - 1) {
      unsigned reader = __builtin_ctzll(m);
      if (clock[reader] >= readClocks[reader])
        continue;
      fault(warp, lane, &in,
            "shared-memory race: " + who + " offset " +
                std::to_string(offset + i) + " read by " +
                agentName(cta, reader) +
                (reader == s.reader
                     ? " (line " + std::to_string(s.readerLine) + ")"
                     : std::string()) +
                " " + kUnordered);
      return;
    }
    s.readers = 0;
    s.writeClock = clock[agent];
    s.writer = static_cast<uint8_t>(agent);
    s.writerLine = in.line;
  }
}

Space Launch::resolve(Space space, uint64_t &address) {
  if (space != Space::Generic)
    return space;
  if (address - kSharedWindow < kWindowSize) {
    address -= kSharedWindow;
    return Space::Shared;
  }
  if (address - kLocalWindow < kWindowSize) {
    address -= kLocalWindow;
    return Space::Local;
  }
  if (address - kParamWindow < kWindowSize) {
    address -= kParamWindow;
    return Space::Param;
  }
  return Space::Global;
}

uint8_t *Launch::localPointer(Warp &warp, unsigned lane, uint64_t offset,
                              unsigned bytes, const Instruction &in) {
  if (offset + bytes > kernel.localBytes) {
    fault(warp, lane, &in, "out-of-bounds local access");
    return nullptr;
  }
  return warp.local.data() + lane * kernel.localBytes + offset;
}

bool Launch::load(Warp &warp, unsigned lane, Space space, uint64_t address,
                  unsigned bytes, void *out, const Instruction &in) {
  const uint8_t *source = nullptr;
  switch (resolve(space, address)) {
  case Space::Param:
    if (address + bytes > params.size())
      return fault(warp, lane, &in,
                   "reads past the kernel's " + std::to_string(params.size()) +
                       " bytes of parameters");
    source = params.data() + address;
    break;
  case Space::Shared: {
    uint32_t offset;
    if (!sharedOffset(warp, lane, address, bytes, offset, in))
      return false;
    checkSharedRead(warp, lane, offset, bytes, in);
    source = warp.cta->shared.data() + offset;
    break;
  }
  case Space::Local:
    source = localPointer(warp, lane, address, bytes, in);
    break;
  default:
    source = globalPointer(warp, lane, address, bytes, accessOf(in, false), in);
    break;
  }
  if (!source || failed)
    return false;
  std::memcpy(out, source, bytes);
  return true;
}

bool Launch::store(Warp &warp, unsigned lane, Space space, uint64_t address,
                   unsigned bytes, const void *value, const Instruction &in) {
  uint8_t *target = nullptr;
  switch (resolve(space, address)) {
  case Space::Shared: {
    uint32_t offset;
    if (!sharedOffset(warp, lane, address, bytes, offset, in))
      return false;
    markSharedWrite(warp, lane, offset, bytes, in);
    target = warp.cta->shared.data() + offset;
    break;
  }
  case Space::Local:
    target = localPointer(warp, lane, address, bytes, in);
    break;
  case Space::Global:
    target = globalPointer(warp, lane, address, bytes, accessOf(in, true), in);
    if (target && std::memcmp(target, value, bytes) != 0)
      progressed();
    break;
  default:
    return fault(warp, lane, &in, "a store to read-only memory");
  }
  if (!target || failed)
    return false;
  std::memcpy(target, value, bytes);
  return true;
}

void Launch::countRequest(Space space, const uint64_t *addresses,
                          uint32_t lanes, unsigned bytes) {
  if (!lanes)
    return;
  bool shared = space == Space::Shared;
  if (space == Space::Generic) {
    uint64_t first = addresses[__builtin_ctz(lanes)];
    shared = first - kSharedWindow < kWindowSize;
  }
  if (!shared) {
    // Distinct 32-byte sectors the warp's accesses touch.
    uint64_t sectors[128];
    unsigned count = 0;
    for (uint32_t m = lanes; m; m &= m - 1) {
      uint64_t at = addresses[__builtin_ctz(m)];
      for (uint64_t s = at / 32; s <= (at + bytes - 1) / 32 && count < 128; ++s)
        if (std::find(sectors, sectors + count, s) == sectors + count)
          sectors[count++] = s;
    }
    ++profile.globalRequests;
    profile.globalSectors += count;
    return;
  }
  // Shared memory serves a request in phases of 128 bytes (32 lanes of 4
  // bytes, 16 of 8, 8 of 16); in a phase, the lanes whose distinct 4-byte
  // words fall in the same of 32 banks take one wavefront each.
  unsigned lanesPerPhase = bytes <= 4 ? 32 : 128 / bytes;
  for (unsigned phase = 0; phase < 32; phase += lanesPerPhase) {
    uint32_t phaseLanes =
        lanes & (lanesPerPhase == 32 ? ~0u
                                     : ((1u << lanesPerPhase) - 1) << phase);
    if (!phaseLanes)
      continue;
    uint64_t words[32][32];
    unsigned perBank[32] = {};
    unsigned wavefronts = 1;
    for (uint32_t m = phaseLanes; m; m &= m - 1) {
      uint64_t at = addresses[__builtin_ctz(m)];
      at = at >= kSharedWindow ? at - kSharedWindow : at;
      for (uint64_t word = at / 4; word <= (at + bytes - 1) / 4; ++word) {
        unsigned bank = word % 32;
        if (std::find(words[bank], words[bank] + perBank[bank], word) !=
                words[bank] + perBank[bank] ||
            perBank[bank] == 32)
          continue;
        words[bank][perBank[bank]++] = word;
        wavefronts = std::max(wavefronts, perBank[bank]);
      }
    }
    ++profile.sharedIdealWavefronts;
    profile.sharedWavefronts += wavefronts;
  }
  ++profile.sharedRequests;
}

bool Launch::completeCopies(Warp &warp, size_t keep) {
  Cta &cta = *warp.cta;
  while (warp.groups.size() > keep) {
    for (const PendingCopy &copy : warp.groups.front()) {
      uint8_t bytes[16] = {};
      if (copy.sourceBytes)
        std::memcpy(bytes, reinterpret_cast<const void *>(copy.source),
                    copy.sourceBytes);
      std::memcpy(cta.shared.data() + copy.sharedOffset, bytes, copy.bytes);
      for (unsigned i = 0; i < copy.bytes; ++i) {
        SharedShadow &s = cta.shadow[copy.sharedOffset + i];
        s.pendingCopy = false;
        s.writeClock = warp.clock[warp.index];
        s.writer = static_cast<uint8_t>(warp.index);
        s.writerLine = kernel.code[copy.instruction].line;
      }
    }
    warp.groups.pop_front();
    progressed();
  }
  return true;
}

void Launch::arriveAtBarrier(Warp &warp, uint32_t id, uint32_t threads,
                             bool wait) {
  Cta &cta = *warp.cta;
  Barrier &barrier = cta.barriers[id];
  uint32_t expected = threads ? threads : (cta.threads + 31) / 32 * 32;
  if (barrier.arrivedThreads == 0)
    barrier.expectedThreads = expected;
  else if (barrier.expectedThreads != expected) {
    fault(warp, 0, nullptr,
          "barrier " + std::to_string(id) + " used with thread counts " +
              std::to_string(barrier.expectedThreads) + " and " +
              std::to_string(expected) + " at once");
    return;
  }
  barrier.arrivedThreads += 32;
  // The arrival releases what the warp did so far; what it does next is
  // after it.
  if (barrier.arrivals.empty())
    barrier.arrivals.assign(cta.agents, 0);
  join(barrier.arrivals, warp.clock);
  ++warp.clock[warp.index];
  if (wait) {
    warp.atBarrier = true;
    warp.barrier = id;
    barrier.waiting.push_back(&warp);
  }
  if (barrier.arrivedThreads < barrier.expectedThreads)
    return;
  // Release: every waiting warp goes on; bar.red's result is written to
  // the destination of the bar.red each of them executed.
  for (Warp *waiter : barrier.waiting) {
    waiter->atBarrier = false;
    join(waiter->clock, barrier.arrivals);
    uint32_t pc = UINT32_MAX;
    for (uint32_t m = waiter->liveMask; m; m &= m - 1)
      pc = std::min(pc, waiter->pc[__builtin_ctz(m)]);
    const Instruction &in = kernel.code[pc - 1];
    if (in.op == Opcode::BarRed) {
      uint64_t result = in.boolOp == BoolOp::Popc  ? barrier.popc
                        : in.boolOp == BoolOp::And ? barrier.andValue
                                                   : barrier.orValue;
      for (uint32_t m = waiter->liveMask; m; m &= m - 1)
        waiter->registers[static_cast<size_t>(in.operands[0].reg) * 32 +
                          __builtin_ctz(m)] = result;
    }
  }
  barrier = Barrier();
  progressed();
}

LaunchResult Launch::run() {
  LaunchResult result;
  uint64_t total =
      uint64_t(shape.grid[0]) * shape.grid[1] * shape.grid[2];
  uint32_t threads = shape.block[0] * shape.block[1] * shape.block[2];
  auto refuse = [&](const std::string &why) {
    result.ok = false;
    result.error = "kernel " + kernel.name + ": " + why;
    return result;
  };
  if (total == 0 || threads == 0)
    return refuse("an empty grid or block");
  if (threads > 1024)
    return refuse("more than 1024 threads per block");
  if (params.size() < kernel.parameterBytes)
    return refuse("the launch passes " + std::to_string(params.size()) +
                  " bytes of parameters, the kernel takes " +
                  std::to_string(kernel.parameterBytes));
  uint32_t resident = std::max<uint32_t>(1, shape.residentCtas);
  std::vector<std::unique_ptr<Cta>> active;
  uint64_t next = 0;
  unsigned idle = 0;
  while (!failed && (next < total || !active.empty())) {
    while (next < total && active.size() < resident)
      active.push_back(startCta(static_cast<uint32_t>(next++)));
    progress = false;
    bool ranAny = false;
    for (auto &cta : active) {
      for (auto &warp : cta->warps) {
        if (warp->done() || warp->atBarrier)
          continue;
        ranAny = true;
        warp->yield = false;
        bool earlier = progress;
        progress = false;
        unsigned i = 0;
        for (; i < kSliceInstructions && !warp->done() && !warp->atBarrier &&
               !warp->yield;
             ++i)
          if (!step(*warp))
            break;
        executedInstructions += i;
        // A path waits at most until the end of the slice. A diverged warp
        // that ran a whole slice without changing anything may spin on what
        // a lane of its own is still to do (a flag it sets after the loop):
        // the path that would run next waits during the next slice while
        // the warp's other paths run.
        warp->suspended = 0;
        if (i == kSliceInstructions && !progress && warp->diverged &&
            !failed && !warp->done())
          suspend(*warp, lowestLanes(*warp, warp->liveMask & ~warp->parked));
        progress = progress || earlier;
        if (shape.instructionLimit && !failed &&
            executedInstructions > shape.instructionLimit) {
          failed = true;
          error = "kernel " + kernel.name + ": ran past the launch's limit " +
                  "of " + std::to_string(shape.instructionLimit) +
                  " warp instructions";
        }
        if (failed)
          break;
      }
      if (failed)
        break;
    }
    if (failed)
      break;
    size_t before = active.size();
    active.erase(std::remove_if(active.begin(), active.end(),
                                [](const std::unique_ptr<Cta> &cta) {
                                  return cta->liveWarps == 0;
                                }),
                 active.end());
    if (active.size() != before)
      progress = true;
    idle = progress ? 0 : idle + 1;
    if (!ranAny || idle > kIdleRounds) {
      std::string where;
      for (auto &cta : active)
        for (auto &warp : cta->warps)
          if (!warp->done()) {
            where += "\n  " + describeWarp(*warp);
            if (where.size() > 2000) {
              where += "\n  ...";
              break;
            }
          }
      failed = true;
      error = "kernel " + kernel.name + ": deadlock: " +
              (ranAny ? "the resident CTAs keep running without changing "
                        "memory or passing a barrier (spinning on a flag or "
                        "an mbarrier phase nothing will complete?)"
                      : "every resident warp waits at a barrier that cannot "
                        "complete") +
              where;
    }
  }
  result.ok = !failed;
  result.error = error;
  result.profile = profile;
  return result;
}

//===----------------------------------------------------------------------===//
// Profile
//===----------------------------------------------------------------------===//

const char *Profile::className(Class c) {
  static const char *names[] = {"mma",     "ldmatrix", "exp2",
                                "float",   "integer",  "memory",
                                "control", "sync",     "convert"};
  return names[c];
}
