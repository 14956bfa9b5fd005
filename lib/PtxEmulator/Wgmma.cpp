//===- Wgmma.cpp - Warpgroup matrix multiply-accumulate -------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// wgmma.mma_async (PTX ISA 9.7.15): a warpgroup of four warps computes
// D (64 x N, f32) = A (64 x 16) B (16 x N) (+ D), A from shared memory
// through a matrix descriptor or from registers, B from shared memory.
// Warp w % 4 of the warpgroup owns rows 16 (w % 4) .. + 15 of A and D, so
// each warp's part is computed when that warp issues the instruction.
//
// Fragments (the ISA's register fragment figures for .m64nNk16): lane l of
// the warp, g = l / 4, t = l % 4, holds D element (16 (w % 4) + g + 8 i,
// 8 j + 2 t + c) in register d[4 j + 2 i + c], and 16-bit A elements
// (g + 8 i, 2 t + c + 8 h) as the two halves of register a[2 h + i], low
// half c = 0.
//
// Shared operands follow the ISA's canonical layouts ("Shared Memory Matrix
// Layout", matrix descriptor format 9.7.15.5.1), in units of 16 bytes (T =
// 8 elements of 16 bits), with W = 1, 2, 4, 8 units per swizzled row for no
// swizzle, 32B, 64B and 128B swizzle:
//
//   K-major  (row r of M or N, k):   r = r0 + 8 r1, k = 8 ku + ke
//     no swizzle: r0 + r1 SBO + ku LBO        swizzled: r0 W + r1 SBO + ku
//   MN-major (mn, k):  mn = 8 (w + W n) + e (w < W), k = k0 + 8 k1
//     no swizzle: (mn / 8) SBO + k0 + k1 LBO  swizzled: w + n LBO + k0 W + k1
//     SBO
//
// plus the element within its unit, then the swizzle XORs address bits
// [4, 4 + b) with bits [7, 7 + b) (b = 1, 2, 3 for 32B, 64B, 128B), the
// same function the tensor copies apply when they write shared memory.
//
// The product is exact in double precision and rounded to f32 once with D,
// as mma.sync's. The result registers and the shared bytes read belong to
// the wgmma until a wgmma.wait_group retires its group: another
// instruction touching those registers, or a write to those bytes, is a
// fault.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "Numerics.h"

#include <algorithm>

using namespace attn::ptxemu;

namespace {

/// A shared-memory matrix descriptor's fields, in bytes.
struct MatrixDescriptor {
  uint32_t start = 0, leading = 0, stride = 0, baseOffset = 0;
  /// The swizzle's bits b: 0 none, 1 for 32B, 2 for 64B, 3 for 128B.
  unsigned swizzleBits = 0;

  explicit MatrixDescriptor(uint64_t bits) {
    start = static_cast<uint32_t>(bits & 0x3fff) << 4;
    leading = static_cast<uint32_t>((bits >> 16) & 0x3fff) << 4;
    stride = static_cast<uint32_t>((bits >> 32) & 0x3fff) << 4;
    baseOffset = static_cast<uint32_t>((bits >> 49) & 7);
    static const unsigned modes[] = {0, 3, 2, 1};
    swizzleBits = modes[bits >> 62];
  }

  /// The shared address of element (row, k) of a 16-column K-major operand,
  /// or with `mnMajor` of element (mn = row, k).
  uint32_t address(unsigned row, unsigned k, bool mnMajor) const {
    uint32_t units = 1u << swizzleBits; // W
    uint32_t unit, element;
    if (!mnMajor) {
      unsigned r0 = row % 8, r1 = row / 8, ku = k / 8;
      element = k % 8;
      unit = swizzleBits == 0 ? r0 + r1 * (stride / 16) + ku * (leading / 16)
                              : r0 * units + r1 * (stride / 16) + ku;
    } else {
      unsigned mnUnit = row / 8, k0 = k % 8, k1 = k / 8;
      element = row % 8;
      unit = swizzleBits == 0
                 ? mnUnit * (stride / 16) + k0 + k1 * (leading / 16)
                 : mnUnit % units + (mnUnit / units) * (leading / 16) +
                       k0 * units + k1 * (stride / 16);
    }
    uint32_t at = start + unit * 16 + element * 2;
    return swizzle(at, swizzleBits);
  }

