//===- TensorCopyStaging.cpp - Tiles by tensor copies and mbarriers -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "OperandStaging.h"
#include "TensorCopy.h"
#include "WarpRoles.h"
#include "WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

void TensorCopyStaging::setUp() {
  barrierAddress = add(sharedAddress, index(s.tileBytes()));
  OperandStaging::setUp();
}

Value TensorCopyStaging::fullBarrier(Value stage) {
  return mbarrierAt(barrierAddress, stage);
}

Value TensorCopyStaging::emptyBarrier(Value stage) {
  return mbarrierAt(barrierAddress, add(stage, index(s.stages)));
}

void TensorCopyStaging::onIssuingThread(function_ref<void()> build,
                                        Value alsoIf) {
  onThread(role == WarpRole::Producer ? s.consumerThreads() : 0, build, alsoIf);
}

Value TensorCopyStaging::loadQuery(Value q, Value qMap, Value batch, Value head,
                                   Value row0) {
  if (!s.queryTensorCopy())
    return OperandStaging::loadQuery(q, qMap, batch, head, row0);
  // Thread 0 initialises Q's mbarrier, makes the init visible to the copy
  // engine, and copies the tile (block_m rows of 64-column boxes; rows past
  // the tensor read as zeros, counted in the bytes).
  onThread(0, [&] {
    Value barrier = queryBarrier();
    mbarrierInit(b, barrier, /*arrivals=*/1);
    fenceMbarrierInit(b);
    mbarrierArriveExpectTx(b, barrier,
                           arith::ConstantIntOp::create(
                               b, b.getI32Type(), s.blockM * 2 * s.keyRow()));
    copyTileByTensorMap(qMap, batch, head, row0, s.blockM, s.blockM, s.keyRow(),
                        index(0), barrier);
  });
  return Value();
}

void TensorCopyStaging::issueGroup(const KvWalk &w, Value g, Value blocks) {
  Value block = add(w.blockBegin, g);
  if (!s.overlapSoftmax()) {
    Value stage = arith::RemUIOp::create(b, g, index(s.stages));
    copyGroup(w, stage, Value(), block, stage, Value(), block, stage);
    return;
  }
  auto [keyStage, valueStage] = overlappedStages(g);
  copyGroup(w, keyStage,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ult, g, blocks),
            block, keyStage,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, g, index(0)),
            arith::SubIOp::create(b, block, index(1)), valueStage);
}

void TensorCopyStaging::issueInRange(const KvWalk &w, Value g) {
  // The sequential loop's groups are the range's blocks; the overlapped
  // loop has one more, V of the last block alone.
  auto inRange = s.overlapSoftmax() ? arith::CmpIPredicate::ule
                                    : arith::CmpIPredicate::ult;
  onIssuingThread([&] { issueGroup(w, g, rangeBlocks); },
                  arith::CmpIOp::create(b, inRange, g, rangeBlocks));
}

void TensorCopyStaging::release(Value g) {
  if (consumer())
    mbarrierArrive(b,
                   emptyBarrier(arith::RemUIOp::create(b, g, index(s.stages))));
}

void TensorCopyStaging::copyGroup(const KvWalk &w, Value barrierStage,
                                  Value withKey, Value keyBlock, Value keyStage,
                                  Value withValue, Value valueBlock,
                                  Value valueStage) {
  StageTiles stage = tiles(keyStage, valueStage);
  Value barrier = fullBarrier(barrierStage);
  Type i32 = b.getI32Type();
  auto bytesIf = [&](Value copied, int64_t bytes) -> Value {
    Value all = arith::ConstantIntOp::create(b, i32, bytes);
    if (!copied)
      return all;
    return arith::SelectOp::create(b, copied, all,
                                   arith::ConstantIntOp::create(b, i32, 0));
  };
  auto copyIf = [&](Value cond, function_ref<void()> copy) {
    if (!cond)
      return copy();
    auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    copy();
  };
  auto issue = [&](Value on) {
    // The phase completes when the thread has arrived and every byte of
    // the boxes (elements past the tensor included, which read as zero)
    // landed.
    mbarrierArriveExpectTx(
        b, on,
        arith::AddIOp::create(b, bytesIf(withKey, kTileBytes()),
                              bytesIf(withValue, vTileBytes())));
    copyIf(withKey, [&] {
      copyTileByTensorMap(w.kv.kMap, w.batch, w.kvHead,
                          mul(keyBlock, index(s.blockN)), s.blockN, s.blockN,
                          s.keyRow(), stage.k.offset, on);
    });
    copyIf(withValue, [&] {
      copyTileByTensorMap(w.kv.vMap, w.batch, w.kvHead,
                          mul(valueBlock, index(s.blockN)), s.blockN, s.blockN,
                          s.valueRow(), stage.v.offset, on);
    });
  };
  // With key lengths, a block that ends past the sequence's keys has them
  // zeroed: by the issuing thread in the sequential loop, by the consumers
  // before the last P V in the overlapped one (lastValueTile).
  if (!s.keyLengths || s.overlapSoftmax())
    return issue(barrier);
  copyZeroingTails(
      barrier, tailBarrier(),
      {keyBlockTail(mul(keyBlock, index(s.blockN)), keyLen.length,
                    stage.k.offset, s.keyRow(), withKey),
       keyBlockTail(mul(valueBlock, index(s.blockN)), keyLen.length,
                    stage.v.offset, s.valueRow(), withValue)},
      issue);
}

