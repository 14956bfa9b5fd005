//===- Fa2CtaBody.h - FlashAttention-2's CTA body ---------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2's forward loop over a range of key/value blocks, K and V
// staged through shared memory by cp.async, P kept in registers, the rows of
// the query block split between the warps (split-Q); its two products on
// mma.sync m16n8k16 (sm_80 and later) or on warpgroup MMA (sm_90a,
// WarpgroupMma.h), chosen by KernelShape::matrixUnit. On warpgroup MMA,
// where registers allow (KernelShape::overlapSoftmax), the loop is
// FlashAttention-3's overlapped one: a block's softmax runs beside the
// previous block's P V, and K and V come by tensor copies that complete on
// an mbarrier per stage (KernelShape::tensorCopies). The body is its two
// loops; how the tiles arrive is the OperandStaging's, the products the
// ProductUnit's, each block's scores and online softmax the SoftmaxStep's,
// what the CTA writes at the end the CtaEpilogue's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H

#include "CtaEpilogue.h"
#include "CtaPrimitives.h"
#include "OperandStaging.h"
#include "ProductUnit.h"
#include "SoftmaxStep.h"

#include <optional>

namespace mlir::attn {

/// FlashAttention-2's CTA body (CtaBody.h has what each call does). Its
/// state is the SoftmaxStep's. Values are named after the algorithm. exp2
/// and log2 are NVVM's approximate intrinsics (what FlashAttention's exp2f
/// compiles to), so the PTX needs no libdevice.
class Fa2CtaBody final : public CtaBody, CtaPrimitives {
public:
  Fa2CtaBody(ImplicitLocOpBuilder &b, const KernelShape &shape, WarpRole role)
      : CtaPrimitives(b, shape), role(role) {}

  void setUp(const KernelLengths &lengths) override;
  MaskGeometry<IndexArith> geometry() override {
    return CtaPrimitives::geometry();
  }
  Value loadQueryBlock(Value q, Value qMap, Value batch, Value head,
                       Value row0) override;
  CtaState initialState() override { return softmax->initialState(); }
  CtaState runKvRange(const KeyValueOperands &kv, Value qGroup, Value batch,
                      Value head, Value kvHead, Value row0, Value rows,
                      Value blockBegin, Value blockEnd) override;
  void storeOutput(const CtaState &state, const OutputOperands &out,
                   Value batch, Value head, Value row0) override;
  void storePartial(const CtaState &state, Value partialO, Value partialLse,
                    Value slot, Value row0) override;
  CtaState mergePartials(const CtaState &state, Value partialO,
                         Value partialLse, Value first, Value last,
                         Value row0) override;
  /// The epilogue stages O through the Q tile: a barrier (of the consumer
  /// warps).
  void finishTile() override;

private:
  /// The walk's block of scores at key0, with the block mask's `status`.
  static SoftmaxStep::ScoreBlock scoreBlock(const KvWalk &w, Value key0,
                                            Value status) {
    return {w.batch, w.head, w.row0, w.rows, key0, w.kv.mask, status};
  }
  /// The loop of runKvRange with each product waited for when issued
  /// (mma.sync, and wgmma without KernelShape::overlapSoftmax): each
  /// block's copies, S, softmax, then P V.
  CtaState sequentialLoop(const KvWalk &w);
  /// The loop of KernelShape::overlapSoftmax (wgmma): block n's softmax runs
  /// while block n - 1's P V does, K a block ahead of V. Without a block
  /// mask (softmaxOverlapUnfit).
  CtaState overlappedLoop(const KvWalk &w);

  /// S = Q K^T of the warp's rows and the K tile of `tiles`.
  ProductUnit::RowProduct scoreProduct(const StageTiles &tiles);
  /// The product unit of the overlapped loop, which issues and waits for
  /// the products apart: warpgroup MMA.
  WgmmaUnit &wgmmaUnit();
  /// d + P V on wgmma (streamOperands' fenced registers), after a
  /// wgmma.fence with `fence`, issued and committed as one group: the
  /// accumulators, and P's registers, which its wgmmaWait keeps.
  struct IssuedProduct {
    SmallVector<Value> d, aRegisters;
  };
  IssuedProduct issueValueProduct(const WgmmaUnit::StreamOperands &operands,
                                  const StageTiles &tiles, bool fence);

  /// The product unit's operand of the warp's rows of the Q tile.
  Value queryRows;
  /// The warps this body is built for.
  WarpRole role;
  /// The components (set up by setUp).
  std::optional<SoftmaxStep> softmax;
  std::optional<CtaEpilogue> epilogue;
  std::unique_ptr<ProductUnit> products;
  std::unique_ptr<OperandStaging> staging;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H
