//===- Execute.cpp - The meaning of each PTX instruction ------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// One step of a warp: the lanes whose program counter is lowest execute the
// instruction there together (a warp that diverged reconverges where its
// paths meet). Collectives (mma.sync, ldmatrix, shfl.sync, vote.sync,
// barriers) check that every lane they name is in that group. The fragment
// layouts of mma.m16n8k16/k8 and ldmatrix are those of the PTX ISA's
// "Matrix fragments" figures.
//
//===----------------------------------------------------------------------===//

#include "Launch.h"
#include "Numerics.h"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

using namespace attn::ptxemu;

namespace {

uint64_t widthMask(unsigned bytes) {
  return bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
}

int64_t signExtend(uint64_t value, unsigned bytes) {
  if (bytes >= 8)
    return static_cast<int64_t>(value);
  unsigned shift = 64 - 8 * bytes;
  return static_cast<int64_t>(value << shift) >> shift;
}

/// The value of an integer of type T held in the low bits of BITS, widened.
int64_t asSigned(uint64_t bits, Type t) {
  return signExtend(bits, typeBytes(t));
}
uint64_t asUnsigned(uint64_t bits, Type t) {
  return bits & widthMask(typeBytes(t));
}

Profile::Class classify(const Instruction &in) {
  switch (in.op) {
  case Opcode::Mma:
  case Opcode::WgmmaMma:
    return Profile::Mma;
  case Opcode::Ldmatrix:
    return Profile::Ldmatrix;
  case Opcode::Ex2:
    return Profile::Exp2;
  case Opcode::Ld:
  case Opcode::St:
  case Opcode::Stmatrix:
  case Opcode::Atom:
  case Opcode::Red:
  case Opcode::CpAsync:
  case Opcode::CpAsyncBulk:
  case Opcode::CpAsyncBulkTensor:
    return Profile::Memory;
  case Opcode::Bra:
  case Opcode::Ret:
  case Opcode::Exit:
    return Profile::Control;
  case Opcode::BarSync:
  case Opcode::BarArrive:
  case Opcode::BarRed:
  case Opcode::BarWarpSync:
  case Opcode::Membar:
  case Opcode::Fence:
  case Opcode::Shfl:
  case Opcode::Vote:
  case Opcode::CpAsyncCommit:
  case Opcode::CpAsyncWait:
  case Opcode::CpAsyncWaitAll:
  case Opcode::Mbarrier:
  case Opcode::ElectSync:
  case Opcode::Setmaxnreg:
  case Opcode::CpAsyncBulkCommit:
  case Opcode::CpAsyncBulkWait:
  case Opcode::WgmmaFence:
  case Opcode::WgmmaCommit:
  case Opcode::WgmmaWait:
    return Profile::Synchronisation;
  case Opcode::Cvt:
  case Opcode::CvtPack:
    return Profile::Conversion;
  default:
    return isFloat(in.type) ? Profile::OtherFloat : Profile::Integer;
  }
}

/// Rounds a double to f32 in the direction of the instruction's rounding
/// modifier (round to nearest even when it has none).
float roundToFloat(double value, uint64_t flags) {
  if (!(flags & (mod::Rz | mod::Rm | mod::Rp)))
    return static_cast<float>(value);
  int saved = std::fegetround();
  std::fesetround(flags & mod::Rz   ? FE_TOWARDZERO
                  : flags & mod::Rm ? FE_DOWNWARD
                                    : FE_UPWARD);
  volatile double in = value;
  volatile float out = static_cast<float>(in);
  std::fesetround(saved);
  return out;
}

/// Round to an integral value (.rni, .rzi, .rmi, .rpi).
double roundIntegral(double value, uint64_t flags) {
  if (flags & mod::Rzi)
    return std::trunc(value);
  if (flags & mod::Rmi)
    return std::floor(value);
  if (flags & mod::Rpi)
    return std::ceil(value);
  return std::nearbyint(value); // .rni: nearest even
}

bool compareFloat(Compare compare, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (compare) {
  case Compare::Eq: return !unordered && a == b;
  case Compare::Ne: return !unordered && a != b;
  case Compare::Lt: return !unordered && a < b;
  case Compare::Le: return !unordered && a <= b;
  case Compare::Gt: return !unordered && a > b;
  case Compare::Ge: return !unordered && a >= b;
  case Compare::Equ: return unordered || a == b;
  case Compare::Neu: return unordered || a != b;
  case Compare::Ltu: return unordered || a < b;
  case Compare::Leu: return unordered || a <= b;
  case Compare::Gtu: return unordered || a > b;
  case Compare::Geu: return unordered || a >= b;
  case Compare::Num: return !unordered;
  case Compare::Nan: return unordered;
  default: return false;
  }
}

bool compareInteger(Compare compare, uint64_t a, uint64_t b, Type t) {
  bool isSignedType = isSigned(t);
  int64_t sa = asSigned(a, t), sb = asSigned(b, t);
  uint64_t ua = asUnsigned(a, t), ub = asUnsigned(b, t);
  switch (compare) {
  case Compare::Eq: return ua == ub;
  case Compare::Ne: return ua != ub;
  case Compare::Lt: return isSignedType ? sa < sb : ua < ub;
  case Compare::Le: return isSignedType ? sa <= sb : ua <= ub;
  case Compare::Gt: return isSignedType ? sa > sb : ua > ub;
  case Compare::Ge: return isSignedType ? sa >= sb : ua >= ub;
  case Compare::Lo: return ua < ub;
  case Compare::Ls: return ua <= ub;
  case Compare::Hi: return ua > ub;
  case Compare::Hs: return ua >= ub;
  default: return false;
  }
}

/// PTX's canonical NaN of f32 (min/max's NaN result).
constexpr uint32_t kCanonicalNaN = 0x7fffffff;

/// .satfinite: an infinite f16/bf16 result (BITS, of TYPE or its pair's
/// halves) becomes the format's largest finite value of the same sign; NaN
/// stays NaN.
uint16_t saturateFinite(uint16_t bits, Type t) {
  bool bfloat = t == Type::BF16 || t == Type::BF16x2;
  uint16_t infinity = bfloat ? 0x7f80 : 0x7c00;
  uint16_t largest = bfloat ? 0x7f7f : 0x7bff; // 3.3895e38, 65504
  return (bits & 0x7fff) == infinity
             ? static_cast<uint16_t>((bits & 0x8000) | largest)
             : bits;
}

double maxNaN(double a, double b, bool propagate, bool isMax) {
  if (std::isnan(a) || std::isnan(b)) {
    if (propagate || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<double>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == b) // -0 < +0
    return isMax ? (std::signbit(a) ? b : a) : (std::signbit(a) ? a : b);
  return isMax ? std::max(a, b) : std::min(a, b);
}

bool isWarpCollective(Opcode op) {
  switch (op) {
  case Opcode::BarSync:
  case Opcode::BarArrive:
  case Opcode::BarRed:
  case Opcode::BarWarpSync:
  case Opcode::Mma:
  case Opcode::Ldmatrix:
  case Opcode::Stmatrix:
  case Opcode::Shfl:
  case Opcode::Vote:
  case Opcode::ElectSync:
  case Opcode::Setmaxnreg:
  case Opcode::WgmmaMma:
  case Opcode::WgmmaFence:
  case Opcode::WgmmaCommit:
  case Opcode::WgmmaWait:
    return true;
  default:
    return false;
  }
}

} // namespace

uint64_t Launch::operandValue(const Warp &warp, const Operand &o,
                              unsigned lane) const {
  switch (o.kind) {
  case Operand::Kind::Register:
    return warp.registers[static_cast<size_t>(o.reg) * 32 + lane];
  case Operand::Kind::Special:
    return specialRegister(warp, lane, o.special);
  default:
    return o.value;
  }
}

uint32_t Launch::lowestLanes(const Warp &w, uint32_t lanes) {
  uint32_t pc = UINT32_MAX, group = 0;
  for (uint32_t m = lanes; m; m &= m - 1) {
    unsigned lane = __builtin_ctz(m);
    uint32_t lanePc = w.pc[lane];
    if (lanePc < pc) {
      pc = lanePc;
      group = 1u << lane;
    } else if (lanePc == pc) {
      group |= 1u << lane;
    }
  }
  return group;
}

bool Launch::step(Warp &w) {
  uint32_t live = w.liveMask;
  if (!w.diverged && !w.parked)
    return execute(w, w.pc[__builtin_ctz(live)], live);
  uint32_t unparked = live & ~w.parked;
  uint32_t candidates = unparked & ~w.suspended;
  if (candidates == 0) {
    // Only suspended lanes are left to run (the others reached a
    // collective or exited): they go on.
    w.suspended = 0;
    candidates = unparked;
  }
  if (candidates == 0) {
    // Every lane waits at a collective: they must all wait at the same one.
    candidates = live;
    w.parked = 0;
    uint32_t first = w.pc[__builtin_ctz(live)];
    for (uint32_t m = live; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      if (w.pc[lane] != first)
        return fault(w, lane, &kernel.code[std::min(w.pc[lane], first)],
                     "lanes of one warp wait at different collectives (lines " +
                         std::to_string(kernel.code[first].line) + " and " +
                         std::to_string(kernel.code[w.pc[lane]].line) +
                         "): divergent warp-synchronous code");
    }
  }
  uint32_t group = lowestLanes(w, candidates);
  // Every live lane at one program counter again: the fast path.
  w.diverged = group != live;
  if (!execute(w, w.pc[__builtin_ctz(group)], group))
    return false;
  if (w.yield && group != live) {
    // A failed mbarrier wait by some of the lanes: their path waits while
    // the warp's other paths run (independent thread scheduling), so a
    // lane's arrival after the loop its warp-mates spin in still comes.
    // The slice ends only when every path waits.
    suspend(w, group);
  }
  return true;
}

void Launch::suspend(Warp &w, uint32_t lanes) {
  w.suspended |= lanes;
  if (w.liveMask & ~w.parked & ~w.suspended)
    w.yield = false;
  else
    w.suspended = 0; // every path waits: end the slice, all retry after it
}

bool Launch::execute(Warp &w, uint32_t pc, uint32_t group) {
  uint32_t live = w.liveMask;
  if (pc >= kernel.code.size())
    return fault(w, __builtin_ctz(group), nullptr,
                 "ran past the last instruction of the kernel");
  const Instruction &in = kernel.code[pc];
  // A collective that the whole warp executes together (.aligned barriers,
  // mma, ldmatrix, shfl, vote) waits for the lanes still on another path:
  // they run first, as the hardware reconverges a warp before such an
  // instruction.
  if (group != live && isWarpCollective(in.op)) {
    w.parked |= group;
    return true;
  }
  uint64_t *regs = w.registers.data();
  auto reg = [&](int32_t slot, unsigned lane) -> uint64_t & {
    return regs[static_cast<size_t>(slot) * 32 + lane];
  };
  uint32_t exec = group;
  if (in.guard >= 0) {
    exec = 0;
    for (uint32_t m = group; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      if ((reg(in.guard, lane) != 0) != in.guardNegated)
        exec |= 1u << lane;
    }
  }
  if (w.wgmmaPendingRegisters && !checkWgmmaRegisters(w, in, group))
    return false;
  profile.warpInstructions[classify(in)] += 1;
  profile.threadInstructions += __builtin_popcount(exec);
  auto advance = [&]() {
    for (uint32_t m = group; m; m &= m - 1)
      w.pc[__builtin_ctz(m)] = pc + 1;
  };
  auto value = [&](const Operand &o, unsigned lane) -> uint64_t {
    return operandValue(w, o, lane);
  };
  auto predicate = [&](const Operand &o, unsigned lane) -> bool {
    return (value(o, lane) != 0) != o.negated;
  };
  auto f32 = [&](const Operand &o, unsigned lane) -> float {
    if (o.kind == Operand::Kind::Immediate && !o.isF32Literal)
      return o.isF64Literal ? static_cast<float>(bitsToDouble(o.value))
                            : static_cast<float>(static_cast<int64_t>(o.value));
    float v = bitsToFloat(static_cast<uint32_t>(value(o, lane)));
    return (in.flags & mod::Ftz) ? flushToZero(v) : v;
  };
  auto f64 = [&](const Operand &o, unsigned lane) -> double {
    if (o.kind == Operand::Kind::Immediate && !o.isF64Literal)
      return o.isF32Literal
                 ? static_cast<double>(bitsToFloat(static_cast<uint32_t>(o.value)))
                 : static_cast<double>(static_cast<int64_t>(o.value));
    return bitsToDouble(value(o, lane));
  };
  auto write = [&](const Operand &o, unsigned lane, uint64_t bits,
                   unsigned bytes) {
    if (o.kind == Operand::Kind::Register)
      reg(o.reg, lane) = bits & widthMask(bytes);
  };
  auto writeF32 = [&](const Operand &o, unsigned lane, float v) {
    if (in.flags & mod::Ftz)
      v = flushToZero(v);
    if (in.flags & mod::Sat)
      v = std::isnan(v) ? 0.0f : std::min(1.0f, std::max(0.0f, v));
    write(o, lane, floatToBits(v), 4);
  };
  auto forExec = [&](auto &&body) {
    for (uint32_t m = exec; m; m &= m - 1)
      body(static_cast<unsigned>(__builtin_ctz(m)));
  };
  auto requireWholeWarp = [&](const char *what) {
    if (group != live || exec != group)
      return fault(w, __builtin_ctz(group), &in,
                   std::string(what) +
                       " needs every lane of the warp converged and "
                       "unguarded; lanes taking part: " +
                       std::to_string(__builtin_popcount(exec)) + " of " +
                       std::to_string(__builtin_popcount(live)));
    return true;
  };
  const std::vector<Operand> &ops = in.operands;
  Type t = in.type;
  unsigned bytes = typeBytes(t);

  switch (in.op) {
  case Opcode::Mov:
    forExec([&](unsigned lane) {
      if (ops[0].kind == Operand::Kind::Vector) {
        unsigned n = ops[0].elements.size(), part = bytes / n;
        uint64_t bits = value(ops[1], lane);
        for (unsigned i = 0; i < n; ++i)
          write(ops[0].elements[i], lane, bits >> (8 * part * i), part);
      } else if (ops[1].kind == Operand::Kind::Vector) {
        unsigned n = ops[1].elements.size(), part = bytes / n;
        uint64_t bits = 0;
        for (unsigned i = 0; i < n; ++i)
          bits |= (value(ops[1].elements[i], lane) & widthMask(part))
                  << (8 * part * i);
        write(ops[0], lane, bits, bytes);
      } else if (t == Type::F32 && ops[1].kind == Operand::Kind::Immediate) {
        write(ops[0], lane, floatToBits(f32(ops[1], lane)), 4);
      } else if (t == Type::Pred) {
        write(ops[0], lane, predicate(ops[1], lane) ? 1 : 0, 1);
      } else {
        write(ops[0], lane, value(ops[1], lane), bytes);
      }
    });
    advance();
    return true;

  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mul:
  case Opcode::Min:
  case Opcode::Max:
  case Opcode::Fma:
  case Opcode::Neg:
  case Opcode::Abs:
  case Opcode::Div:
  case Opcode::Rem:
  case Opcode::Copysign:
    if (t == Type::F32) {
      forExec([&](unsigned lane) {
        float a = f32(ops[1], lane);
        float b = ops.size() > 2 ? f32(ops[2], lane) : 0.0f;
        float r = 0;
        switch (in.op) {
        case Opcode::Add:
          r = (in.flags & (mod::Rz | mod::Rm | mod::Rp))
                  ? roundToFloat(double(a) + double(b), in.flags)
                  : a + b;
          break;
        case Opcode::Sub:
          r = (in.flags & (mod::Rz | mod::Rm | mod::Rp))
                  ? roundToFloat(double(a) - double(b), in.flags)
                  : a - b;
          break;
        case Opcode::Mul:
          r = (in.flags & (mod::Rz | mod::Rm | mod::Rp))
                  ? roundToFloat(double(a) * double(b), in.flags)
                  : a * b;
          break;
        case Opcode::Fma: {
          float c = f32(ops[3], lane);
          r = (in.flags & (mod::Rz | mod::Rm | mod::Rp))
                  ? roundToFloat(std::fma(double(a), double(b), double(c)),
                                 in.flags)
                  : std::fma(a, b, c);
          break;
        }
        case Opcode::Min:
        case Opcode::Max: {
          // A NaN result is the canonical NaN (PTX ISA, max: "the result
          // is canonical NaN"), not the host's quiet NaN.
          double m = maxNaN(a, b, in.flags & mod::NaN, in.op == Opcode::Max);
          r = std::isnan(m) ? bitsToFloat(kCanonicalNaN)
                            : static_cast<float>(m);
          break;
        }
        case Opcode::Neg:
          r = -a;
          break;
        case Opcode::Abs:
          r = std::fabs(a);
          break;
        case Opcode::Div:
          r = (in.flags & mod::Approx) ? a * (1.0f / b) : a / b;
          break;
        case Opcode::Copysign:
          // copysign d, a, b: the sign of a on the magnitude of b.
          r = std::copysign(b, a);
          break;
        default:
          break;
        }
        writeF32(ops[0], lane, r);
      });
    } else if (t == Type::F64) {
      forExec([&](unsigned lane) {
        double a = f64(ops[1], lane);
        double b = ops.size() > 2 ? f64(ops[2], lane) : 0.0;
        double r = 0;
        switch (in.op) {
        case Opcode::Add: r = a + b; break;
        case Opcode::Sub: r = a - b; break;
        case Opcode::Mul: r = a * b; break;
        case Opcode::Fma: r = std::fma(a, b, f64(ops[3], lane)); break;
        case Opcode::Min:
        case Opcode::Max:
          r = maxNaN(a, b, in.flags & mod::NaN, in.op == Opcode::Max);
          break;
        case Opcode::Neg: r = -a; break;
        case Opcode::Abs: r = std::fabs(a); break;
        case Opcode::Div: r = a / b; break;
        case Opcode::Copysign: r = std::copysign(b, a); break;
        default: break;
        }
        write(ops[0], lane, doubleToBits(r), 8);
      });
    } else if (isFloat(t)) {
      // f16, bf16 and their pairs: each half computed in f32 (exact for
      // add, sub, mul of 16-bit inputs; fma rounds once more) and rounded.
      unsigned halves = (t == Type::F16x2 || t == Type::BF16x2) ? 2 : 1;
      forExec([&](unsigned lane) {
        uint64_t result = 0;
        for (unsigned h = 0; h < halves; ++h) {
          auto half = [&](const Operand &o) {
            return unpackHalf(
                static_cast<uint16_t>(value(o, lane) >> (16 * h)), t);
          };
          float a = half(ops[1]);
          float b = ops.size() > 2 ? half(ops[2]) : 0.0f;
          double r = 0;
          switch (in.op) {
          case Opcode::Add: r = double(a) + b; break;
          case Opcode::Sub: r = double(a) - b; break;
          case Opcode::Mul: r = double(a) * b; break;
          case Opcode::Fma: r = std::fma(double(a), double(b), half(ops[3])); break;
          case Opcode::Min:
          case Opcode::Max:
            r = maxNaN(a, b, in.flags & mod::NaN, in.op == Opcode::Max);
            break;
          case Opcode::Neg: r = -a; break;
          case Opcode::Abs: r = std::fabs(a); break;
          default: break;
          }
          if (in.flags & mod::Relu)
            r = std::isnan(r) ? r : std::max(r, 0.0);
          result |= static_cast<uint64_t>(packHalf(static_cast<float>(r), t))
                    << (16 * h);
        }
        write(ops[0], lane, result, bytes);
      });
    } else {
      bool sgn = isSigned(t);
      forExec([&](unsigned lane) {
        uint64_t a = value(ops[1], lane);
        uint64_t b = ops.size() > 2 ? value(ops[2], lane) : 0;
        uint64_t r = 0;
        switch (in.op) {
        case Opcode::Add:
          r = a + b;
          if ((in.flags & mod::Sat) && t == Type::S32) {
            int64_t s = asSigned(a, t) + asSigned(b, t);
            s = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, s));
            r = static_cast<uint64_t>(s);
          }
          break;
        case Opcode::Sub:
          r = a - b;
          if ((in.flags & mod::Sat) && t == Type::S32) {
            int64_t s = asSigned(a, t) - asSigned(b, t);
            s = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, s));
            r = static_cast<uint64_t>(s);
          }
          break;
        case Opcode::Mul:
          r = a * b;
          break;
        case Opcode::Min:
        case Opcode::Max: {
          bool less = sgn ? asSigned(a, t) < asSigned(b, t)
                          : asUnsigned(a, t) < asUnsigned(b, t);
          r = (in.op == Opcode::Min) == less ? a : b;
          break;
        }
        case Opcode::Neg:
          r = ~a + 1;
          break;
        case Opcode::Abs: {
          int64_t s = asSigned(a, t);
          r = static_cast<uint64_t>(s < 0 ? -s : s);
          break;
        }
        case Opcode::Div:
        case Opcode::Rem:
          if (asUnsigned(b, t) == 0) {
            // The ISA leaves x / 0 unspecified; the hardware gives all ones.
            r = in.op == Opcode::Div ? ~0ull : a;
          } else if (sgn) {
            int64_t sa = asSigned(a, t), sb = asSigned(b, t);
            if (sb == -1)
              r = in.op == Opcode::Div ? static_cast<uint64_t>(0) - sa : 0;
            else
              r = static_cast<uint64_t>(in.op == Opcode::Div ? sa / sb
                                                             : sa % sb);
          } else {
            uint64_t ua = asUnsigned(a, t), ub = asUnsigned(b, t);
            r = in.op == Opcode::Div ? ua / ub : ua % ub;
          }
          break;
        default:
          break;
        }
        write(ops[0], lane, r, bytes);
      });
    }
    advance();
    return true;

  case Opcode::MulHi:
  case Opcode::MadHi:
  case Opcode::MulWide:
  case Opcode::MadWide:
  case Opcode::Mad:
    forExec([&](unsigned lane) {
      uint64_t a = value(ops[1], lane), b = value(ops[2], lane);
      bool sgn = isSigned(t);
      uint64_t r = 0;
      unsigned outBytes = bytes;
      if (in.op == Opcode::MulHi || in.op == Opcode::MadHi) {
        if (bytes == 8) {
          if (sgn)
            r = static_cast<uint64_t>((static_cast<__int128>(asSigned(a, t)) *
                                       asSigned(b, t)) >> 64);
          else
            r = static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >>
                                      64);
        } else {
          unsigned shift = 8 * bytes;
          r = sgn ? static_cast<uint64_t>((asSigned(a, t) * asSigned(b, t)) >>
                                          shift)
                  : (asUnsigned(a, t) * asUnsigned(b, t)) >> shift;
        }
      } else if (in.op == Opcode::MulWide || in.op == Opcode::MadWide) {
        r = sgn ? static_cast<uint64_t>(asSigned(a, t) * asSigned(b, t))
                : asUnsigned(a, t) * asUnsigned(b, t);
        outBytes = 2 * bytes;
      } else {
        r = a * b;
      }
      if (in.op == Opcode::MadHi || in.op == Opcode::MadWide ||
          in.op == Opcode::Mad)
        r += value(ops[3], lane);
      write(ops[0], lane, r, outBytes);
    });
    advance();
    return true;

  case Opcode::Rcp:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Ex2:
  case Opcode::Lg2:
  case Opcode::Tanh:
  case Opcode::Sin:
  case Opcode::Cos:
    if (t == Type::F64) {
      forExec([&](unsigned lane) {
        double a = f64(ops[1], lane);
        double r = in.op == Opcode::Rcp ? 1.0 / a : std::sqrt(a);
        write(ops[0], lane, doubleToBits(r), 8);
      });
    } else if (t == Type::F32) {
      forExec([&](unsigned lane) {
        float a = f32(ops[1], lane);
        float r = 0;
        switch (in.op) {
        case Opcode::Rcp: r = 1.0f / a; break;
        case Opcode::Sqrt: r = std::sqrt(a); break;
        case Opcode::Rsqrt: r = 1.0f / std::sqrt(a); break;
        case Opcode::Ex2: r = approxEx2(a); break;
        case Opcode::Lg2: r = approxLg2(a); break;
        case Opcode::Tanh: r = approxTanh(a); break;
        case Opcode::Sin: r = std::sin(a); break;
        case Opcode::Cos: r = std::cos(a); break;
        default: break;
        }
        writeF32(ops[0], lane, r);
      });
    } else {
      unsigned halves = (t == Type::F16x2 || t == Type::BF16x2) ? 2 : 1;
      forExec([&](unsigned lane) {
        uint64_t result = 0;
        for (unsigned h = 0; h < halves; ++h) {
          float a = unpackHalf(
              static_cast<uint16_t>(value(ops[1], lane) >> (16 * h)), t);
          float r = in.op == Opcode::Ex2 ? approxEx2(a) : approxTanh(a);
          result |= static_cast<uint64_t>(packHalf(r, t)) << (16 * h);
        }
        write(ops[0], lane, result, bytes);
      });
    }
    advance();
    return true;

  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Not:
  case Opcode::Cnot:
    forExec([&](unsigned lane) {
      uint64_t a, b = 0;
      if (t == Type::Pred) {
        a = predicate(ops[1], lane);
        if (ops.size() > 2)
          b = predicate(ops[2], lane);
      } else {
        a = value(ops[1], lane);
        if (ops.size() > 2)
          b = value(ops[2], lane);
      }
      uint64_t r = 0;
      switch (in.op) {
      case Opcode::And: r = a & b; break;
      case Opcode::Or: r = a | b; break;
      case Opcode::Xor: r = a ^ b; break;
      case Opcode::Not: r = t == Type::Pred ? !a : ~a; break;
      default: r = asUnsigned(a, t) == 0 ? 1 : 0; break;
      }
      write(ops[0], lane, r, t == Type::Pred ? 1 : bytes);
    });
    advance();
    return true;

  case Opcode::Shl:
  case Opcode::Shr:
    forExec([&](unsigned lane) {
      uint64_t a = value(ops[1], lane);
      uint64_t amount = value(ops[2], lane) & 0xffffffffu;
      unsigned bits = 8 * bytes;
      uint64_t r;
      if (in.op == Opcode::Shl)
        r = amount >= bits ? 0 : a << amount;
      else if (isSigned(t))
        r = static_cast<uint64_t>(asSigned(a, t) >>
                                  std::min<uint64_t>(amount, bits - 1));
      else
        r = amount >= bits ? 0 : asUnsigned(a, t) >> amount;
      write(ops[0], lane, r, bytes);
    });
    advance();
    return true;

  case Opcode::Popc:
  case Opcode::Clz:
  case Opcode::Brev:
    forExec([&](unsigned lane) {
      uint64_t a = asUnsigned(value(ops[1], lane), t);
      unsigned bits = 8 * bytes;
      uint64_t r = 0;
      if (in.op == Opcode::Popc)
        r = __builtin_popcountll(a);
      else if (in.op == Opcode::Clz)
        r = a == 0 ? bits : __builtin_clzll(a) - (64 - bits);
      else
        for (unsigned i = 0; i < bits; ++i)
          r |= ((a >> i) & 1) << (bits - 1 - i);
      write(ops[0], lane, r, in.op == Opcode::Brev ? bytes : 4);
    });
    advance();
    return true;

  case Opcode::Bfe:
    forExec([&](unsigned lane) {
      uint64_t a = value(ops[1], lane);
      unsigned bits = 8 * bytes;
      uint64_t position = value(ops[2], lane) & 0xff;
      uint64_t length = value(ops[3], lane) & 0xff;
      uint64_t r = 0;
      bool sgn = isSigned(t);
      // PTX ISA: bits past the msb read as the sign bit (signed) or 0.
      bool sbit = sgn && length > 0 &&
                  ((asUnsigned(a, t) >> std::min<uint64_t>(
                                          position + length - 1, bits - 1)) &
                   1);
      for (uint64_t i = 0; i < bits; ++i) {
        uint64_t bit = i < length && position + i < bits
                           ? (asUnsigned(a, t) >> (position + i)) & 1
                           : sbit;
        r |= bit << i;
      }
      write(ops[0], lane, r, bytes);
    });
    advance();
    return true;

  case Opcode::Bfi:
    forExec([&](unsigned lane) {
      uint64_t a = value(ops[1], lane), b = value(ops[2], lane);
      unsigned bits = 8 * bytes;
      uint64_t position = value(ops[3], lane) & 0xff;
      uint64_t length = value(ops[4], lane) & 0xff;
      for (uint64_t i = 0; i < length && position + i < bits; ++i) {
        uint64_t bit = (a >> i) & 1;
        b = (b & ~(1ull << (position + i))) | (bit << (position + i));
      }
      write(ops[0], lane, b, bytes);
    });
    advance();
    return true;

  case Opcode::Prmt:
    forExec([&](unsigned lane) {
      uint64_t source = (value(ops[1], lane) & 0xffffffffu) |
                        ((value(ops[2], lane) & 0xffffffffu) << 32);
      uint32_t selector = static_cast<uint32_t>(value(ops[3], lane));
      uint32_t r = 0;
      for (unsigned i = 0; i < 4; ++i) {
        uint32_t s = (selector >> (4 * i)) & 0xf;
        uint32_t byte = (source >> (8 * (s & 7))) & 0xff;
        if (s & 8) // replicate the sign bit
          byte = (byte & 0x80) ? 0xff : 0;
        r |= byte << (8 * i);
      }
      write(ops[0], lane, r, 4);
    });
    advance();
    return true;

  case Opcode::CvtPack:
    forExec([&](unsigned lane) {
      // d = {cvt(a) in the upper half, cvt(b) in the lower}.
      float a = f32(ops[1], lane), b = f32(ops[2], lane);
      if (in.flags & mod::Relu) {
        a = std::isnan(a) ? a : std::max(a, 0.0f);
        b = std::isnan(b) ? b : std::max(b, 0.0f);
      }
      uint16_t high = packHalf(a, t), low = packHalf(b, t);
      if (in.flags & mod::Satfinite) {
        high = saturateFinite(high, t);
        low = saturateFinite(low, t);
      }
      write(ops[0], lane, (static_cast<uint32_t>(high) << 16) | low, 4);
    });
    advance();
    return true;

  case Opcode::Cvt: {
    Type from = in.type2;
    unsigned fromBytes = typeBytes(from);
    forExec([&](unsigned lane) {
      uint64_t source = value(ops[1], lane);
      // The source as a double (floats) or an integer.
      bool fromFloat = isFloat(from), toFloat = isFloat(t);
      double x = 0;
      if (fromFloat) {
        if (from == Type::F32)
          x = f32(ops[1], lane);
        else if (from == Type::F64)
          x = f64(ops[1], lane);
        else
          x = unpackHalf(static_cast<uint16_t>(source), from);
      }
      if (toFloat) {
        if (!fromFloat) {
          x = isSigned(from) ? static_cast<double>(asSigned(source, from))
                             : static_cast<double>(asUnsigned(source, from));
          if (t == Type::F32 && fromBytes == 8)
            // int64 -> f32 rounds once, from the integer.
            x = isSigned(from)
                    ? static_cast<double>(
                          static_cast<float>(asSigned(source, from)))
                    : static_cast<double>(
                          static_cast<float>(asUnsigned(source, from)));
        }
        if (in.flags & (mod::Rni | mod::Rzi | mod::Rmi | mod::Rpi))
          x = roundIntegral(x, in.flags);
        if (t == Type::F32) {
          float r = roundToFloat(x, in.flags);
          writeF32(ops[0], lane, r);
        } else if (t == Type::F64) {
          write(ops[0], lane, doubleToBits(x), 8);
        } else {
          float r = roundToFloat(x, in.flags);
          if (in.flags & mod::Relu)
            r = std::isnan(r) ? r : std::max(r, 0.0f);
          if (in.flags & mod::Sat)
            r = std::isnan(r) ? 0.0f : std::min(1.0f, std::max(0.0f, r));
          uint16_t bits = packHalf(r, t);
          if (in.flags & mod::Satfinite)
            bits = saturateFinite(bits, t);
          write(ops[0], lane, bits, 2);
        }
        return;
      }
      if (fromFloat) {
        // Float to integer: round, saturate to the range, NaN to 0.
        double r = roundIntegral(x, in.flags & (mod::Rni | mod::Rzi |
                                                mod::Rmi | mod::Rpi)
                                        ? in.flags
                                        : mod::Rzi);
        unsigned bits = 8 * bytes;
        uint64_t out;
        if (std::isnan(r)) {
          out = 0;
        } else if (isSigned(t)) {
          double lo = -std::ldexp(1.0, bits - 1), hi = std::ldexp(1.0, bits - 1);
          out = r <= lo   ? static_cast<uint64_t>(static_cast<int64_t>(lo))
                : r >= hi ? (1ull << (bits - 1)) - 1
                          : static_cast<uint64_t>(static_cast<int64_t>(r));
        } else {
          double hi = std::ldexp(1.0, bits);
          out = r <= 0 ? 0 : r >= hi ? widthMask(bytes)
                                     : static_cast<uint64_t>(r);
        }
        write(ops[0], lane, out, bytes);
        return;
      }
      // Integer to integer: extend by the source's signedness, saturate
      // if asked, truncate.
      int64_t s = isSigned(from) ? asSigned(source, from)
                                 : static_cast<int64_t>(asUnsigned(source, from));
      uint64_t out = static_cast<uint64_t>(s);
      if (in.flags & mod::Sat) {
        unsigned bits = 8 * bytes;
        if (isSigned(t)) {
          int64_t lo = bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1));
          int64_t hi = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
          if (!isSigned(from) && asUnsigned(source, from) > uint64_t(hi))
            out = hi;
          else
            out = static_cast<uint64_t>(std::min(hi, std::max(lo, s)));
        } else if (isSigned(from) && s < 0) {
          out = 0;
        } else {
          out = std::min<uint64_t>(static_cast<uint64_t>(s), widthMask(bytes));
        }
      }
      write(ops[0], lane, out, bytes);
    });
    advance();
    return true;
  }

  case Opcode::Cvta:
  case Opcode::CvtaTo:
    forExec([&](unsigned lane) {
      uint64_t a = value(ops[1], lane);
      uint64_t window = in.space == Space::Shared  ? kSharedWindow
                        : in.space == Space::Local ? kLocalWindow
                        : in.space == Space::Param ? kParamWindow
                                                   : 0;
      write(ops[0], lane, in.op == Opcode::Cvta ? a + window : a - window, 8);
    });
    advance();
    return true;

  case Opcode::Setp:
    forExec([&](unsigned lane) {
      bool r;
      Type ct = in.type2;
      if (ct == Type::F32)
        r = compareFloat(in.compare, f32(ops[ops.size() - 2 - (in.boolOp != BoolOp::None)], lane),
                         f32(ops[ops.size() - 1 - (in.boolOp != BoolOp::None)], lane));
      else if (ct == Type::F64)
        r = compareFloat(in.compare, f64(ops[ops.size() - 2 - (in.boolOp != BoolOp::None)], lane),
                         f64(ops[ops.size() - 1 - (in.boolOp != BoolOp::None)], lane));
      else
        r = compareInteger(in.compare,
                           value(ops[ops.size() - 2 - (in.boolOp != BoolOp::None)], lane),
                           value(ops[ops.size() - 1 - (in.boolOp != BoolOp::None)], lane), ct);
      bool second = !r;
      if (in.boolOp != BoolOp::None) {
        bool c = predicate(ops.back(), lane);
        auto combine = [&](bool x) {
          return in.boolOp == BoolOp::And  ? x && c
                 : in.boolOp == BoolOp::Or ? x || c
                                           : x != c;
        };
        r = combine(r);
        second = combine(second);
      }
      write(ops[0], lane, r, 1);
      size_t sources = 2 + (in.boolOp != BoolOp::None);
      if (ops.size() == sources + 2)
        write(ops[1], lane, second, 1);
    });
    advance();
    return true;

  case Opcode::Selp:
    forExec([&](unsigned lane) {
      write(ops[0], lane,
            predicate(ops[3], lane) ? value(ops[1], lane)
                                    : value(ops[2], lane),
            bytes);
    });
    advance();
    return true;

  case Opcode::Testp:
    forExec([&](unsigned lane) {
      double x = t == Type::F32 ? f32(ops[1], lane) : f64(ops[1], lane);
      int cls = std::fpclassify(t == Type::F32 ? static_cast<float>(x) : x);
      bool r = false;
      switch (in.compare) {
      case Compare::Eq: r = std::isfinite(x); break;
      case Compare::Ne: r = std::isinf(x); break;
      case Compare::Num: r = !std::isnan(x); break;
      case Compare::Nan: r = std::isnan(x); break;
      case Compare::Gt: r = cls == FP_NORMAL; break;
      case Compare::Lt: r = cls == FP_SUBNORMAL; break;
      default: break;
      }
      write(ops[0], lane, r, 1);
    });
    advance();
    return true;

  case Opcode::Bra: {
    if ((in.flags & mod::Uni) && exec != group && exec != 0)
      return fault(w, __builtin_ctz(group), &in,
                   "bra.uni taken by some lanes of the warp and not others");
    if (exec != group && exec != 0)
      w.diverged = true;
    uint32_t target = static_cast<uint32_t>(ops[0].value);
    for (uint32_t m = group; m; m &= m - 1) {
      unsigned lane = __builtin_ctz(m);
      w.pc[lane] = (exec >> lane) & 1 ? target : pc + 1;
    }
    return true;
  }

  case Opcode::Ret:
  case Opcode::Exit:
    advance();
    if (exec) {
      w.liveMask &= ~exec;
      progressed();
      if (w.done()) {
        if (!w.openGroup.empty() || !w.groups.empty())
          completeCopies(w, 0);
        // The CTA's shared memory ends with its last warp: a bulk store
        // to global memory must have read its source by then.
        if (--w.cta->liveWarps == 0)
          for (const auto &warp : w.cta->warps) {
            const AsyncGroup *pending =
                !warp->bulkOpen.reads.empty() ? &warp->bulkOpen
                : !warp->bulkGroups.empty()   ? &warp->bulkGroups.front()
                                              : nullptr;
            if (pending)
              return fault(w, __builtin_ctz(exec), &in,
                           "the CTA exits before its bulk copy to global "
                           "memory (warp " +
                               std::to_string(warp->index) + ", line " +
                               std::to_string(pending->line) +
                               ") has read shared memory: no "
                               "cp.async.bulk.wait_group retired it");
          }
      }
    }
    return !failed;

  case Opcode::BarSync:
  case Opcode::BarArrive:
  case Opcode::BarRed: {
    if (exec == 0) {
      advance();
      return true;
    }
    if (!requireWholeWarp(in.op == Opcode::BarRed ? "bar.red" : "bar.sync"))
      return false;
    size_t idOperand = in.op == Opcode::BarRed ? 1 : 0;
    unsigned lane0 = __builtin_ctz(exec);
    uint32_t id = static_cast<uint32_t>(value(ops[idOperand], lane0));
    bool hasCount = in.op == Opcode::BarRed ? ops.size() == 4 : ops.size() == 2;
    uint32_t threads = hasCount ? static_cast<uint32_t>(
                                      value(ops[idOperand + 1], lane0))
                                : 0;
    if (id >= 16)
      return fault(w, lane0, &in, "barrier " + std::to_string(id) +
                                      " out of range 0..15");
    if (hasCount && (threads == 0 || threads % 32 != 0))
      return fault(w, lane0, &in,
                   "barrier thread count " + std::to_string(threads) +
                       " is not a positive multiple of 32");
    advance();
    if (in.op == Opcode::BarRed) {
      Barrier &barrier = w.cta->barriers[id];
      forExec([&](unsigned lane) {
        bool p = predicate(ops.back(), lane);
        barrier.popc += p;
        barrier.andValue = barrier.andValue && p;
        barrier.orValue = barrier.orValue || p;
      });
    }
    arriveAtBarrier(w, id, threads, in.op != Opcode::BarArrive);
    return !failed;
  }

  case Opcode::BarWarpSync: {
    uint32_t members = static_cast<uint32_t>(value(ops[0], __builtin_ctz(group)));
    if ((members & live) & ~group)
      return fault(w, __builtin_ctz(group), &in,
                   "bar.warp.sync names lanes that are not converged here");
    advance();
    return true;
  }

  case Opcode::Membar:
  case Opcode::Fence:
    if (in.flags & (mod::ProxyTensormap | mod::GridDependency)) {
      // griddepcontrol: nothing to wait for. fence.proxy.tensormap::generic:
      // the tensormap proxy is not modelled (a tensor copy reads its map
      // from memory when issued), so it orders nothing here; its acquire
      // form names a 128-byte map in global memory.
      bool ok = true;
      if (in.flags & mod::Acquire)
        forExec([&](unsigned lane) {
          uint64_t at = addressOf(w, ops[0], lane);
          if (ok && (resolve(Space::Generic, at) != Space::Global ||
                     !device.contains(at, 128)))
            ok = fault(w, lane, &in,
                       "fence.proxy.tensormap::generic.acquire of an "
                       "address that is not 128 bytes of global memory");
        });
      if (!ok)
        return false;
      advance();
      return true;
    }
    if (exec)
      order.fence(w.cta->linear);
    if (exec && (in.flags & mod::ProxyAsync))
      fenceProxyAsync(w);
    advance();
    return true;

  case Opcode::Atom:
  case Opcode::Red: {
    size_t addressOperand = in.op == Opcode::Atom ? 1 : 0;
    bool ok = true;
    forExec([&](unsigned lane) {
      if (!ok)
        return;
      const Operand &address = ops[addressOperand];
      uint64_t at = (address.reg >= 0 ? reg(address.reg, lane) : 0) +
                    address.value;
      Space space = resolve(in.space, at);
      uint8_t *memory = nullptr;
      if (space == Space::Shared) {
        uint32_t offset;
        if (!sharedOffset(w, lane, at, bytes, offset, in)) {
          ok = false;
          return;
        }
        checkSharedRead(w, lane, offset, bytes, in);
        markSharedWrite(w, lane, offset, bytes, in);
        memory = w.cta->shared.data() + offset;
      } else {
        memory = globalPointer(w, lane, at, bytes,
                               GlobalAccess::Synchronising, in);
      }
      if (!memory || failed) {
        ok = false;
        return;
      }
      uint64_t old = 0;
      std::memcpy(&old, memory, bytes);
      uint64_t b = value(ops[addressOperand + 1], lane);
      uint64_t r = old;
      switch (in.atomOp) {
      case AtomOp::Add:
        if (t == Type::F32) {
          r = floatToBits(bitsToFloat(static_cast<uint32_t>(old)) +
                          bitsToFloat(static_cast<uint32_t>(b)));
        } else if (isFloat(t)) {
          // add.noftz.{f16,bf16}{x2}: each half rounded to nearest even,
          // subnormals kept. Rounding the sum to double, f32, then 16 bits
          // gives the correctly rounded sum: each format has at least twice
          // the next one's precision plus two bits.
          r = 0;
          for (unsigned h = 0; h < bytes / 2; ++h) {
            float x = unpackHalf(static_cast<uint16_t>(old >> (16 * h)), t);
            float y = unpackHalf(static_cast<uint16_t>(b >> (16 * h)), t);
            r |= static_cast<uint64_t>(packHalf(
                     static_cast<float>(double(x) + double(y)), t))
                 << (16 * h);
          }
        } else {
          r = old + b;
        }
        break;
      case AtomOp::Min:
      case AtomOp::Max: {
        bool less = isSigned(t) ? asSigned(old, t) < asSigned(b, t)
                                : asUnsigned(old, t) < asUnsigned(b, t);
        r = (in.atomOp == AtomOp::Min) == less ? old : b;
        break;
      }
      case AtomOp::Inc:
        r = asUnsigned(old, t) >= asUnsigned(b, t) ? 0 : old + 1;
        break;
      case AtomOp::Dec:
        r = (asUnsigned(old, t) == 0 || asUnsigned(old, t) > asUnsigned(b, t))
                ? b
                : old - 1;
        break;
      case AtomOp::And: r = old & b; break;
      case AtomOp::Or: r = old | b; break;
      case AtomOp::Xor: r = old ^ b; break;
      case AtomOp::Exch: r = b; break;
      case AtomOp::Cas:
        r = asUnsigned(old, t) == asUnsigned(b, t)
                ? value(ops[addressOperand + 2], lane)
                : old;
        break;
      }
      std::memcpy(memory, &r, bytes);
      if (asUnsigned(r, t) != asUnsigned(old, t))
        progressed();
      if (in.op == Opcode::Atom)
        write(ops[0], lane, old, bytes);
    });
    if (!ok || failed)
      return false;
    advance();
    return true;
  }

  case Opcode::Ld:
  case Opcode::St: {
    bool isLoad = in.op == Opcode::Ld;
    const Operand &address = isLoad ? ops[1] : ops[0];
    const Operand &data = isLoad ? ops[0] : ops[1];
    unsigned n = in.vector, total = n * bytes;
    bool ok = true;
    uint64_t addresses[32];
    forExec([&](unsigned lane) {
      if (!ok)
        return;
      uint64_t at = (address.reg >= 0 ? reg(address.reg, lane) : 0) +
                    address.value;
      addresses[lane] = at;
      uint8_t buffer[32];
      if (isLoad) {
        if (!load(w, lane, in.space, at, total, buffer, in)) {
          ok = false;
          return;
        }
        for (unsigned i = 0; i < n; ++i) {
          uint64_t bits = 0;
          std::memcpy(&bits, buffer + i * bytes, bytes);
          if (isSigned(t))
            bits = static_cast<uint64_t>(signExtend(bits, bytes));
          const Operand &out = n == 1 ? data : data.elements[i];
          if (out.kind == Operand::Kind::Register)
            reg(out.reg, lane) = bits;
        }
      } else {
        for (unsigned i = 0; i < n; ++i) {
          const Operand &element = n == 1 ? data : data.elements[i];
          uint64_t bits = t == Type::F32 &&
                                  element.kind == Operand::Kind::Immediate
                              ? floatToBits(f32(element, lane))
                              : value(element, lane);
          std::memcpy(buffer + i * bytes, &bits, bytes);
        }
        if (!store(w, lane, in.space, at, total, buffer, in)) {
          ok = false;
          return;
        }
      }
    });
    if (!ok || failed)
      return false;
    if (profileTraffic && in.space != Space::Param && in.space != Space::Local)
      countRequest(in.space, addresses, exec, total);
    advance();
    return true;
  }

  case Opcode::Shfl: {
    if (exec == 0) {
      advance();
      return true;
    }
    unsigned lane0 = __builtin_ctz(exec);
    bool withPredicate = ops.size() == 6;
    const Operand &dst = ops[0];
    const Operand &a = ops[withPredicate ? 2 : 1];
    const Operand &b = ops[withPredicate ? 3 : 2];
    const Operand &c = ops[withPredicate ? 4 : 3];
    uint32_t members = static_cast<uint32_t>(value(ops.back(), lane0));
    if ((members & ~exec) != 0 || (exec & ~members) != 0)
      return fault(w, lane0, &in,
                   "shfl.sync's membermask " + std::to_string(members) +
                       " is not the set of lanes executing it (" +
                       std::to_string(exec) + ")");
    uint32_t sources[32];
    for (unsigned lane = 0; lane < 32; ++lane)
      sources[lane] = static_cast<uint32_t>(value(a, lane));
    bool ok = true;
    forExec([&](unsigned lane) {
      uint32_t bval = static_cast<uint32_t>(value(b, lane)) & 31;
      uint32_t cval = static_cast<uint32_t>(value(c, lane));
      uint32_t clamp = cval & 31, segmask = (cval >> 8) & 31;
      uint32_t maxLane = (lane & segmask) | (clamp & ~segmask);
      uint32_t minLane = lane & segmask;
      int j = 0;
      bool inRange = false;
      switch (in.shfl) {
      case ShflMode::Up:
        j = int(lane) - int(bval);
        inRange = j >= int(maxLane);
        break;
      case ShflMode::Down:
        j = int(lane) + int(bval);
        inRange = j <= int(maxLane);
        break;
      case ShflMode::Bfly:
        j = int(lane ^ bval);
        inRange = j <= int(maxLane);
        break;
      case ShflMode::Idx:
        j = int(minLane | (bval & ~segmask));
        inRange = j <= int(maxLane);
        break;
      }
      if (!inRange)
        j = int(lane);
      if (!((exec >> j) & 1)) {
        ok = fault(w, lane, &in,
                   "shfl.sync reads lane " + std::to_string(j) +
                       ", which does not take part");
        return;
      }
      write(dst, lane, sources[j], 4);
      if (withPredicate)
        write(ops[1], lane, inRange, 1);
    });
    if (!ok)
      return false;
    advance();
    return true;
  }

  case Opcode::Vote: {
    if (exec == 0) {
      advance();
      return true;
    }
    uint32_t members = static_cast<uint32_t>(value(ops[2], __builtin_ctz(exec)));
    if ((members & ~exec) != 0)
      return fault(w, __builtin_ctz(exec), &in,
                   "vote.sync's membermask names lanes that do not take part");
    uint32_t ballot = 0;
    forExec([&](unsigned lane) {
      if (predicate(ops[1], lane))
        ballot |= 1u << lane;
    });
    ballot &= members;
    forExec([&](unsigned lane) {
      uint64_t r = 0;
      switch (in.boolOp) {
      case BoolOp::And: r = ballot == members; break;
      case BoolOp::Or: r = ballot != 0; break;
      case BoolOp::Xor: r = ballot == 0 || ballot == members; break;
      default: r = ballot; break;
      }
      write(ops[0], lane, r, in.type == Type::Pred ? 1 : 4);
    });
    advance();
    return true;
  }

  case Opcode::Mma: {
    if (!requireWholeWarp("mma.sync.aligned"))
      return false;
    // PTX ISA, "Matrix Fragments for mma.m16n8k16/k8 with floating point
    // type": groupID = lane / 4, threadID_in_group = lane % 4.
    float A[16][16], B[16][8], C[16][8];
    unsigned k = in.k;
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned g = lane / 4, tig = lane % 4;
      const auto &a = ops[1].elements, &bv = ops[2].elements,
                 &cv = ops[3].elements;
      unsigned aElements = k == 16 ? 8 : 4, bElements = k == 16 ? 4 : 2;
      for (unsigned i = 0; i < aElements; ++i) {
        uint16_t bits = static_cast<uint16_t>(value(a[i / 2], lane) >>
                                              (16 * (i % 2)));
        unsigned row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
        unsigned col = tig * 2 + (i & 1) + (i >= 4 ? 8 : 0);
        A[row][col] = unpackHalf(bits, in.typeA);
      }
      for (unsigned i = 0; i < bElements; ++i) {
        uint16_t bits = static_cast<uint16_t>(value(bv[i / 2], lane) >>
                                              (16 * (i % 2)));
        unsigned row = tig * 2 + (i & 1) + (i >= 2 ? 8 : 0);
        B[row][g] = unpackHalf(bits, in.typeB);
      }
      // c0, c1 at row g, c2, c3 at row g + 8: four f32 registers, or
      // two f16x2 with the even column in the low half.
      for (unsigned i = 0; i < 4; ++i) {
        unsigned row = i < 2 ? g : g + 8, col = tig * 2 + (i & 1);
        if (in.typeC == Type::F16)
          C[row][col] = halfToFloat(
              static_cast<uint16_t>(value(cv[i / 2], lane) >> (16 * (i % 2))));
        else
          C[row][col] =
              cv[i].kind == Operand::Kind::Immediate
                  ? f32(cv[i], lane)
                  : bitsToFloat(static_cast<uint32_t>(value(cv[i], lane)));
      }
    }
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned g = lane / 4, tig = lane % 4;
      uint32_t halves[2] = {0, 0};
      for (unsigned i = 0; i < 4; ++i) {
        unsigned row = i < 2 ? g : g + 8, col = tig * 2 + (i & 1);
        // Products of 16-bit floats are exact in double; the sum is
        // rounded to D's type once.
        double sum = C[row][col];
        for (unsigned kk = 0; kk < k; ++kk)
          sum += double(A[row][kk]) * double(B[kk][col]);
        if (in.type == Type::F16)
          halves[i / 2] |= uint32_t(doubleToHalf(sum)) << (16 * (i % 2));
        else
          write(ops[0].elements[i], lane, floatToBits(static_cast<float>(sum)),
                4);
      }
      if (in.type == Type::F16)
        for (unsigned r = 0; r < 2; ++r)
          write(ops[0].elements[r], lane, halves[r], 4);
    }
    advance();
    return true;
  }

  case Opcode::Ldmatrix: {
    if (!requireWholeWarp("ldmatrix.sync.aligned"))
      return false;
    unsigned matrices = in.vector;
    // Row r of matrix m comes from the address of lane 8 m + r.
    uint16_t rows[4][8][8];
    uint64_t addresses[32];
    for (unsigned m = 0; m < matrices; ++m)
      for (unsigned r = 0; r < 8; ++r) {
        unsigned lane = 8 * m + r;
        const Operand &address = ops[1];
        uint64_t at = (address.reg >= 0 ? reg(address.reg, lane) : 0) +
                      address.value;
        addresses[lane] = at;
        if (!load(w, lane, in.space, at, 16, rows[m][r], in))
          return false;
      }
    // One 8-row matrix is one phase of eight 16-byte rows.
    if (profileTraffic)
      countRequest(in.space, addresses,
                   matrices == 4 ? ~0u : (1u << (8 * matrices)) - 1, 16);
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned m = 0; m < matrices; ++m) {
        unsigned row = lane / 4, col = 2 * (lane % 4);
        uint16_t lo, hi;
        if (in.flags & mod::Trans) {
          lo = rows[m][col][row];
          hi = rows[m][col + 1][row];
        } else {
          lo = rows[m][row][col];
          hi = rows[m][row][col + 1];
        }
        const Operand &out = matrices == 1 ? ops[0] : ops[0].elements[m];
        write(out, lane, (static_cast<uint32_t>(hi) << 16) | lo, 4);
      }
    advance();
    return true;
  }

  case Opcode::Stmatrix: {
    if (!requireWholeWarp("stmatrix.sync.aligned"))
      return false;
    unsigned matrices = in.vector;
    // Lane l holds row l / 4, columns 2 (l % 4) and + 1 of each matrix (of
    // the transpose with .trans); row r of matrix m goes to the address of
    // lane 8 m + r.
    uint16_t rows[4][8][8];
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned m = 0; m < matrices; ++m) {
        const Operand &source = matrices == 1 ? ops[1] : ops[1].elements[m];
        uint32_t pair = static_cast<uint32_t>(value(source, lane));
        unsigned row = lane / 4, col = 2 * (lane % 4);
        uint16_t lo = static_cast<uint16_t>(pair), hi = pair >> 16;
        if (in.flags & mod::Trans) {
          rows[m][col][row] = lo;
          rows[m][col + 1][row] = hi;
        } else {
          rows[m][row][col] = lo;
          rows[m][row][col + 1] = hi;
        }
      }
    uint64_t addresses[32];
    for (unsigned m = 0; m < matrices; ++m)
      for (unsigned r = 0; r < 8; ++r) {
        unsigned lane = 8 * m + r;
        uint64_t at = addressOf(w, ops[0], lane);
        addresses[lane] = at;
        if (!store(w, lane, in.space, at, 16, rows[m][r], in))
          return false;
      }
    if (profileTraffic)
      countRequest(in.space, addresses,
                   matrices == 4 ? ~0u : (1u << (8 * matrices)) - 1, 16);
    advance();
    return true;
  }

  case Opcode::CpAsync: {
    bool ok = true;
    unsigned size = static_cast<unsigned>(ops[2].value);
    uint64_t sources[32];
    uint32_t reading = 0;
    forExec([&](unsigned lane) {
      if (!ok)
        return;
      uint64_t dst = (ops[0].reg >= 0 ? reg(ops[0].reg, lane) : 0) +
                     ops[0].value;
      uint64_t src = (ops[1].reg >= 0 ? reg(ops[1].reg, lane) : 0) +
                     ops[1].value;
      uint64_t sourceBytes = ops.size() == 4 ? value(ops[3], lane) : size;
      if (sourceBytes > size) {
        ok = fault(w, lane, &in,
                   "cp.async src-size " + std::to_string(sourceBytes) +
                       " exceeds its cp-size " + std::to_string(size));
        return;
      }
      uint32_t offset;
      if (!sharedOffset(w, lane, dst, size, offset, in)) {
        ok = false;
        return;
      }
      if (sourceBytes > 0 &&
          !globalPointer(w, lane, src, static_cast<unsigned>(sourceBytes),
                         GlobalAccess::Read, in)) {
        ok = false;
        return;
      }
      if (sourceBytes > 0) {
        sources[lane] = src;
        reading |= 1u << lane;
      }
      if (src % size != 0) {
        ok = fault(w, lane, &in, "cp.async source address is not aligned to " +
                                     std::to_string(size) + " bytes");
        return;
      }
      markSharedWrite(w, lane, offset, size, in);
      for (unsigned i = 0; i < size; ++i)
        w.cta->shadow[offset + i].pendingCopy = true;
      w.openGroup.push_back({offset, src, static_cast<uint8_t>(size),
                             static_cast<uint8_t>(sourceBytes), pc});
    });
    if (!ok || failed)
      return false;
    if (profileTraffic)
      countRequest(Space::Global, sources, reading, size);
    advance();
    return true;
  }

  case Opcode::CpAsyncCommit:
    if (exec) {
      w.groups.push_back(std::move(w.openGroup));
      w.openGroup.clear();
    }
    advance();
    return true;

  case Opcode::CpAsyncWait:
    if (exec && !completeCopies(w, ops[0].value))
      return false;
    advance();
    return true;

  case Opcode::Mbarrier:
    if (!executeMbarrier(w, in, exec))
      return false;
    advance();
    return true;

  case Opcode::CpAsyncBulk:
  case Opcode::CpAsyncBulkTensor:
    if (!executeBulkCopy(w, in, exec))
      return false;
    advance();
    return true;

  case Opcode::CpAsyncBulkCommit:
    if (exec) {
      w.bulkGroups.push_back(std::move(w.bulkOpen));
      w.bulkOpen = AsyncGroup();
    }
    advance();
    return true;

  case Opcode::CpAsyncBulkWait:
    // Copies land when issued here, so .read and the full wait both retire
    // the groups: their shared sources may be written again.
    if (exec)
      retireGroups(w, w.bulkGroups, ops[0].value);
    advance();
    return true;

  case Opcode::WgmmaMma:
  case Opcode::WgmmaFence:
  case Opcode::WgmmaCommit:
  case Opcode::WgmmaWait:
    if (!executeWgmma(w, in, exec))
      return false;
    advance();
    return true;

  case Opcode::ElectSync: {
    // The lowest lane of membermask among the converged lanes leads; the
    // mask must name only lanes that execute it together (.sync).
    uint32_t members =
        static_cast<uint32_t>(value(ops[2], __builtin_ctz(group)));
    if ((members & live) != exec)
      return fault(w, __builtin_ctz(group), &in,
                   "elect.sync's membermask names lanes that do not execute "
                   "it here, or leaves out lanes that do");
    unsigned leader = __builtin_ctz(exec);
    forExec([&](unsigned lane) {
      write(ops[0], lane, leader, 4);
      write(ops[1], lane, lane == leader, 1);
    });
    advance();
    return true;
  }

  case Opcode::Setmaxnreg:
    // Registers are not a limited resource here; the count was checked
    // when the kernel loaded, and the warp must execute it converged.
    if (!requireWholeWarp("setmaxnreg"))
      return false;
    advance();
    return true;

  case Opcode::CpAsyncWaitAll:
    if (exec) {
      w.groups.push_back(std::move(w.openGroup));
      w.openGroup.clear();
      if (!completeCopies(w, 0))
        return false;
    }
    advance();
    return true;

  default:
    return fault(w, __builtin_ctz(group), &in, "instruction not implemented");
  }
}