void TensorCopyStaging::lastValueTile(const KvWalk &w, Value r,
                                      const SharedTile &valueTile) {
  // With key lengths: where the last block ends past the sequence's keys,
  // the consumer threads zero its V tile's keys past them (the padding may
  // hold anything, NaN included, and P V multiplies it by 0), fence them
  // for the async proxy and meet at a consumer barrier. K's padding needs
  // no zeros: a hidden key's score is selected to -inf whatever K held.
  // The block that holds the end is a range's last (no later block sees
  // the sequence), so the loop itself has no branch for it and the
  // producer never waits for a copy.
  if (!s.keyLengths)
    return;
  Value key0 = mul(add(w.blockBegin, arith::SubIOp::create(b, r, index(1))),
                   index(s.blockN));
  TileTail tail =
      keyBlockTail(key0, keyLen.length, valueTile.offset, s.valueRow());
  auto ifPartial = scf::IfOp::create(b, tail.partial, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifPartial.thenBlock());
  zeroTail(tail, tid, s.consumerThreads());
  fenceProxyAsyncShared(b);
  consumerBarrier(b, s, role);
}

void TensorCopyStaging::initStageBarriers() {
  if (!consumer())
    onIssuingThread([&] {
      // A full stage's phase needs the issuing thread's arrival (and the
      // bytes); an empty one's every consumer thread's.
      for (int64_t stage = 0; stage < s.stages; ++stage) {
        mbarrierInit(b, fullBarrier(index(stage)), /*arrivals=*/1);
        if (role == WarpRole::Producer)
          mbarrierInit(b, emptyBarrier(index(stage)), s.consumerThreads());
      }
      fenceMbarrierInit(b);
    });
  if (role != WarpRole::All)
    ctaBarrier(b, s);
}

void TensorCopyStaging::invalidateStageBarriers() {
  ctaBarrier(b, s);
  if (consumer())
    return;
  onIssuingThread([&] {
    for (int64_t stage = 0; stage < s.stages; ++stage) {
      mbarrierInval(b, fullBarrier(index(stage)));
      if (role == WarpRole::Producer)
        mbarrierInval(b, emptyBarrier(index(stage)));
    }
  });
}

