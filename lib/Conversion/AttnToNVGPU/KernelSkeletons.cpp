//===- KernelSkeletons.cpp - Schedules mapped onto CTAs -------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "KernelSkeletons.h"
#include "WarpRoles.h"

#include "attn/Analysis/WorkAssignment.h"
#include "attn/Transforms/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A CTA of a grid over output tiles, (query block, batch, z): its block
/// ids, after setting `body` up with its sequence's lengths (with key
/// lengths, the sequence's entry is its Sk: MaskGeometry::sequenceKeys).
struct GridCta {
  Value queryBlock, batch, z;

  static GridCta setUp(ImplicitLocOpBuilder &b, CtaBody &body,
                       const KernelArguments &args) {
    GridCta cta{gpu::BlockIdOp::create(b, gpu::Dimension::x),
                gpu::BlockIdOp::create(b, gpu::Dimension::y),
                gpu::BlockIdOp::create(b, gpu::Dimension::z)};
    KernelLengths lengths = args.lengths;
    if (args.keyLengths) {
      IndexArith a{b};
      Value length = arith::IndexCastOp::create(
          b, b.getIndexType(),
          memref::LoadOp::create(b, args.keyLengths, ValueRange{cta.batch}));
      lengths.keyLen =
          MaskGeometry<IndexArith>::sequenceKeys(a, length, lengths.keyLen);
    }
    body.setUp(lengths);
    return cta;
  }
};

/// Query block `queryBlock` of (batch, head), an output tile of a grid over
/// query blocks: its rows, its loaded Q, and the key/value blocks its rows
/// can see. With GQA packing, `head` is a tiled head and the rows are its
/// tiled rows (MaskGeometry.h).
struct OutputTile {
  Value batch, head, kvHead, row0, rows, query, blockBegin, blockEnd;

  static OutputTile load(ImplicitLocOpBuilder &b, CtaBody &body, IndexArith &a,
                         const KernelShape &s, const KernelArguments &args,
                         Value queryBlock, Value batch, Value head) {
    OutputTile t{batch, head};
    t.kvHead = a.div(a.mul(head, s.problem.packedHeads), s.problem.groupSize());
    MaskGeometry<IndexArith> geometry = body.geometry();
    std::tie(t.row0, t.rows) = geometry.queryBlockRows(queryBlock, s.blockM);
    t.query = body.loadQueryBlock(args.q, args.qMap, batch, head, t.row0);
    std::tie(t.blockBegin, t.blockEnd) =
        geometry.kvBlockRange(t.row0, t.rows, s.blockN);
    return t;
  }

  /// The CTA body over key/value blocks [begin, end) of the tile.
  CtaState run(CtaBody &body, const KernelArguments &args, Value begin,
               Value end) const {
    return body.runKvRange(args.kv, query, batch, head, kvHead, row0, rows,
                           begin, end);
  }
};

/// Thread 0's release of its CTA's stores (ordered before it by a barrier):
/// a GPU-scope fence, then an atomic increment of counters[index], whose
/// value before it is returned.
Value releaseAndIncrement(ImplicitLocOpBuilder &b, Value counters,
                          Value index) {
  NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  return memref::AtomicRMWOp::create(b, arith::AtomicRMWKind::addi,
                                     arith::ConstantIntOp::create(b, 1, 32),
                                     counters, ValueRange{index});
}

} // namespace

namespace mlir::attn {

void disableLoopInvariantCodeMotion(Operation *loop) {
  MLIRContext *context = loop->getContext();
  auto keep = LLVM::LoopLICMAttr::get(context, BoolAttr::get(context, true),
                                      /*versioningDisable=*/nullptr);
  loop->setAttr(LLVM::BrOp::getLoopAnnotationAttrName(
                    OperationName(LLVM::BrOp::getOperationName(), context)),
                LLVM::LoopAnnotationAttr::get(context, {}, {}, {}, {}, {}, keep,
                                              {}, {}, {}, {}, {}, {}, {}, {},
                                              {}));
}

void buildFa2Kernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                    const KernelArguments &args) {
  buildForEachWarpRole(b, s, [&](CtaBody &body) {
    auto [queryBlock, batch, head] = GridCta::setUp(b, body, args);
    IndexArith a{b};
    auto tile = OutputTile::load(b, body, a, s, args, queryBlock, batch, head);
    CtaState state = tile.run(body, args, tile.blockBegin, tile.blockEnd);
    body.storeOutput(state, args.out, batch, head, tile.row0);
  });
  gpu::ReturnOp::create(b);
}

void buildSplitKvKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                        const KernelArguments &args) {
  Value partialO = args.workspaces[0], partialLse = args.workspaces[1],
        counters = args.workspaces[2];
  buildForEachWarpRole(b, s, [&](CtaBody &body) {
    auto [queryBlock, batch, headSplit] = GridCta::setUp(b, body, args);
    IndexArith a{b};
    Value head = a.div(headSplit, s.splits);
    Value split = a.sub(headSplit, a.mul(head, s.splits));
    auto tile = OutputTile::load(b, body, a, s, args, queryBlock, batch, head);
    auto [pieceBegin, pieceEnd] =
        splitKVPiece(a, tile.blockBegin, tile.blockEnd, split, s.splits);
    CtaState state = tile.run(body, args, pieceBegin, pieceEnd);

    // Output tile (b, h, m) owns slots [S t, S t + S) and counter t.
    Value queryBlocks = gpu::GridDimOp::create(b, gpu::Dimension::x);
    Value tileIndex = a.add(
        a.mul(a.add(a.mul(batch, s.problem.tiledHeads()), head), queryBlocks),
        queryBlock);
    Value firstSlot = a.mul(tileIndex, s.splits);
    body.storePartial(state, partialO, partialLse, a.add(firstSlot, split),
                      tile.row0);

    // A release: the CTA's stores happen before the barrier, thread 0's fence
    // orders them (cumulatively) before its increment. The barrier's OR
    // tells every thread whether thread 0 saw the other S - 1 pieces done.
    ctaBarrier(b, s);
    Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    Value isFirstThread =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, a.constant(0));
    auto count = scf::IfOp::create(b, TypeRange{b.getI1Type()}, isFirstThread,
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(count.thenBlock());
      Value before = releaseAndIncrement(b, counters, tileIndex);
      scf::YieldOp::create(
          b, ValueRange{arith::CmpIOp::create(
                 b, arith::CmpIPredicate::eq, before,
                 arith::ConstantIntOp::create(b, s.splits - 1, 32))});
      b.setInsertionPointToStart(count.elseBlock());
      scf::YieldOp::create(b,
                           ValueRange{arith::ConstantIntOp::create(b, 0, 1)});
    }
    Value isLast = ctaBarrierAny(b, s, count.getResult(0));
    auto merge = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
    b.setInsertionPointToStart(merge.thenBlock());
    // An acquire: thread 0's fence after it saw the count, then the barrier,
    // orders the CTA's loads of the partials after the other pieces' stores.
    auto acquire =
        scf::IfOp::create(b, isFirstThread, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(acquire.thenBlock());
      NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    }
    ctaBarrier(b, s);
    CtaState merged =
        body.mergePartials(body.initialState(), partialO, partialLse, firstSlot,
                           a.add(firstSlot, s.splits - 1), tile.row0);
    body.storeOutput(merged, args.out, batch, head, tile.row0);
    // Every piece of the tile has counted: the next launch starts from zero.
    auto reset = scf::IfOp::create(b, isFirstThread, /*withElseRegion=*/false);
    b.setInsertionPointToStart(reset.thenBlock());
    memref::StoreOp::create(b, arith::ConstantIntOp::create(b, 0, 32), counters,
                            ValueRange{tileIndex});
    b.setInsertionPointAfter(merge);
  });
  gpu::ReturnOp::create(b);
}

void buildLeanKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                     const KernelArguments &args) {
  const AttentionProblem &p = s.problem;
  Value q = args.q, qMap = args.qMap;
  const OutputOperands &out = args.out;
  const KeyValueOperands &kv = args.kv;
  Value partialO = args.workspaces[0], partialLse = args.workspaces[1],
        flags = args.workspaces[2];

  buildForEachWarpRole(b, s, [&](CtaBody &body) {
    Value cta = gpu::BlockIdOp::create(b, gpu::Dimension::x);
    body.setUp(args.lengths);
    IndexArith a{b};
    Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);

    // The LeanTiles of one (batch, head): the key/value blocks each query
    // block's rows see.
    MaskGeometry<IndexArith> geometry = body.geometry();
    Value queryBlocks = a.ceilDiv(geometry.tiledRows(), s.blockM);
    int64_t heads = p.tiledHeads();
    Value batchHeads = a.mul(args.lengths.batch, heads);
    LeanWork<IndexArith> work = LeanWork<IndexArith>::create(
        a, geometry, s.blockM, s.blockN, queryBlocks, batchHeads,
        a.constant(s.leanCtas),
        /*oneQueryBlock=*/!ShapedType::isDynamic(p.queryLen) &&
            s.queryBlocks() == 1);
    LeanAssignment<IndexArith> &lean = work.assignment;
    // Output tiles are numbered b * Hq + h (tiled heads with GQA packing).
    auto splitBatchHead = [&](Value batchHead) {
      Value batch = a.div(batchHead, heads);
      return std::make_pair(batch, a.sub(batchHead, a.mul(batch, heads)));
    };
    Value begin = lean.ctaBegin(cta);
    Value end = lean.ctaBegin(a.add(cta, 1));

    // The walk carries its next LeanTile and the output tile of the previous
    // piece: its (batch, head) (none at first), query block and the offset of
    // its first LeanTile in the head.
    Type index = b.getIndexType();
    auto walk = scf::WhileOp::create(
        b, TypeRange{index, index, index, index},
        ValueRange{begin, a.constant(-1), a.constant(0), a.constant(0)},
        [&](OpBuilder &, Location, ValueRange args) {
          scf::ConditionOp::create(b, a.lt(args[0], end), args);
        },
        [&](OpBuilder &, Location, ValueRange args) {
          Value g = args[0];
          // The output tile holding the LeanTile and the piece of it.
          LeanWork<IndexArith>::Piece piece =
              work.pieceAt(g, end, queryBlocks, args[1], args[2], args[3]);
          Value batchHead = piece.batchHead, queryBlock = piece.queryBlock,
                tileFirst = piece.tileFirst, tileLast = piece.tileLast,
                pieceEnd = piece.pieceEnd;
          auto [row0, rows] = geometry.queryBlockRows(queryBlock, s.blockM);
          Value tileBegin = geometry.kvBlockRange(row0, rows, s.blockN).first;
          auto [batch, head] = splitBatchHead(batchHead);
          Value kvHead = a.div(a.mul(head, p.packedHeads), p.groupSize());

          body.finishTile();
          Value query = body.loadQueryBlock(q, qMap, batch, head, row0);
          Value blockBegin = a.add(tileBegin, a.sub(g, tileFirst));
          Value blockEnd = a.add(tileBegin, a.sub(pieceEnd, tileFirst));
          CtaState state = body.runKvRange(kv, query, batch, head, kvHead, row0,
                                           rows, blockBegin, blockEnd);

          Value isHost =
              arith::CmpIOp::create(b, arith::CmpIPredicate::eq, g, tileFirst);
          Value covers = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                               pieceEnd, tileLast);
          Value isFirstThread = arith::CmpIOp::create(
              b, arith::CmpIPredicate::eq, tid, a.constant(0));
          auto role = scf::IfOp::create(b, isHost, /*withElseRegion=*/true);
          {
            // A contributor: publish the partial, then the flag. The CTA's
            // stores happen before the barrier, thread 0's fence orders them
            // (cumulatively) before its flag update: a release.
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(role.elseBlock());
            body.storePartial(state, partialO, partialLse, cta, row0);
            ctaBarrier(b, s);
            auto signal = scf::IfOp::create(b, isFirstThread, false);
            b.setInsertionPointToStart(signal.thenBlock());
            releaseAndIncrement(b, flags, cta);
          }
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(role.thenBlock());
          auto alone = scf::IfOp::create(b, covers, /*withElseRegion=*/true);
          b.setInsertionPointToStart(alone.thenBlock());
          body.storeOutput(state, out, batch, head, row0);
          b.setInsertionPointToStart(alone.elseBlock());
          // A host with contributors: CTAs cta + 1 .. ctaOf(last LeanTile).
          Value first = a.add(cta, 1);
          Value last = lean.ctaOf(a.sub(tileLast, 1));
          auto wait = scf::IfOp::create(b, isFirstThread, false);
          {
            OpBuilder::InsertionGuard waitGuard(b);
            b.setInsertionPointToStart(wait.thenBlock());
            scf::ForOp::create(
                b, first, a.add(last, 1), a.constant(1), ValueRange{},
                [&](OpBuilder &, Location, Value contributor, ValueRange) {
                  // Spin on an atomic read (add 0) of the contributor's flag.
                  scf::WhileOp::create(
                      b, TypeRange{}, ValueRange{},
                      [&](OpBuilder &, Location, ValueRange) {
                        Value flag = memref::AtomicRMWOp::create(
                            b, arith::AtomicRMWKind::addi,
                            arith::ConstantIntOp::create(b, 0, 32), flags,
                            ValueRange{contributor});
                        Value unset = arith::CmpIOp::create(
                            b, arith::CmpIPredicate::eq, flag,
                            arith::ConstantIntOp::create(b, 0, 32));
                        scf::ConditionOp::create(b, unset, ValueRange{});
                      },
                      [&](OpBuilder &, Location, ValueRange) {
                        scf::YieldOp::create(b);
                      });
                  scf::YieldOp::create(b);
                });
            // An acquire: thread 0's fence after it saw every flag, then the
            // barrier, orders the CTA's loads of the partials after them.
            NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
          }
          ctaBarrier(b, s);
          CtaState merged = body.mergePartials(state, partialO, partialLse,
                                               first, last, row0);
          body.storeOutput(merged, out, batch, head, row0);
          b.setInsertionPointAfter(role);
          scf::YieldOp::create(
              b, ValueRange{pieceEnd, batchHead, queryBlock, piece.tileOffset});
        });
    disableLoopInvariantCodeMotion(walk);
    b.setInsertionPointAfter(walk);

    // Output tiles with no visible key (causal rows before the first key, any
    // tile when Sk = 0 at run time) have no LeanTile: the CTAs share the
    // output tiles out, round-robin, and write O = 0, LSE = -inf into those.
    bool mayBeEmpty =
        !p.hasStaticLengths() ||
        llvm::is_contained(p.kvBlockCounts(s.blockM, s.blockN), 0);
    if (mayBeEmpty)
      scf::ForOp::create(
          b, cta, a.mul(batchHeads, queryBlocks), a.constant(s.leanCtas),
          ValueRange{}, [&](OpBuilder &, Location, Value tile, ValueRange) {
            Value batchHead = a.div(tile, queryBlocks);
            Value queryBlock = a.sub(tile, a.mul(batchHead, queryBlocks));
            Value empty = a.eq(work.order.blocksOf(queryBlock), a.constant(0));
            auto store = scf::IfOp::create(b, empty, /*withElseRegion=*/false);
            b.setInsertionPointToStart(store.thenBlock());
            auto [batch, head] = splitBatchHead(batchHead);
            body.finishTile();
            body.storeOutput(body.initialState(), out, batch, head,
                             a.mul(queryBlock, s.blockM));
            b.setInsertionPointAfter(store);
            scf::YieldOp::create(b);
          });
  });
  gpu::ReturnOp::create(b);
}

} // namespace mlir::attn
