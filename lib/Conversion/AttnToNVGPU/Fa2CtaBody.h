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
// an mbarrier per stage (KernelShape::tensorCopies). Each block's scores
// and online softmax are the SoftmaxStep's, what the CTA writes at the end
// the CtaEpilogue's.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H

#include "CtaEpilogue.h"
#include "CtaPrimitives.h"
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
  /// What one runKvRange call walks.
  struct KvWalk {
    KeyValueOperands kv;
    Value qGroup, batch, head, kvHead, row0, rows, blockBegin, blockEnd;
  };
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
  /// while block n - 1's P V does, K a block ahead of V, copied by tensor
  /// copies with KernelShape::tensorCopies. Without a block mask
  /// (softmaxOverlapUnfit).
  CtaState overlappedLoop(const KvWalk &w);
  /// The producer warpgroup's share of runKvRange (WarpRole::Producer): its
  /// first thread issues each copy group of the range once the consumers
  /// have released the group's stages (the stage's empty mbarrier), between
  /// the range's barriers the consumers' loop passes too.
  void produceRange(const KvWalk &w);

  /// The K tile of stage `keyStage` and the V tile of stage `valueStage`.
  struct StageTiles {
    SharedTile k, v;
  };
  StageTiles kvTiles(Value keyStage, Value valueStage);
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
  /// The cp.async of K of `keyBlock` into `keyStage` and V of `valueBlock`
  /// into `valueStage`, as one group.
  Value copyKV(const KvWalk &w, Value keyBlock, Value keyStage,
               Value valueBlock, Value valueStage);
  /// `block`, or the range's last block past it (a copy that keeps the
  /// pipeline's count of groups).
  Value clampedBlock(const KvWalk &w, Value block);
  /// With tensor copies: the mbarrier of stage `stage` that its copies
  /// complete on ("full", after the tiles), and with warp roles the one
  /// the consumers arrive on when done reading it ("empty", after those).
  Value fullBarrier(Value stage);
  Value emptyBarrier(Value stage);
  /// The thread that issues the tensor copies: thread 0, or the producer
  /// warpgroup's first.
  void onIssuingThread(function_ref<void()> build, Value alsoIf = Value());
  /// The key and value stages of the overlapped loop's copy group (and
  /// step) r: K's r % stages, V's (r - 1) % stages.
  std::pair<Value, Value> overlappedStages(Value r);
  /// Copy group g of the range, `blocks` blocks long, on the full mbarrier
  /// of stage g % stages: in the sequential loop K and V of block
  /// begin + g; in the overlapped loop K of block begin + g (but past the
  /// last) and V of block begin + g - 1 (but before the first).
  void issueTensorGroup(const KvWalk &w, Value g, Value blocks);
  /// With warp roles: the consumer thread is done reading group g's stages.
  void releaseTensorGroup(Value g);
  /// With tensor copies: K of `keyBlock` into `keyStage`
  /// where `withKey` and V of `valueBlock` into `valueStage` where
  /// `withValue` (i1 values; null: always), as one group that completes on
  /// the mbarrier of `barrierStage`, which expects their bytes.
  void tensorCopyGroup(const KvWalk &w, Value barrierStage, Value withKey,
                       Value keyBlock, Value keyStage, Value withValue,
                       Value valueBlock, Value valueStage);
  /// With tensor copies, the mbarriers of the stages live for one key/value
  /// range: the issuing thread initialises them before the range's first
  /// copies (the next barrier orders that before every wait: with warp
  /// roles, a CTA barrier both roles pass), and after a barrier that
  /// follows the range's last wait invalidates them, so a persistent CTA's
  /// next range starts at phase 0 again.
  void initStageBarriers();
  /// With key lengths and tensor copies, in the overlapped loop's last step
  /// (after the wait for its group, before its P V): where the block of
  /// keys from `key0` ends past the sequence's keys, the consumer threads
  /// zero its V tile's keys past them (at shared `offset`; the padding may
  /// hold anything, NaN included, and P V multiplies it by 0), fence them
  /// for the async proxy and meet at a consumer barrier. K's padding needs
  /// no zeros: a hidden key's score is selected to -inf whatever K held.
  /// The block that holds the end is a range's last (no later block sees
  /// the sequence), so the loop itself has no branch for it and the
  /// producer never waits for a copy.
  void zeroValueTail(Value key0, Value offset);
  void invalidateStageBarriers();
  /// With tensor copies: every thread waits for copy group `group` of the
  /// range (waitForStage).
  void waitForTensorGroup(Value group) { waitForStage(barrierAddress, group); }
  /// With Q by a tensor copy: its mbarrier, after the stages' (thread 0
  /// initialises it and issues the copy in loadQueryBlock); every consumer
  /// thread waits for it after a consumer barrier, which orders the init
  /// before the wait (waitForQuery).
  Value queryBarrier() {
    return mbarrierAt(barrierAddress,
                      index((s.warpSpecialised() ? 2 : 1) * s.stages));
  }
  void waitForQuery();
  /// At the end of a key/value range, with Q by a tensor copy: every
  /// consumer thread waits for Q (a range without blocks has not), so that
  /// no copy still writes the tile O's epilogue reuses; in a persistent
  /// kernel, after a consumer barrier that orders every wait before it,
  /// thread 0 then invalidates Q's mbarrier, which the CTA's next tile
  /// initialises again (loadQueryBlock) and waits for at phase 0.
  void finishQuery();
  /// With key lengths and tensor copies: the issuing thread's mbarrier,
  /// after Q's, which a copy group with a block past a sequence's end lands
  /// on before the thread zeroes its keys past it (copyZeroingTails).
  Value tailBarrier() {
    return mbarrierAt(barrierAddress,
                      index((s.warpSpecialised() ? 2 : 1) * s.stages + 1));
  }
  /// Shared-memory layout: the Q block, then `stages` K tiles, then
  /// `stages` V tiles.
  int64_t kTileBytes() const { return s.blockN * 2 * s.keyRow(); }
  int64_t vTileBytes() const { return s.blockN * 2 * s.valueRow(); }
  int64_t kBase() const { return s.blockM * 2 * s.queryRow(); }
  int64_t vBase() const { return kBase() + s.stages * kTileBytes(); }

  /// The Q tile of shared memory; the product unit's operand of the warp's
  /// rows of it; with tensor copies, the address of the first stage's full
  /// mbarrier.
  Value qTile, queryRows, barrierAddress;
  /// The warps this body is built for.
  WarpRole role;
  /// The components (set up by setUp).
  std::optional<SoftmaxStep> softmax;
  std::optional<CtaEpilogue> epilogue;
  std::unique_ptr<ProductUnit> products;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H
