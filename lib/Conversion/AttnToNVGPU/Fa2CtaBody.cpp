//===- Fa2CtaBody.cpp - FlashAttention-2's CTA body -----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Which lane holds which element of the A, B and C fragments, which row each
// lane addresses in an ldmatrix, and the shared-memory swizzle are
// FragmentLayout's formulas (unit-tested against the PTX ISA); the C
// fragments of two adjacent n8 tiles of S are, element for element, the A
// fragment of a k16 slice of P, so P never leaves the registers.
//
//===----------------------------------------------------------------------===//

#include "Fa2CtaBody.h"
#include "TensorCopy.h"
#include "WarpRoles.h"
#include "WarpgroupMma.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

void Fa2CtaBody::setUp(const KernelLengths &lengths) {
  queryLen = extent(lengths.queryLen);
  keyLen = extent(lengths.keyLen);
  tiledLen = s.problem.packedHeads == 1
                 ? queryLen
                 : extent(b.createOrFold<arith::MulIOp>(
                       lengths.queryLen, index(s.problem.packedHeads)));
  setUpLanes();
  // The first row of this warp's slice of the query block.
  warpRow = mul(warp, index(s.blockM / s.warps));
  setUpSharedMemory();
  products = createProductUnit(*this, s.matrixUnit());
  if (s.tensorCopies())
    barrierAddress = add(sharedAddress, index(s.tileBytes()));
  // Layout: the Q block, then `stages` K tiles, then `stages` V tiles. The
  // warp's rows of the Q tile are A of S = Q K^T.
  Value zero = index(0);
  qTile = sharedTile(shared, zero, s.blockM, s.keyRow());
  queryRows = products->rowsOperand({qTile, zero});
  // The O block is staged in the Q tile's memory, in rows Dv wide.
  Value oTile = s.valueRow() == s.keyRow()
                    ? qTile
                    : sharedTile(shared, index(0), s.blockM, s.valueRow());
  softmax.emplace(static_cast<const CtaPrimitives &>(*this));
  epilogue.emplace(static_cast<const CtaPrimitives &>(*this), oTile, role);
}

Fa2CtaBody::StageTiles Fa2CtaBody::kvTiles(Value keyStage, Value valueStage) {
  Value kOffset = add(index(kBase()), mul(keyStage, index(kTileBytes())));
  Value vOffset = add(index(vBase()), mul(valueStage, index(vTileBytes())));
  return {{sharedTile(shared, kOffset, s.blockN, s.keyRow()), kOffset},
          {sharedTile(shared, vOffset, s.blockN, s.valueRow()), vOffset}};
}

ProductUnit::RowProduct Fa2CtaBody::scoreProduct(const StageTiles &tiles) {
  return {queryRows, tiles.k, s.problem.headDim};
}

WgmmaUnit &Fa2CtaBody::wgmmaUnit() {
  assert(s.matrixUnit() == MatrixUnit::Wgmma &&
         "the overlapped loop is warpgroup MMA's (KernelAttr::verify)");
  return static_cast<WgmmaUnit &>(*products);
}

Fa2CtaBody::IssuedProduct
Fa2CtaBody::issueValueProduct(const WgmmaUnit::StreamOperands &operands,
                              const StageTiles &tiles, bool fence) {
  return {wgmmaUnit().issueStreamProduct(operands, tiles.v.offset,
                                         s.problem.valueDim, fence),
          operands.a};
}

Value Fa2CtaBody::copyKV(const KvWalk &w, Value keyBlock, Value keyStage,
                         Value valueBlock, Value valueStage) {
  StageTiles tiles = kvTiles(keyStage, valueStage);
  SmallVector<Value> tokens =
      copyTile(w.kv.k, w.batch, w.kvHead, mul(keyBlock, index(s.blockN)),
               s.blockN, keyLen, s.problem.headDim, tiles.k.view);
  llvm::append_range(tokens,
                     copyTile(w.kv.v, w.batch, w.kvHead,
                              mul(valueBlock, index(s.blockN)), s.blockN,
                              keyLen, s.problem.valueDim, tiles.v.view));
  return commit(tokens);
}

