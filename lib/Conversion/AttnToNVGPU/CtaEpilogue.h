//===- CtaEpilogue.h - What a CTA writes after its loop ---------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The forward kernel's epilogue, one component of its CTA body: from the
// softmax step's state (SoftmaxStep.h) to O and LSE, staged through shared
// memory and stored by every lane's 16-byte stores or by tensor stores
// (KernelShape::outputTensorStore); a schedule's normalised partials into
// its workspace slots (split-KV, Lean); and their log-sum-exp merge. The
// workspace layout is the skeletons' (KernelAbi: a slot's partial O is
// [block_m, Dv] f32, its LSE [block_m] f32, rows as the output tile's), so
// partials written by one CTA are merged by another.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_CTAEPILOGUE_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_CTAEPILOGUE_H

#include "CtaPrimitives.h"

namespace mlir::attn {

/// The epilogue of the warps that compute (CtaBody.h says what each call
/// does).
class CtaEpilogue : CtaPrimitives {
public:
  /// The epilogue of the CTA whose lanes and rows `cta` set up, run by the
  /// warps of `role` (all of them, or the consumers), staging O in `oTile`
  /// (block_m rows Dv wide, in the memory of the Q tile).
  CtaEpilogue(const CtaPrimitives &cta, Value oTile, WarpRole role)
      : CtaPrimitives(cta), oTile(oTile), role(role) {}

  void storeOutput(const CtaState &state, const OutputOperands &out,
                   Value batch, Value head, Value row0);
  void storePartial(const CtaState &state, Value partialO, Value partialLse,
                    Value slot, Value row0);
  CtaState mergePartials(const CtaState &state, Value partialO,
                         Value partialLse, Value first, Value last, Value row0);

private:
  /// Per row of the lane (m tile mt, i = 0 for row g, 1 for row g + 8):
  /// the row sum, 1 / sum (0 for an empty row), and the natural LSE (-inf
  /// for an empty row).
  struct RowTotal {
    Value sum, inverse, lse;
  };
  RowTotal rowTotal(const CtaState &state, int64_t mt, int64_t i);
  /// Where a lane's elements of O tile ot sit in a [block_m, Dv] slot.
  Value fragmentCol(int64_t ot) {
    return add(index(ot * 8), layout.cCol(laneInGroup, 0));
  }

  Value oTile;
  WarpRole role;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_CTAEPILOGUE_H
