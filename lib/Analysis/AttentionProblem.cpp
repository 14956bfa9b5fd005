//===- AttentionProblem.cpp - Shape and masking geometry of an attention --===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/AttentionProblem.h"

#include "attn/Analysis/IntegerArith.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn;

template <typename OpTy>
static std::optional<AttentionProblem> problemOf(OpTy op,
                                                 bool dynamicLengths) {
  ArrayRef<int64_t> q = op.getQuery().getType().getShape();
  ArrayRef<int64_t> k = op.getKey().getType().getShape();
  ArrayRef<int64_t> v = op.getValue().getType().getShape();
  if (op.hasFrame())
    return std::nullopt;
  AttentionProblem problem;
  for (int64_t size : {q[1], q[3], k[1], k[3], v[1], v[3]})
    if (ShapedType::isDynamic(size))
      return std::nullopt;
  // A length is known when every operand that has it gives it.
  auto known = [](std::initializer_list<int64_t> sizes) {
    for (int64_t size : sizes)
      if (ShapedType::isDynamic(size))
        return ShapedType::kDynamic;
    return *sizes.begin();
  };
  problem.batch = known({q[0], k[0], v[0]});
  problem.queryHeads = q[1];
  problem.queryLen = q[2];
  problem.headDim = q[3];
  problem.kvHeads = k[1];
  problem.keyLen = known({k[2], v[2]});
  problem.valueDim = v[3];
  if (!dynamicLengths && !problem.hasStaticLengths())
    return std::nullopt;
  problem.causal = op.getCausal();
  problem.window = op.getWindowSizes();
  if (Fa2TilesAttr tiles = op.getTilesAttr())
    problem.packedHeads = tiles.getPackedHeads();
  return problem;
}

std::optional<AttentionProblem> AttentionProblem::fromOp(AttentionOp op,
                                                         bool dynamicLengths) {
  return problemOf(op, dynamicLengths);
}

std::optional<AttentionProblem> AttentionProblem::fromOp(AttentionGradOp op,
                                                         bool dynamicLengths) {
  return problemOf(op, dynamicLengths);
}

bool AttentionProblem::hasStaticLengths() const {
  return ShapedType::isStatic(batch) && ShapedType::isStatic(queryLen) &&
         ShapedType::isStatic(keyLen);
}

MaskGeometry<IntegerArith> AttentionProblem::geometry() const {
  static IntegerArith arith;
  return {arith,  queryLen,     keyLen,     causalHidesKeys(),
          window, std::nullopt, packedHeads};
}

int64_t AttentionProblem::queryBlocks(int64_t blockM) const {
  return llvm::divideCeil(tiledRows(), blockM);
}

std::string AttentionProblem::tiledHeadName() const {
  if (packedHeads == 1)
    return "head";
  return std::to_string(packedHeads) + " packed heads";
}

IndexRange AttentionProblem::visibleKeys(int64_t row) const {
  MaskGeometry<IntegerArith> g = geometry();
  return {std::max<int64_t>(g.visibleBegin(row), 0), g.visibleEnd(row)};
}

/// The tiled rows [begin, end) of query block `queryBlock`.
static IndexRange queryRows(const AttentionProblem &problem,
                            int64_t queryBlock, int64_t blockM) {
  return {queryBlock * blockM,
          std::min((queryBlock + 1) * blockM, problem.tiledRows())};
}

IndexRange AttentionProblem::kvBlockRange(int64_t queryBlock, int64_t blockM,
                                          int64_t blockN) const {
  IndexRange rows = queryRows(*this, queryBlock, blockM);
  if (rows.empty())
    return {};
  auto [begin, end] = geometry().kvBlockRange(rows.begin, rows.size(), blockN);
  return {begin, end};
}

