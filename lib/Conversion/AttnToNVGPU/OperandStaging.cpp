//===- OperandStaging.cpp - How a CTA's tiles reach shared memory ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "OperandStaging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

std::unique_ptr<OperandStaging>
mlir::attn::createOperandStaging(const CtaPrimitives &cta,
                                 ProductUnit &products, WarpRole role,
                                 bool tensorCopies) {
  std::unique_ptr<OperandStaging> staging;
  if (tensorCopies)
    staging = std::make_unique<TensorCopyStaging>(cta, products, role);
  else
    staging = std::make_unique<CpAsyncStaging>(cta, products, role);
  staging->setUp();
  return staging;
}

void OperandStaging::setUp() {
  qTile = sharedTile(shared, index(0), s.blockM, s.keyRow());
}

StageTiles OperandStaging::tiles(Value keyStage, Value valueStage) {
  Value kOffset = add(index(kBase()), mul(keyStage, index(kTileBytes())));
  Value vOffset = add(index(vBase()), mul(valueStage, index(vTileBytes())));
  return {{sharedTile(shared, kOffset, s.blockN, s.keyRow()), kOffset},
          {sharedTile(shared, vOffset, s.blockN, s.valueRow()), vOffset}};
}

std::pair<Value, Value> OperandStaging::overlappedStages(Value r) {
  return {
      arith::RemUIOp::create(b, r, index(s.stages)),
      arith::RemUIOp::create(b, add(r, index(s.stages - 1)), index(s.stages))};
}

Value OperandStaging::loadQuery(Value q, Value qMap, Value batch, Value head,
                                Value row0) {
  return commit(copyTile(
      q, batch, head, row0, s.blockM, tiledLen, s.problem.headDim, qTile,
      [&](Value head, Value row) { return queryRowOf(head, row); }));
}
