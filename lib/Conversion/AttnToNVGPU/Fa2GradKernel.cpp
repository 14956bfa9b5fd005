//===- Fa2GradKernel.cpp - The backward pass on tensor cores --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Both kinds of CTA hold a tile of rows (keys, or queries) and stream the
// blocks of the other side past it; every product is one of the forward's
// two forms, on the kernel's matrix unit: rows x streamed^T with both
// operands from shared memory (S or S^T, dP or dP^T), and a register
// operand times a streamed tile (dV += P^T dO, dK += dS^T Q, dQ += dS K).
// On mma.sync the shared operands come through ldmatrix (the streamed tile
// of the second form loaded transposed); on wgmma (sm_90a) the CTA's four
// warps are one warpgroup, its 64 rows one m64 product, both shared operands
// read through descriptors (K-major, and MN-major for the streamed tile of
// the second form). P and dS never leave the registers: the C fragments of
// two adjacent n8 tiles are the A fragment of a k16 slice, as in the
// forward, and a warp's share of a wgmma is those fragments. On wgmma
// (up to max(D, Dv) = 128) the tiles come by tensor copies that thread 0
// issues: the own rows once, the streamed blocks into a ring of two stages,
// each guarded by an mbarrier, so that the next block's tiles land while
// the current one is computed; with key lengths, thread 0 zeroes the keys
// past a sequence's end of the streamed K and V block that holds it.
//
//===----------------------------------------------------------------------===//

#include "Fa2GradKernel.h"
#include "CtaPrimitives.h"
#include "KernelAnalysis.h"
#include "KernelSkeletons.h"
#include "ProductUnit.h"
#include "TensorCopy.h"
#include "WarpgroupMma.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/KernelPlan.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Analysis/ScoreDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

int64_t tileBytes(int64_t rows, int64_t rowElements) {
  return rows * rowElements * 2;
}

/// The widest head dimension the kernel takes (FlashAttention's).
constexpr int64_t kGradMaxHeadDim = kFa2MaxHeadDim;

class Fa2GradBody : CtaPrimitives {
public:
  Fa2GradBody(ImplicitLocOpBuilder &b, const KernelShape &s)
      : CtaPrimitives(b, s) {}

  void build(const GradArguments &args);

private:
  /// dK and dV of key block `block` of (batch, kvHead).
  void keyBlock(const GradArguments &args, Value batch, Value kvHead,
                Value block);
  /// The walk of the key block at key0 over the query heads of kvHead's
  /// group and the query blocks that see it: dK's fragments with `key`,
  /// then dV's with `value`, unscaled.
  SmallVector<Value> walkQueryBlocks(const GradArguments &args, Value batch,
                                     Value kvHead, Value key0, bool value,
                                     bool key);
  /// dQ of query block `block` of (batch, head).
  void queryBlock(const GradArguments &args, Value batch, Value head,
                  Value block);

  /// The statistics of rows [row0, row0 + rows) of (batch, head), into the
  /// shared arrays: LSE in base 2 (+inf for a row past Sq, or one that saw
  /// no key: its P is 0) and Dsum = rowsum(dO O) (0 past Sq). Every warp
  /// takes every `warps`-th row; its lanes split the row's Dv elements.
  void rowStatistics(const GradArguments &args, Value batch, Value head,
                     Value row0, int64_t rows);

  /// One score of a visited block: the product x (of S), dP's element y,
  /// its row's LSE (base 2) and Dsum (y and Dsum null for P only), and where
  /// it is: query `row` and `key` of (batch, head).
  struct ScoreElement {
    Value x, y, lse2, dsum, batch, head, row, key;
  };
  /// P and dS of `e`, the score modified (softcap, score region) and the
  /// mask operand `mask` applied (null: not in this block); in a block that
  /// straddles a mask boundary (`masked`), MaskGeometry's element mask
  /// gives 0 for both. Without y and Dsum, P only.
  std::pair<Value, Value> gradients(const ScoreElement &e, Value mask,
                                    bool masked);
  /// P (`withP`), then dS (`withDs`), of every score the lane holds of a
  /// visited block, each [mTiles][block_n / 8][2][2] flattened, `at(mt, nt,
  /// i, j)` giving the score: the mask operand applied unless the block
  /// mask's `status` says the block is full, MaskGeometry's element mask
  /// only where `straddles` (each a uniform branch).
  SmallVector<Value> blockGradients(
      const GradArguments &args, Value status, Value straddles, bool withP,
      bool withDs,
      function_ref<ScoreElement(int64_t mt, int64_t nt, int64_t i, int64_t j)>
          at);
  /// The A fragments of a k16 slice of the [mTiles][block_n / 8 * 4] flat
  /// element values, rounded to the element type.
  SmallVector<SmallVector<Value>> aFragments(ArrayRef<Value> flat);

  /// The streamed block's two tiles (K or Q, and V or dO).
  struct StreamTiles {
    SharedTile a, b;
  };
  /// The streamed tiles of stage `stage`.
  StreamTiles streamTiles(Value stage);
  /// The products of a visited block's scores: the warp's rows of the own
  /// tiles times the streamed ones^T, S (or S^T) from the first over D
  /// columns and, `withDp`, dP (or dP^T) from the second over Dv, each
  /// [mTiles][block_n / 8] C fragments.
  std::pair<SmallVector<SmallVector<Value>>, SmallVector<SmallVector<Value>>>
  scoreProducts(const StreamTiles &stream, bool withDp);
  /// acc ([mTiles][width / 8] C fragments) += the [mTiles][block_n / 8 * 4]
  /// flat values (P or dS, rounded to the element type) times the s.blockN
  /// rows of `stream` (`width` columns), on the product unit.
  void accumulate(SmallVector<Value> &acc, ArrayRef<Value> flat,
                  const SharedTile &stream, int64_t width) {
    products->accumulate(acc, aFragments(flat), stream, width);
  }
  /// After the block's cp.async copies are waited for: their writes visible
  /// to the products (wgmma reads shared memory through the async proxy),
  /// then a CTA barrier.
  void tilesReady();

