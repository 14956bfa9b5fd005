//===- Mbarriers.cpp - mbarrier objects and bulk copies -------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The mbarrier object of the PTX ISA ("Parallel Synchronization and
// Communication Instructions: mbarrier", 9.7.13.15): a phase, a pending
// arrival count reset to the expected count when a phase completes, and a
// transaction count (tx-count) of bytes that asynchronous copies still have
// to deliver. A phase completes when the pending arrivals and the tx-count
// are both zero; test_wait and try_wait report whether the phase named by a
// state or a parity has completed.
//
// Bulk copies (cp.async.bulk, 9.7.9.25) and tensor copies
// (cp.async.bulk.tensor, 9.7.9.27: a box of a tiled tensor map, elements
// outside the tensor filled, 16-byte chunks placed by the map's swizzle,
// the same address function wgmma's descriptors read with) are performed by
// the asynchronous proxy: here they land at once, as writes of the CTA's async
// agent, and complete their bytes on the mbarrier, so a reader that does not
// wait on the mbarrier's phase is a race even though the bytes are already
// there.
//
// Happens-before: an arrival releases the arriving warp's clock into the
// phase, a bulk copy the async agent's; a wait that sees the phase complete
// acquires the phase's clocks.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "attn/PtxEmulator/TensorMap.h"

#include <algorithm>
#include <cstring>

using namespace attn::ptxemu;

namespace {

constexpr uint32_t kMbarrierBytes = 8;
/// The largest arrival count and tx-count (PTX ISA: 2^20 - 1).
constexpr int64_t kMbarrierLimit = (1 << 20) - 1;

const char *mbarrierOpName(MbarrierOp op) {
  static const char *names[] = {"init",        "inval",     "arrive",
                                "arrive_drop", "expect_tx", "complete_tx",
                                "test_wait",   "try_wait"};
  return names[static_cast<int>(op)];
}

/// Completes the current phase of M when no arrival and no transaction byte
/// is pending: the phase's clocks are kept for its waiters and the next
/// phase expects the expected arrivals again.
bool completePhaseIfDone(MBarrier &m) {
  if (m.pending != 0 || m.txCount != 0)
    return false;
  m.completed[m.phase % 2] = m.arrivals;
  std::fill(m.arrivals.begin(), m.arrivals.end(), 0);
  ++m.phase;
  m.pending = m.expected;
  return true;
}

} // namespace

MBarrier *Launch::findMbarrier(Warp &w, unsigned lane, Space space, uint64_t at,
                               const Instruction &in, const std::string &name,
                               uint32_t &offset) {
  if (resolve(space, at) != Space::Shared) {
    fault(w, lane, &in, name + " of an address outside shared memory");
    return nullptr;
  }
  if (!sharedOffset(w, lane, at, kMbarrierBytes, offset, in))
    return nullptr;
  auto found = w.cta->mbarriers.find(offset);
  if (found == w.cta->mbarriers.end()) {
    fault(w, lane, &in,
          name + " of shared offset " + std::to_string(offset) +
              ", which holds no initialised mbarrier");
    return nullptr;
  }
  MBarrier &m = found->second;
  if (w.clock[m.initAgent] < m.initClock) {
    fault(w, lane, &in,
          name + " of the mbarrier at shared offset " + std::to_string(offset) +
              " before its mbarrier.init (line " + std::to_string(m.initLine) +
              ") is ordered before it (no barrier after the init)");
    return nullptr;
  }
  return &m;
}

std::string Launch::mbarrierAccess(uint32_t offset) const {
  return "a plain access of shared offset " + std::to_string(offset) +
         ", part of an mbarrier object (only mbarrier instructions may "
         "access it until mbarrier.inval)";
}

std::string Launch::describeMbarrier(const Cta &cta, int64_t offset) const {
  std::string text = "the mbarrier at shared offset " + std::to_string(offset);
  auto it = cta.mbarriers.find(static_cast<uint32_t>(offset));
  if (it == cta.mbarriers.end())
    return text + " (invalidated)";
  const MBarrier &m = it->second;
  return text + " (phase " + std::to_string(m.phase) + ", parity " +
         std::to_string(m.phase % 2) + ": " + std::to_string(m.pending) +
         " of " + std::to_string(m.expected) + " arrivals and " +
         std::to_string(m.txCount) + " transaction bytes pending)";
}

