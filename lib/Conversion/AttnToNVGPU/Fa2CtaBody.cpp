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
  // The warpgroup's 64 rows of the Q tile are A of S = Q K^T.
  if (s.matrixUnit() == MatrixUnit::Wgmma) {
    Value warpgroupRows =
        mul(arith::DivUIOp::create(b, warp, index(4)), index(64));
    queryDescriptor =
        rowsDescriptor(mul(warpgroupRows, index(kSwizzleRowBytes)));
    if (s.tensorCopies())
      barrierAddress = add(sharedAddress, index(s.tileBytes()));
  }
  // Layout: the Q block, then `stages` K tiles, then `stages` V tiles.
  qTile = sharedTile(shared, index(0), s.blockM, s.keyRow());
  oTile = s.valueRow() == s.keyRow()
              ? qTile
              : sharedTile(shared, index(0), s.blockM, s.valueRow());
}

Fa2CtaBody::StageTiles Fa2CtaBody::kvTiles(Value keyStage, Value valueStage) {
  Value kOffset = add(index(kBase()), mul(keyStage, index(kTileBytes())));
  Value vOffset = add(index(vBase()), mul(valueStage, index(vTileBytes())));
  return {sharedTile(shared, kOffset, s.blockN, s.keyRow()),
          sharedTile(shared, vOffset, s.blockN, s.valueRow()), kOffset,
          vOffset};
}

SmallVector<Value> Fa2CtaBody::issueScoreProduct(const StageTiles &tiles) {
  return issueRowProduct(queryDescriptor, tiles.kOffset, s.problem.headDim);
}

Fa2CtaBody::IssuedProduct
Fa2CtaBody::issueValueProduct(const StreamOperands &operands,
                              const StageTiles &tiles, bool fence) {
  return {issueStreamProduct(operands.d, operands.a, tiles.vOffset,
                             s.problem.valueDim, fence),
          operands.a};
}

SmallVector<SmallVector<Value>>
Fa2CtaBody::scoreProducts(const StageTiles &tiles) {
  if (s.matrixUnit() == MatrixUnit::Wgmma) {
    SmallVector<Value> d = issueScoreProduct(tiles);
    wgmmaWait(b, 0);
    return {fragmentsOf(d)};
  }
  // S = Q K^T for all of the warp's m16 tiles at once.
  return rowProducts(qTile, warpRow, tiles.k, s.problem.headDim);
}

Value Fa2CtaBody::copyKV(const KvWalk &w, Value keyBlock, Value keyStage,
                         Value valueBlock, Value valueStage) {
  StageTiles tiles = kvTiles(keyStage, valueStage);
  SmallVector<Value> tokens =
      copyTile(w.kv.k, w.batch, w.kvHead, mul(keyBlock, index(s.blockN)),
               s.blockN, keyLen, s.problem.headDim, tiles.k);
  llvm::append_range(tokens,
                     copyTile(w.kv.v, w.batch, w.kvHead,
                              mul(valueBlock, index(s.blockN)), s.blockN,
                              keyLen, s.problem.valueDim, tiles.v));
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
                          s.keyRow(), tiles.kOffset, on);
    });
    copyIf(withValue, [&] {
      copyTileByTensorMap(w.kv.vMap, w.batch, w.kvHead,
                          mul(valueBlock, index(s.blockN)), s.blockN, s.blockN,
                          s.valueRow(), tiles.vOffset, on);
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
                    tiles.kOffset, s.keyRow(), withKey),
       keyBlockTail(mul(valueBlock, index(s.blockN)), keyLen.length,
                    tiles.vOffset, s.valueRow(), withValue)},
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

CtaState Fa2CtaBody::initialState() {
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  Value zeroC = zeroFragment();
  Value minusInfPair = arith::ConstantOp::create(
      b, pair,
      DenseElementsAttr::get(cast<ShapedType>(pair),
                             -std::numeric_limits<float>::infinity()));
  Value zeroPair = arith::ConstantOp::create(
      b, pair, DenseElementsAttr::get(cast<ShapedType>(pair), 0.0f));
  // O fragments [mTiles][oTiles], then m and l per m tile (one f32 for row g
  // and one for row g + 8 of the tile).
  SmallVector<Value> state(mTiles * oTiles, zeroC);
  state.append(mTiles, minusInfPair);
  state.append(mTiles, zeroPair);
  return {state};
}