  /// With tensor copies. The mbarriers: one a stage of the ring ("full":
  /// thread 0's arrival and the group's bytes complete a phase), then the
  /// own rows' one, initialised by thread 0 before a CTA barrier.
  void initBarriers();
  Value ownRowsBarrier() { return mbarrierAt(barriers, index(s.stages)); }
  /// With key lengths, thread 0's own mbarrier, after the own rows' one: a
  /// streamed K and V block past a sequence's end lands on it before thread
  /// 0 zeroes its keys past the end (copyZeroingTails).
  Value tailBarrier() { return mbarrierAt(barriers, index(s.stages + 1)); }
  /// A tensor and, with tensor copies, its tensor map.
  struct Source {
    Value tensor, map;
  };
  /// Copies rows [row0, row0 + block_m) of (batch, head) of `first` and
  /// `second` (rows past `length` zero) into the own tiles: with tensor
  /// copies by thread 0 on the own rows' mbarrier (startWalk waits for it),
  /// else by every thread's cp.async, whose group it returns.
  Value copyOwnRows(const Source &first, const Source &second, Value batch,
                    Value head, Value row0, const Extent &length);
  /// Tensor copies of `rows` rows from row0 of (batch, head) of `mapA`'s
  /// tensor (D columns) and `mapB`'s (Dv) into the tiles at shared offsets
  /// `offsetA` and `offsetB`, on `barrier`, which expects their bytes.
  void copyPair(Value mapA, Value mapB, Value batch, Value head, Value row0,
                int64_t rows, Value offsetA, Value offsetB, Value barrier);
  /// What a walk streams: the tensor maps of its two tiles, and the head
  /// and first row of the block of the walk's group u; `keys` where the
  /// tiles are K and V, whose keys past a sequence's length (key lengths)
  /// are zeroed.
  struct StreamSource {
    Value mapA, mapB, batch;
    function_ref<std::pair<Value, Value>(Value u)> at;
    bool keys;
  };
  /// Thread 0 copies the tiles of the walk's group u into stage u % stages,
  /// if u < `groups`.
  void issueStreamed(const StreamSource &source, Value u, Value groups);
  /// Before the CTA's walk of `groups` groups (one a CTA, so that its
  /// groups number the ring's phases): thread 0 issues the first stages - 1
  /// groups, and every thread waits for the own rows.
  void startWalk(const StreamSource &source, Value groups);
  /// At the walk's group u: a CTA barrier (every warp is done with group
  /// u - 1's stage), thread 0 issues group u + stages - 1 into that stage,
  /// and every thread waits for group u, whose tiles it returns. Every
  /// group is waited for, a block the block mask skips included: a stage
  /// is refilled only once its last copy has landed.
  StreamTiles streamStep(const StreamSource &source, Value u, Value groups);

  /// Stores acc * factor into rows row0 + (the warp's fragment rows) of
  /// out[batch, head], rows below `length` only.
  void storeRows(ArrayRef<Value> acc, int64_t width, float factor, Value out,
                 Value batch, Value head, Value row0, Value length);

  /// Element (i, j) of a C fragment.
  Value element(Value fragment, int64_t i, int64_t j) {
    return vector::ExtractOp::create(b, fragment, ArrayRef<int64_t>{i, j});
  }
  int64_t keyRow() const { return s.keyRow(); }
  int64_t valueRow() const { return s.valueRow(); }

  /// The CTA's own rows (Q or K, and dO or V), the byte offset of the
  /// streamed blocks' first stage (K or Q, and V or dO, each stage
  /// stageBytes()), and the streamed rows' (or the own rows') LSE and Dsum.
  SharedTile rowsA, rowsB;
  std::unique_ptr<ProductUnit> products;
  int64_t streamOffset = 0;
  int64_t stageBytes() const { return tileBytes(s.blockN, streamRow()); }
  int64_t streamRow() const { return keyRow() + valueRow(); }
  Value lseRows, dsumRows;
  /// Without tensor copies, the one stage's tiles; with them, the shared
  /// address of the mbarriers.
  StreamTiles oneStage;
  Value barriers;
};

} // namespace