bool Launch::executeMbarrier(Warp &w, const Instruction &in, uint32_t exec) {
  Cta &cta = *w.cta;
  const std::vector<Operand> &ops = in.operands;
  const Operand &address = ops[in.mbarrier == MbarrierOp::Arrive ||
                                       in.mbarrier == MbarrierOp::ArriveDrop ||
                                       in.mbarrier == MbarrierOp::TestWait ||
                                       in.mbarrier == MbarrierOp::TryWait
                                   ? 1
                                   : 0];
  std::string name = std::string("mbarrier.") + mbarrierOpName(in.mbarrier);
  bool released = false;
  for (uint32_t lanes = exec; lanes; lanes &= lanes - 1) {
    unsigned lane = __builtin_ctz(lanes);
    uint64_t at = addressOf(w, address, lane);
    uint32_t offset;
    if (in.mbarrier == MbarrierOp::Init) {
      if (resolve(in.space, at) != Space::Shared)
        return fault(w, lane, &in,
                     name + " of an address outside shared memory");
      if (!sharedOffset(w, lane, at, kMbarrierBytes, offset, in))
        return false;
      if (cta.mbarriers.count(offset))
        return fault(w, lane, &in,
                     "mbarrier.init of a live mbarrier at shared offset " +
                         std::to_string(offset) + " (mbarrier.inval it first)");
      uint64_t count = operandValue(w, ops[1], lane);
      if (count == 0 || count > kMbarrierLimit)
        return fault(w, lane, &in,
                     "mbarrier.init with an arrival count of " +
                         std::to_string(count) + " (1 to 2^20 - 1)");
      markSharedWrite(w, lane, offset, kMbarrierBytes, in);
      if (failed)
        return false;
      MBarrier &m = cta.mbarriers[offset];
      m.expected = m.pending = static_cast<uint32_t>(count);
      m.arrivals.assign(cta.agents, 0);
      m.completed[0] = m.completed[1] = m.arrivals;
      m.initAgent = static_cast<uint8_t>(w.index);
      m.initClock = w.clock[w.index];
      m.initLine = in.line;
      for (uint32_t i = 0; i < kMbarrierBytes; ++i)
        cta.shadow[offset + i].mbarrier = true;
      continue;
    }

    MBarrier *found = findMbarrier(w, lane, in.space, at, in, name, offset);
    if (!found)
      return false;
    MBarrier &m = *found;
    auto addTransactions = [&](int64_t bytes) {
      m.txCount += bytes;
      if (m.txCount > kMbarrierLimit || m.txCount < -kMbarrierLimit)
        return fault(w, lane, &in,
                     name + " takes the mbarrier's tx-count to " +
                         std::to_string(m.txCount) +
                         " (at most 2^20 - 1 "
                         "either way)");
      return true;
    };

    switch (in.mbarrier) {
    case MbarrierOp::Init:
      break;
    case MbarrierOp::Inval:
      cta.mbarriers.erase(offset);
      for (uint32_t i = 0; i < kMbarrierBytes; ++i)
        cta.shadow[offset + i].mbarrier = false;
      markSharedWrite(w, lane, offset, kMbarrierBytes, in);
      if (failed)
        return false;
      break;
    case MbarrierOp::ExpectTx:
      if (!addTransactions(static_cast<int64_t>(operandValue(w, ops[1], lane))))
        return false;
      break;
    case MbarrierOp::CompleteTx:
      if (!addTransactions(
              -static_cast<int64_t>(operandValue(w, ops[1], lane))))
        return false;
      join(m.arrivals, w.clock);
      released = true;
      if (completePhaseIfDone(m))
        progressed();
      break;
    case MbarrierOp::Arrive:
    case MbarrierOp::ArriveDrop: {
      bool expectTx = in.flags & mod::ExpectTx;
      uint64_t count =
          ops.size() == 3 && !expectTx ? operandValue(w, ops[2], lane) : 1;
      if (expectTx &&
          !addTransactions(static_cast<int64_t>(operandValue(w, ops[2], lane))))
        return false;
      if (count == 0 || count > m.pending)
        return fault(w, lane, &in,
                     name + " of " + std::to_string(count) +
                         " arrivals at the mbarrier at shared offset " +
                         std::to_string(offset) + ", whose phase " +
                         std::to_string(m.phase) + " expects " +
                         std::to_string(m.pending) + " more");
      // The opaque state: the phase in bits 0-31 (what test_wait reads),
      // the pending arrivals before this one in bits 32-51 (what
      // mbarrier.pending_count reads).
      uint64_t state = m.phase | (uint64_t(m.pending) << 32);
      m.pending -= static_cast<uint32_t>(count);
      if (in.mbarrier == MbarrierOp::ArriveDrop)
        m.expected -= static_cast<uint32_t>(count);
      if ((in.flags & mod::NoComplete) && m.pending == 0 && m.txCount == 0)
        return fault(w, lane, &in,
                     name +
                         ".noComplete completes the phase of the "
                         "mbarrier at shared offset " +
                         std::to_string(offset));
      join(m.arrivals, w.clock);
      released = true;
      if (completePhaseIfDone(m))
        progressed();
      if (ops[0].kind == Operand::Kind::Register)
        registerOf(w, ops[0].reg, lane) = state;
      break;
    }
    case MbarrierOp::TestWait:
    case MbarrierOp::TryWait: {
      // The phase waited for: the one of the given parity (the current
      // phase or the one before it), or the one a state from arrive names.
      uint64_t operand = operandValue(w, ops[2], lane);
      bool complete;
      VectorClock *phaseClock;
      if (in.flags & mod::Parity) {
        complete = m.phase % 2 != (operand & 1);
        phaseClock = &m.completed[operand & 1];
      } else {
        complete = static_cast<uint32_t>(operand) != m.phase;
        phaseClock = &m.completed[operand % 2];
      }
      if (complete)
        join(w.clock, *phaseClock);
      registerOf(w, ops[0].reg, lane) = complete;
      w.waitingOn[lane] = complete ? -1 : static_cast<int32_t>(offset);
      // A failed wait lets the other warps run (the hardware suspends a
      // try_wait for a while).
      w.yield = w.yield || !complete;
      break;
    }
    }
  }
  // An arrival releases what the warp did before it; what it does next is
  // not ordered before the phase's waiters.
  if (released)
    ++w.clock[w.index];
  return !failed;
}

