//===- CtaEpilogue.cpp - What a CTA writes after its loop -----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "CtaEpilogue.h"
#include "TensorCopy.h"
#include "WarpgroupMma.h"
#include "WarpRoles.h"

#include "attn/Conversion/AttnToNVGPU/TileCopyLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

CtaEpilogue::RowTotal CtaEpilogue::rowTotal(const CtaState &state, int64_t mt,
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

void CtaEpilogue::storeOutput(const CtaState &state, const OutputOperands &out,
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
  // be done reading Q, before any warp writes.
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

void CtaEpilogue::storePartial(const CtaState &state, Value partialO,
                               Value partialLse, Value slot, Value row0) {
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

CtaState CtaEpilogue::mergePartials(const CtaState &state, Value partialO,
                                    Value partialLse, Value first, Value last,
                                    Value row0) {
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
