//===- CpAsyncStaging.cpp - Tiles by every thread's cp.async --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "OperandStaging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::attn;

Value CpAsyncStaging::copyKV(const KvWalk &w, Value keyBlock, Value keyStage,
                             Value valueBlock, Value valueStage) {
  StageTiles stage = tiles(keyStage, valueStage);
  SmallVector<Value> tokens =
      copyTile(w.kv.k, w.batch, w.kvHead, mul(keyBlock, index(s.blockN)),
               s.blockN, keyLen, s.problem.headDim, stage.k.view);
  llvm::append_range(tokens,
                     copyTile(w.kv.v, w.batch, w.kvHead,
                              mul(valueBlock, index(s.blockN)), s.blockN,
                              keyLen, s.problem.valueDim, stage.v.view));
  return commit(tokens);
}

Value CpAsyncStaging::clampedBlock(const KvWalk &w, Value block) {
  // An empty range (blockEnd = 0 wraps) copies blocks the copies guard.
  return arith::MinUIOp::create(b, block,
                                arith::SubIOp::create(b, w.blockEnd, index(1)));
}

void CpAsyncStaging::startSequential(const KvWalk &w) {
  // Q, and the first `stages` - 1 K and V blocks (the last block again
  // where the range is shorter: every iteration then waits for the same
  // number of groups), are in flight.
  for (int64_t p = 0; p + 1 < s.stages; ++p) {
    Value block = clampedBlock(w, add(w.blockBegin, index(p)));
    copyKV(w, block, index(p), block, index(p));
  }
  waitGroups(w.qGroup, s.stages - 1);
}

OperandStaging::BlockStage CpAsyncStaging::sequentialStage(const KvWalk &w,
                                                           Value block) {
  // The tiles of the previous block have been read by every warp.
  gpu::BarrierOp::create(b);
  Value stage = index(0);
  Value relative = arith::SubIOp::create(b, block, w.blockBegin);
  if (s.stages > 1) {
    // Block n is in stage (n - begin) % stages (issued stages - 1
    // iterations ago); block n + stages - 1 goes to the stage block n - 1
    // used, which every warp has read (the barrier above), and block n's
    // copies are done once at most stages - 1 groups wait.
    stage = arith::RemUIOp::create(b, relative, index(s.stages));
    // (n + stages - 1 - begin) % stages: the stage before this one.
    Value nextStage = arith::SelectOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, stage, index(0)),
        index(s.stages - 1), arith::SubIOp::create(b, stage, index(1)));
    Value next = clampedBlock(w, add(block, index(s.stages - 1)));
    waitGroups(copyKV(w, next, nextStage, next, nextStage), s.stages - 1);
  } else {
    waitGroups(copyKV(w, block, stage, block, stage), 0);
  }
  // Each thread's copies, done now, are made visible to the product unit
  // before the barrier.
  products.copiesLanded();
  gpu::BarrierOp::create(b);
  return {stage, relative};
}

void CpAsyncStaging::copyOverlappedGroup(const KvWalk &w, Value r) {
  auto [keyStage, valueStage] = overlappedStages(r);
  Value block = add(w.blockBegin, r);
  // Group 0's V (of block begin - 1) is a copy of a block nobody reads.
  copyKV(w, clampedBlock(w, block), keyStage,
         clampedBlock(w, arith::SubIOp::create(b, block, index(1))),
         valueStage);
}

void CpAsyncStaging::startOverlapped(const KvWalk &w, Value blocks) {
  for (int64_t g = 0; g + 1 < s.stages; ++g)
    copyOverlappedGroup(w, index(g));
}

void CpAsyncStaging::overlappedStep(const KvWalk &w, Value r, bool first,
                                    bool last) {
  // Group r has landed (with Q, read by the products through the async
  // proxy), every warp is done with step r - 1, and groups up to r +
  // stages - 1 are in flight.
  if (s.stages == 1) {
    gpu::BarrierOp::create(b);
    copyOverlappedGroup(w, r);
    waitGroups(w.qGroup, 0);
    products.copiesLanded();
    gpu::BarrierOp::create(b);
    return;
  }
  waitGroups(w.qGroup, s.stages - 2);
  products.copiesLanded();
  gpu::BarrierOp::create(b);
  if (!last)
    copyOverlappedGroup(w, add(r, index(s.stages - 1)));
}

void CpAsyncStaging::finishRange(const KvWalk &w) {
  // With one stage, each block's copies were waited for in its step.
  if (s.stages > 1)
    waitGroups(w.qGroup, 0);
}