void Fa2GradBody::rowStatistics(const GradArguments &args, Value batch,
                                Value head, Value row0, int64_t rows) {
  int64_t dv = s.problem.valueDim;
  Value inf = f32Const(std::numeric_limits<float>::infinity());
  auto loop = scf::ForOp::create(b, warp, index(rows), index(s.warps));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value rowInTile = loop.getInductionVar();
  Value row = add(row0, rowInTile);
  Value inRange =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, queryLen.length);
  Value clamped = arith::MinUIOp::create(b, row, queryLen.last);
  // Lane l adds up elements l, l + 32, ... of the row; the warp's
  // butterfly gives every lane the sum.
  Value dot = f32Const(0.0);
  for (int64_t col0 = 0; col0 < dv; col0 += attn::kWarpSize) {
    Value col = add(lane, index(col0));
    Value valid =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col, index(dv));
    Value safeCol = dv % attn::kWarpSize == 0
                        ? col
                        : arith::MinUIOp::create(b, col, index(dv - 1));
    ValueRange at{batch, head, clamped, safeCol};
    Value gradOut = memref::LoadOp::create(b, args.gradOut, at);
    Value out = memref::LoadOp::create(b, args.o, at);
    Value term = mulF(arith::ExtFOp::create(b, f32, gradOut),
                      arith::ExtFOp::create(b, f32, out));
    if (dv % attn::kWarpSize != 0)
      term = arith::SelectOp::create(b, valid, term, f32Const(0.0));
    dot = addF(dot, term);
  }
  for (int32_t offset : {16, 8, 4, 2, 1})
    dot = addF(dot, gpu::ShuffleOp::create(b, dot, offset, attn::kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult());
  Value lse =
      memref::LoadOp::create(b, args.lse, ValueRange{batch, head, clamped});
  // A row that saw no key has LSE -inf; +inf makes its P 0, as past Sq.
  Value empty = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, lse,
                                      f32Const(-INFINITY));
  Value lse2 = arith::SelectOp::create(
      b,
      arith::AndIOp::create(
          b, inRange,
          arith::XOrIOp::create(b, empty,
                                arith::ConstantIntOp::create(b, 1, 1))),
      mulF(lse, f32Const(M_LOG2E)), inf);
  Value dsum = arith::SelectOp::create(b, inRange, dot, f32Const(0.0));
  auto first = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, index(0)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(first.thenBlock());
  memref::StoreOp::create(b, lse2, lseRows, ValueRange{rowInTile});
  memref::StoreOp::create(b, dsum, dsumRows, ValueRange{rowInTile});
}

std::pair<Value, Value> Fa2GradBody::gradients(const ScoreElement &e,
                                               Value mask, bool masked) {
  // c = softcap tanh(scale x / softcap), or scale x; s = the score region
  // of c, or c; the logit is s, plus an additive mask's element (a boolean
  // one's false hides it); P = exp(logit - LSE); dS = P (dP - Dsum) ds/dx,
  // ds/dx = region'(c) (1 - tanh^2) without the scale, which is applied to
  // dQ and dK once, at the end.
  Value element = mask ? maskOperandElement(mask, e.batch, e.head, e.row, e.key,
                                            /*clampKey=*/masked)
                       : Value();
  Value t, logit2, slope;
  if (s.softcap)
    t = tanh(mulF(e.x, f32Const(s.scale / *s.softcap)));
  if (s.scoreRegion || (element && !element.getType().isInteger(1))) {
    Value natural = s.softcap ? mulF(t, f32Const(*s.softcap))
                              : mulF(e.x, f32Const(s.scale));
    if (s.scoreRegion)
      slope = buildScoreDerivative(
          b, b.getLoc(), *s.scoreRegion,
          ValueRange{natural, e.batch, e.head, e.row, e.key},
          [&](Operation &op, IRMapping &mapping) {
            inlineScoreOp(op, mapping);
          },
          &natural);
    if (element)
      natural = applyMaskElement(natural, element);
    logit2 = mulF(natural, f32Const(M_LOG2E));
  } else {
    logit2 = s.softcap ? mulF(t, f32Const(*s.softcap * M_LOG2E))
                       : mulF(e.x, f32Const(s.scaleLog2));
    if (element)
      logit2 = applyMaskElement(logit2, element);
  }
  Value p = exp2(subF(logit2, e.lse2));
  Value hidden;
  if (masked) {
    hidden = geometry().isHidden(e.row, e.key);
    p = arith::SelectOp::create(b, hidden, f32Const(0.0), p);
  }
  if (!e.y)
    return {p, Value()};
  Value ds = mulF(p, subF(e.y, e.dsum));
  if (s.softcap)
    ds = mulF(ds, subF(f32Const(1.0), mulF(t, t)));
  // A score with P = 0 (hidden, or a row or key past the lengths, whose
  // tiles hold zeros) contributes 0, even where the region's derivative is
  // infinite or NaN (sqrt or log at 0), as on the CPU; so does a hidden key
  // whose dP and softcap derivative are NaN, where tensor copies bring a
  // key/value CTA's own K and V past a sequence's length as they are
  // (cp.async zero-fills them).
  if (slope)
    ds = arith::SelectOp::create(
        b,
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, p, f32Const(0.0)),
        f32Const(0.0), mulF(ds, slope));
  else if (hidden && s.tensorCopies() && s.keyLengths)
    ds = arith::SelectOp::create(b, hidden, f32Const(0.0), ds);
  return {p, ds};
}

SmallVector<SmallVector<Value>> Fa2GradBody::aFragments(ArrayRef<Value> flat) {
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8;
  Type fragA = VectorType::get({4, 2}, s.element);
  SmallVector<SmallVector<Value>> frags(mTiles);
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t kk = 0; kk < nTiles / 2; ++kk) {
      SmallVector<Value> halves;
      for (int64_t nt : {2 * kk, 2 * kk + 1})
        for (int64_t e = 0; e < 4; ++e)
          halves.push_back(arith::TruncFOp::create(
              b, s.element, flat[(mt * nTiles + nt) * 4 + e]));
      frags[mt].push_back(
          vector::FromElementsOp::create(b, cast<VectorType>(fragA), halves));
    }
  return frags;
}

std::pair<SmallVector<SmallVector<Value>>, SmallVector<SmallVector<Value>>>
Fa2GradBody::scoreProducts(const StreamTiles &stream, bool withDp) {
  const AttentionProblem &p = s.problem;
  // The rows' operands are formed where they are read: held from the
  // kernel's entry, they would stay live through both walks.
  SmallVector<ProductUnit::RowProduct> wanted = {
      {products->rowsOperand(rowsA), stream.a, p.headDim}};
  if (withDp)
    wanted.push_back({products->rowsOperand(rowsB), stream.b, p.valueDim});
  auto results = products->rowProducts(wanted);
  return {results.front(),
          withDp ? results.back() : SmallVector<SmallVector<Value>>()};
}

