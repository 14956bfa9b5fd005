//===- Decode.h - PTX opcode words to decoded instructions ------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_PTXEMULATOR_DECODE_H
#define ATTN_LIB_PTXEMULATOR_DECODE_H

#include "attn/PtxEmulator/Program.h"

namespace attn::ptxemu {

/// Fills INSTRUCTION's opcode, types and modifiers from OPCODEWORD
/// ("ld.global.v4.f32") and checks its operands (already parsed) against the
/// form. False with ERROR naming the form when the emulator does not
/// implement it.
bool decodeInstruction(const std::string &opcodeWord, Instruction &instruction,
                       std::string &error);

/// Checks what needs the whole kernel (branch targets in range).
bool validateKernel(const Kernel &kernel, std::string &error);

} // namespace attn::ptxemu

#endif // ATTN_LIB_PTXEMULATOR_DECODE_H