Value Fa2CtaBody::modifyScore(Value x, Value batch, Value head, Value row,
                              Value key) {
  if (s.softcap)
    x = mulF(f32Const(*s.softcap), tanh(mulF(x, f32Const(1.0 / *s.softcap))));
  if (!s.scoreRegion)
    return x;
  Block &region = s.scoreRegion->front();
  IRMapping mapping;
  mapping.map(region.getArguments(), ValueRange{x, batch, head, row, key});
  for (Operation &op : region.without_terminator())
    inlineScoreOp(op, mapping);
  return scoreValue(cast<attn::YieldOp>(region.getTerminator()).getValue(),
                    mapping);
}

SmallVector<Value> Fa2CtaBody::blockScores(const KvWalk &w,
                                           ArrayRef<SmallVector<Value>> scores,
                                           Value key0, Value status) {
  MaskGeometry<IndexArith> geometry = this->geometry();
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8;
  Value minusInf = f32Const(-std::numeric_limits<float>::infinity());
  Value mask = w.kv.mask;
  // With `masked`, keys a row cannot see are -inf; with `maskOperand`, the
  // mask operand applies. A modified score, and one the mask operand adds
  // to, is formed in natural units (scale, softcap, score region, the
  // additive mask) and then taken to base 2.
  bool additiveMask = mask && !s.maskElement.isInteger(1);
  bool natural = s.modifiesScores() || additiveMask;
  Value scale = f32Const(natural ? s.scale : s.scaleLog2);
  auto scaledScores = [&](bool masked, bool maskOperand) {
    SmallVector<Value> values;
    for (int64_t mt = 0; mt < mTiles; ++mt) {
      Value tileRow = add(w.row0, add(warpRow, index(mt * 16)));
      // C rows g and g + 8 (layout.cRow(lane, 1) = cRow(lane, 0) + 8), and
      // the query head and row the score region sees for each.
      Value rowG = add(tileRow, layout.cRow(groupId, 0));
      SmallVector<Value> rowOf = {rowG, add(rowG, index(8))};
      SmallVector<std::pair<Value, Value>> queryOf;
      if (s.scoreRegion)
        for (Value row : rowOf)
          queryOf.push_back(queryRowOf(w.head, row));
      // The mask operand's rows are one head's (no GQA packing).
      assert((!maskOperand || s.problem.packedHeads == 1) &&
             "a mask operand's rows are not packed");
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            Value x = mulF(vector::ExtractOp::create(b, scores[mt][nt],
                                                     ArrayRef<int64_t>{i, j}),
                           scale);
            Value key =
                add(add(key0, index(nt * 8 + j)), layout.cCol(laneInGroup, 0));
            if (s.modifiesScores()) {
              auto [queryHead, queryRow] =
                  s.scoreRegion ? queryOf[i] : std::make_pair(w.head, rowOf[i]);
              x = modifyScore(x, w.batch, queryHead, queryRow, key);
            }
            if (maskOperand) {
              Value element =
                  maskOperandElement(mask, w.batch, w.head, rowOf[i], key,
                                     /*clampKey=*/masked);
              x = applyMaskElement(x, element);
            }
            if (natural)
              x = mulF(x, f32Const(M_LOG2E));
            if (masked) {
              Value hidden = geometry.isHidden(rowOf[i], key);
              x = arith::SelectOp::create(b, hidden, minusInf, x);
            }
            values.push_back(x);
          }
    }
    return values;
  };
  SmallVector<Type> types(mTiles * nTiles * 4, f32);
  auto withMask = [&](bool maskOperand) {
    if (!s.needsElementMask())
      return scaledScores(/*masked=*/false, maskOperand);
    // Only blocks that straddle a mask boundary pay for the mask: the block
    // is whole for every row when its last key is visible from the first
    // row, its first key from the last row, and it ends within Sk.
    Value straddles = geometry.needsElementMask(w.row0, w.rows, key0,
                                                add(key0, index(s.blockN)));
    return uniformBranch(
        straddles, types, [&] { return scaledScores(true, maskOperand); },
        [&] { return scaledScores(false, maskOperand); });
  };
  // A full block of the block mask does not read the mask operand.
  if (mask && status)
    return uniformBranch(
        isStatus(status, BlockMaskValue::kFull), types,
        [&] { return withMask(false); }, [&] { return withMask(true); });
  return withMask(static_cast<bool>(mask));
}