void Fa2GradBody::tilesReady() {
  products->copiesLanded();
  gpu::BarrierOp::create(b);
}

Fa2GradBody::StreamTiles Fa2GradBody::streamTiles(Value stage) {
  Value first = add(index(streamOffset), mul(stage, index(stageBytes())));
  Value second = add(first, index(tileBytes(s.blockN, keyRow())));
  return {{sharedTile(shared, first, s.blockN, keyRow()), first},
          {sharedTile(shared, second, s.blockN, valueRow()), second}};
}

void Fa2GradBody::initBarriers() {
  onThread(0, [&] {
    for (int64_t i = 0; i <= s.stages; ++i)
      mbarrierInit(b, mbarrierAt(barriers, index(i)), /*arrivals=*/1);
    fenceMbarrierInit(b);
  });
  gpu::BarrierOp::create(b);
}

Value Fa2GradBody::copyOwnRows(const Source &first, const Source &second,
                               Value batch, Value head, Value row0,
                               const Extent &length) {
  const AttentionProblem &p = s.problem;
  if (!s.tensorCopies()) {
    copyTile(first.tensor, batch, head, row0, s.blockM, length, p.headDim,
             rowsA.view);
    return commit(copyTile(second.tensor, batch, head, row0, s.blockM, length,
                           p.valueDim, rowsB.view));
  }
  onThread(0, [&] {
    copyPair(first.map, second.map, batch, head, row0, s.blockM, rowsA.offset,
             rowsB.offset, ownRowsBarrier());
  });
  return Value();
}

void Fa2GradBody::copyPair(Value mapA, Value mapB, Value batch, Value head,
                           Value row0, int64_t rows, Value offsetA,
                           Value offsetB, Value barrier) {
  // Rows past the tensor read as zeros, and count as bytes.
  mbarrierArriveExpectTx(b, barrier,
                         arith::ConstantIntOp::create(
                             b, b.getI32Type(), tileBytes(rows, streamRow())));
  copyTileByTensorMap(mapA, batch, head, row0, rows, s.blockN, keyRow(),
                      offsetA, barrier);
  copyTileByTensorMap(mapB, batch, head, row0, rows, s.blockN, valueRow(),
                      offsetB, barrier);
}

void Fa2GradBody::issueStreamed(const StreamSource &source, Value u,
                                Value groups) {
  onThread(
      0,
      [&] {
        Value stage = arith::RemUIOp::create(b, u, index(s.stages));
        StreamTiles tiles = streamTiles(stage);
        auto [head, row0] = source.at(u);
        auto issue = [&](Value on) {
          copyPair(source.mapA, source.mapB, source.batch, head, row0, s.blockN,
                   tiles.a.offset, tiles.b.offset, on);
        };
        Value full = mbarrierAt(barriers, stage);
        if (!source.keys || !s.keyLengths)
          return issue(full);
        copyZeroingTails(
            full, tailBarrier(),
            {keyBlockTail(row0, keyLen.length, tiles.a.offset, keyRow()),
             keyBlockTail(row0, keyLen.length, tiles.b.offset, valueRow())},
            issue);
      },
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, u, groups));
}

void Fa2GradBody::startWalk(const StreamSource &source, Value groups) {
  for (int64_t u = 0; u + 1 < s.stages; ++u)
    issueStreamed(source, index(u), groups);
  mbarrierWait(b, ownRowsBarrier(),
               arith::ConstantIntOp::create(b, b.getI32Type(), 0));
}

Fa2GradBody::StreamTiles Fa2GradBody::streamStep(const StreamSource &source,
                                                 Value u, Value groups) {
  gpu::BarrierOp::create(b);
  issueStreamed(source, add(u, index(s.stages - 1)), groups);
  waitForStage(barriers, u);
  return streamTiles(arith::RemUIOp::create(b, u, index(s.stages)));
}

void Fa2GradBody::storeRows(ArrayRef<Value> acc, int64_t width, float factor,
                            Value out, Value batch, Value head, Value row0,
                            Value length) {
  Type pair = VectorType::get({2}, f32);
  int64_t oTiles = width / 8;
  Value factors = vector::BroadcastOp::create(b, pair, f32Const(factor));
  for (int64_t mt = 0; mt < s.mTiles(); ++mt)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = add(row0, fragmentRow(mt, i));
      auto store = scf::IfOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row, length),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(store.thenBlock());
      for (int64_t ot = 0; ot < oTiles; ++ot) {
        Value rowPair = vector::ExtractOp::create(b, acc[mt * oTiles + ot], i);
        Value values = arith::TruncFOp::create(
            b, VectorType::get({2}, s.element), mulF(rowPair, factors));
        vector::StoreOp::create(
            b, values, out,
            ValueRange{batch, head, row,
                       add(index(ot * 8), layout.cCol(laneInGroup, 0))});
      }
    }
}