Value Fa2CtaBody::clampedBlock(const KvWalk &w, Value block) {
  // An empty range (blockEnd = 0 wraps) copies blocks the copies guard.
  return arith::MinUIOp::create(b, block,
                                arith::SubIOp::create(b, w.blockEnd, index(1)));
}

Value Fa2CtaBody::fullBarrier(Value stage) {
  return mbarrierAt(barrierAddress, stage);
}

Value Fa2CtaBody::emptyBarrier(Value stage) {
  return mbarrierAt(barrierAddress, add(stage, index(s.stages)));
}

void Fa2CtaBody::onIssuingThread(function_ref<void()> build, Value alsoIf) {
  onThread(role == WarpRole::Producer ? s.consumerThreads() : 0, build, alsoIf);
}

std::pair<Value, Value> Fa2CtaBody::overlappedStages(Value r) {
  return {
      arith::RemUIOp::create(b, r, index(s.stages)),
      arith::RemUIOp::create(b, add(r, index(s.stages - 1)), index(s.stages))};
}

void Fa2CtaBody::issueTensorGroup(const KvWalk &w, Value g, Value blocks) {
  Value block = add(w.blockBegin, g);
  if (!s.overlapSoftmax()) {
    Value stage = arith::RemUIOp::create(b, g, index(s.stages));
    tensorCopyGroup(w, stage, Value(), block, stage, Value(), block, stage);
    return;
  }
  auto [keyStage, valueStage] = overlappedStages(g);
  tensorCopyGroup(
      w, keyStage,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, g, blocks), block,
      keyStage,
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, g, index(0)),
      arith::SubIOp::create(b, block, index(1)), valueStage);
}

void Fa2CtaBody::releaseTensorGroup(Value g) {
  if (role == WarpRole::Consumer)
    mbarrierArrive(b,
                   emptyBarrier(arith::RemUIOp::create(b, g, index(s.stages))));
}

void Fa2CtaBody::tensorCopyGroup(const KvWalk &w, Value barrierStage,
                                 Value withKey, Value keyBlock, Value keyStage,
                                 Value withValue, Value valueBlock,
                                 Value valueStage) {
  StageTiles tiles = kvTiles(keyStage, valueStage);
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
                          s.keyRow(), tiles.k.offset, on);
    });
    copyIf(withValue, [&] {
      copyTileByTensorMap(w.kv.vMap, w.batch, w.kvHead,
                          mul(valueBlock, index(s.blockN)), s.blockN, s.blockN,
                          s.valueRow(), tiles.v.offset, on);
    });
  };
  // With key lengths, a block that ends past the sequence's keys has them
  // zeroed: by the issuing thread in the sequential loop, by the consumers
  // before the last P V in the overlapped one (zeroValueTail).
  if (!s.keyLengths || s.overlapSoftmax())
    return issue(barrier);
  copyZeroingTails(
      barrier, tailBarrier(),
      {keyBlockTail(mul(keyBlock, index(s.blockN)), keyLen.length,
                    tiles.k.offset, s.keyRow(), withKey),
       keyBlockTail(mul(valueBlock, index(s.blockN)), keyLen.length,
                    tiles.v.offset, s.valueRow(), withValue)},
      issue);
}

void Fa2CtaBody::zeroValueTail(Value key0, Value offset) {
  TileTail tail = keyBlockTail(key0, keyLen.length, offset, s.valueRow());
  auto ifPartial = scf::IfOp::create(b, tail.partial, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifPartial.thenBlock());
  zeroTail(tail, tid, s.consumerThreads());
  fenceProxyAsyncShared(b);
  consumerBarrier(b, s, role);
}