Fa2CtaBody::SoftmaxUpdate
Fa2CtaBody::softmaxUpdate(ArrayRef<Value> scores, ValueRange m, ValueRange l) {
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8;
  Value minusInf = f32Const(-std::numeric_limits<float>::infinity());
  Value zeroF = f32Const(0.0);
  SoftmaxUpdate update;
  update.pFrags.resize(mTiles);
  update.alphas.resize(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    SmallVector<SmallVector<Value>> elems(nTiles);
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t e = 0; e < 4; ++e)
        elems[nt].push_back(scores[(mt * nTiles + nt) * 4 + e]);
    // Online softmax, per row (i = 0: row g, i = 1: row g + 8).
    Value mNew = m[mt], lNew = l[mt];
    for (int64_t i = 0; i < 2; ++i) {
      Value rowMax = minusInf;
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t j = 0; j < 2; ++j)
          rowMax = maxF(rowMax, elems[nt][2 * i + j]);
      rowMax = quadReduce(rowMax, /*isMax=*/true);
      Value old = vector::ExtractOp::create(b, m[mt], i);
      Value updated = maxF(old, rowMax);
      Value isEmpty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ,
                                            updated, minusInf);
      Value safe = arith::SelectOp::create(b, isEmpty, zeroF, updated);
      update.alphas[mt].push_back(exp2(subF(old, safe)));
      Value rowSum = zeroF;
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t j = 0; j < 2; ++j) {
          Value &x = elems[nt][2 * i + j];
          x = exp2(subF(x, safe));
          rowSum = addF(rowSum, x);
        }
      // l stays a per-lane partial sum; the quad adds it up at the end.
      Value lRow = addF(
          mulF(update.alphas[mt][i], vector::ExtractOp::create(b, l[mt], i)),
          rowSum);
      mNew = vector::InsertOp::create(b, updated, mNew, i);
      lNew = vector::InsertOp::create(b, lRow, lNew, i);
    }
    update.m.push_back(mNew);
    update.l.push_back(lNew);

    // P's A fragments: S's C fragments of n tiles 2 kk and 2 kk + 1,
    // rounded to the input type.
    auto fragA = VectorType::get({4, 2}, s.element);
    for (int64_t kk = 0; kk < nTiles / 2; ++kk) {
      SmallVector<Value> halves;
      for (int64_t nt : {2 * kk, 2 * kk + 1})
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            halves.push_back(
                arith::TruncFOp::create(b, s.element, elems[nt][2 * i + j]));
      update.pFrags[mt].push_back(
          vector::FromElementsOp::create(b, fragA, halves));
    }
  }
  return update;
}