IndexRange AttentionProblem::queryBlockRange(int64_t kvBlock, int64_t blockM,
                                             int64_t blockN) const {
  IndexRange keys{kvBlock * blockN, std::min((kvBlock + 1) * blockN, keyLen)};
  if (keys.empty())
    return {};
  auto [begin, end] =
      geometry().queryBlockRange(keys.begin, keys.size(), blockM);
  return {begin, end};
}

SmallVector<int64_t> AttentionProblem::kvBlockCounts(int64_t blockM,
                                                     int64_t blockN) const {
  SmallVector<int64_t> counts;
  for (int64_t m = 0, end = queryBlocks(blockM); m < end; ++m)
    counts.push_back(kvBlockRange(m, blockM, blockN).size());
  return counts;
}

bool AttentionProblem::isBlockUnmasked(int64_t queryBlock, int64_t kvBlock,
                                       int64_t blockM, int64_t blockN) const {
  IndexRange rows = queryRows(*this, queryBlock, blockM);
  IndexRange keys{kvBlock * blockN, std::min((kvBlock + 1) * blockN, keyLen)};
  if (rows.empty() || keys.empty())
    return false;
  return !geometry().needsElementMask(rows.begin, rows.size(), keys.begin,
                                      keys.end);
}

int64_t AttentionProblem::visiblePairs() const {
  int64_t pairs = 0;
  for (int64_t row = 0; row < queryLen; ++row)
    pairs += visibleKeys(row).size();
  return pairs;
}

double AttentionProblem::nominalForwardFlops() const {
  double flops = 2.0 * batch * queryHeads * static_cast<double>(queryLen) *
                 keyLen * (headDim + valueDim);
  return causal ? flops / 2 : flops;
}

double AttentionProblem::naiveScoreBytes() const {
  return 4.0 * batch * queryHeads * static_cast<double>(queryLen) * keyLen;
}

TiledWork mlir::attn::countTiledWork(const AttentionProblem &problem,
                                     int64_t blockM, int64_t blockN) {
  TiledWork work;
  work.queryBlocks = problem.queryBlocks(blockM);
  int64_t kvBlocks =
      static_cast<int64_t>(llvm::divideCeil(problem.keyLen, blockN));
  work.denseBlocks = work.queryBlocks * kvBlocks;
  for (int64_t m = 0; m < work.queryBlocks; ++m) {
    IndexRange range = problem.kvBlockRange(m, blockM, blockN);
    work.visitedBlocks += range.size();
    for (int64_t n = range.begin; n < range.end; ++n)
      if (!problem.isBlockUnmasked(m, n, blockM, blockN))
        ++work.maskedBlocks;
  }
  return work;
}

int64_t mlir::attn::selectPackedHeads(AttentionOp op, int64_t blockM) {
  // Only Sq decides: a decode kernel for run-time cache lengths packs too.
  std::optional<AttentionProblem> problem =
      AttentionProblem::fromOp(op, /*dynamicLengths=*/true);
  if (!problem || ShapedType::isDynamic(problem->queryLen) ||
      problem->groupSize() == 1 || op.getMask() || op.getBlockMask())
    return 1;
  // The share of a query block's rows that are real rows.
  auto filled = [&](int64_t rows) {
    return static_cast<double>(rows) /
           static_cast<double>(llvm::divideCeil(rows, blockM) * blockM);
  };
  int64_t group = problem->groupSize();
  return filled(problem->queryLen) < 0.9 * filled(group * problem->queryLen)
             ? group
             : 1;
}

LogicalResult mlir::attn::checkSplitCount(AttentionOp op, int64_t splits,
                                          int64_t blockN) {
  int64_t keyLen = op.getKey().getType().getDimSize(2);
  if (ShapedType::isDynamic(keyLen))
    return success();
  int64_t kvBlocks = std::max<int64_t>(1, llvm::divideCeil(keyLen, blockN));
  if (splits <= kvBlocks)
    return success();
  return op.emitError() << "split_kv splits " << splits << " exceed the "
                        << kvBlocks << " key/value blocks of " << blockN
                        << " keys: use at most " << kvBlocks << " splits";
}
