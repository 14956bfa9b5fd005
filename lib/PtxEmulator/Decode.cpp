//===- Decode.cpp - PTX opcode words to decoded instructions --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Each base opcode takes the modifiers the PTX ISA allows it and the
// interpreter implements; anything left over, a type it does not handle or
// an operand list of the wrong shape is an error that names the form. So a
// kernel either runs exactly as written or does not load.
//
//===----------------------------------------------------------------------===//

#include "Decode.h"

#include <algorithm>
#include <unordered_map>

using namespace attn::ptxemu;

unsigned attn::ptxemu::typeBytes(Type t) {
  switch (t) {
  case Type::None:
    return 0;
  case Type::Pred:
  case Type::B8:
  case Type::U8:
  case Type::S8:
    return 1;
  case Type::B16:
  case Type::U16:
  case Type::S16:
  case Type::F16:
  case Type::BF16:
    return 2;
  case Type::B32:
  case Type::U32:
  case Type::S32:
  case Type::F32:
  case Type::F16x2:
  case Type::BF16x2:
    return 4;
  case Type::B64:
  case Type::U64:
  case Type::S64:
  case Type::F64:
    return 8;
  case Type::B128:
    return 16;
  }
  return 0;
}

bool attn::ptxemu::isSigned(Type t) {
  return t == Type::S8 || t == Type::S16 || t == Type::S32 || t == Type::S64;
}

bool attn::ptxemu::isFloat(Type t) {
  return t == Type::F16 || t == Type::F16x2 || t == Type::BF16 ||
         t == Type::BF16x2 || t == Type::F32 || t == Type::F64;
}

const char *attn::ptxemu::typeName(Type t) {
  static const char *names[] = {
      "none", "pred", "b8",  "b16", "b32",   "b64",  "b128",   "u8",
      "u16",  "u32",  "u64", "s8",  "s16",   "s32",  "s64",    "f16",
      "f16x2", "bf16", "bf16x2", "f32", "f64"};
  return names[static_cast<int>(t)];
}

const char *attn::ptxemu::spaceName(Space s) {
  static const char *names[] = {"generic", "global", "shared",
                                "param",   "local",  "const"};
  return names[static_cast<int>(s)];
}

namespace {

Type typeOf(const std::string &word) {
  static const std::unordered_map<std::string, Type> types = {
      {"pred", Type::Pred}, {"b8", Type::B8},       {"b16", Type::B16},
      {"b32", Type::B32},   {"b64", Type::B64},     {"b128", Type::B128},
      {"u8", Type::U8},     {"u16", Type::U16},     {"u32", Type::U32},
      {"u64", Type::U64},   {"s8", Type::S8},       {"s16", Type::S16},
      {"s32", Type::S32},   {"s64", Type::S64},     {"f16", Type::F16},
      {"f16x2", Type::F16x2}, {"bf16", Type::BF16}, {"bf16x2", Type::BF16x2},
      {"f32", Type::F32},   {"f64", Type::F64}};
  auto it = types.find(word);
  return it == types.end() ? Type::None : it->second;
}

/// The modifiers of one opcode word, consumed as the decoder recognises
/// them; what is left is not implemented.
class Word {
public:
  explicit Word(const std::string &text) {
    size_t start = 0;
    while (true) {
      size_t dot = text.find('.', start);
      parts.push_back(text.substr(start, dot - start));
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
    base = parts.front();
    parts.erase(parts.begin());
  }
  bool take(const char *part) {
    auto it = std::find(parts.begin(), parts.end(), part);
    if (it == parts.end())
      return false;
    parts.erase(it);
    return true;
  }
  /// Removes every type suffix, in order.
  std::vector<Type> takeTypes() {
    std::vector<Type> types;
    for (auto it = parts.begin(); it != parts.end();) {
      Type t = typeOf(*it);
      if (t == Type::None) {
        ++it;
        continue;
      }
      types.push_back(t);
      it = parts.erase(it);
    }
    return types;
  }
  /// Cache and eviction hints: performance only.
  void dropHints() {
    for (const char *hint :
         {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "L1::evict_normal",
          "L1::evict_unchanged", "L1::evict_first", "L1::evict_last",
          "L1::no_allocate", "L2::evict_normal", "L2::evict_first",
          "L2::evict_last", "L2::64B", "L2::128B", "L2::256B", "weak"})
      take(hint);
  }
  std::string leftover() const {
    std::string text;
    for (const std::string &p : parts)
      text += "." + p;
    return text;
  }
  std::string base;
  std::vector<std::string> parts;
};

bool takeSpace(Word &word, Space &space) {
  if (word.take("global"))
    space = Space::Global;
  else if (word.take("shared") || word.take("shared::cta"))
    space = Space::Shared;
  else if (word.take("param"))
    space = Space::Param;
  else if (word.take("local"))
    space = Space::Local;
  else if (word.take("const"))
    space = Space::Const;
  else
    return false;
  return true;
}

/// Memory ordering and scope: the emulator runs memory operations one at a
/// time in a total order, which every ordering allows; acquire and release
/// are kept for the memory-model checks.
void takeOrdering(Word &word, uint64_t &flags) {
  if (word.take("volatile"))
    flags |= mod::Volatile;
  if (word.take("relaxed"))
    flags |= mod::Relaxed;
  if (word.take("acquire"))
    flags |= mod::Acquire;
  if (word.take("release"))
    flags |= mod::Release;
  if (word.take("acq_rel"))
    flags |= mod::Acquire | mod::Release;
  if (word.take("sc"))
    flags |= mod::Acquire | mod::Release;
  for (const char *scope : {"cta", "gpu", "sys", "cluster"})
    word.take(scope);
}

void takeRounding(Word &word, uint64_t &flags) {
  static const std::pair<const char *, uint32_t> modes[] = {
      {"rn", mod::Rn},   {"rz", mod::Rz},   {"rm", mod::Rm},
      {"rp", mod::Rp},   {"rni", mod::Rni}, {"rzi", mod::Rzi},
      {"rmi", mod::Rmi}, {"rpi", mod::Rpi}};
  for (auto [name, bit] : modes)
    if (word.take(name))
      flags |= bit;
  if (word.take("ftz"))
    flags |= mod::Ftz;
  if (word.take("sat"))
    flags |= mod::Sat;
}

using Kind = Operand::Kind;

/// A register, a constant, a special register, or a variable's name (its
/// address, resolved when the kernel ends).
bool isValue(const Operand &o) {
  return o.kind == Kind::Register || o.kind == Kind::Immediate ||
         o.kind == Kind::Special || o.kind == Kind::Label;
}
bool isReg(const Operand &o) { return o.kind == Kind::Register; }
bool isRegOrSink(const Operand &o) {
  return o.kind == Kind::Register || o.kind == Kind::Sink;
}
bool isRegVector(const Operand &o, size_t n) {
  if (o.kind != Kind::Vector || o.elements.size() != n)
    return false;
  return std::all_of(o.elements.begin(), o.elements.end(), isRegOrSink);
}
bool isValueVector(const Operand &o, size_t n) {
  if (o.kind != Kind::Vector || o.elements.size() != n)
    return false;
  return std::all_of(o.elements.begin(), o.elements.end(), [](auto &e) {
    return e.kind == Kind::Register || e.kind == Kind::Immediate;
  });
}

class Decoder {
public:
  Decoder(const std::string &opcodeWord, Instruction &instruction)
      : original(opcodeWord), word(opcodeWord), in(instruction),
        ops(instruction.operands) {}

