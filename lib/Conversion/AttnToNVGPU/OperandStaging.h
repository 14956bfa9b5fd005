//===- OperandStaging.h - How a CTA's tiles reach shared memory -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The operand staging, one component of the forward CTA body: where the Q
// tile and the stages of K and V tiles sit in shared memory, how they get
// there and when a tile may be read or overwritten. CpAsyncStaging
// (CpAsyncStaging.cpp) copies them with every thread's cp.async and waits
// for commit groups; TensorCopyStaging (TensorCopyStaging.cpp) issues tensor
// copies from one thread (or the producer warpgroup) that complete on an
// mbarrier per stage, as the kernel plan's `kv` and `q` say. The body's
// loops (Fa2CtaBody: sequential, overlapped) call the hooks below at fixed
// points of each block or step and never test how the tiles arrive.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_OPERANDSTAGING_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_OPERANDSTAGING_H

#include "CtaPrimitives.h"
#include "ProductUnit.h"

#include <memory>

namespace mlir::attn {

/// What one key/value range of a CTA walks (CtaBody::runKvRange's
/// arguments): the tensors, Q's copy group, where the rows are, and the
/// blocks [blockBegin, blockEnd).
struct KvWalk {
  KeyValueOperands kv;
  Value qGroup, batch, head, kvHead, row0, rows, blockBegin, blockEnd;
};

/// The K tile of one stage and the V tile of one stage.
struct StageTiles {
  SharedTile k, v;
};

class OperandStaging : protected CtaPrimitives {
public:
  virtual ~OperandStaging() = default;

  /// The Q tile (block_m rows; the O block is staged in its memory too).
  Value queryTile() const { return qTile; }
  /// The K tile of stage `keyStage` and the V tile of stage `valueStage`.
  StageTiles tiles(Value keyStage, Value valueStage);
  /// The key and value stages of the overlapped loop's copy group (and
  /// step) r: K's r % stages, V's (r - 1) % stages.
  std::pair<Value, Value> overlappedStages(Value r);

  /// Starts loading tiled rows [row0, row0 + block_m) of tiled head `head`
  /// of Q[batch] into the Q tile (CtaBody::loadQueryBlock): by every
  /// thread's cp.async, whose group it returns.
  virtual Value loadQuery(Value q, Value qMap, Value batch, Value head,
                          Value row0);

  /// The sequential loop: before its first block; at block `block` (the
  /// range's `relative`-th), its stage once every warp may read it (every
  /// warp is done with the previous block, the block's tiles have landed),
  /// and `relative`;
  /// after a block's products (`release`); after the loop.
  virtual void startSequential(const KvWalk &w) = 0;
  struct BlockStage {
    Value stage, relative;
  };
  virtual BlockStage sequentialStage(const KvWalk &w, Value block) = 0;
  virtual void endSequential() {}

  /// The overlapped loop (copy group r: K of block begin + r and V of
  /// block begin + r - 1): before its first step, with the range's
  /// `blocks`; at step r, once group r has landed (`first`: step 0, the
  /// first to read Q; `last`: no group after r is needed); in the last
  /// step r, before P V reads the last V tile (`valueTile`); after the loop.
  virtual void startOverlapped(const KvWalk &w, Value blocks) = 0;
  virtual void overlappedStep(const KvWalk &w, Value r, bool first,
                              bool last) = 0;
  virtual void lastValueTile(const KvWalk &w, Value r,
                             const SharedTile &valueTile) {}
  virtual void endOverlapped() {}

  /// Both loops: the consumer thread is done reading copy group g's
  /// stages.
  virtual void release(Value g) {}
  /// After the range's loop: no copy is still writing shared memory.
  virtual void finishRange(const KvWalk &w) = 0;
  /// The producer warpgroup's share of a range (warp roles only).
  virtual void produceRange(const KvWalk &w) {
    llvm_unreachable("only tensor copies have a producer");
  }

protected:
  OperandStaging(const CtaPrimitives &cta, ProductUnit &products, WarpRole role)
      : CtaPrimitives(cta), products(products), role(role) {}
  /// Lays out the shared memory: the Q block, then `stages` K tiles, then
  /// `stages` V tiles (then, with tensor copies, their mbarriers).
  virtual void setUp();
  friend std::unique_ptr<OperandStaging>
  createOperandStaging(const CtaPrimitives &, ProductUnit &, WarpRole, bool);

  int64_t kTileBytes() const { return s.blockN * 2 * s.keyRow(); }
  int64_t vTileBytes() const { return s.blockN * 2 * s.valueRow(); }
  int64_t kBase() const { return s.blockM * 2 * s.queryRow(); }
  int64_t vBase() const { return kBase() + s.stages * kTileBytes(); }