bool Launch::tensorMapOf(Warp &w, unsigned lane, const Instruction &in,
                         TiledTensorMap &t) {
  // [tensorMap, {c...}]: the first operand of a store or a prefetch, the
  // second of a load.
  const Operand &source =
      in.operands[in.flags & (mod::ToGlobal | mod::Prefetch) ? 0 : 1];
  // The tensor map: a kernel parameter (a __grid_constant__ CUtensorMap),
  // by name or by its generic address (cvta.param), or global memory.
  uint8_t map[kTensorMapBytes];
  bool byName = source.isParam && source.reg < 0;
  uint64_t at = byName ? source.value : addressOf(w, source, lane);
  Space space = byName ? Space::Param : resolve(Space::Generic, at);
  if (space == Space::Param) {
    if (at + kTensorMapBytes > params.size())
      return fault(w, lane, &in,
                   "the tensor map parameter is past the "
                   "parameter buffer");
    std::memcpy(map, params.data() + at, kTensorMapBytes);
  } else {
    if (space != Space::Global)
      return fault(w, lane, &in,
                   "the tensor map is not in global memory or "
                   "a parameter");
    const uint8_t *from =
        globalPointer(w, lane, at, kTensorMapBytes, GlobalAccess::Read, in);
    if (!from)
      return false;
    std::memcpy(map, from, kTensorMapBytes);
  }
  if (!decodeTensorMap(map, t))
    return fault(w, lane, &in,
                 "the tensor map was not encoded by "
                 "cuTensorMapEncodeTiled");
  if (t.rank != in.vector)
    return fault(w, lane, &in,
                 "a " + std::to_string(in.vector) + "-d copy of a rank-" +
                     std::to_string(t.rank) + " tensor map");
  for (uint32_t i = 0; i < t.rank; ++i)
    if (t.elementStrides[i] != 1)
      return fault(w, lane, &in,
                   "tensor maps with element strides other "
                   "than 1 are not emulated");
  return true;
}