  bool decode(std::string &error);

private:
  bool unsupported(std::string &error, const std::string &why = "") {
    error = "the emulator does not implement '" + original + "'" +
            (why.empty() ? "" : ": " + why);
    return false;
  }
  /// One type, and nothing else left.
  bool oneType(std::string &error, std::initializer_list<Type> allowed) {
    std::vector<Type> types = word.takeTypes();
    if (types.size() != 1)
      return unsupported(error, "expected one type");
    in.type = types[0];
    if (std::find(allowed.begin(), allowed.end(), in.type) == allowed.end())
      return unsupported(error, std::string("type .") + typeName(in.type));
    return done(error);
  }
  bool done(std::string &error) {
    if (!word.parts.empty())
      return unsupported(error, "modifier " + word.leftover());
    return true;
  }
  bool shape(std::string &error, bool ok) {
    return ok ? true : unsupported(error, "operands of an unexpected shape");
  }
  /// Drops the cache-policy operand that `.L2::cache_hint` adds last (a hint
  /// only), once the opcode word is done.
  bool dropCacheHint(std::string &error, bool hasHint) {
    if (!done(error))
      return false;
    if (!hasHint)
      return true;
    if (ops.empty())
      return shape(error, false);
    ops.pop_back();
    return true;
  }

  bool decodeArithmetic(std::string &error);
  bool decodeMemory(std::string &error);
  bool decodeCvt(std::string &error);
  bool decodeMbarrier(std::string &error);
  bool decodeWgmma(std::string &error);
  bool decodeBulkCopy(std::string &error);
  bool decodeTensorCopy(std::string &error);
  /// A bulk copy's direction, spaces, completion and cache hint.
  bool decodeBulkDirection(std::string &error, const char *what);

  /// The whole opcode word, for messages.
  const std::string original;
  Word word;
  Instruction &in;
  std::vector<Operand> &ops;
};

const std::initializer_list<Type> kIntegers = {
    Type::B16, Type::B32, Type::B64, Type::U16, Type::U32,
    Type::U64, Type::S16, Type::S32, Type::S64};
const std::initializer_list<Type> kBits = {Type::Pred, Type::B16, Type::B32,
                                           Type::B64};

bool Decoder::decodeArithmetic(std::string &error) {
  const std::string &b = word.base;
  static const std::unordered_map<std::string, Opcode> opcodes = {
      {"add", Opcode::Add},   {"sub", Opcode::Sub},   {"mul", Opcode::Mul},
      {"mad", Opcode::Mad},   {"div", Opcode::Div},   {"rem", Opcode::Rem},
      {"neg", Opcode::Neg},   {"abs", Opcode::Abs},   {"min", Opcode::Min},
      {"max", Opcode::Max},   {"fma", Opcode::Fma},   {"rcp", Opcode::Rcp},
      {"sqrt", Opcode::Sqrt}, {"rsqrt", Opcode::Rsqrt}, {"ex2", Opcode::Ex2},
      {"lg2", Opcode::Lg2},   {"tanh", Opcode::Tanh}, {"sin", Opcode::Sin},
      {"cos", Opcode::Cos},   {"copysign", Opcode::Copysign}};
  in.op = opcodes.at(b);
  takeRounding(word, in.flags);
  if (word.take("approx"))
    in.flags |= mod::Approx;
  if (word.take("full"))
    in.flags |= mod::Full;
  if (word.take("lo"))
    in.flags |= mod::Lo;
  if (word.take("hi"))
    in.flags |= mod::Hi;
  if (word.take("wide"))
    in.flags |= mod::Wide;
  if (word.take("NaN"))
    in.flags |= mod::NaN;
  if (word.take("relu"))
    in.flags |= mod::Relu;
  std::vector<Type> types = word.takeTypes();
  if (types.size() != 1 || !done(error))
    return error.empty() ? unsupported(error, "expected one type") : false;
  in.type = types[0];
  Type t = in.type;
  bool isInt = !isFloat(t) && t != Type::Pred;
  size_t sources = 2;
  switch (in.op) {
  case Opcode::Neg:
  case Opcode::Abs:
  case Opcode::Rcp:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Ex2:
  case Opcode::Lg2:
  case Opcode::Tanh:
  case Opcode::Sin:
  case Opcode::Cos:
    sources = 1;
    break;
  case Opcode::Mad:
  case Opcode::Fma:
    sources = 3;
    break;
  default:
    break;
  }
  // Which types each opcode takes here.
  bool ok = false;
  switch (in.op) {
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Min:
  case Opcode::Max:
    ok = (isInt && t != Type::B16 && t != Type::B32 && t != Type::B64) ||
         t == Type::F32 || t == Type::F64 || t == Type::F16x2 ||
         t == Type::BF16x2 || t == Type::F16 || t == Type::BF16;
    break;
  case Opcode::Mul:
  case Opcode::Mad:
    if (isInt) {
      ok = (t == Type::U16 || t == Type::U32 || t == Type::U64 ||
            t == Type::S16 || t == Type::S32 || t == Type::S64) &&
           __builtin_popcount(in.flags & (mod::Lo | mod::Hi | mod::Wide)) == 1;
      if (in.flags & mod::Hi)
        in.op = in.op == Opcode::Mul ? Opcode::MulHi : Opcode::MadHi;
      else if (in.flags & mod::Wide) {
        in.op = in.op == Opcode::Mul ? Opcode::MulWide : Opcode::MadWide;
        ok = ok && typeBytes(t) <= 4;
      }
    } else {
      ok = t == Type::F32 || t == Type::F64 || t == Type::F16x2 ||
           t == Type::BF16x2;
      if (in.op == Opcode::Mad)
        in.op = Opcode::Fma;
    }
    break;
  case Opcode::Div:
    ok = (isInt && typeBytes(t) >= 4 && t != Type::B32 && t != Type::B64) ||
         t == Type::F32 || t == Type::F64;
    if (t == Type::F32 && !(in.flags & (mod::Rn | mod::Rz | mod::Rm | mod::Rp |
                                        mod::Approx | mod::Full)))
      ok = false;
    break;
  case Opcode::Rem:
    ok = isInt && typeBytes(t) >= 4 && t != Type::B32 && t != Type::B64;
    break;
  case Opcode::Neg:
  case Opcode::Abs:
    ok = t == Type::S16 || t == Type::S32 || t == Type::S64 ||
         t == Type::F32 || t == Type::F64 || t == Type::F16x2 ||
         t == Type::BF16x2;
    break;
  case Opcode::Fma:
    ok = t == Type::F32 || t == Type::F64 || t == Type::F16x2 ||
         t == Type::BF16x2 || t == Type::F16 || t == Type::BF16;
    break;
  case Opcode::Rcp:
  case Opcode::Sqrt:
    ok = t == Type::F32 || t == Type::F64;
    break;
  case Opcode::Rsqrt:
  case Opcode::Lg2:
  case Opcode::Sin:
  case Opcode::Cos:
    ok = t == Type::F32 && (in.flags & mod::Approx);
    break;
  case Opcode::Ex2:
  case Opcode::Tanh:
    ok = (t == Type::F32 || t == Type::F16 || t == Type::F16x2 ||
          t == Type::BF16 || t == Type::BF16x2) &&
         (in.flags & mod::Approx);
    break;
  case Opcode::Copysign:
    ok = t == Type::F32 || t == Type::F64;
    break;
  default:
    break;
  }
  if (!ok)
    return unsupported(error, std::string("type .") + typeName(t));
  if (ops.size() != sources + 1 || !isReg(ops[0]))
    return shape(error, false);
  for (size_t i = 1; i <= sources; ++i)
    if (!isValue(ops[i]))
      return shape(error, false);
  return true;
}

bool Decoder::decodeCvt(std::string &error) {
  in.op = Opcode::Cvt;
  takeRounding(word, in.flags);
  if (word.take("relu"))
    in.flags |= mod::Relu;
  if (word.take("satfinite"))
    in.flags |= mod::Satfinite;
  std::vector<Type> types = word.takeTypes();
  if (!done(error))
    return false;
  if (types.size() != 2)
    return unsupported(error, "expected two types");
  in.type = types[0];
  in.type2 = types[1];
  // .satfinite: f32 to the 16-bit floats and their pairs (the fp8 and tf32
  // destinations are not implemented), rounded to nearest.
  if ((in.flags & mod::Satfinite) &&
      (in.type2 != Type::F32 || !(in.flags & mod::Rn) ||
       (in.type != Type::F16 && in.type != Type::BF16 &&
        in.type != Type::F16x2 && in.type != Type::BF16x2)))
    return unsupported(error, ".satfinite other than .rn from f32 to "
                              "f16, bf16 and their pairs");
  if (in.type == Type::F16x2 || in.type == Type::BF16x2) {
    in.op = Opcode::CvtPack;
    if (in.type2 != Type::F32 || !(in.flags & mod::Rn))
      return unsupported(error, "packs only f32 with .rn");
    return shape(error, ops.size() == 3 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]));
  }
  if (in.type == Type::Pred || in.type2 == Type::Pred ||
      in.type == Type::B128 || in.type2 == Type::B128 ||
      in.type2 == Type::F16x2 || in.type2 == Type::BF16x2)
    return unsupported(error);
  return shape(error, ops.size() == 2 && isReg(ops[0]) && isValue(ops[1]));
}