  static uint32_t swizzle(uint32_t at, unsigned bits) {
    return at ^ (((at >> 7) & ((1u << bits) - 1)) << 4);
  }
};

bool isWgmma(Opcode op) {
  return op == Opcode::WgmmaMma || op == Opcode::WgmmaFence ||
         op == Opcode::WgmmaCommit || op == Opcode::WgmmaWait;
}

} // namespace

bool Launch::checkWgmmaRegisters(Warp &w, const Instruction &in,
                                 uint32_t group) {
  if (isWgmma(in.op))
    return true;
  auto pending = [&](int32_t slot) {
    return slot >= 0 && static_cast<size_t>(slot) < w.wgmmaPending.size() &&
           w.wgmmaPending[slot] != 0;
  };
  auto check = [&](int32_t slot) {
    if (!pending(slot))
      return true;
    return fault(w, __builtin_ctz(group), &in,
                 "touches " + kernel.registerNames[slot] +
                     ", an accumulator or A register of a wgmma.mma_async "
                     "(line " +
                     std::to_string(w.wgmmaGroups.empty()
                                        ? w.wgmmaOpen.line
                                        : w.wgmmaGroups.back().line) +
                     ") that no wgmma.wait_group has retired");
  };
  if (!check(in.guard))
    return false;
  for (const Operand &o : in.operands) {
    if (!check(o.reg))
      return false;
    for (const Operand &e : o.elements)
      if (!check(e.reg))
        return false;
  }
  return true;
}

void Launch::checkAsyncReads(Warp &w, unsigned lane, uint32_t offset,
                             unsigned bytes, const Instruction &in) {
  auto overlaps = [&](const AsyncGroup &g) {
    for (auto [begin, end] : g.reads)
      if (offset < end && begin < offset + bytes)
        return true;
    return false;
  };
  for (const auto &warp : w.cta->warps)
    for (bool wgmma : {true, false}) {
      const AsyncGroup *hit = nullptr;
      if (overlaps(wgmma ? warp->wgmmaOpen : warp->bulkOpen))
        hit = wgmma ? &warp->wgmmaOpen : &warp->bulkOpen;
      for (const AsyncGroup &g : wgmma ? warp->wgmmaGroups : warp->bulkGroups)
        if (!hit && overlaps(g))
          hit = &g;
      if (!hit)
        continue;
      fault(w, lane, &in,
            "writes shared offset " + std::to_string(offset) + ", which " +
                (wgmma ? "a wgmma.mma_async" : "a bulk copy to global memory") +
                " of warp " + std::to_string(warp->index) + " (line " +
                std::to_string(hit->line) + ") reads and no " +
                (wgmma ? "wgmma.wait_group" : "cp.async.bulk.wait_group") +
                " has retired");
      return;
    }
}

void Launch::retireGroups(Warp &w, std::deque<AsyncGroup> &groups,
                          size_t keep) {
  while (groups.size() > keep) {
    const AsyncGroup &g = groups.front();
    for (int32_t slot : g.registers)
      if (--w.wgmmaPending[slot] == 0)
        --w.wgmmaPendingRegisters;
    if (!g.reads.empty())
      --w.cta->asyncReadsInFlight;
    groups.pop_front();
  }
  progressed();
}