SmallVector<Value> Fa2GradBody::blockGradients(
    const GradArguments &args, Value status, Value straddles, bool withP,
    bool withDs,
    function_ref<ScoreElement(int64_t mt, int64_t nt, int64_t i, int64_t j)>
        at) {
  int64_t nTiles = s.blockN / 8;
  SmallVector<Type> types(s.mTiles() * nTiles * 4 * (withP + withDs), f32);
  auto elements = [&](Value mask, bool masked) {
    SmallVector<Value> ps, dss;
    for (int64_t mt = 0; mt < s.mTiles(); ++mt)
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            auto [p, ds] = gradients(at(mt, nt, i, j), mask, masked);
            if (withP)
              ps.push_back(p);
            if (withDs)
              dss.push_back(ds);
          }
    ps.append(dss);
    return ps;
  };
  auto withMask = [&](Value mask) {
    return uniformBranch(
        straddles, types, [&] { return elements(mask, /*masked=*/true); },
        [&] { return elements(mask, /*masked=*/false); });
  };
  if (!args.mask || !status)
    return withMask(args.mask);
  return uniformBranch(
      isStatus(status, BlockMaskValue::kFull), types,
      [&] { return withMask(Value()); }, [&] { return withMask(args.mask); });
}

void Fa2GradBody::keyBlock(const GradArguments &args, Value batch, Value kvHead,
                           Value block) {
  const AttentionProblem &p = s.problem;
  int64_t kFragments = s.mTiles() * (p.headDim / 8);
  Value key0 = mul(block, index(s.blockM));
  Value ownRows = copyOwnRows({args.k, args.kMap}, {args.v, args.vMap}, batch,
                              kvHead, key0, keyLen);
  // Rows wider than 128 take dV, then dK, in a walk each (the fragments of
  // both take 256 registers at D = 256), dV stored before the second walk
  // so that its fragments are not live through it.
  // Every key of the tensor gets its dK and dV: 0 past the sequence's
  // length.
  auto store = [&](ArrayRef<Value> fragments, bool key) {
    storeRows(fragments, key ? p.headDim : p.valueDim, key ? s.scale : 1.0f,
              key ? args.gradKey : args.gradValue, batch, kvHead, key0,
              index(p.keyLen));
  };
  if (std::max(p.headDim, p.valueDim) > kGradBothAtOnce) {
    assert(!s.tensorCopies() && "one walk a CTA with tensor copies "
                                "(gradTensorCopiesUnfit)");
    store(walkQueryBlocks(args, batch, kvHead, key0, /*value=*/true,
                          /*key=*/false),
          /*key=*/false);
    store(walkQueryBlocks(args, batch, kvHead, key0, /*value=*/false,
                          /*key=*/true),
          /*key=*/true);
  } else {
    SmallVector<Value> both = walkQueryBlocks(args, batch, kvHead, key0,
                                              /*value=*/true, /*key=*/true);
    store(ArrayRef<Value>(both).take_front(kFragments), /*key=*/true);
    store(ArrayRef<Value>(both).drop_front(kFragments), /*key=*/false);
  }
  if (ownRows)
    waitGroups(ownRows, 0);
}

SmallVector<Value> Fa2GradBody::walkQueryBlocks(const GradArguments &args,
                                                Value batch, Value kvHead,
                                                Value key0, bool value,
                                                bool key) {
  const AttentionProblem &p = s.problem;
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8;
  int64_t kFragments = key ? mTiles * (p.headDim / 8) : 0;
  MaskGeometry<IndexArith> geometry = this->geometry();
  Value queryBegin, queryEnd;
  std::tie(queryBegin, queryEnd) =
      geometry.queryBlockRange(key0, index(s.blockM), s.blockN);
  // A block past the sequence's keys (key lengths) is seen by no row.
  if (args.keyLengths)
    queryEnd = arith::SelectOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, key0,
                              keyLen.length),
        queryEnd, queryBegin);
  // dK's fragments, then dV's, those asked for.
  SmallVector<Value> init(kFragments + (value ? mTiles * (p.valueDim / 8) : 0),
                          zeroFragment());

  // Over the query heads of the group and the query blocks that see the
  // key block. With tensor copies, the walk's group u is query block
  // queryBegin + u mod `visited` of the group's head u / `visited`.
  int64_t group = p.groupSize();
  Value visited = arith::SubIOp::create(b, queryEnd, queryBegin);
  Value groups = mul(visited, index(group));
  auto blockOf = [&](Value u) -> std::pair<Value, Value> {
    Value head =
        add(mul(kvHead, index(group)), arith::DivUIOp::create(b, u, visited));
    Value queryBlock = add(queryBegin, arith::RemUIOp::create(b, u, visited));
    return {head, mul(queryBlock, index(s.blockN))};
  };
  StreamSource source{args.qMap, args.gradOutMap, batch, blockOf,
                      /*keys=*/false};
  if (s.tensorCopies())
    startWalk(source, groups);
  auto heads = scf::ForOp::create(
      b, index(0), index(group), index(1), init,
      [&](OpBuilder &, Location, Value g, ValueRange acc) {
        Value head = add(mul(kvHead, index(group)), g);
        auto blocks = scf::ForOp::create(
            b, queryBegin, queryEnd, index(1), acc,
            [&](OpBuilder &, Location, Value queryBlock, ValueRange state) {
              Value query0 = mul(queryBlock, index(s.blockN));
              Value status =
                  blockStatus(args.blockMask, batch, head, query0, key0);
              StreamTiles stream =
                  s.tensorCopies()
                      ? streamStep(source,
                                   add(mul(g, visited),
                                       arith::SubIOp::create(b, queryBlock,
                                                             queryBegin)),
                                   groups)
                      : oneStage;
              scf::YieldOp::create(
                  b, unlessEmpty(status, state, [&] {
                    Value streamed;
                    if (!s.tensorCopies()) {
                      // Every warp is done with the previous block's tiles.
                      gpu::BarrierOp::create(b);
                      copyTile(args.q, batch, head, query0, s.blockN, queryLen,
                               p.headDim, stream.a.view);
                      streamed = commit(copyTile(args.gradOut, batch, head,
                                                 query0, s.blockN, queryLen,
                                                 p.valueDim, stream.b.view));
                    }
                    rowStatistics(args, batch, head, query0, s.blockN);
                    // The statistics (and cp.async's tiles) everyone's.
                    if (s.tensorCopies()) {
                      gpu::BarrierOp::create(b);
                    } else {
                      waitGroups(streamed, 0);
                      tilesReady();
                    }
                    // S^T = K Q^T, and for dS, dP^T = V dO^T.
                    auto [scores, dps] = scoreProducts(stream, /*withDp=*/key);
                    Value queryRows =
                        geometry.queryBlockRows(queryBlock, s.blockN).second;
                    int64_t elements = mTiles * nTiles * 4;
                    SmallVector<Value> results = blockGradients(
                        args, status,
                        geometry.needsElementMask(query0, queryRows, key0,
                                                  add(key0, index(s.blockM))),
                        value, key,
                        [&](int64_t mt, int64_t nt, int64_t i, int64_t j) {
                          // S^T's rows are keys, its columns queries.
                          Value col = add(index(nt * 8 + j),
                                          layout.cCol(laneInGroup, 0));
                          return ScoreElement{
                              element(scores[mt][nt], i, j),
                              key ? element(dps[mt][nt], i, j) : Value(),
                              memref::LoadOp::create(b, lseRows, col),
                              key ? memref::LoadOp::create(b, dsumRows, col)
                                  : Value(),
                              batch,
                              head,
                              add(query0, col),
                              add(key0, fragmentRow(mt, i))};
                        });
                    ArrayRef<Value> flat(results);
                    SmallVector<Value> next(state.begin(), state.end());
                    MutableArrayRef<Value> all(next);
                    // dK += dS^T Q, dV += P^T dO.
                    if (key) {
                      SmallVector<Value> gradKey(all.take_front(kFragments));
                      accumulate(gradKey, flat.take_back(elements), stream.a,
                                 p.headDim);
                      llvm::copy(gradKey, all.begin());
                    }
                    if (value) {
                      SmallVector<Value> gradValue(all.drop_front(kFragments));
                      accumulate(gradValue, flat.take_front(elements), stream.b,
                                 p.valueDim);
                      llvm::copy(gradValue, all.begin() + kFragments);
                    }
                    return next;
                  }));
            });
        scf::YieldOp::create(b, blocks.getResults());
      });
  // What LICM hoists out of the walk over the group's heads stays live
  // through it: D = 96, GQA 2:1, Sq = 1 spilled 4 bytes on sm_90a with it.
  disableLoopInvariantCodeMotion(heads);
  return SmallVector<Value>(heads.getResults());
}

