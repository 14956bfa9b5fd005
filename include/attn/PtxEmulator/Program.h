//===- Program.h - A PTX module, parsed and decoded for the emulator -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The PTX emulator's view of a module: every kernel's instructions decoded
// once into a compact form (an opcode, its types and modifiers, operands that
// name dense register slots), so that execution never looks at text again.
// Written from NVIDIA's PTX ISA, independent of the compiler that emits the
// PTX: nothing here includes or links the code generator.
//
// Decoding is strict: an instruction form the interpreter does not implement
// makes loading fail with the form named, never a silent skip.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PTXEMULATOR_PROGRAM_H
#define ATTN_PTXEMULATOR_PROGRAM_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn::ptxemu {

/// A PTX fundamental type (the instruction's type suffix or a register's).
enum class Type : uint8_t {
  None, Pred,
  B8, B16, B32, B64, B128,
  U8, U16, U32, U64,
  S8, S16, S32, S64,
  F16, F16x2, BF16, BF16x2, F32, F64,
};

/// Size in bytes of a value of type T (a predicate counts as 1).
unsigned typeBytes(Type t);
bool isSigned(Type t);
bool isFloat(Type t);
const char *typeName(Type t);

/// A state space of a memory instruction or a variable.
enum class Space : uint8_t { Generic, Global, Shared, Param, Local, Const };
const char *spaceName(Space s);

// clang-format off
enum class Opcode : uint16_t {
  // Data movement and conversion.
  Mov, Cvt, Cvta, CvtaTo, CvtPack, Ld, St, Prmt,
  // Integer and bit.
  Add, Sub, Mul, MulHi, MulWide, Mad, MadHi, MadWide, Div, Rem, Neg, Abs,
  Min, Max, And, Or, Xor, Not, Cnot, Shl, Shr, Popc, Clz, Brev, Bfe, Bfi,
  // Floating point (Add, Sub, Mul, Min, Max, Neg, Abs, Div shared above).
  Fma, Rcp, Sqrt, Rsqrt, Ex2, Lg2, Tanh, Sin, Cos, Copysign, Testp,
  // Comparison and selection.
  Setp, Selp,
  // Control.
  Bra, Ret, Exit,
  // Synchronisation and communication.
  BarSync, BarArrive, BarRed, BarWarpSync, Membar, Fence, Atom, Red,
  Shfl, Vote,
  // Matrix and asynchronous copies.
  Mma, Ldmatrix, Stmatrix, CpAsync, CpAsyncCommit, CpAsyncWait,
  CpAsyncWaitAll,
  // Hopper: mbarrier objects, bulk copies that complete on them, warp
  // election and register reallocation.
  Mbarrier, CpAsyncBulk, CpAsyncBulkTensor, CpAsyncBulkCommit,
  CpAsyncBulkWait, ElectSync, Setmaxnreg,
  // Warpgroup matrix multiply-accumulate and its fence and groups.
  WgmmaMma, WgmmaFence, WgmmaCommit, WgmmaWait,
};
// clang-format on

enum class SpecialRegister : uint8_t {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ,
  CtaidX, CtaidY, CtaidZ, NctaidX, NctaidY, NctaidZ,
  LaneId, WarpId, NwarpId, SmId, NsmId,
  Clock, Clock64, GlobalTimer, DynamicSmemSize, TotalSmemSize,
  LanemaskEq, LanemaskLt, LanemaskLe, LanemaskGt, LanemaskGe,
};

struct Operand {
  enum class Kind : uint8_t {
    None, Register, Immediate, Special, Vector, Address, Label, Sink,
  };
  Kind kind = Kind::None;
  /// Register: the register's slot. Address: the base register's slot, or
  /// -1 for a constant address (a variable's, or a bare number).
  int32_t reg = -1;
  SpecialRegister special = SpecialRegister::TidX;
  /// Immediate: the bits (a 0f.. literal is an f32's bits, 0d.. an f64's,
  /// an integer its two's complement). Address: the constant part (the
  /// variable's address in its space plus the offset). Label: the target
  /// instruction.
  uint64_t value = 0;
  /// Immediate: whether written as 0f... (f32 bits) or 0d... (f64 bits).
  bool isF32Literal = false, isF64Literal = false;
  /// Address: a parameter of the kernel (ld.param of [name+offset]).
  bool isParam = false;
  /// A predicate source written !%p.
  bool negated = false;
  /// Immediate or Address naming a variable: the variable's state space
  /// (Generic when no variable is named).
  Space symbolSpace = Space::Generic;
  /// Vector: the elements (registers, immediates or sinks). Address of a
  /// tensor copy ([tensorMap, {c0, c1, ...}]): the coordinates.
  std::vector<Operand> elements;
};

