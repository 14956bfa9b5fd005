//===- SoftmaxStep.h - The online softmax of a block of keys ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The forward kernel's softmax step, one component of its CTA body: from a
// block's products S = Q K^T to the scores in base 2 (the scale, the
// softcap, the score region, the mask operand and MaskGeometry's element
// masks, each where the block needs it), then FlashAttention-2's online
// softmax (the new row maxima and sums, the rescale of O, P in registers).
// It owns the running state's layout; the loops (Fa2CtaBody) decide when a
// block is computed, the product unit computes S and P V, the epilogue
// (CtaEpilogue) reads the state at the end.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_SOFTMAXSTEP_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_SOFTMAXSTEP_H

#include "CtaPrimitives.h"

namespace mlir::attn {

/// The state it keeps (CtaState::values): the O accumulators [mTiles][Dv /
/// 8] (C fragments), then m (base 2) and l per m tile, each a pair for the
/// lane's rows g and g + 8. exp2 is NVVM's approximate intrinsic (what
/// FlashAttention's exp2f compiles to).
class SoftmaxStep : CtaPrimitives {
public:
  /// The step of the CTA whose lanes and rows `cta` set up.
  explicit SoftmaxStep(const CtaPrimitives &cta) : CtaPrimitives(cta) {}

  /// The state before any key: O = 0, m = -inf, l = 0.
  CtaState initialState();

  /// Where a block of scores lies: the tiled rows [row0, row0 + rows) of
  /// tiled head `head` of `batch`, and the keys from `key0`; the mask
  /// operand (null: none) and the block's status in the block mask (null:
  /// no block mask).
  struct ScoreBlock {
    Value batch, head, row0, rows, key0, mask, status;
  };
  /// The scaled scores in base 2 of `block` from its products `scores`
  /// ([mTiles][block_n / 8] C fragments), [mt][nt][i][j] flattened: the
  /// score modification, the mask operand (not in a full block of the
  /// block mask), and MaskGeometry's element masks where the block
  /// straddles a boundary (each a uniform branch).
  SmallVector<Value> blockScores(const ScoreBlock &block,
                                 ArrayRef<SmallVector<Value>> scores);

  /// The online softmax of a block's scores from the state's m and l (per
  /// m tile): the new m and l, the rescale alpha per row of the lane
  /// ([mTiles][2]), and P's A fragments ([mTiles][block_n / 16]), S's C
  /// fragments of two adjacent n8 tiles being, element for element, the A
  /// fragment of a k16 slice of P.
  struct Update {
    SmallVector<SmallVector<Value>> pFrags, alphas;
    SmallVector<Value> m, l;
  };
  Update update(ArrayRef<Value> scores, ValueRange m, ValueRange l);

  /// The O fragments `acc` ([mTiles][Dv / 8]) times each row's alpha.
  SmallVector<Value> rescaled(ValueRange acc,
                              ArrayRef<SmallVector<Value>> alphas);

private:
  /// The score `x` (natural units) after the softcap and the score region,
  /// at query `row` and `key` of query head `head` in batch `batch`.
  Value modifyScore(Value x, Value batch, Value head, Value row, Value key);
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_SOFTMAXSTEP_H