void Fa2GradBody::queryBlock(const GradArguments &args, Value batch, Value head,
                             Value block) {
  const AttentionProblem &p = s.problem;
  int64_t mTiles = s.mTiles();
  MaskGeometry<IndexArith> geometry = this->geometry();
  Value query0 = mul(block, index(s.blockM));
  Value kvHead = arith::DivUIOp::create(b, head, index(p.groupSize()));
  Value ownRows =
      copyOwnRows({args.q, args.qMap}, {args.gradOut, args.gradOutMap}, batch,
                  head, query0, queryLen);
  // The LSE and Dsum of the lane's rows, through shared memory.
  rowStatistics(args, batch, head, query0, s.blockM);
  gpu::BarrierOp::create(b);
  SmallVector<Value> lse2, dsum;
  for (int64_t mt = 0; mt < mTiles; ++mt)
    for (int64_t i = 0; i < 2; ++i) {
      lse2.push_back(memref::LoadOp::create(b, lseRows, fragmentRow(mt, i)));
      dsum.push_back(memref::LoadOp::create(b, dsumRows, fragmentRow(mt, i)));
    }
  Value rows = geometry.queryBlockRows(block, s.blockM).second;
  Value blockBegin, blockEnd;
  std::tie(blockBegin, blockEnd) =
      geometry.kvBlockRange(query0, rows, s.blockN);
  SmallVector<Value> init(mTiles * (p.headDim / 8), zeroFragment());
  // With tensor copies, group u is key/value block blockBegin + u.
  Value blocks = arith::SubIOp::create(b, blockEnd, blockBegin);
  auto blockOf = [&](Value u) -> std::pair<Value, Value> {
    return {kvHead, mul(add(blockBegin, u), index(s.blockN))};
  };
  StreamSource source{args.kMap, args.vMap, batch, blockOf, /*keys=*/true};
  if (s.tensorCopies())
    startWalk(source, blocks);
  auto loop = scf::ForOp::create(
      b, blockBegin, blockEnd, index(1), init,
      [&](OpBuilder &, Location, Value kvBlock, ValueRange state) {
        Value key0 = mul(kvBlock, index(s.blockN));
        Value status = blockStatus(args.blockMask, batch, head, query0, key0);
        StreamTiles stream =
            s.tensorCopies()
                ? streamStep(source,
                             arith::SubIOp::create(b, kvBlock, blockBegin),
                             blocks)
                : oneStage;
        scf::YieldOp::create(
            b, unlessEmpty(status, state, [&] {
              if (!s.tensorCopies()) {
                gpu::BarrierOp::create(b);
                copyTile(args.k, batch, kvHead, key0, s.blockN, keyLen,
                         p.headDim, stream.a.view);
                waitGroups(
                    commit(copyTile(args.v, batch, kvHead, key0, s.blockN,
                                    keyLen, p.valueDim, stream.b.view)),
                    0);
                tilesReady();
              }
              // S = Q K^T and dP = dO V^T.
              auto [scores, dps] = scoreProducts(stream, /*withDp=*/true);
              SmallVector<Value> flat = blockGradients(
                  args, status,
                  geometry.needsElementMask(query0, rows, key0,
                                            add(key0, index(s.blockN))),
                  /*withP=*/false, /*withDs=*/true,
                  [&](int64_t mt, int64_t nt, int64_t i, int64_t j) {
                    return ScoreElement{element(scores[mt][nt], i, j),
                                        element(dps[mt][nt], i, j),
                                        lse2[2 * mt + i],
                                        dsum[2 * mt + i],
                                        batch,
                                        head,
                                        add(query0, fragmentRow(mt, i)),
                                        add(add(key0, index(nt * 8 + j)),
                                            layout.cCol(laneInGroup, 0))};
                  });
              // dQ += dS K.
              SmallVector<Value> acc(state.begin(), state.end());
              accumulate(acc, flat, stream.a, p.headDim);
              return acc;
            }));
      });
  if (ownRows)
    waitGroups(ownRows, 0);
  SmallVector<Value> acc(loop.getResults());
  storeRows(acc, p.headDim, s.scale, args.gradQuery, batch, head, query0,
            queryLen.length);
}