/// Rounding and other modifiers, as bits of Instruction::flags.
namespace mod {
constexpr uint64_t Rn = 1u << 0, Rz = 1u << 1, Rm = 1u << 2, Rp = 1u << 3,
                   Rni = 1u << 4, Rzi = 1u << 5, Rmi = 1u << 6, Rpi = 1u << 7,
                   Ftz = 1u << 8, Sat = 1u << 9, Approx = 1u << 10,
                   Full = 1u << 11, Trans = 1u << 12, Volatile = 1u << 13,
                   Acquire = 1u << 14, Release = 1u << 15, Relaxed = 1u << 16,
                   Lo = 1u << 17, Hi = 1u << 18, Wide = 1u << 19,
                   Uni = 1u << 20, Nc = 1u << 21, NaN = 1u << 22, Cg = 1u << 23,
                   Ca = 1u << 24, Aligned = 1u << 25, Relu = 1u << 26,
                   Cc = 1u << 27, Shiftw = 1u << 28, Xorsign = 1u << 29;
/// mbarrier: the phase's parity rather than a state operand; an arrive that
/// also expects transaction bytes; an arrive that must not complete the
/// phase.
constexpr uint64_t Parity = 1ull << 30, ExpectTx = 1ull << 31,
                   NoComplete = 1ull << 32;
/// A bulk or tensor copy from shared to global memory (bulk_group);
/// cp.async.bulk.wait_group's .read.
constexpr uint64_t ToGlobal = 1ull << 33, Read = 1ull << 34;
/// fence.proxy.async: orders the thread's generic-proxy accesses with the
/// async proxy's.
constexpr uint64_t ProxyAsync = 1ull << 35;
/// cvt's .satfinite: an infinite result becomes the format's largest finite
/// value of the same sign.
constexpr uint64_t Satfinite = 1ull << 36;
/// cp.async.bulk.prefetch.tensor (a CpAsyncBulkTensor that copies nothing).
constexpr uint64_t Prefetch = 1ull << 37;
/// fence.proxy.tensormap::generic (a Fence that orders only the tensormap
/// proxy, which the emulator does not have).
constexpr uint64_t ProxyTensormap = 1ull << 38;
/// griddepcontrol.wait and .launch_dependents (a Fence without effect: no
/// programmatic dependent launch).
constexpr uint64_t GridDependency = 1ull << 39;
} // namespace mod

enum class Compare : uint8_t {
  Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs,
  Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan,
};
enum class BoolOp : uint8_t { None, And, Or, Xor, Popc };
enum class AtomOp : uint8_t { Add, Min, Max, Inc, Dec, And, Or, Xor, Exch, Cas };
enum class ShflMode : uint8_t { Up, Down, Bfly, Idx };
/// What an mbarrier instruction does (its .expect_tx, .noComplete and
/// .parity variants are mod:: bits).
enum class MbarrierOp : uint8_t {
  Init,
  Inval,
  Arrive,
  ArriveDrop,
  ExpectTx,
  CompleteTx,
  TestWait,
  TryWait,
};

/// One decoded instruction.
struct Instruction {
  Opcode op = Opcode::Mov;
  Type type = Type::None;   // the (destination) type suffix
  Type type2 = Type::None;  // cvt's source type, setp's compared type, ...
  Space space = Space::Generic;
  uint8_t vector = 1;       // .v2/.v4 of ld/st; .x1/.x2/.x4 of ldmatrix
  uint64_t flags = 0;       // mod:: bits
  Compare compare = Compare::Eq;
  BoolOp boolOp = BoolOp::None;
  AtomOp atomOp = AtomOp::Add;
  ShflMode shfl = ShflMode::Bfly;
  MbarrierOp mbarrier = MbarrierOp::Init;
  /// mma.sync's shape (16, 8, 16 or 16, 8, 8), wgmma's (64, N, 16), and
  /// the operand types.
  uint16_t m = 0, n = 0, k = 0;
  Type typeA = Type::None, typeB = Type::None, typeC = Type::None;
  /// The guard predicate's slot, or -1.
  int32_t guard = -1;
  bool guardNegated = false;
  std::vector<Operand> operands;
  /// Where it came from, for messages.
  uint32_t line = 0;
  std::string text;
};

/// A kernel parameter: its byte offset in the parameter buffer and size.
struct Parameter {
  std::string name;
  uint32_t offset = 0, bytes = 0;
};

/// A module-level or kernel-level variable in shared memory.
struct SharedVariable {
  std::string name;
  uint32_t offset = 0, bytes = 0;
  bool isExtern = false;
};

struct Kernel {
  std::string name;
  std::vector<Parameter> parameters;
  uint32_t parameterBytes = 0;
  std::vector<Instruction> code;
  /// The register slots' names, for messages.
  std::vector<std::string> registerNames;
  /// Static shared memory (the kernel's own variables and the module's it
  /// uses), in bytes; dynamic shared memory starts at dynamicSharedOffset.
  uint32_t staticSharedBytes = 0;
  uint32_t dynamicSharedOffset = 0;
  std::vector<SharedVariable> sharedVariables;
  /// Performance directives (0 when absent).
  uint32_t maxntid[3] = {0, 0, 0}, reqntid[3] = {0, 0, 0};
  uint32_t minnctapersm = 0, maxnreg = 0;
  /// Each thread's .local variables, in bytes.
  uint32_t localBytes = 0;

  unsigned registerCount() const { return registerNames.size(); }
};

/// A module-level variable in global or constant memory, with its bytes.
struct GlobalVariable {
  std::string name;
  Space space = Space::Global;
  std::vector<uint8_t> bytes;
  uint32_t alignment = 1;
};

struct Module {
  std::string target;        // .target's first word, e.g. sm_90a
  unsigned ptxVersion = 0;   // .version 8.0 -> 80
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<std::unique_ptr<GlobalVariable>> globals;

  const Kernel *findKernel(std::string_view name) const;
};

/// Parses and decodes PTX. On failure returns null and sets ERROR to
/// "line N: ..." naming the construct or instruction form that is not
/// understood. Global and constant variables are placed in host memory owned
/// by the module; their addresses are what instructions see.
std::unique_ptr<Module> parseModule(std::string_view ptx, std::string &error);

} // namespace attn::ptxemu

#endif // ATTN_PTXEMULATOR_PROGRAM_H