bool Decoder::decodeMemory(std::string &error) {
  const std::string &b = word.base;
  in.op = b == "ld" ? Opcode::Ld : Opcode::St;
  if (word.take("nc"))
    in.flags |= mod::Nc;
  takeOrdering(word, in.flags);
  word.dropHints();
  takeSpace(word, in.space);
  if (word.take("v2"))
    in.vector = 2;
  else if (word.take("v4"))
    in.vector = 4;
  bool hasHint = word.take("L2::cache_hint");
  std::vector<Type> types = word.takeTypes();
  if (!done(error))
    return false;
  if (types.size() != 1 || types[0] == Type::Pred || types[0] == Type::B128 ||
      types[0] == Type::F16x2 || types[0] == Type::BF16x2)
    return unsupported(error, "type");
  in.type = types[0];
  if (hasHint) {
    if (ops.size() != 3)
      return shape(error, false);
    ops.pop_back(); // the cache policy
  }
  if (ops.size() != 2)
    return shape(error, false);
  Operand &address = in.op == Opcode::Ld ? ops[1] : ops[0];
  Operand &value = in.op == Opcode::Ld ? ops[0] : ops[1];
  if (address.kind != Kind::Address)
    return shape(error, false);
  if (address.isParam && in.space != Space::Param)
    return unsupported(error, "a parameter's name outside ld.param");
  if (in.space == Space::Param && !address.isParam)
    return unsupported(error, "ld.param of something that is not a parameter");
  if (in.space == Space::Param && in.op == Opcode::St)
    return unsupported(error, "st.param");
  if (in.vector == 1)
    return shape(error, in.op == Opcode::Ld ? isReg(value) : isValue(value));
  return shape(error, in.op == Opcode::Ld ? isRegVector(value, in.vector)
                                          : isValueVector(value, in.vector));
}

