//===- Fa2CtaBody.cpp - FlashAttention-2's CTA body -----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The two loops over a range's key/value blocks, assembled from the
// components: the C fragments of two adjacent n8 tiles of S are, element
// for element, the A fragment of a k16 slice of P, so P never leaves the
// registers between the softmax step and the product unit.
//
//===----------------------------------------------------------------------===//

#include "Fa2CtaBody.h"
#include "WarpRoles.h"
#include "WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

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
  staging = createOperandStaging(*this, *products, role, s.tensorCopies());
  // The warp's rows of the Q tile are A of S = Q K^T.
  Value qTile = staging->queryTile();
  queryRows = products->rowsOperand({qTile, index(0)});
  // The O block is staged in the Q tile's memory, in rows Dv wide.
  Value oTile = s.valueRow() == s.keyRow()
                    ? qTile
                    : sharedTile(shared, index(0), s.blockM, s.valueRow());
  softmax.emplace(static_cast<const CtaPrimitives &>(*this));
  epilogue.emplace(static_cast<const CtaPrimitives &>(*this), oTile, role);
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

Value Fa2CtaBody::loadQueryBlock(Value q, Value qMap, Value batch, Value head,
                                 Value row0) {
  // The consumers copy Q; the producer waits for nothing.
  if (role == WarpRole::Producer)
    return Value();
  return staging->loadQuery(q, qMap, batch, head, row0);
}

CtaState Fa2CtaBody::runKvRange(const KeyValueOperands &kv, Value qGroup,
                                Value batch, Value head, Value kvHead,
                                Value row0, Value rows, Value blockBegin,
                                Value blockEnd) {
  KvWalk walk{kv,   qGroup, batch,      head,    kvHead,
              row0, rows,   blockBegin, blockEnd};
  if (role == WarpRole::Producer) {
    staging->produceRange(walk);
    return initialState();
  }
  CtaState state =
      s.overlapSoftmax() ? overlappedLoop(walk) : sequentialLoop(walk);
  // No copy may still be writing shared memory when the CTA goes on.
  staging->finishRange(walk);
  return state;
}

CtaState Fa2CtaBody::sequentialLoop(const KvWalk &w) {
  int64_t mTiles = s.mTiles(), oTiles = s.problem.valueDim / 8;
  // Q and the first `stages` - 1 blocks' tiles are in flight.
  staging->startSequential(w);
  auto loop = scf::ForOp::create(
      b, w.blockBegin, w.blockEnd, index(1), initialState().values,
      [&](OpBuilder &, Location, Value block, ValueRange state) {
        Value key0 = mul(block, index(s.blockN));
        OperandStaging::BlockStage at = staging->sequentialStage(w, block);
        StageTiles tiles = staging->tiles(at.stage, at.stage);
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
        staging->release(at.relative);
        scf::YieldOp::create(b, updated);
      });
  b.setInsertionPointAfter(loop);
  staging->endSequential();
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
  int64_t kSlices = s.blockN / 16;
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
  // Step r with the state of step r - 1: with `withPrevious`, O += P V of
  // block r - 1; with `withBlock`, block r's S and softmax.
  auto step = [&](Value r, ValueRange state, bool withPrevious,
                  bool withBlock) {
    // Group r has landed (`last`: no group after r is needed; `first`:
    // step 0, the first to read Q).
    staging->overlappedStep(w, r, /*first=*/!withPrevious,
                            /*last=*/!withBlock);
    auto [keyStage, valueStage] = staging->overlappedStages(r);
    StageTiles tiles = staging->tiles(keyStage, valueStage);
    ValueRange acc = state.take_front(oTiles);
    Value m = state[oTiles], l = state[oTiles + 1];
    ValueRange p = state.take_back(kSlices);
    // P V's register inputs are fenced before the step's one wgmma.fence
    // (S's, else P V's).
    WgmmaUnit::StreamOperands operands;
    if (withPrevious)
      operands =
          wgmmaUnit().streamOperands(elementsOf(SmallVector<Value>(acc)), p);
    // The last V tile, before P V reads it.
    if (!withBlock)
      staging->lastValueTile(w, r, tiles.v);
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
      staging->release(r);
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
    staging->release(r);
    return next;
  };

  // A range without blocks keeps the initial state.
  Value any =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, blocks, index(0));
  SmallVector<Value> result = uniformBranch(
      any, ValueRange(initial.values).getTypes(),
      [&] {
        staging->startOverlapped(w, blocks);
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
        staging->endOverlapped();
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