void TensorCopyStaging::produceRange(const KvWalk &w) {
  Value blocks = arith::SubIOp::create(b, w.blockEnd, w.blockBegin);
  auto produce = [&] {
    initStageBarriers();
    // The overlapped loop's last group holds V of the last block alone.
    Value groups = s.overlapSoftmax() ? add(blocks, index(1)) : blocks;
    onIssuingThread([&] {
      scf::ForOp::create(
          b, index(0), groups, index(1), ValueRange{},
          [&](OpBuilder &, Location, Value g, ValueRange) {
            // Group g takes the stages group g - stages had: the consumers'
            // release of it completed phase g / stages - 1 of the stage's
            // empty mbarrier. A fresh mbarrier counts the phase before its
            // first (parity 1) as completed: the first `stages` groups go
            // at once.
            Value parity = arith::IndexCastUIOp::create(
                b, b.getI32Type(),
                arith::RemUIOp::create(
                    b,
                    add(arith::DivUIOp::create(b, g, index(s.stages)),
                        index(1)),
                    index(2)));
            mbarrierWait(
                b, emptyBarrier(arith::RemUIOp::create(b, g, index(s.stages))),
                parity);
            issueGroup(w, g, blocks);
            scf::YieldOp::create(b);
          });
    });
    invalidateStageBarriers();
  };
  if (!s.overlapSoftmax())
    return produce();
  // The consumers' overlapped loop passes no barrier in a range without
  // blocks.
  auto any = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, blocks, index(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(any.thenBlock());
  produce();
}

void TensorCopyStaging::waitForQuery() {
  consumerBarrier(b, s, role);
  mbarrierWait(b, queryBarrier(),
               arith::ConstantIntOp::create(b, b.getI32Type(), 0));
}

void TensorCopyStaging::queryReady(const KvWalk &w) {
  if (s.queryTensorCopy())
    return waitForQuery();
  // Q (cp.async), read by wgmma through the async proxy; the loop's next
  // barrier makes it everyone's (with warp roles, which pass no barrier a
  // block, the consumers' barrier here).
  waitGroups(w.qGroup, 0);
  fenceProxyAsyncShared(b);
  if (consumer())
    consumerBarrier(b, s, role);
}

void TensorCopyStaging::startSequential(const KvWalk &w) {
  // Group g (K and V of block begin + g, in stage g % stages) is issued by
  // thread 0 if the block is in the range (with warp roles, by the
  // producer); the first `stages` - 1 go now.
  rangeBlocks = arith::SubIOp::create(b, w.blockEnd, w.blockBegin);
  initStageBarriers();
  if (!consumer())
    for (int64_t p = 0; p + 1 < s.stages; ++p)
      issueInRange(w, index(p));
  queryReady(w);
}

OperandStaging::BlockStage TensorCopyStaging::sequentialStage(const KvWalk &w,
                                                              Value block) {
  // The tiles of the previous block have been read by every warp (with
  // warp roles, the consumers' release tells the producer).
  if (!consumer())
    gpu::BarrierOp::create(b);
  Value relative = arith::SubIOp::create(b, block, w.blockBegin);
  // Group n + stages - 1 goes to the stage block n - 1 used; the wait for
  // group n's phase makes its tiles everyone's.
  Value stage = arith::RemUIOp::create(b, relative, index(s.stages));
  if (!consumer())
    issueInRange(w, add(relative, index(s.stages - 1)));
  waitForGroup(relative);
  return {stage, relative};
}

void TensorCopyStaging::startOverlapped(const KvWalk &w, Value blocks) {
  rangeBlocks = blocks;
  initStageBarriers();
  // Thread 0 issues groups 0 to `blocks` (none past the range). With warp
  // roles the consumers issue none: the producer's produceRange issues
  // them all.
  if (!consumer())
    for (int64_t g = 0; g + 1 < s.stages; ++g)
      issueInRange(w, index(g));
}

void TensorCopyStaging::overlappedStep(const KvWalk &w, Value r, bool first,
                                       bool last) {
  // Group r has landed and, without warp roles, every warp is done with
  // step r - 1 and groups up to r + stages - 1 are in flight. With warp
  // roles the consumers only wait for group r.
  if (first)
    queryReady(w);
  if (!consumer()) {
    gpu::BarrierOp::create(b);
    if (!last || s.stages == 1)
      issueInRange(w, add(r, index(s.stages - 1)));
  }
  waitForGroup(r);
}

void TensorCopyStaging::finishRange(const KvWalk &w) {
  // Only Q's copies may still be in flight (a range without blocks has not
  // waited for them). By a tensor copy: every consumer thread waits for Q,
  // so that no copy still writes the tile O's epilogue reuses; in a
  // persistent kernel, after a consumer barrier that orders every wait
  // before it, thread 0 then invalidates Q's mbarrier, which the CTA's next
  // tile initialises again (loadQuery) and waits for at phase 0.
  if (!s.queryTensorCopy())
    return waitGroups(w.qGroup, 0);
  waitForQuery();
  if (!s.leanCtas)
    return;
  consumerBarrier(b, s, role);
  onThread(0, [&] { mbarrierInval(b, queryBarrier()); });
}