bool Decoder::decode(std::string &error) {
  const std::string &b = word.base;
  if (b == "mov") {
    in.op = Opcode::Mov;
    if (!oneType(error, {Type::Pred, Type::B16, Type::B32, Type::B64,
                         Type::U16, Type::U32, Type::U64, Type::S16,
                         Type::S32, Type::S64, Type::F32, Type::F64}))
      return false;
    if (ops.size() != 2)
      return shape(error, false);
    // Pack ({a, b} -> d) or unpack (a -> {d0, d1}), or a plain move.
    if (ops[0].kind == Kind::Vector)
      return shape(error, isRegVector(ops[0], ops[0].elements.size()) &&
                              (ops[0].elements.size() == 2 ||
                               ops[0].elements.size() == 4) &&
                              isValue(ops[1]));
    if (ops[1].kind == Kind::Vector)
      return shape(error, isReg(ops[0]) &&
                              isValueVector(ops[1], ops[1].elements.size()) &&
                              (ops[1].elements.size() == 2 ||
                               ops[1].elements.size() == 4));
    return shape(error, isReg(ops[0]) && isValue(ops[1]));
  }
  if (b == "add" || b == "sub" || b == "mul" || b == "mad" || b == "div" ||
      b == "rem" || b == "neg" || b == "abs" || b == "min" || b == "max" ||
      b == "fma" || b == "rcp" || b == "sqrt" || b == "rsqrt" || b == "ex2" ||
      b == "lg2" || b == "tanh" || b == "sin" || b == "cos" ||
      b == "copysign")
    return decodeArithmetic(error);
  if (b == "and" || b == "or" || b == "xor" || b == "not" || b == "cnot") {
    in.op = b == "and"   ? Opcode::And
            : b == "or"  ? Opcode::Or
            : b == "xor" ? Opcode::Xor
            : b == "not" ? Opcode::Not
                         : Opcode::Cnot;
    if (!oneType(error, kBits))
      return false;
    size_t sources = in.op == Opcode::Not || in.op == Opcode::Cnot ? 1 : 2;
    if (ops.size() != sources + 1 || !isReg(ops[0]))
      return shape(error, false);
    for (size_t i = 1; i <= sources; ++i)
      if (!isValue(ops[i]))
        return shape(error, false);
    return true;
  }
  if (b == "shl" || b == "shr") {
    in.op = b == "shl" ? Opcode::Shl : Opcode::Shr;
    if (!oneType(error, kIntegers))
      return false;
    return shape(error, ops.size() == 3 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]));
  }
  if (b == "popc" || b == "clz" || b == "brev") {
    in.op = b == "popc" ? Opcode::Popc : b == "clz" ? Opcode::Clz : Opcode::Brev;
    if (!oneType(error, {Type::B32, Type::B64}))
      return false;
    return shape(error, ops.size() == 2 && isReg(ops[0]) && isValue(ops[1]));
  }
  if (b == "bfe") {
    in.op = Opcode::Bfe;
    if (!oneType(error, {Type::U32, Type::U64, Type::S32, Type::S64}))
      return false;
    return shape(error, ops.size() == 4 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]) && isValue(ops[3]));
  }
  if (b == "bfi") {
    in.op = Opcode::Bfi;
    if (!oneType(error, {Type::B32, Type::B64}))
      return false;
    return shape(error, ops.size() == 5 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]) && isValue(ops[3]) &&
                            isValue(ops[4]));
  }
  if (b == "prmt") {
    in.op = Opcode::Prmt;
    if (!oneType(error, {Type::B32}))
      return false;
    return shape(error, ops.size() == 4 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]) && isValue(ops[3]));
  }
  if (b == "cvt")
    return decodeCvt(error);
  if (b == "cvta") {
    in.op = word.take("to") ? Opcode::CvtaTo : Opcode::Cvta;
    // A parameter's generic address only (kernel parameters are read-only
    // through it). A shared::cluster address of the CTA's own shared memory
    // is its shared::cta address (no clusters are launched): LLVM converts
    // a tensor copy's destination so.
    if (word.take("shared::cluster"))
      in.space = Space::Shared;
    else if (!takeSpace(word, in.space) ||
             (in.space == Space::Param && in.op == Opcode::CvtaTo))
      return unsupported(error, "state space");
    if (!oneType(error, {Type::U64}))
      return false;
    return shape(error, ops.size() == 2 && isReg(ops[0]) && isValue(ops[1]));
  }
  if (b == "ld" || b == "st")
    return decodeMemory(error);
  if (b == "setp") {
    in.op = Opcode::Setp;
    static const std::pair<const char *, Compare> compares[] = {
        {"eq", Compare::Eq},   {"ne", Compare::Ne},   {"lt", Compare::Lt},
        {"le", Compare::Le},   {"gt", Compare::Gt},   {"ge", Compare::Ge},
        {"lo", Compare::Lo},   {"ls", Compare::Ls},   {"hi", Compare::Hi},
        {"hs", Compare::Hs},   {"equ", Compare::Equ}, {"neu", Compare::Neu},
        {"ltu", Compare::Ltu}, {"leu", Compare::Leu}, {"gtu", Compare::Gtu},
        {"geu", Compare::Geu}, {"num", Compare::Num}, {"nan", Compare::Nan}};
    bool found = false;
    for (auto [name, compare] : compares)
      if (word.take(name)) {
        in.compare = compare;
        found = true;
        break;
      }
    if (!found)
      return unsupported(error, "comparison");
    if (word.take("and"))
      in.boolOp = BoolOp::And;
    else if (word.take("or"))
      in.boolOp = BoolOp::Or;
    else if (word.take("xor"))
      in.boolOp = BoolOp::Xor;
    if (word.take("ftz"))
      in.flags |= mod::Ftz;
    if (!oneType(error, {Type::B16, Type::B32, Type::B64, Type::U16,
                         Type::U32, Type::U64, Type::S16, Type::S32,
                         Type::S64, Type::F32, Type::F64}))
      return false;
    in.type2 = in.type;
    size_t destinations = 1;
    if (ops.size() >= 2 && isRegOrSink(ops[1]) && ops.size() ==
        (in.boolOp == BoolOp::None ? 4u : 5u))
      destinations = 2;
    size_t expected = destinations + 2 + (in.boolOp == BoolOp::None ? 0 : 1);
    if (ops.size() != expected || !isRegOrSink(ops[0]))
      return shape(error, false);
    for (size_t i = destinations; i < ops.size(); ++i)
      if (!isValue(ops[i]))
        return shape(error, false);
    return true;
  }
  if (b == "selp") {
    in.op = Opcode::Selp;
    if (!oneType(error, {Type::B16, Type::B32, Type::B64, Type::U16,
                         Type::U32, Type::U64, Type::S16, Type::S32,
                         Type::S64, Type::F32, Type::F64}))
      return false;
    return shape(error, ops.size() == 4 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]) && isValue(ops[3]));
  }
  if (b == "testp") {
    in.op = Opcode::Testp;
    static const std::pair<const char *, Compare> tests[] = {
        {"finite", Compare::Eq},     {"infinite", Compare::Ne},
        {"number", Compare::Num},    {"notanumber", Compare::Nan},
        {"normal", Compare::Gt},     {"subnormal", Compare::Lt}};
    bool found = false;
    for (auto [name, test] : tests)
      if (word.take(name)) {
        in.compare = test;
        found = true;
        break;
      }
    if (!found || !oneType(error, {Type::F32, Type::F64}))
      return found ? false : unsupported(error, "test");
    return shape(error, ops.size() == 2 && isReg(ops[0]) && isValue(ops[1]));
  }
  if (b == "bra") {
    in.op = Opcode::Bra;
    if (word.take("uni"))
      in.flags |= mod::Uni;
    if (!done(error))
      return false;
    return shape(error, ops.size() == 1 && ops[0].kind == Kind::Label);
  }
  if (b == "ret" || b == "exit") {
    in.op = b == "ret" ? Opcode::Ret : Opcode::Exit;
    return done(error) && shape(error, ops.empty());
  }
  if (b == "bar" || b == "barrier") {
    if (word.take("warp")) {
      in.op = Opcode::BarWarpSync;
      if (!word.take("sync") || !done(error))
        return error.empty() ? unsupported(error) : false;
      return shape(error, ops.size() == 1 && isValue(ops[0]));
    }
    if (word.take("red")) {
      in.op = Opcode::BarRed;
      if (word.take("popc"))
        in.boolOp = BoolOp::Popc;
      else if (word.take("and"))
        in.boolOp = BoolOp::And;
      else if (word.take("or"))
        in.boolOp = BoolOp::Or;
      else
        return unsupported(error, "reduction");
      word.take("aligned");
      if (!oneType(error, {Type::U32, Type::Pred}))
        return false;
      if ((in.boolOp == BoolOp::Popc) != (in.type == Type::U32))
        return unsupported(error);
      return shape(error, (ops.size() == 3 || ops.size() == 4) &&
                              isReg(ops[0]) && isValue(ops[1]) &&
                              isValue(ops.back()));
    }
    bool sync = word.take("sync"), arrive = word.take("arrive");
    if (sync == arrive)
      return unsupported(error);
    in.op = sync ? Opcode::BarSync : Opcode::BarArrive;
    if (word.take("aligned") || b == "bar")
      in.flags |= mod::Aligned;
    if (!done(error))
      return false;
    return shape(error, (ops.size() == 1 || ops.size() == 2) &&
                            isValue(ops[0]) && isValue(ops.back()));
  }
  if (b == "membar" || b == "fence") {
    in.op = b == "membar" ? Opcode::Membar : Opcode::Fence;
    // The proxy fences (generic and async proxies) and the fence that makes
    // mbarrier.init visible order like any fence; fence.proxy.async also
    // makes the warp's generic writes to shared memory visible to the async
    // proxy (Launch::checkAsyncProxyRead).
    if (b == "fence" && word.take("proxy")) {
      if (word.take("tensormap::generic")) {
        // fence.proxy.tensormap::generic.release.scope;
        // fence.proxy.tensormap::generic.acquire.scope [addr], 128;
        in.flags |= mod::ProxyTensormap;
        takeOrdering(word, in.flags);
        bool acquire = in.flags & mod::Acquire;
        if (acquire == bool(in.flags & mod::Release) || !done(error))
          return error.empty() ? unsupported(error, "needs .acquire or "
                                                    ".release")
                               : false;
        return shape(error, acquire ? ops.size() == 2 &&
                                          ops[0].kind == Kind::Address &&
                                          !ops[0].isParam &&
                                          ops[1].kind == Kind::Immediate &&
                                          ops[1].value == 128
                                    : ops.empty());
      }
      if (word.take("async"))
        in.flags |= mod::ProxyAsync;
      else if (!word.take("alias"))
        return unsupported(error, "proxy kind");
      (void)(word.take("global") || word.take("shared::cta") ||
             word.take("shared::cluster"));
    } else if (b == "fence") {
      word.take("mbarrier_init");
    }
    takeOrdering(word, in.flags);
    word.take("gl");
    if (b == "membar")
      in.flags |= mod::Acquire | mod::Release;
    if (!done(error))
      return false;
    return shape(error, ops.empty());
  }
  if (b == "griddepcontrol") {
    // Programmatic dependent launch: the emulated driver launches a grid
    // only after the previous one in the stream completed, so waiting for
    // the prerequisite grids and letting dependents start do nothing.
    in.op = Opcode::Fence;
    in.flags |= mod::GridDependency;
    if (!(word.take("wait") || word.take("launch_dependents")) ||
        !done(error))
      return error.empty() ? unsupported(error) : false;
    return shape(error, ops.empty());
  }
  if (b == "atom" || b == "red") {
    in.op = b == "atom" ? Opcode::Atom : Opcode::Red;
    takeOrdering(word, in.flags);
    takeSpace(word, in.space);
    if (in.space != Space::Global && in.space != Space::Shared &&
        in.space != Space::Generic)
      return unsupported(error, "state space");
    static const std::pair<const char *, AtomOp> atomOps[] = {
        {"add", AtomOp::Add}, {"min", AtomOp::Min}, {"max", AtomOp::Max},
        {"inc", AtomOp::Inc}, {"dec", AtomOp::Dec}, {"and", AtomOp::And},
        {"or", AtomOp::Or},   {"xor", AtomOp::Xor}, {"exch", AtomOp::Exch},
        {"cas", AtomOp::Cas}};
    bool found = false;
    for (auto [name, op] : atomOps)
      if (word.take(name)) {
        in.atomOp = op;
        found = true;
        break;
      }
    if (!found)
      return unsupported(error, "operation");
    // .noftz: no flush of subnormals, which the emulator never does; the
    // ISA requires it of the 16-bit floats' add.
    bool noftz = word.take("noftz");
    bool hasHint = word.take("L2::cache_hint");
    if (!oneType(error, {Type::B32, Type::B64, Type::U32, Type::U64,
                         Type::S32, Type::S64, Type::F32, Type::F16,
                         Type::F16x2, Type::BF16, Type::BF16x2}))
      return false;
    bool half = typeBytes(in.type) <= 4 && isFloat(in.type) &&
                in.type != Type::F32;
    if (half && (in.atomOp != AtomOp::Add || !noftz))
      return unsupported(error, "16-bit floats other than add.noftz");
    if (noftz && in.atomOp != AtomOp::Add)
      return unsupported(error, ".noftz other than add");
    if (hasHint) {
      if (ops.empty())
        return shape(error, false);
      ops.pop_back(); // the cache policy
    }
    size_t values = in.atomOp == AtomOp::Cas ? 2 : 1;
    size_t first = in.op == Opcode::Atom ? 1 : 0;
    if (ops.size() != first + 1 + values ||
        ops[first].kind != Kind::Address ||
        (in.op == Opcode::Atom && !isReg(ops[0])))
      return shape(error, false);
    for (size_t i = first + 1; i < ops.size(); ++i)
      if (!isValue(ops[i]))
        return shape(error, false);
    return true;
  }
  if (b == "shfl") {
    in.op = Opcode::Shfl;
    if (!word.take("sync"))
      return unsupported(error, "shfl without .sync");
    if (word.take("up"))
      in.shfl = ShflMode::Up;
    else if (word.take("down"))
      in.shfl = ShflMode::Down;
    else if (word.take("bfly"))
      in.shfl = ShflMode::Bfly;
    else if (word.take("idx"))
      in.shfl = ShflMode::Idx;
    else
      return unsupported(error, "mode");
    if (!oneType(error, {Type::B32}))
      return false;
    bool withPredicate = ops.size() == 6;
    if (ops.size() != 5 && !withPredicate)
      return shape(error, false);
    size_t first = withPredicate ? 2 : 1;
    for (size_t i = first; i < ops.size(); ++i)
      if (!isValue(ops[i]))
        return shape(error, false);
    return shape(error, isReg(ops[0]) && (!withPredicate || isRegOrSink(ops[1])));
  }
  if (b == "vote") {
    in.op = Opcode::Vote;
    if (!word.take("sync"))
      return unsupported(error, "vote without .sync");
    if (word.take("all"))
      in.boolOp = BoolOp::And;
    else if (word.take("any"))
      in.boolOp = BoolOp::Or;
    else if (word.take("ballot"))
      in.boolOp = BoolOp::Popc;
    else if (word.take("uni"))
      in.boolOp = BoolOp::Xor;
    else
      return unsupported(error, "mode");
    if (!oneType(error, {Type::Pred, Type::B32}))
      return false;
    if ((in.boolOp == BoolOp::Popc) != (in.type == Type::B32))
      return unsupported(error);
    return shape(error, ops.size() == 3 && isReg(ops[0]) && isValue(ops[1]) &&
                            isValue(ops[2]));
  }
  if (b == "mma") {
    in.op = Opcode::Mma;
    if (!word.take("sync") || !word.take("aligned"))
      return unsupported(error, "mma without .sync.aligned");
    if (word.take("m16n8k16")) {
      in.m = 16, in.n = 8, in.k = 16;
    } else if (word.take("m16n8k8")) {
      in.m = 16, in.n = 8, in.k = 8;
    } else {
      return unsupported(error, "shape");
    }
    if (!word.take("row") || !word.take("col"))
      return unsupported(error, "layout other than .row.col");
    std::vector<Type> types = word.takeTypes();
    if (!done(error))
      return false;
    // .dtype.atype.btype.ctype: f16 inputs accumulate in f16 or f32 (each
    // of D and C either), bf16 inputs in f32.
    auto accumulator = [&](Type t) {
      return t == Type::F32 || (t == Type::F16 && types[1] == Type::F16);
    };
    if (types.size() != 4 || types[1] != types[2] ||
        (types[1] != Type::F16 && types[1] != Type::BF16) ||
        !accumulator(types[0]) || !accumulator(types[3]))
      return unsupported(error, "types other than f32/f16 += f16 x f16 or "
                                "f32 += bf16 x bf16");
    in.type = types[0];
    in.typeA = types[1];
    in.typeB = types[2];
    in.typeC = types[3];
    // Four accumulators a thread: four f32 registers or two f16x2.
    auto accumulatorRegs = [](Type t) { return t == Type::F32 ? 4u : 2u; };
    size_t aRegs = in.k == 16 ? 4 : 2, bRegs = in.k == 16 ? 2 : 1;
    return shape(error, ops.size() == 4 &&
                            isRegVector(ops[0], accumulatorRegs(in.type)) &&
                            isValueVector(ops[1], aRegs) &&
                            isValueVector(ops[2], bRegs) &&
                            isValueVector(ops[3], accumulatorRegs(in.typeC)));
  }
  if (b == "ldmatrix" || b == "stmatrix") {
    // stmatrix (sm_90) is ldmatrix's inverse: the same matrices, rows
    // addressed by the same lanes, registers as sources.
    in.op = b == "ldmatrix" ? Opcode::Ldmatrix : Opcode::Stmatrix;
    if (!word.take("sync") || !word.take("aligned") || !word.take("m8n8"))
      return unsupported(error);
    if (word.take("x1"))
      in.vector = 1;
    else if (word.take("x2"))
      in.vector = 2;
    else if (word.take("x4"))
      in.vector = 4;
    else
      return unsupported(error, "count");
    if (word.take("trans"))
      in.flags |= mod::Trans;
    in.space = Space::Generic;
    takeSpace(word, in.space);
    if (in.space != Space::Shared && in.space != Space::Generic)
      return unsupported(error, "state space");
    if (!oneType(error, {Type::B16}))
      return false;
    if (ops.size() != 2)
      return shape(error, false);
    size_t registers = in.op == Opcode::Ldmatrix ? 0 : 1;
    Operand &fragments = ops[registers];
    // .x1 names its register alone or as a one-register brace list (the
    // ISA's form).
    if (in.vector == 1 && isRegVector(fragments, 1) &&
        isReg(fragments.elements[0])) {
      Operand element = fragments.elements[0];
      fragments = element;
    }
    bool valid =
        in.vector == 1 ? isReg(fragments) : isRegVector(fragments, in.vector);
    return shape(error, valid && ops[1 - registers].kind == Kind::Address);
  }
  if (b == "cp") {
    if (!word.take("async"))
      return unsupported(error);
    if (word.take("bulk")) {
      if (word.take("commit_group")) {
        in.op = Opcode::CpAsyncBulkCommit;
        return done(error) && shape(error, ops.empty());
      }
      if (word.take("wait_group")) {
        in.op = Opcode::CpAsyncBulkWait;
        if (word.take("read"))
          in.flags |= mod::Read;
        return done(error) &&
               shape(error, ops.size() == 1 && ops[0].kind == Kind::Immediate);
      }
      return decodeBulkCopy(error);
    }
    if (word.take("commit_group")) {
      in.op = Opcode::CpAsyncCommit;
      return done(error) && shape(error, ops.empty());
    }
    if (word.take("wait_group")) {
      in.op = Opcode::CpAsyncWait;
      return done(error) &&
             shape(error, ops.size() == 1 && ops[0].kind == Kind::Immediate);
    }
    if (word.take("wait_all")) {
      in.op = Opcode::CpAsyncWaitAll;
      return done(error) && shape(error, ops.empty());
    }
    in.op = Opcode::CpAsync;
    if (word.take("cg"))
      in.flags |= mod::Cg;
    else if (word.take("ca"))
      in.flags |= mod::Ca;
    else
      return unsupported(error, "cache operator");
    bool sharedDestination = word.take("shared") || word.take("shared::cta");
    if (!sharedDestination || !word.take("global"))
      return unsupported(error, "state spaces other than .shared.global");
    bool hasHint = word.take("L2::cache_hint");
    word.dropHints();
    if (!dropCacheHint(error, hasHint))
      return false;
    if (ops.size() != 3 && ops.size() != 4)
      return shape(error, false);
    if (ops[0].kind != Kind::Address || ops[1].kind != Kind::Address ||
        ops[2].kind != Kind::Immediate ||
        (ops.size() == 4 && !isValue(ops[3])))
      return shape(error, false);
    uint64_t bytes = ops[2].value;
    if (bytes != 4 && bytes != 8 && bytes != 16)
      return unsupported(error, "copy size");
    if ((in.flags & mod::Cg) && bytes != 16)
      return unsupported(error, ".cg copies 16 bytes");
    return true;
  }
  if (b == "mbarrier")
    return decodeMbarrier(error);
  if (b == "wgmma")
    return decodeWgmma(error);
  if (b == "elect") {
    in.op = Opcode::ElectSync;
    if (!word.take("sync") || !done(error))
      return error.empty() ? unsupported(error) : false;
    return shape(error, ops.size() == 3 && isRegOrSink(ops[0]) &&
                            isReg(ops[1]) && isValue(ops[2]));
  }
  if (b == "setmaxnreg") {
    in.op = Opcode::Setmaxnreg;
    if (word.take("inc"))
      in.atomOp = AtomOp::Inc;
    else if (word.take("dec"))
      in.atomOp = AtomOp::Dec;
    else
      return unsupported(error, "neither .inc nor .dec");
    if (!word.take("sync") || !word.take("aligned"))
      return unsupported(error, "without .sync.aligned");
    if (!oneType(error, {Type::U32}) ||
        !shape(error, ops.size() == 1 && ops[0].kind == Kind::Immediate))
      return false;
    uint64_t count = ops[0].value;
    if (count < 24 || count > 256 || count % 8 != 0)
      return unsupported(error, "a register count outside 24..256 or not a "
                                "multiple of 8");
    return true;
  }
  return unsupported(error);
}