bool Launch::tensorCopyPieces(Warp &w, unsigned lane, const Instruction &in,
                              uint32_t shared, std::vector<CopyPiece> &pieces,
                              uint64_t &bytes) {
  bool toGlobal = in.flags & mod::ToGlobal;
  const Operand &source = in.operands[toGlobal ? 0 : 1];
  TiledTensorMap t;
  if (!tensorMapOf(w, lane, in, t))
    return false;
  if (shared % 128 != 0)
    return fault(w, lane, &in,
                 "a tensor copy's shared memory must be "
                 "128-byte aligned");
  int64_t corner[5] = {};
  for (uint32_t i = 0; i < t.rank; ++i)
    corner[i] = static_cast<int32_t>(operandValue(w, source.elements[i], lane));
  unsigned element = t.elementBytes();
  unsigned perChunk = 16 / element;
  uint32_t swizzleMask = (1u << t.swizzle) - 1; // 0, 1, 3, 7
  uint64_t rows = 1;
  for (uint32_t i = 1; i < t.rank; ++i)
    rows *= t.boxDim[i];
  bytes = t.boxBytes();
  uint64_t fill = t.oobFill == 1 ? ~uint64_t(0) : 0; // NaN or zero
  // Box element (b0, row) is at shared + (row boxDim[0] + b0) bytes, its
  // 16-byte chunk moved by the swizzle.
  for (uint64_t row = 0; row < rows; ++row) {
    bool rowInside = true;
    uint64_t rowAddress = t.globalAddress;
    uint64_t rest = row;
    for (uint32_t i = 1; i < t.rank; ++i) {
      int64_t x = corner[i] + static_cast<int64_t>(rest % t.boxDim[i]);
      rest /= t.boxDim[i];
      rowInside =
          rowInside && x >= 0 && x < static_cast<int64_t>(t.globalDim[i]);
      rowAddress += static_cast<uint64_t>(x) * t.globalStrides[i - 1];
    }
    for (uint32_t b0 = 0; b0 < t.boxDim[0]; b0 += perChunk) {
      uint32_t at =
          shared + static_cast<uint32_t>((row * t.boxDim[0] + b0) * element);
      at ^= ((at >> 7) & swizzleMask) << 4;
      for (uint32_t e = 0; e < perChunk; ++e) {
        int64_t x = corner[0] + b0 + e;
        bool inside =
            rowInside && x >= 0 && x < static_cast<int64_t>(t.globalDim[0]);
        // A store leaves what lies outside the tensor alone.
        if (!inside && toGlobal)
          continue;
        uint8_t *global = nullptr;
        if (inside) {
          global = globalPointer(
              w, lane, rowAddress + uint64_t(x) * element, element,
              toGlobal ? GlobalAccess::Write : GlobalAccess::Read, in);
          if (!global)
            return false;
        }
        pieces.push_back({at + e * element, element, global, fill});
      }
    }
  }
  return true;
}

bool Launch::executeBulkStore(Warp &w, const Instruction &in, uint32_t exec) {
  Cta &cta = *w.cta;
  const std::vector<Operand> &ops = in.operands;
  bool tensor = in.op == Opcode::CpAsyncBulkTensor;
  for (uint32_t lanes = exec; lanes; lanes &= lanes - 1) {
    unsigned lane = __builtin_ctz(lanes);
    uint64_t source = addressOf(w, ops[1], lane);
    std::vector<CopyPiece> pieces;
    if (tensor) {
      uint64_t bytes = 0;
      if (source >= kWindowSize)
        return fault(w, lane, &in,
                     "a tensor copy's source is not a shared "
                     "address");
      if (!tensorCopyPieces(w, lane, in, static_cast<uint32_t>(source), pieces,
                            bytes))
        return false;
    } else {
      uint64_t destination = addressOf(w, ops[0], lane);
      uint64_t size = operandValue(w, ops[2], lane);
      if (size == 0 || size % 16 != 0 || destination % 16 != 0 ||
          source % 16 != 0)
        return fault(w, lane, &in,
                     "cp.async.bulk of " + std::to_string(size) +
                         " bytes: the size and both addresses must be "
                         "multiples of 16");
      uint8_t *to =
          globalPointer(w, lane, destination, static_cast<unsigned>(size),
                        GlobalAccess::Write, in);
      if (!to)
        return false;
      pieces.push_back(
          {static_cast<uint32_t>(source), static_cast<uint32_t>(size), to, 0});
    }
    // The copy reads shared memory as the issuing warp (after its own
    // accesses), and the bytes stay the copy's until a
    // cp.async.bulk.wait_group retires its group.
    uint32_t begin = UINT32_MAX, end = 0;
    for (const CopyPiece &piece : pieces) {
      uint32_t offset;
      if (!sharedOffset(w, lane, piece.sharedOffset, piece.bytes, offset, in,
                        /*alignment=*/1))
        return false;
      checkSharedRead(w, lane, offset, piece.bytes, in);
      if (!failed)
        checkAsyncProxyRead(w, lane, offset, piece.bytes, in);
      if (failed)
        return false;
      std::memcpy(piece.global, cta.shared.data() + offset, piece.bytes);
      begin = std::min(begin, offset);
      end = std::max(end, offset + piece.bytes);
    }
    if (end > begin)
      recordAsyncRead(cta, w.bulkOpen, begin, end, in.line);
    if (profileTraffic && tensor) {
      ++profile.tensorStores;
      for (const CopyPiece &piece : pieces)
        profile.tensorStoreBytes += piece.bytes;
    }
    progressed();
  }
  return true;
}