void Fa2GradBody::build(const GradArguments &args) {
  const AttentionProblem &p = s.problem;
  Value batch = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  queryLen = extent(index(p.queryLen));
  Value keys = index(p.keyLen);
  if (args.keyLengths)
    keys = MaskGeometry<IndexArith>::sequenceKeys(
        arith,
        arith::IndexCastOp::create(
            b, b.getIndexType(),
            memref::LoadOp::create(b, args.keyLengths, ValueRange{batch})),
        keys);
  // keyLen: the sequence's Sk (its key length, clamped to Sk, with key
  // lengths); the gradient packs no heads.
  keyLen = extent(keys);
  tiledLen = queryLen;
  setUpLanes();
  warpRow = mul(warp, index(s.blockM / s.warps));
  setUpSharedMemory();
  // Layout (fa2GradSharedBytes): the own rows' two tiles, the streamed
  // block's two in each stage, the LSE and Dsum arrays, then with tensor
  // copies the mbarriers.
  rowsA = {sharedTile(shared, index(0), s.blockM, keyRow()), index(0)};
  Value rowsBOffset = index(tileBytes(s.blockM, keyRow()));
  rowsB = {sharedTile(shared, rowsBOffset, s.blockM, valueRow()), rowsBOffset};
  products = createProductUnit(*this, s.matrixUnit());
  streamOffset = tileBytes(s.blockM, streamRow());
  if (!s.tensorCopies())
    oneStage = streamTiles(index(0));
  int64_t offset = streamOffset + s.stages * stageBytes();
  int64_t statistics = std::max(s.blockM, s.blockN);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto arrayType = MemRefType::get({statistics}, f32,
                                   MemRefLayoutAttrInterface(), workgroup);
  lseRows =
      memref::ViewOp::create(b, arrayType, shared, index(offset), ValueRange{});
  dsumRows = memref::ViewOp::create(
      b, arrayType, shared, index(offset + 4 * statistics), ValueRange{});
  if (s.tensorCopies()) {
    barriers = add(sharedAddress, index(offset + 8 * statistics));
    initBarriers();
  }

  Value cta = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  int64_t keyBlocks = llvm::divideCeil(p.keyLen, s.blockM);
  int64_t queryBlocks = llvm::divideCeil(p.queryLen, s.blockM);
  Value keyCtas = index(keyBlocks * p.kvHeads);
  auto role = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, cta, keyCtas),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.thenBlock());
    keyBlock(args, batch, arith::DivUIOp::create(b, cta, index(keyBlocks)),
             arith::RemUIOp::create(b, cta, index(keyBlocks)));
    b.setInsertionPointToStart(role.elseBlock());
    Value local = arith::SubIOp::create(b, cta, keyCtas);
    queryBlock(args, batch,
               arith::DivUIOp::create(b, local, index(queryBlocks)),
               arith::RemUIOp::create(b, local, index(queryBlocks)));
  }
}