bool Decoder::decodeMbarrier(std::string &error) {
  if (word.take("pending_count")) {
    // mbarrier.pending_count.b64 count, state: the pending arrival count
    // before the arrive-on operation that returned STATE. The state an
    // arrive returns here holds its phase in bits 0-31 and that count in
    // bits 32-51 (Mbarriers.cpp), so this is bfe.u64 count, state, 32, 20.
    in.op = Opcode::Bfe;
    if (!oneType(error, {Type::B64}) ||
        !shape(error, ops.size() == 2 && isReg(ops[0]) && isReg(ops[1])))
      return false;
    in.type = Type::U64;
    Operand position, length;
    position.kind = length.kind = Kind::Immediate;
    position.value = 32;
    length.value = 20;
    ops.push_back(position);
    ops.push_back(length);
    return true;
  }
  in.op = Opcode::Mbarrier;
  using M = MbarrierOp;
  // The operation is the first word after mbarrier (.expect_tx also
  // follows .arrive).
  static const std::pair<const char *, MbarrierOp> operations[] = {
      {"init", M::Init},          {"inval", M::Inval},
      {"arrive", M::Arrive},      {"arrive_drop", M::ArriveDrop},
      {"expect_tx", M::ExpectTx}, {"complete_tx", M::CompleteTx},
      {"test_wait", M::TestWait}, {"try_wait", M::TryWait}};
  auto operation = std::find_if(
      std::begin(operations), std::end(operations), [&](const auto &entry) {
        return !word.parts.empty() && word.parts[0] == entry.first;
      });
  if (operation == std::end(operations))
    return unsupported(error);
  in.mbarrier = operation->second;
  word.parts.erase(word.parts.begin());
  bool arrive = in.mbarrier == M::Arrive || in.mbarrier == M::ArriveDrop;
  bool wait = in.mbarrier == M::TestWait || in.mbarrier == M::TryWait;
  if (arrive && word.take("expect_tx"))
    in.flags |= mod::ExpectTx;
  if (arrive && word.take("noComplete"))
    in.flags |= mod::NoComplete;
  if (wait && word.take("parity"))
    in.flags |= mod::Parity;
  takeOrdering(word, in.flags);
  // A shared::cluster address of the executing CTA's own shared memory is
  // its shared::cta address (no clusters are launched).
  if (word.take("shared") || word.take("shared::cta") ||
      word.take("shared::cluster"))
    in.space = Space::Shared;
  if (!oneType(error, {Type::B64}))
    return false;
  auto address = [&](size_t i) {
    return i < ops.size() && ops[i].kind == Kind::Address;
  };
  switch (in.mbarrier) {
  case M::Init:
  case M::ExpectTx:
  case M::CompleteTx:
    return shape(error, ops.size() == 2 && address(0) && isValue(ops[1]));
  case M::Inval:
    return shape(error, ops.size() == 1 && address(0));
  case M::Arrive:
  case M::ArriveDrop: {
    // state, [addr] {, count}; .expect_tx and .noComplete take the count.
    bool counted = in.flags & (mod::ExpectTx | mod::NoComplete);
    return shape(error, (ops.size() == 3 || (!counted && ops.size() == 2)) &&
                            isRegOrSink(ops[0]) && address(1) &&
                            (ops.size() == 2 || isValue(ops[2])));
  }
  case M::TestWait:
  case M::TryWait:
    // waitComplete, [addr], state or parity {, suspendTimeHint}.
    return shape(error, (ops.size() == 3 ||
                         (in.mbarrier == M::TryWait && ops.size() == 4)) &&
                            isReg(ops[0]) && address(1) && isValue(ops[2]) &&
                            isValue(ops.back()));
  }
  return unsupported(error);
}