bool Launch::executeBulkCopy(Warp &w, const Instruction &in, uint32_t exec) {
  if (in.flags & mod::ToGlobal)
    return executeBulkStore(w, in, exec);
  if (in.flags & mod::Prefetch) {
    // cp.async.bulk.prefetch.tensor: a hint to bring the box into L2, which
    // changes no memory the kernel sees; only its tensor map is checked
    // (a map the encoder wrote, of the copy's rank).
    for (uint32_t lanes = exec; lanes; lanes &= lanes - 1) {
      TiledTensorMap map;
      if (!tensorMapOf(w, __builtin_ctz(lanes), in, map))
        return false;
    }
    return true;
  }
  Cta &cta = *w.cta;
  const std::vector<Operand> &ops = in.operands;
  bool tensor = in.op == Opcode::CpAsyncBulkTensor;
  std::string name = tensor ? "cp.async.bulk.tensor" : "cp.async.bulk";
  for (uint32_t lanes = exec; lanes; lanes &= lanes - 1) {
    unsigned lane = __builtin_ctz(lanes);
    uint64_t destination = addressOf(w, ops[0], lane);
    // The mbarrier first: a copy that completes on nothing is a fault
    // whatever it copies.
    uint32_t barrierOffset;
    MBarrier *m = findMbarrier(
        w, lane, Space::Shared, addressOf(w, ops[tensor ? 2 : 3], lane), in,
        name + " completing on an mbarrier", barrierOffset);
    if (!m)
      return false;
    std::vector<CopyPiece> pieces;
    uint64_t size = 0;
    if (tensor) {
      if (destination >= kWindowSize)
        return fault(w, lane, &in,
                     "a tensor copy's destination is not a "
                     "shared address");
      if (!tensorCopyPieces(w, lane, in, static_cast<uint32_t>(destination),
                            pieces, size))
        return false;
    } else {
      uint64_t source = addressOf(w, ops[1], lane);
      size = operandValue(w, ops[2], lane);
      if (size == 0 || size % 16 != 0 || destination % 16 != 0 ||
          source % 16 != 0)
        return fault(w, lane, &in,
                     "cp.async.bulk of " + std::to_string(size) +
                         " bytes: the size and both addresses must be "
                         "multiples of 16");
      uint32_t offset;
      if (!sharedOffset(w, lane, destination, static_cast<unsigned>(size),
                        offset, in, /*alignment=*/16))
        return false;
      uint8_t *from = globalPointer(
          w, lane, source, static_cast<unsigned>(size), GlobalAccess::Read, in);
      if (!from)
        return false;
      pieces.push_back({offset, static_cast<uint32_t>(size), from, 0});
      if (profileTraffic) {
        uint64_t sources[32] = {};
        sources[lane] = source;
        countRequest(Space::Global, sources, 1u << lane,
                     static_cast<unsigned>(size));
      }
    }
    if (profileTraffic && tensor) {
      ++profile.tensorLoads;
      for (const CopyPiece &piece : pieces)
        if (piece.global)
          profile.tensorLoadBytes += piece.bytes;
    }
    // The async proxy performs the copy after the issuing warp's accesses
    // so far.
    join(cta.asyncClock, w.clock);
    ++cta.asyncClock[cta.asyncAgent()];
    for (const CopyPiece &piece : pieces) {
      uint32_t offset;
      if (!sharedOffset(w, lane, piece.sharedOffset, piece.bytes, offset, in,
                        /*alignment=*/1))
        return false;
      markSharedWrite(w, lane, offset, piece.bytes, in, /*async=*/true);
      if (failed)
        return false;
      if (piece.global)
        std::memcpy(cta.shared.data() + offset, piece.global, piece.bytes);
      else
        std::memcpy(cta.shared.data() + offset, &piece.fill, piece.bytes);
    }
    // complete_tx: the bytes have arrived.
    m->txCount -= static_cast<int64_t>(size);
    if (m->txCount < -kMbarrierLimit)
      return fault(w, lane, &in,
                   name + " takes the mbarrier's tx-count below -(2^20 - 1)");
    join(m->arrivals, cta.asyncClock);
    completePhaseIfDone(*m);
    progressed();
  }
  return true;
}