namespace mlir::attn {

FailureOr<KernelShape> analyseGradKernel(AttentionGradOp op,
                                         MatrixUnitRequest request) {
  if (failed(checkComputeCapability(op, "the gradient")))
    return failure();
  std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
  if (!problem)
    return op.emitError("attn-to-nvgpu's backward kernel needs static sizes "
                        "(run-time lengths are not supported on the GPU yet): "
                        "run the gradient on the CPU (attn-to-cpu)");
  auto unsupported = [&](StringRef what) {
    return op.emitError("attn-to-nvgpu's backward kernel does not support ")
           << what << " yet: run the gradient on the CPU (attn-to-cpu)";
  };
  // A region without a derivative has no gradient anywhere; one that has
  // one and that the kernel cannot inline runs on the CPU.
  if (op.hasScoreModifier()) {
    if (Operation *stop = findUndifferentiableOp(op.getScore()))
      return op.emitError("attn-to-nvgpu's backward kernel: the score region "
                          "uses the score in '")
             << stop->getName() << "', which has no derivative rule";
    if (failed(checkScoreRegion(op.getScore())))
      return failure();
  }
  if (op.getInitGradMask())
    return unsupported("the mask's gradient");
  if (op.getPartitionAttr())
    return op.emitError("attn-to-nvgpu's backward kernel has its own "
                        "schedule (a CTA per key/value block and per query "
                        "block); the partition ")
           << op.getPartitionAttr()
           << " cuts the CPU's loops: drop it for the GPU";
  Type element = op.getQuery().getType().getElementType();
  if (!element.isF16() && !element.isBF16())
    return op.emitError("attn-to-nvgpu supports f16 and bf16 operands, got ")
           << element
           << ": the tensor cores multiply 16-bit inputs, or run the gradient "
              "on the CPU (attn-to-cpu)";
  for (Value tensor : {Value(op.getKey()), Value(op.getValue()),
                       Value(op.getOut()), Value(op.getGradOut()),
                       op.getGradQuery(), op.getGradKey(), op.getGradValue()})
    if (getElementTypeOrSelf(tensor) != element)
      return op.emitError("attn-to-nvgpu's backward kernel needs K, V, O, dO, "
                          "dQ, dK and dV in the element type of Q (")
             << element << "), got " << getElementTypeOrSelf(tensor);
  for (int64_t dim : {problem->headDim, problem->valueDim})
    if (dim % kChunk != 0 || dim > kGradMaxHeadDim)
      return op.emitError("attn-to-nvgpu's backward kernel needs head "
                          "dimensions that are multiples of 8 up to ")
             << kGradMaxHeadDim << "; got D = " << problem->headDim
             << ", Dv = " << problem->valueDim
             << ": run the gradient on the CPU (attn-to-cpu)";
  Fa2Tiling tiling = fa2GradKernelTiling(problem->headDim, problem->valueDim);
  if (Fa2TilesAttr tiles = op.getTilesAttr();
      tiles && (tiles.getBlockM() != tiling.blockM ||
                tiles.getBlockN() != tiling.blockN))
    return op.emitError("attn-to-nvgpu's backward kernel takes ")
           << tiling.blockM << " x " << tiling.blockN
           << " tiles at D = " << problem->headDim
           << ", Dv = " << problem->valueDim << "; got " << tiles.getBlockM()
           << " x " << tiles.getBlockN()
           << ": drop the tiles attribute for the GPU";
  KernelShape shape{
      *problem,      element, tiling.blockM, tiling.blockN, tiling.warps,
      tiling.stages, 0,       false};
  // The op's #attn.kernel as it is, or the plan of attn-select-schedule's
  // function.
  std::string why;
  KernelAttr kernel = op.getKernelAttr();
  if (kernel) {
    if (failed(checkUnitRequest(kernel, request, why)) ||
        failed(checkGradKernelPlan(op, kernel, why)))
      return op.emitError("attn-to-nvgpu: ") << why;
  } else {
    FailureOr<KernelAttr> planned = planGradKernel(op, request, why);
    if (failed(planned))
      return op.emitError("attn-to-nvgpu: ") << why;
    kernel = *planned;
  }
  shape.kernel = kernel;
  shape.keyLengths = op.hasKeyLengths();
  if (kernel.tensorCopies()) {
    shape.stages = fa2GradKernelTiling(problem->headDim, problem->valueDim,
                                       /*tensorCopies=*/true)
                       .stages;
  }
  if (Value mask = op.getMask())
    shape.maskElement = getElementTypeOrSelf(mask);
  if (op.hasScoreModifier())
    shape.scoreRegion = &op.getScore();
  if (std::optional<std::pair<int64_t, int64_t>> blocks =
          op.getBlockMaskBlock()) {
    // Both walks' tiles (block_m own rows, block_n streamed ones) nest in
    // the blocks, in either direction: a status per visited block.
    auto [maskRows, maskKeys] = *blocks;
    if (maskRows % tiling.blockM != 0 || maskKeys % tiling.blockM != 0)
      return op.emitError("attn-to-nvgpu's backward kernel needs block-mask "
                          "blocks whose rows and keys are multiples of ")
             << tiling.blockM << " (its tiles nest in them both ways); got "
             << maskRows << " x " << maskKeys
             << ": run the gradient on the CPU (attn-to-cpu)";
    shape.blockMaskRows = maskRows;
    shape.blockMaskKeys = maskKeys;
    // A constant block mask is a table in the kernel.
    DenseElementsAttr values;
    if (matchPattern(op.getBlockMask(), m_Constant(&values)))
      shape.blockMaskValues = values;
  }
  shape.scale = op.getEffectiveScale();
  shape.scaleLog2 = shape.scale * static_cast<float>(M_LOG2E);
  if (std::optional<APFloat> softcap = op.getSoftcap())
    shape.softcap = softcap->convertToFloat();
  TargetAttr target = getEnclosingTarget(op);
  int64_t sharedLimit =
      target ? target.getSmemPerBlock() : kSm80SharedBytesPerBlock;
  if (gradSharedBytes(shape) > sharedLimit)
    return op.emitError("attn-to-nvgpu's backward kernel needs ")
           << gradSharedBytes(shape) << " bytes of shared memory per block; "
           << "the target allows " << sharedLimit;
  return shape;
}

int64_t gradSharedBytes(const KernelShape &s) {
  return fa2GradSharedBytes(s.tiling(), s.problem.headDim, s.problem.valueDim,
                            s.tensorCopies(), s.keyLengths);
}

SmallVector<int64_t> gradGrid(const KernelShape &s) {
  const AttentionProblem &p = s.problem;
  int64_t keyCtas = llvm::divideCeil(p.keyLen, s.blockM) * p.kvHeads;
  int64_t queryCtas = llvm::divideCeil(p.queryLen, s.blockM) * p.queryHeads;
  return {keyCtas + queryCtas, p.batch, 1};
}

void buildFa2GradKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                        const GradArguments &args) {
  Fa2GradBody(b, s).build(args);
}

} // namespace mlir::attn
