//===- BlockMaskDerivation.h - Block sparsity known at compile time -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Which (query block, key block) pairs of an attn.attention are empty or full
// whatever the inputs, from what the IR fixes at compile time:
//
// - the score region, evaluated once per block over intervals (each index
//   argument ranges over the block's rows or keys, the score over every
//   finite float): a block whose region result is -inf for every element is
//   empty. Document masks over constant sequence ids, prefix-LM masks,
//   dilated or chunked windows written as index arithmetic all prove so;
// - a constant mask operand: a block it hides entirely (false, or -inf) is
//   empty, one it keeps entirely (true, or 0) is full.
//
// The result is a block mask in the op's semantics (attn.attention), with
// the tiles as its blocks; attn-derive-block-mask attaches it, so every
// lowering skips what it proves. Causal and window masks need none: the
// lowerings bound their loops by them already (MaskGeometry).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_BLOCKMASKDERIVATION_H
#define ATTN_ANALYSIS_BLOCKMASKDERIVATION_H

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::attn {

class AttentionOp;

struct DerivedBlockMask {
  int64_t blockRows = 0;
  int64_t blockKeys = 0;
  /// [B or 1, Hq or 1, ceil(Sq / blockRows), ceil(Sk / blockKeys)]: the batch
  /// and head dimensions are 1 unless the region reads b or h, or the mask
  /// operand has them.
  std::vector<int64_t> shape;
  /// Row-major, BlockMaskValue's values.
  std::vector<int8_t> values;
  int64_t emptyBlocks = 0;
  int64_t fullBlocks = 0;
};

/// The most (batch, head, block) triples whose score region is evaluated:
/// an attention with more keeps its score region unproven.
constexpr int64_t kMaxDerivedRegionBlocks = int64_t(1) << 20;

/// The block mask of `op` with blocks of `blockRows` x `blockKeys`, when the
/// region or a constant mask operand makes some block empty or full. None
/// when the sizes are dynamic, the op already has a block mask or a frame,
/// its tiles pack GQA heads, or nothing is proven.
std::optional<DerivedBlockMask>
deriveBlockMask(AttentionOp op, int64_t blockRows, int64_t blockKeys);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_BLOCKMASKDERIVATION_H