bool Decoder::decodeWgmma(std::string &error) {
  bool fence = word.take("fence"), commit = word.take("commit_group");
  bool wait = word.take("wait_group"), mma = word.take("mma_async");
  if (fence + commit + wait + mma != 1)
    return unsupported(error);
  if (!word.take("sync") || !word.take("aligned"))
    return unsupported(error, "without .sync.aligned");
  if (!mma) {
    in.op = fence    ? Opcode::WgmmaFence
            : commit ? Opcode::WgmmaCommit
                     : Opcode::WgmmaWait;
    return done(error) &&
           shape(error, wait ? ops.size() == 1 && ops[0].kind == Kind::Immediate
                             : ops.empty());
  }
  // wgmma.mma_async.sync.aligned.m64nNk16.{f32,f16}.{bf16,f16}.{bf16,f16}
  //     d, a-desc | {a0..a3}, b-desc, scale-d, imm-scale-a, imm-scale-b,
  //     [imm-trans-a,] imm-trans-b
  in.op = Opcode::WgmmaMma;
  in.m = 64, in.k = 16;
  for (unsigned n = 8; n <= 256; n += 8)
    if (word.take(("m64n" + std::to_string(n) + "k16").c_str()))
      in.n = static_cast<uint16_t>(n);
  if (in.n == 0)
    return unsupported(error, "shape");
  std::vector<Type> types = word.takeTypes();
  if (!done(error))
    return false;
  // f16 inputs accumulate in f32 or f16, bf16 inputs in f32.
  if (types.size() != 3 || types[1] != types[2] ||
      (types[1] != Type::F16 && types[1] != Type::BF16) ||
      !(types[0] == Type::F32 ||
        (types[0] == Type::F16 && types[1] == Type::F16)))
    return unsupported(error, "types other than f32/f16 += f16 x f16 or "
                              "f32 += bf16 x bf16");
  in.type = in.typeC = types[0];
  in.typeA = types[1];
  in.typeB = types[2];
  // N / 2 accumulators a thread: one f32 a register or two f16 (f16x2).
  unsigned dRegs = in.type == Type::F32 ? in.n / 2 : in.n / 4;
  bool registerA = ops.size() == 7 && ops[1].kind == Kind::Vector;
  if (!shape(error,
             (ops.size() == 8 || registerA) && isRegVector(ops[0], dRegs) &&
                 (registerA ? isValueVector(ops[1], 4) : isValue(ops[1])) &&
                 isValue(ops[2]) && isValue(ops[3])))
    return false;
  for (size_t i = 4; i < ops.size(); ++i) {
    uint64_t v = ops[i].value;
    bool scale = i < 6;
    if (ops[i].kind != Kind::Immediate ||
        !(scale ? v == 1 || v == ~uint64_t(0) : v <= 1))
      return unsupported(error, "imm-scale must be 1 or -1, imm-trans 0 or 1");
  }
  return true;
}