  ProductUnit &products;
  WarpRole role;
  Value qTile;
};

/// Every thread's cp.async, `stages` - 1 blocks ahead (every warp
/// computes).
class CpAsyncStaging final : public OperandStaging {
public:
  CpAsyncStaging(const CtaPrimitives &cta, ProductUnit &products, WarpRole role)
      : OperandStaging(cta, products, role) {}
  void startSequential(const KvWalk &w) override;
  BlockStage sequentialStage(const KvWalk &w, Value block) override;
  void startOverlapped(const KvWalk &w, Value blocks) override;
  void overlappedStep(const KvWalk &w, Value r, bool first, bool last) override;
  void finishRange(const KvWalk &w) override;

private:
  /// The cp.async of K of `keyBlock` into `keyStage` and V of `valueBlock`
  /// into `valueStage`, as one group.
  Value copyKV(const KvWalk &w, Value keyBlock, Value keyStage,
               Value valueBlock, Value valueStage);
  /// `block`, or the range's last block past it (a copy that keeps the
  /// pipeline's count of groups).
  Value clampedBlock(const KvWalk &w, Value block);
  /// The overlapped loop's copy group r.
  void copyOverlappedGroup(const KvWalk &w, Value r);
};

/// Tensor copies (sm_90a) issued by one thread, or with warp roles by the
/// producer warpgroup's first, each stage guarded by a "full" mbarrier
/// (and with warp roles an "empty" one the consumers release it on).
class TensorCopyStaging final : public OperandStaging {
public:
  TensorCopyStaging(const CtaPrimitives &cta, ProductUnit &products,
                    WarpRole role)
      : OperandStaging(cta, products, role) {}
  Value loadQuery(Value q, Value qMap, Value batch, Value head,
                  Value row0) override;
  void startSequential(const KvWalk &w) override;
  BlockStage sequentialStage(const KvWalk &w, Value block) override;
  void endSequential() override { invalidateStageBarriers(); }
  void startOverlapped(const KvWalk &w, Value blocks) override;
  void overlappedStep(const KvWalk &w, Value r, bool first, bool last) override;
  void lastValueTile(const KvWalk &w, Value r,
                     const SharedTile &valueTile) override;
  void endOverlapped() override { invalidateStageBarriers(); }
  void release(Value g) override;
  void finishRange(const KvWalk &w) override;
  void produceRange(const KvWalk &w) override;

private:
  void setUp() override;

  bool consumer() const { return role == WarpRole::Consumer; }
  /// The mbarrier of stage `stage` that its copies complete on ("full",
  /// after the tiles), and with warp roles the one the consumers arrive on
  /// when done reading it ("empty", after those).
  Value fullBarrier(Value stage);
  Value emptyBarrier(Value stage);
  /// The thread that issues the tensor copies: thread 0, or the producer
  /// warpgroup's first.
  void onIssuingThread(function_ref<void()> build, Value alsoIf = Value());
  /// Copy group g of the range, `blocks` blocks long, on the full mbarrier
  /// of stage g % stages: in the sequential loop K and V of block
  /// begin + g; in the overlapped loop K of block begin + g (but past the
  /// last) and V of block begin + g - 1 (but before the first).
  void issueGroup(const KvWalk &w, Value g, Value blocks);
  /// issueGroup of the current range's group g by the issuing thread, if
  /// the range has that group.
  void issueInRange(const KvWalk &w, Value g);
  /// K of `keyBlock` into `keyStage` where `withKey` and V of `valueBlock`
  /// into `valueStage` where `withValue` (i1 values; null: always), as one
  /// group that completes on the mbarrier of `barrierStage`, which expects
  /// their bytes.
  void copyGroup(const KvWalk &w, Value barrierStage, Value withKey,
                 Value keyBlock, Value keyStage, Value withValue,
                 Value valueBlock, Value valueStage);
  /// The mbarriers of the stages live for one key/value range: the issuing
  /// thread initialises them before the range's first copies (the next
  /// barrier orders that before every wait: with warp roles, a CTA barrier
  /// both roles pass), and after a barrier that follows the range's last
  /// wait invalidates them, so a persistent CTA's next range starts at
  /// phase 0 again.
  void initStageBarriers();
  void invalidateStageBarriers();
  /// Every thread waits for copy group `group` of the range.
  void waitForGroup(Value group) { waitForStage(barrierAddress, group); }
  /// Before the first product reads Q: Q's tensor copy waited for, or Q's
  /// cp.async, made visible to wgmma's async proxy.
  void queryReady(const KvWalk &w);
  /// With Q by a tensor copy: its mbarrier, after the stages' (thread 0
  /// initialises it and issues the copy in loadQuery); every consumer
  /// thread waits for it after a consumer barrier, which orders the init
  /// before the wait (waitForQuery).
  Value queryBarrier() {
    return mbarrierAt(barrierAddress,
                      index((s.warpSpecialised() ? 2 : 1) * s.stages));
  }
  void waitForQuery();
  /// With key lengths: the issuing thread's mbarrier, after Q's, which a
  /// copy group with a block past a sequence's end lands on before the
  /// thread zeroes its keys past it (copyZeroingTails).
  Value tailBarrier() {
    return mbarrierAt(barrierAddress,
                      index((s.warpSpecialised() ? 2 : 1) * s.stages + 1));
  }

  /// The address of the first stage's full mbarrier.
  Value barrierAddress;
  /// The current range's blocks.
  Value rangeBlocks;
};

/// The staging of the kernel's plan (`tensorCopies`: KernelShape's) for
/// the warps of `role` of the CTA that `cta` set up, feeding `products`,
/// its shared memory laid out.
std::unique_ptr<OperandStaging> createOperandStaging(const CtaPrimitives &cta,
                                                     ProductUnit &products,
                                                     WarpRole role,
                                                     bool tensorCopies);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_OPERANDSTAGING_H
