//===- AttentionOperands.h - Host data for one attention --------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The operands of one attn.attention as attn-run holds them: each input both
// as the bytes the compiled code reads and as the exact values those bytes
// stand for (what the reference computes with), each output as bytes that
// start out NaN so that an element the code never writes cannot pass.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_ATTENTIONOPERANDS_H
#define ATTN_RUN_ATTENTIONOPERANDS_H

#include "attn/Execution/CpuExecutable.h"
#include "attn/Support/Npy.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mlir::attn {

class AttentionOp;

/// How one operand's elements are stored.
enum class ElementFormat { F16, BF16, F32, I1, I8, I32 };

struct Operand {
  /// "Q", "K", "V", "mask", "block mask", "key lengths", "O" or "LSE".
  std::string name;
  ElementFormat format = ElementFormat::F32;
  HostBuffer buffer;
  /// Inputs only: the value of each element.
  std::vector<double> values;

  /// An operand of `type` (static, of a supported element type) named
  /// `name`, its elements zero.
  static llvm::Expected<Operand> ofType(std::string name,
                                        RankedTensorType type);
  /// Stores seeded standard normal values.
  void randomize(uint64_t seed);
  /// Fills the buffer with NaN (an output before a run).
  void poison();

  /// The elements of `buffer` as doubles.
  std::vector<double> decode() const;
  /// Stores `newValues` (rounded to `format`) in `buffer` and `values`.
  void assign(std::vector<double> newValues);
  /// The elements as a .npy array of `format`.
  NpyArray toNpy() const;
};

/// The operands of `op` in its operand order: Q, K, V, [mask], [block mask],
/// [key lengths], O, [LSE]. Inputs hold seeded random values (key lengths:
/// the first sequence's Sk, the second's 0 when there are three or more,
/// the others' uniform in [1, Sk]), outputs NaN.
class AttentionOperands {
public:
  /// Fails when `op` has a dynamic size.
  static llvm::Expected<AttentionOperands> create(AttentionOp op,
                                                  uint64_t seed);

  std::vector<Operand> &all() { return operands; }
  Operand &query() { return operands[0]; }
  Operand &key() { return operands[1]; }
  Operand &value() { return operands[2]; }
  /// nullptr without a mask operand.
  Operand *mask() { return hasMask ? &operands[3] : nullptr; }
  /// nullptr without a block mask.
  Operand *blockMask() {
    return hasBlockMask ? &operands[3 + hasMask] : nullptr;
  }
  /// The block mask the GPU kernel takes as its block_mask parameter:
  /// nullptr without a block mask or with a constant one (which the kernel
  /// bakes in as a table).
  Operand *blockMaskParameter() {
    return constantBlockMask ? nullptr : blockMask();
  }
  /// nullptr without key lengths.
  Operand *keyLengths() {
    return hasKeyLengths ? &operands[3 + hasMask + hasBlockMask] : nullptr;
  }
  Operand &out() {
    return operands[3 + hasMask + hasBlockMask + hasKeyLengths];
  }
  /// nullptr without an LSE output.
  Operand *lse() { return hasLse ? &operands.back() : nullptr; }

  /// Replaces the values of `operand` with those of the .npy file at `path`,
  /// whose shape and dtype must be the operand's.
  llvm::Error load(Operand &operand, llvm::StringRef path);
  /// Writes `operand` to `path` as .npy in its own element type.
  llvm::Error save(const Operand &operand, llvm::StringRef path) const;

  /// Fills the outputs with NaN.
  void poisonOutputs();

  std::vector<HostBuffer *> buffers();

private:
  std::vector<Operand> operands;
  bool hasMask = false;
  bool hasBlockMask = false, constantBlockMask = false;
  bool hasKeyLengths = false;
  bool hasLse = false;
};

} // namespace mlir::attn

#endif // ATTN_RUN_ATTENTIONOPERANDS_H