bool Decoder::decodeBulkDirection(std::string &error, const char *what) {
  // A store: .global.shared::cta.bulk_group; a load:
  // .shared::cluster.global.mbarrier::complete_tx::bytes.
  if (word.take("bulk_group"))
    in.flags |= mod::ToGlobal;
  bool store = in.flags & mod::ToGlobal;
  bool shared = word.take("shared::cluster") || word.take("shared::cta");
  bool global = word.take("global");
  if (!shared || !global ||
      (!store && !word.take("mbarrier::complete_tx::bytes")))
    return unsupported(error, std::string("only ") + what +
                                  " between global and shared memory, loads "
                                  "completing on an mbarrier");
  return dropCacheHint(error, word.take("L2::cache_hint"));
}

bool Decoder::decodeTensorCopy(std::string &error) {
  // cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}
  //     .mbarrier::complete_tx::bytes [dst], [tensorMap, {c...}], [mbar]
  //     {, cache-policy}
  // cp.async.bulk.tensor.Nd.global.shared::cta{.tile}.bulk_group
  //     [tensorMap, {c...}], [src] {, cache-policy}
  in.op = Opcode::CpAsyncBulkTensor;
  in.vector = 0; // the rank
  for (unsigned rank = 1; rank <= 5; ++rank)
    if (word.take((std::to_string(rank) + "d").c_str()))
      in.vector = static_cast<uint8_t>(rank);
  if (in.vector == 0)
    return unsupported(error, "no dimension count");
  word.take("tile");
  // A load: [dst], [tensorMap, {c...}], [mbar]; a store (bulk_group):
  // [tensorMap, {c...}], [src].
  if (!decodeBulkDirection(error, "tile-mode copies"))
    return false;
  bool store = in.flags & mod::ToGlobal;
  size_t map = store ? 0 : 1;
  auto coordinate = [](const Operand &c) {
    return c.kind == Kind::Register || c.kind == Kind::Immediate;
  };
  return shape(error, ops.size() == (store ? 2u : 3u) &&
                          ops[map].kind == Kind::Address &&
                          ops[map].elements.size() == in.vector &&
                          std::all_of(ops[map].elements.begin(),
                                      ops[map].elements.end(), coordinate) &&
                          ops[1 - map].kind == Kind::Address &&
                          (store || ops[2].kind == Kind::Address));
}