void Launch::recordAsyncRead(Cta &cta, AsyncGroup &open, uint32_t begin,
                             uint32_t end, uint32_t line) {
  if (open.registers.empty() && open.reads.empty())
    open.line = line;
  if (open.reads.empty())
    ++cta.asyncReadsInFlight;
  // A range that touches one already read (the next k step of the same
  // operand) extends it: a group keeps one range per operand tile.
  for (auto &[from, to] : open.reads)
    if (begin <= to && from <= end) {
      from = std::min(from, begin);
      to = std::max(to, end);
      return;
    }
  open.reads.push_back({begin, end});
}

bool Launch::executeWgmma(Warp &w, const Instruction &in, uint32_t exec) {
  Cta &cta = *w.cta;
  unsigned lane0 = __builtin_ctz(w.liveMask);
  if (exec != w.liveMask || w.liveMask != ~0u)
    return fault(w, exec ? __builtin_ctz(exec) : lane0, &in,
                 "wgmma instructions need all 32 lanes of every warp of the "
                 "warpgroup, converged and unguarded");
  if (cta.warps.size() % 4 != 0)
    return fault(w, lane0, &in,
                 "wgmma in a CTA of " + std::to_string(cta.warps.size()) +
                     " warps: warpgroups are 4 warps");
  const std::vector<Operand> &ops = in.operands;
  switch (in.op) {
  case Opcode::WgmmaFence:
    return true;
  case Opcode::WgmmaCommit:
    w.wgmmaGroups.push_back(std::move(w.wgmmaOpen));
    w.wgmmaOpen = AsyncGroup();
    return true;
  case Opcode::WgmmaWait:
    // Groups still issuing are not part of any wait: commit them first.
    retireGroups(w, w.wgmmaGroups, ops[0].value);
    return true;
  default:
    break;
  }

  // wgmma.mma_async. The descriptors and scale-d are the warpgroup's: the
  // same in every lane.
  bool registerA = ops[1].kind == Operand::Kind::Vector;
  uint64_t descriptorA = registerA ? 0 : operandValue(w, ops[1], lane0);
  uint64_t descriptorB = operandValue(w, ops[2], lane0);
  bool scaleD = operandValue(w, ops[3], lane0) != 0;
  for (unsigned lane = 1; lane < 32; ++lane)
    if ((!registerA && operandValue(w, ops[1], lane) != descriptorA) ||
        operandValue(w, ops[2], lane) != descriptorB ||
        (operandValue(w, ops[3], lane) != 0) != scaleD)
      return fault(w, lane, &in,
                   "wgmma.mma_async with descriptors or scale-d that differ "
                   "between lanes");
  bool negateA = ops[4].value != 1, negateB = ops[5].value != 1;
  bool transposeA = !registerA && ops[6].value == 1;
  bool transposeB = ops.back().value == 1;
  unsigned n = in.n;
  unsigned rowBase = 16 * (w.index % 4);
  Type elementType = in.typeA;
  auto element = [&](uint16_t bits) {
    return static_cast<double>(unpackHalf(bits, elementType));
  };

  // A: this warp's 16 rows; B: 16 x N. The bytes each operand reads, a
  // range per operand: one range over both would also cover whatever lies
  // between them (another pipeline stage, which a copy may refill while
  // this product runs).
  double a[16][16], b[16][256];
  uint32_t readBegin = UINT32_MAX, readEnd = 0;
  auto recordOperandRead = [&] {
    if (readEnd > readBegin)
      recordAsyncRead(cta, w.wgmmaOpen, readBegin, readEnd, in.line);
    readBegin = UINT32_MAX;
    readEnd = 0;
  };
  auto readShared = [&](const MatrixDescriptor &d, unsigned row, unsigned k,
                        bool mnMajor, double &out) {
    if (d.baseOffset != 0)
      return fault(w, lane0, &in,
                   "a matrix descriptor with a base offset (not a canonical "
                   "layout)");
    uint32_t at = d.address(row, k, mnMajor), offset;
    if (!sharedOffset(w, lane0, at, 2, offset, in))
      return false;
    checkSharedRead(w, lane0, offset, 2, in);
    if (!failed)
      checkAsyncProxyRead(w, lane0, offset, 2, in);
    if (failed)
      return false;
    uint16_t bits;
    std::memcpy(&bits, cta.shared.data() + offset, 2);
    out = element(bits);
    readBegin = std::min(readBegin, offset);
    readEnd = std::max(readEnd, offset + 2);
    return true;
  };
  if (registerA) {
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned g = lane / 4, t = lane % 4;
      for (unsigned r = 0; r < 4; ++r) {
        uint32_t pair =
            static_cast<uint32_t>(operandValue(w, ops[1].elements[r], lane));
        unsigned row = g + 8 * (r % 2), k = 2 * t + 8 * (r / 2);
        a[row][k] = element(static_cast<uint16_t>(pair));
        a[row][k + 1] = element(static_cast<uint16_t>(pair >> 16));
      }
    }
  } else {
    MatrixDescriptor d(descriptorA);
    for (unsigned row = 0; row < 16; ++row)
      for (unsigned k = 0; k < 16; ++k)
        if (!readShared(d, rowBase + row, k, transposeA, a[row][k]))
          return false;
  }
  recordOperandRead();
  MatrixDescriptor dB(descriptorB);
  for (unsigned k = 0; k < 16; ++k)
    for (unsigned col = 0; col < n; ++col)
      if (!readShared(dB, col, k, transposeB, b[k][col]))
        return false;
  // Every warp reads B here; the warpgroup's product reads it once.
  if (profileTraffic)
    profile.wgmmaSharedBytes +=
        2 * 16 * ((registerA ? 0 : 16) + (w.index % 4 == 0 ? n : 0));

  // D, accumulator q = 4 j + 2 i + c of lane (g, t) at (g + 8 i, 8 j + 2 t
  // + c): register d[q] with f32, the half q % 2 of d[q / 2] with f16.
  const Operand &d = ops[0];
  bool halfD = in.type == Type::F16;
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned g = lane / 4, t = lane % 4;
    for (unsigned q = 0; q < n / 2; ++q) {
      unsigned j = q / 4, i = (q / 2) % 2, c = q % 2;
      unsigned row = g + 8 * i, col = 8 * j + 2 * t + c;
      double sum = 0;
      for (unsigned k = 0; k < 16; ++k)
        sum += a[row][k] * b[k][col];
      if (negateA != negateB)
        sum = -sum;
      uint64_t &out = registerOf(w, d.elements[halfD ? q / 2 : q].reg, lane);
      unsigned shift = halfD ? 16 * (q % 2) : 0;
      if (scaleD && halfD)
        sum += halfToFloat(static_cast<uint16_t>(out >> shift));
      else if (scaleD)
        sum += bitsToFloat(static_cast<uint32_t>(out));
      // Products of 16-bit floats are exact in double; the sum is rounded
      // to D's type once.
      if (halfD)
        out = (out & 0xffffffffu & ~(uint64_t(0xffff) << shift)) |
              uint64_t(doubleToHalf(sum)) << shift;
      else
        out = floatToBits(static_cast<float>(sum));
    }
  }

  // The registers (D, and A from registers) and the shared bytes are the
  // wgmma's until retired: accessing them before is undefined (PTX ISA,
  // wgmma.mma_async), even if the hardware read A at issue.
  if (w.wgmmaPending.empty())
    w.wgmmaPending.assign(kernel.registerCount(), 0);
  recordOperandRead();
  auto hold = [&](const Operand &e) {
    if (e.reg < 0)
      return;
    if (w.wgmmaPending[e.reg]++ == 0)
      ++w.wgmmaPendingRegisters;
    w.wgmmaOpen.registers.push_back(e.reg);
  };
  for (const Operand &e : d.elements)
    hold(e);
  if (registerA)
    for (const Operand &e : ops[1].elements)
      hold(e);
  return true;
}