SmallVector<Value> Fa2CtaBody::rescaled(ValueRange acc,
                                        ArrayRef<SmallVector<Value>> alphas) {
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  SmallVector<Value> next;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t ot = 0; ot < oTiles; ++ot) {
      Value fragment = acc[mt * oTiles + ot];
      for (int64_t i = 0; i < 2; ++i) {
        Value rowPair = vector::ExtractOp::create(b, fragment, i);
        Value scaled =
            mulF(rowPair, vector::BroadcastOp::create(b, pair, alphas[mt][i]));
        fragment = vector::InsertOp::create(b, scaled, fragment, i);
      }
      next.push_back(fragment);
    }
  return next;
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
          if (s.matrixUnit() == MatrixUnit::Wgmma)
            fenceProxyAsyncShared(b);
          gpu::BarrierOp::create(b);
        }
        StageTiles tiles = kvTiles(stage, stage);
        // An empty block of the block mask leaves the state as it is (its
        // copies were issued all the same, to keep the pipeline's order).
        Value status =
            blockStatus(w.kv.blockMask, w.batch, w.head, w.row0, key0);
        SmallVector<Value> updated = unlessEmpty(status, state, [&] {
          SmallVector<Value> flat =
              blockScores(w, scoreProducts(tiles), key0, status);
          SoftmaxUpdate update =
              softmaxUpdate(flat, state.slice(mTiles * oTiles, mTiles),
                            state.slice(mTiles * oTiles + mTiles, mTiles));
          // O = alpha * O + P V; each V fragment serves every m16 tile.
          SmallVector<Value> next =
              rescaled(state.take_front(mTiles * oTiles), update.alphas);
          accumulateStreamed(next, update.pFrags, tiles.v, tiles.vOffset,
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
    StreamOperands operands;
    if (withPrevious)
      operands = streamOperands(elementsOf(SmallVector<Value>(acc)), p);
    // The last block's V past the sequence's keys, before P V reads it.
    if (!withBlock && s.keyLengths && s.tensorCopies())
      zeroValueTail(
          mul(add(w.blockBegin, arith::SubIOp::create(b, r, index(1))),
              index(s.blockN)),
          tiles.vOffset);
    // The step's products are issued in the warpgroup's turn.
    if (turns)
      awaitTurn(b, s, warpgroup);
    SmallVector<Value> scores;
    if (withBlock)
      scores = issueScoreProduct(tiles);
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
    SoftmaxUpdate update = softmaxUpdate(
        blockScores(w, {fragmentsOf(scores)}, key0, /*status=*/Value()), m, l);
    // The first step's O is 0: nothing to rescale.
    next.assign(acc.begin(), acc.end());
    if (withPrevious) {
      wgmmaWait(b, 0, product.aRegisters);
      next = rescaled(fragmentsOf(product.d), update.alphas);
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

Value Fa2CtaBody::fragmentRow(int64_t mt, int64_t i) {
  return add(add(warpRow, index(mt * 16)),
             add(layout.cRow(groupId, 0), index(8 * i)));
}

Fa2CtaBody::RowTotal Fa2CtaBody::rowTotal(const CtaState &state, int64_t mt,
                                          int64_t i) {
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  Value zeroF = f32Const(0.0);
  Value sum = vector::ExtractOp::create(
      b, state.values[mTiles * oTiles + mTiles + mt], i);
  if (!state.wholeRowSums)
    sum = quadReduce(sum, /*isMax=*/false);
  Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, sum, zeroF);
  Value inverse = arith::SelectOp::create(
      b, empty, zeroF, arith::DivFOp::create(b, f32Const(1.0), sum));
  Value m = vector::ExtractOp::create(b, state.values[mTiles * oTiles + mt], i);
  Value lse = mulF(addF(m, log2(sum)), f32Const(M_LN2));
  lse = arith::SelectOp::create(
      b, empty, f32Const(-std::numeric_limits<float>::infinity()), lse);
  return {sum, inverse, lse};
}

void Fa2CtaBody::storeOutput(const CtaState &state, const OutputOperands &out,
                             Value batch, Value head, Value row0) {
  // O = acc / l once; LSE = (m + log2 l) ln 2; l = 0 gives 0 and -inf.
  const AttentionProblem &p = s.problem;
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = p.valueDim / 8;
  // O goes through the warp's own rows of the Q tile (which only this warp
  // reads), so that global memory gets whole 16-byte chunks. Those rows
  // were copied there by other warps' cp.async (the copy's rows are not
  // the warps' rows), and a KV loop without iterations (a query block that
  // sees no key) passes no barrier after them: every copy of Q must have
  // landed, and with rows of a different width (Dv != D padded) every warp
  // be done reading Q, before any warp writes. The producer has no part.
  if (role == WarpRole::Producer)
    return;
  consumerBarrier(b, s, role);
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    for (int64_t i = 0; i < 2; ++i) {
      Value rowInTile = fragmentRow(mt, i);
      Value row = add(row0, rowInTile);
      RowTotal total = rowTotal(state, mt, i);
      Value inverses = vector::BroadcastOp::create(b, pair, total.inverse);
      for (int64_t ot = 0; ot < oTiles; ++ot) {
        Value rowPair =
            vector::ExtractOp::create(b, state.values[mt * oTiles + ot], i);
        Value out = arith::TruncFOp::create(b, VectorType::get({2}, s.element),
                                            mulF(rowPair, inverses));
        auto [tileRow, tileCol] = tileIndex(rowInTile, index(ot * 8), s.blockM);
        vector::StoreOp::create(
            b, out, oTile,
            ValueRange{tileRow, add(tileCol, layout.cCol(laneInGroup, 0))});
      }
      if (out.lse) {
        Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                            laneInGroup, index(0));
        auto store = scf::IfOp::create(
            b, arith::AndIOp::create(b, isQueryRow(row0, rowInTile), first),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(store.thenBlock());
        auto [queryHead, queryRow] = queryRowOf(head, row);
        memref::StoreOp::create(b, total.lse, out.lse,
                                ValueRange{batch, queryHead, queryRow});
      }
    }
  }
  if (s.outputTensorStore()) {
    // FlashAttention-3's epilogue: the lanes' writes made visible to the
    // async proxy, then thread 0 stores the tile's 64-column blocks by
    // tensor stores (rows past Sq and columns past Dv lie outside O's map:
    // not written) and waits until they have read the tile, which the
    // next tile's Q may overwrite.
    fenceProxyAsyncShared(b);
    consumerBarrier(b, s, role);
    onThread(0, [&] {
      for (int64_t block = 0;
           block < llvm::divideCeil(p.valueDim, kBlockColumns); ++block)
        tensorStore(
            b, out.oMap,
            sharedPointer(b, add(sharedAddress,
                                 index(block * s.blockM * kSwizzleRowBytes))),
            ValueRange{index(block * kBlockColumns), row0, head, batch});
      bulkCommitGroup(b);
      bulkWaitGroupRead(b);
    });
    return;
  }
  consumerBarrier(b, s, role);
  // Each lane copies 16-byte chunks of its warp's rows to O.
  // Each round's row and column are computed in the round: after the loop
  // nothing is worth holding registers for.
  TileCopyLayout<IndexArith> copy(arith, s.blockM / s.warps,
                                  p.valueDim / kChunk, kWarpSize);
  Type chunkType = VectorType::get({kChunk}, s.element);
  for (int64_t round = 0; round < copy.rounds(); ++round) {
    Value rowInWarp = copy.slotRow(lane, round);
    Value chunk = copy.slotChunk(lane, round);
    Value col = mul(chunk, index(kChunk));
    Value rowInTile = add(warpRow, rowInWarp);
    Value row = add(row0, rowInTile);
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row,
                                          tiledLen.length);
    if (copy.hasIdleThreads(round))
      inRange = arith::AndIOp::create(b, inRange,
                                      copy.copies(chunk, rowInWarp, round));
    auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [tileRow, tileCol] = tileIndex(rowInTile, col, s.blockM);
    Value values = vector::LoadOp::create(b, chunkType, oTile,
                                          ValueRange{tileRow, tileCol});
    // Rows of a multiple of 8 16-bit elements keep every chunk 16-byte
    // aligned (the bundle requires 16-byte aligned tensors).
    auto [queryHead, queryRow] = queryRowOf(head, row);
    vector::StoreOp::create(b, values, out.o,
                            ValueRange{batch, queryHead, queryRow, col},
                            /*nontemporal=*/false, llvm::Align(16));
  }
}

void Fa2CtaBody::storePartial(const CtaState &state, Value partialO,
                              Value partialLse, Value slot, Value row0) {
  if (role == WarpRole::Producer)
    return;
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t i = 0; i < 2; ++i) {
      Value rowInTile = fragmentRow(mt, i);
      RowTotal total = rowTotal(state, mt, i);
      // Only rows of the tile that are query rows (a decode tile of p packed
      // heads has p of block_m): mergePartials reads no other.
      auto store = scf::IfOp::create(b, isQueryRow(row0, rowInTile),
                                     /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(store.thenBlock());
      Value inverses = vector::BroadcastOp::create(b, pair, total.inverse);
      for (int64_t ot = 0; ot < oTiles; ++ot) {
        Value rowPair =
            vector::ExtractOp::create(b, state.values[mt * oTiles + ot], i);
        vector::StoreOp::create(b, mulF(rowPair, inverses), partialO,
                                ValueRange{slot, rowInTile, fragmentCol(ot)});
      }
      // Every lane of the quad holds the row's LSE; each writes it (the
      // same value), so no lane waits on another.
      memref::StoreOp::create(b, total.lse, partialLse,
                              ValueRange{slot, rowInTile});
    }
}

CtaState Fa2CtaBody::mergePartials(const CtaState &state, Value partialO,
                                   Value partialLse, Value first, Value last,
                                   Value row0) {
  if (role == WarpRole::Producer)
    return state;
  // The raw merge of ALGORITHMS.md over (own, first, ..., last), per row
  // in natural units: M = max LSE; W = sum exp(LSE_s - M);
  // acc = sum exp(LSE_s - M) O_s. The state for storeOutput is
  // (acc, m = M log2 e, l = W): O = acc / W, LSE = M + ln W.
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  Value log2e = f32Const(M_LOG2E);
  Value minusInf = f32Const(-std::numeric_limits<float>::infinity());
  Value zeroF = f32Const(0.0);
  // exp(x - M) for a running maximum that may still be -inf.
  auto weight = [&](Value x, Value maximum) {
    Value isEmpty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, maximum, minusInf);
    Value safe = arith::SelectOp::create(b, isEmpty, zeroF, maximum);
    return exp2(mulF(subF(x, safe), log2e));
  };

  // Running (M, W) per row and the accumulators, seeded with the own
  // partial normalised: weight 1 at M = its LSE (0 for an empty row).
  SmallVector<Value> init(state.values.begin(),
                          state.values.begin() + mTiles * oTiles);
  SmallVector<Value> maxima, sums;
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    Value mPair = vector::BroadcastOp::create(b, pair, minusInf);
    Value wPair = vector::BroadcastOp::create(b, pair, zeroF);
    for (int64_t i = 0; i < 2; ++i) {
      RowTotal total = rowTotal(state, mt, i);
      Value isEmpty =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, total.sum, zeroF);
      mPair = vector::InsertOp::create(b, total.lse, mPair, i);
      wPair = vector::InsertOp::create(
          b, arith::SelectOp::create(b, isEmpty, zeroF, f32Const(1.0)), wPair,
          i);
      Value inverses = vector::BroadcastOp::create(b, pair, total.inverse);
      for (int64_t ot = 0; ot < oTiles; ++ot) {
        Value &acc = init[mt * oTiles + ot];
        Value rowPair = vector::ExtractOp::create(b, acc, i);
        acc = vector::InsertOp::create(b, mulF(rowPair, inverses), acc, i);
      }
    }
    maxima.push_back(mPair);
    sums.push_back(wPair);
  }
  init.append(maxima);
  init.append(sums);

  // Whether each fragment row is a query row: the partials hold no other
  // (storePartial), and storeOutput writes no other.
  SmallVector<Value> queryRows;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t i = 0; i < 2; ++i)
      queryRows.push_back(isQueryRow(row0, fragmentRow(mt, i)));

  auto loop = scf::ForOp::create(
      b, first, add(last, index(1)), index(1), init,
      [&](OpBuilder &, Location, Value slot, ValueRange running) {
        SmallVector<Value> next(running.begin(), running.end());
        for (int64_t mt = 0; mt < mTiles; ++mt) {
          for (int64_t i = 0; i < 2; ++i) {
            // The row's running values: its m tile's accumulators, M and W.
            SmallVector<Value *> rowValues;
            for (int64_t ot = 0; ot < oTiles; ++ot)
              rowValues.push_back(&next[mt * oTiles + ot]);
            rowValues.push_back(&next[mTiles * oTiles + mt]);
            rowValues.push_back(&next[mTiles * oTiles + mTiles + mt]);
            SmallVector<Value> current;
            SmallVector<Type> types;
            for (Value *value : rowValues) {
              current.push_back(*value);
              types.push_back(value->getType());
            }
            auto merge = scf::IfOp::create(b, types, queryRows[2 * mt + i],
                                           /*withElseRegion=*/true);
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(merge.elseBlock());
              scf::YieldOp::create(b, current);
              b.setInsertionPointToStart(merge.thenBlock());
              SmallVector<Value> updated(current);
              Value &mPair = updated[oTiles], &wPair = updated[oTiles + 1];
              Value rowInTile = fragmentRow(mt, i);
              Value lseS = memref::LoadOp::create(b, partialLse,
                                                  ValueRange{slot, rowInTile});
              Value mOld = vector::ExtractOp::create(b, mPair, i);
              Value mNew = maxF(mOld, lseS);
              Value alpha = weight(mOld, mNew), beta = weight(lseS, mNew);
              Value w = addF(
                  mulF(alpha, vector::ExtractOp::create(b, wPair, i)), beta);
              mPair = vector::InsertOp::create(b, mNew, mPair, i);
              wPair = vector::InsertOp::create(b, w, wPair, i);
              for (int64_t ot = 0; ot < oTiles; ++ot) {
                Value &acc = updated[ot];
                Value partial = vector::LoadOp::create(
                    b, pair, partialO,
                    ValueRange{slot, rowInTile, fragmentCol(ot)});
                Value rowPair = vector::ExtractOp::create(b, acc, i);
                Value merged = addF(
                    mulF(rowPair, vector::BroadcastOp::create(b, pair, alpha)),
                    mulF(partial, vector::BroadcastOp::create(b, pair, beta)));
                acc = vector::InsertOp::create(b, merged, acc, i);
              }
              scf::YieldOp::create(b, updated);
            }
            for (auto [value, result] :
                 llvm::zip(rowValues, merge.getResults()))
              *value = result;
          }
        }
        scf::YieldOp::create(b, next);
      });
  SmallVector<Value> merged(loop.getResults());
  // m in base 2, as the state stores it.
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    Value &mPair = merged[mTiles * oTiles + mt];
    mPair = mulF(mPair, vector::BroadcastOp::create(b, pair, log2e));
  }
  return {merged, /*wholeRowSums=*/true};
}

void Fa2CtaBody::finishTile() {
  if (role != WarpRole::Producer)
    consumerBarrier(b, s, role);
}