bool Decoder::decodeBulkCopy(std::string &error) {
  // cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
  //     [dst], [src], size, [mbar] {, cache-policy}
  // cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
  //     {, cache-policy}
  in.op = Opcode::CpAsyncBulk;
  if (word.take("prefetch")) {
    // cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile}{.L2::cache_hint}
    //     [tensorMap, {c...}] {, cache-policy}
    in.op = Opcode::CpAsyncBulkTensor;
    in.flags |= mod::Prefetch;
    in.vector = 0; // the rank
    for (unsigned rank = 1; rank <= 5; ++rank)
      if (word.take((std::to_string(rank) + "d").c_str()))
        in.vector = static_cast<uint8_t>(rank);
    word.take("tile");
    if (!word.take("tensor") || in.vector == 0 || !word.take("L2") ||
        !word.take("global"))
      return unsupported(error, "only tile-mode tensor prefetches to L2");
    if (!dropCacheHint(error, word.take("L2::cache_hint")))
      return false;
    auto coordinate = [](const Operand &c) {
      return c.kind == Kind::Register || c.kind == Kind::Immediate;
    };
    return shape(error, ops.size() == 1 && ops[0].kind == Kind::Address &&
                            ops[0].elements.size() == in.vector &&
                            std::all_of(ops[0].elements.begin(),
                                        ops[0].elements.end(), coordinate));
  }
  if (word.take("tensor"))
    return decodeTensorCopy(error);
  // A load: [dst], [src], size, [mbar]; a store (bulk_group): [dst],
  // [src], size.
  if (!decodeBulkDirection(error, "copies"))
    return false;
  bool store = in.flags & mod::ToGlobal;
  return shape(error, ops.size() == (store ? 3u : 4u) &&
                          ops[0].kind == Kind::Address &&
                          ops[1].kind == Kind::Address && isValue(ops[2]) &&
                          (store || ops[3].kind == Kind::Address));
}

} // namespace

bool attn::ptxemu::decodeInstruction(const std::string &opcodeWord,
                                     Instruction &instruction,
                                     std::string &error) {
  Decoder decoder(opcodeWord, instruction);
  return decoder.decode(error);
}

bool attn::ptxemu::validateKernel(const Kernel &kernel, std::string &error) {
  for (const Instruction &instruction : kernel.code)
    if (instruction.op == Opcode::Bra &&
        instruction.operands[0].value > kernel.code.size()) {
      error = "line " + std::to_string(instruction.line) +
              ": a branch past the end of " + kernel.name;
      return false;
    }
  if (kernel.code.empty() || (kernel.code.back().op != Opcode::Ret &&
                              kernel.code.back().op != Opcode::Exit &&
                              kernel.code.back().op != Opcode::Bra)) {
    error = "kernel " + kernel.name + " can run past its last instruction";
    return false;
  }
  return true;
}