void Fa2CtaBody::initStageBarriers() {
  if (role != WarpRole::Consumer)
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

void Fa2CtaBody::invalidateStageBarriers() {
  ctaBarrier(b, s);
  if (role == WarpRole::Consumer)
    return;
  onIssuingThread([&] {
    for (int64_t stage = 0; stage < s.stages; ++stage) {
      mbarrierInval(b, fullBarrier(index(stage)));
      if (role == WarpRole::Producer)
        mbarrierInval(b, emptyBarrier(index(stage)));
    }
  });
}

void Fa2CtaBody::produceRange(const KvWalk &w) {
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
            issueTensorGroup(w, g, blocks);
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

Value Fa2CtaBody::loadQueryBlock(Value q, Value qMap, Value batch, Value head,
                                 Value row0) {
  // The consumers copy Q; the producer waits for nothing.
  if (role == WarpRole::Producer)
    return Value();
  if (s.queryTensorCopy()) {
    // Thread 0 initialises Q's mbarrier, makes the init visible to the copy
    // engine, and copies the tile (block_m rows of 64-column boxes; rows
    // past the tensor read as zeros, counted in the bytes).
    onThread(0, [&] {
      Value barrier = queryBarrier();
      mbarrierInit(b, barrier, /*arrivals=*/1);
      fenceMbarrierInit(b);
      mbarrierArriveExpectTx(b, barrier,
                             arith::ConstantIntOp::create(
                                 b, b.getI32Type(), s.blockM * 2 * s.keyRow()));
      copyTileByTensorMap(qMap, batch, head, row0, s.blockM, s.blockM,
                          s.keyRow(), index(0), barrier);
    });
    return Value();
  }
  return commit(copyTile(
      q, batch, head, row0, s.blockM, tiledLen, s.problem.headDim, qTile,
      [&](Value head, Value row) { return queryRowOf(head, row); }));
}

CtaState Fa2CtaBody::runKvRange(const KeyValueOperands &kv, Value qGroup,
                                Value batch, Value head, Value kvHead,
                                Value row0, Value rows, Value blockBegin,
                                Value blockEnd) {
  KvWalk walk{kv,   qGroup, batch,      head,    kvHead,
              row0, rows,   blockBegin, blockEnd};
  if (role == WarpRole::Producer) {
    produceRange(walk);
    return initialState();
  }
  CtaState state =
      s.overlapSoftmax() ? overlappedLoop(walk) : sequentialLoop(walk);
  // No copy may still be writing shared memory when the CTA goes on (with
  // one stage, each block's copies were waited for in its step; with
  // tensor copies only Q's are cp.async, and a range without blocks has
  // not waited for them).
  if (s.queryTensorCopy())
    finishQuery();
  else if (s.stages > 1 || s.tensorCopies())
    waitGroups(qGroup, 0);
  return state;
}

void Fa2CtaBody::waitForQuery() {
  consumerBarrier(b, s, role);
  mbarrierWait(b, queryBarrier(),
               arith::ConstantIntOp::create(b, b.getI32Type(), 0));
}

void Fa2CtaBody::finishQuery() {
  waitForQuery();
  if (!s.leanCtas)
    return;
  consumerBarrier(b, s, role);
  onThread(0, [&] { mbarrierInval(b, queryBarrier()); });
}

CtaState Fa2CtaBody::sequentialLoop(const KvWalk &w) {
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  // With tensor copies, group g (K and V of block begin + g, in stage
  // g % stages) is issued by thread 0 if the block is in the range (with
  // warp roles, by the producer).
  Value blocks;
  if (s.tensorCopies())
    blocks = arith::SubIOp::create(b, w.blockEnd, w.blockBegin);
  auto issueGroup = [&](Value g) {
    onIssuingThread(
        [&] { issueTensorGroup(w, g, blocks); },
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, g, blocks));
  };
  bool consumer = role == WarpRole::Consumer;
  // Q, and the first `stages` - 1 K and V blocks (with cp.async, the last
  // block again where the range is shorter: every iteration then waits for
  // the same number of groups), are in flight.
  if (s.tensorCopies()) {
    initStageBarriers();
    if (!consumer)
      for (int64_t p = 0; p + 1 < s.stages; ++p)
        issueGroup(index(p));
    // Q (cp.async), read by wgmma through the async proxy; the loop's
    // first barrier makes it everyone's (with warp roles, which pass no
    // barrier a block, the consumers' barrier here). Q by a tensor copy
    // needs no fence.
    if (s.queryTensorCopy()) {
      waitForQuery();
    } else {
      waitGroups(w.qGroup, 0);
      fenceProxyAsyncShared(b);
      if (consumer)
        consumerBarrier(b, s, role);
    }
  } else {
    for (int64_t p = 0; p + 1 < s.stages; ++p) {
      Value block = clampedBlock(w, add(w.blockBegin, index(p)));
      copyKV(w, block, index(p), block, index(p));
    }
    waitGroups(w.qGroup, s.stages - 1);
  }
  auto loop = scf::ForOp::create(
      b, w.blockBegin, w.blockEnd, index(1), initialState().values,
      [&](OpBuilder &, Location, Value block, ValueRange state) {
        Value key0 = mul(block, index(s.blockN));
        // The tiles of the previous block have been read by every warp
        // (with warp roles, the consumers' release tells the producer).
        if (!consumer)
          gpu::BarrierOp::create(b);
        Value stage = index(0);
        Value relative = arith::SubIOp::create(b, block, w.blockBegin);
        if (s.tensorCopies()) {
          // Group n + stages - 1 goes to the stage block n - 1 used; the
          // wait for group n's phase makes its tiles everyone's.
          stage = arith::RemUIOp::create(b, relative, index(s.stages));
          if (!consumer)
            issueGroup(add(relative, index(s.stages - 1)));
          waitForTensorGroup(relative);
        } else if (s.stages > 1) {
          // Block n is in stage (n - begin) % stages (issued stages - 1
          // iterations ago); block n + stages - 1 goes to the stage block
          // n - 1 used, which every warp has read (the barrier above), and
          // block n's copies are done once at most stages - 1 groups wait.
          stage = arith::RemUIOp::create(b, relative, index(s.stages));
          // (n + stages - 1 - begin) % stages: the stage before this one.
          Value nextStage = arith::SelectOp::create(
              b,
              arith::CmpIOp::create(b, arith::CmpIPredicate::eq, stage,
                                    index(0)),
              index(s.stages - 1), arith::SubIOp::create(b, stage, index(1)));
          Value next = clampedBlock(w, add(block, index(s.stages - 1)));
          waitGroups(copyKV(w, next, nextStage, next, nextStage), s.stages - 1);
        } else {
          waitGroups(copyKV(w, block, stage, block, stage), 0);
        }
        if (!s.tensorCopies()) {
          // wgmma reads shared memory through the async proxy: each
          // thread's copies, done now, are made visible to it before the
          // barrier.
          products->copiesLanded();
          gpu::BarrierOp::create(b);
        }
        StageTiles tiles = kvTiles(stage, stage);
        // An empty block of the block mask leaves the state as it is (its
        // copies were issued all the same, to keep the pipeline's order).
        Value status =
            blockStatus(w.kv.blockMask, w.batch, w.head, w.row0, key0);
        SmallVector<Value> updated = unlessEmpty(status, state, [&] {
          SmallVector<Value> flat = softmax->blockScores(
              scoreBlock(w, key0, status),
              products->rowProducts(scoreProduct(tiles)).front());
          SoftmaxStep::Update update =
              softmax->update(flat, state.slice(mTiles * oTiles, mTiles),
                              state.slice(mTiles * oTiles + mTiles, mTiles));
          // O = alpha * O + P V; each V fragment serves every m16 tile.
          SmallVector<Value> next = softmax->rescaled(
              state.take_front(mTiles * oTiles), update.alphas);
          products->accumulate(next, update.pFrags, tiles.v,
                               s.problem.valueDim);
          next.append(update.m);
          next.append(update.l);
          return next;
        });
        // Both products are done with the block's stage.
        releaseTensorGroup(relative);
        scf::YieldOp::create(b, updated);
      });
  b.setInsertionPointAfter(loop);
  if (s.tensorCopies())
    invalidateStageBarriers();
  return {SmallVector<Value>(loop.getResults())};
}

CtaState Fa2CtaBody::overlappedLoop(const KvWalk &w) {
  // FlashAttention-3's intra-warpgroup overlap (its section 3.2): step r
  // issues S = Q K^T of block r and O += P V of block r - 1 (P computed in
  // step r - 1), and computes block r's softmax while P V runs on the
  // tensor cores; O is rescaled once P V is done. Copy group r holds K of
  // block r and V of block r - 1, so K runs one block ahead of V: key
  // stage r % stages, value stage (r - 1) % stages, and a step reads K of
  // block r and V of block r - 1 while group r + stages - 1 lands in the
  // stages that blocks r - 1 (K) and r - 2 (V) left, which every warp is
  // done with after the step's barrier (with warp roles, once every
  // consumer released step r - 1 on the stage's empty mbarrier).
  int64_t oTiles = s.problem.valueDim / 8;
  int64_t kSlices = s.blockN / 16, stages = s.stages;
  assert(s.mTiles() == 1 && "a warpgroup's warp owns one m16 tile");
  CtaState initial = initialState();
  assert(!s.hasBlockMask() && "a block mask keeps the sequential loop");
  // The step's state: O, m, l, then P of the previous block (its A
  // fragments; 0 before the first block).
  SmallVector<Value> init(initial.values);
  auto fragA = VectorType::get({4, 2}, s.element);
  init.append(kSlices, arith::ConstantOp::create(
                           b, fragA, DenseElementsAttr::get(fragA, 0.0f)));
  Value blocks = arith::SubIOp::create(b, w.blockEnd, w.blockBegin);

  bool consumer = role == WarpRole::Consumer;
  // With the ping-pong, the consumer warpgroup's index picks its turn.
  bool turns = consumer && s.pingPong();
  Value warpgroup;
  if (turns)
    warpgroup = arith::DivUIOp::create(b, warp, index(4));
  auto issueGroup = [&](Value r) {
    auto [keyStage, valueStage] = overlappedStages(r);
    Value block = add(w.blockBegin, r);
    if (s.tensorCopies()) {
      // Thread 0 issues groups 0 to `blocks` (none past the range). With
      // warp roles the consumers issue none: the producer's produceRange
      // issues them all.
      onIssuingThread(
          [&] { issueTensorGroup(w, r, blocks); },
          arith::CmpIOp::create(b, arith::CmpIPredicate::ule, r, blocks));
      return;
    }
    // Group 0's V (of block begin - 1) is a copy of a block nobody reads.
    copyKV(w, clampedBlock(w, block), keyStage,
           clampedBlock(w, arith::SubIOp::create(b, block, index(1))),
           valueStage);
  };
  // Group r has landed and, without warp roles, every warp is done with
  // step r - 1 and groups up to r + stages - 1 are in flight (`last`: no
  // group after r is needed; `first`: step 0, the first to read Q). With
  // warp roles the consumers only wait for group r.
  auto synchronise = [&](Value r, bool first, bool last) {
    if (s.tensorCopies()) {
      // Q's cp.async, read by wgmma through the async proxy (with warp
      // roles, made every consumer's by their barrier: they pass no other).
      if (first && s.queryTensorCopy()) {
        waitForQuery();
      } else if (first) {
        waitGroups(w.qGroup, 0);
        fenceProxyAsyncShared(b);
        if (consumer)
          consumerBarrier(b, s, role);
      }
      if (!consumer) {
        gpu::BarrierOp::create(b);
        if (!last || stages == 1)
          issueGroup(add(r, index(stages - 1)));
      }
      waitForTensorGroup(r);
      return;
    }
    if (stages == 1) {
      gpu::BarrierOp::create(b);
      issueGroup(r);
      waitGroups(w.qGroup, 0);
      fenceProxyAsyncShared(b);
      gpu::BarrierOp::create(b);
      return;
    }
    waitGroups(w.qGroup, stages - 2);
    fenceProxyAsyncShared(b);
    gpu::BarrierOp::create(b);
    if (!last)
      issueGroup(add(r, index(stages - 1)));
  };
  // Step r with the state of step r - 1: with `withPrevious`, O += P V of
  // block r - 1; with `withBlock`, block r's S and softmax.
  auto step = [&](Value r, ValueRange state, bool withPrevious,
                  bool withBlock) {
    synchronise(r, /*first=*/!withPrevious, /*last=*/!withBlock);
    auto [keyStage, valueStage] = overlappedStages(r);
    StageTiles tiles = kvTiles(keyStage, valueStage);
    ValueRange acc = state.take_front(oTiles);
    Value m = state[oTiles], l = state[oTiles + 1];
    ValueRange p = state.take_back(kSlices);
    // P V's register inputs are fenced before the step's one wgmma.fence
    // (S's, else P V's).
    WgmmaUnit::StreamOperands operands;
    if (withPrevious)
      operands =
          wgmmaUnit().streamOperands(elementsOf(SmallVector<Value>(acc)), p);
    // The last block's V past the sequence's keys, before P V reads it.
    if (!withBlock && s.keyLengths && s.tensorCopies())
      zeroValueTail(
          mul(add(w.blockBegin, arith::SubIOp::create(b, r, index(1))),
              index(s.blockN)),
          tiles.v.offset);
    // The step's products are issued in the warpgroup's turn.
    if (turns)
      awaitTurn(b, s, warpgroup);
    SmallVector<Value> scores;
    if (withBlock)
      scores = wgmmaUnit().issueRowProduct(scoreProduct(tiles));
    IssuedProduct product;
    if (withPrevious)
      product = issueValueProduct(operands, tiles, /*fence=*/!withBlock);
    if (turns)
      passTurn(b, s, warpgroup);
    SmallVector<Value> next(state);
    if (!withBlock) {
      // The last step: P V of the last block.
      wgmmaWait(b, 0, product.aRegisters);
      llvm::copy(fragmentsOf(product.d), next.begin());
      releaseTensorGroup(r);
      return next;
    }
    // S is done (P V may still run).
    wgmmaWait(b, withPrevious ? 1 : 0);
    Value key0 = mul(add(w.blockBegin, r), index(s.blockN));
    SoftmaxStep::Update update = softmax->update(
        softmax->blockScores(scoreBlock(w, key0, /*status=*/Value()),
                             {fragmentsOf(scores)}),
        m, l);
    // The first step's O is 0: nothing to rescale.
    next.assign(acc.begin(), acc.end());
    if (withPrevious) {
      wgmmaWait(b, 0, product.aRegisters);
      next = softmax->rescaled(fragmentsOf(product.d), update.alphas);
    }
    next.append(update.m);
    next.append(update.l);
    next.append(update.pFrags[0]);
    // Every product of the step is done with group r's stages.
    releaseTensorGroup(r);
    return next;
  };

  // A range without blocks keeps the initial state.
  Value any =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, blocks, index(0));
  SmallVector<Value> result = uniformBranch(
      any, ValueRange(initial.values).getTypes(),
      [&] {
        if (s.tensorCopies())
          initStageBarriers();
        if (!consumer)
          for (int64_t g = 0; g + 1 < stages; ++g)
            issueGroup(index(g));
        if (turns)
          openTurns(b, s, warpgroup);
        SmallVector<Value> state = step(index(0), init, false, true);
        auto loop = scf::ForOp::create(
            b, index(1), blocks, index(1), state,
            [&](OpBuilder &, Location, Value r, ValueRange carried) {
              scf::YieldOp::create(b, step(r, carried, true, true));
            });
        b.setInsertionPointAfter(loop);
        state = step(blocks, loop.getResults(), true, false);
        if (turns)
          closeTurns(b, s, warpgroup);
        state.resize(initial.values.size());
        if (s.tensorCopies())
          invalidateStageBarriers();
        return state;
      },
      [&] { return initial.values; });
  return {result};
}

void Fa2CtaBody::storeOutput(const CtaState &state, const OutputOperands &out,
                             Value batch, Value head, Value row0) {
  // The producer has no part in the epilogue.
  if (role != WarpRole::Producer)
    epilogue->storeOutput(state, out, batch, head, row0);
}

void Fa2CtaBody::storePartial(const CtaState &state, Value partialO,
                              Value partialLse, Value slot, Value row0) {
  if (role != WarpRole::Producer)
    epilogue->storePartial(state, partialO, partialLse, slot, row0);
}

CtaState Fa2CtaBody::mergePartials(const CtaState &state, Value partialO,
                                   Value partialLse, Value first, Value last,
                                   Value row0) {
  if (role == WarpRole::Producer)
    return state;
  return epilogue->mergePartials(state, partialO, partialLse, first, last,
                                 row0);
}

void Fa2CtaBody::finishTile() {
  if (role != WarpRole::Producer)
    consumerBarrier(b, s, role);
}
