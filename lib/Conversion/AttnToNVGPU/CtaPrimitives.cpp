//===- CtaPrimitives.cpp - The building blocks of the CTA bodies ----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Which lane holds which element of the A, B and C fragments, which row each
// lane addresses in an ldmatrix, and the shared-memory swizzle are
// FragmentLayout's formulas (unit-tested against the PTX ISA).
//
//===----------------------------------------------------------------------===//

#include "CtaPrimitives.h"
#include "TensorCopy.h"
#include "WarpgroupMma.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

Value CtaPrimitives::swizzle(Value row, Value col) {
  Value chunk = arith::DivUIOp::create(b, col, index(kChunk));
  Value within = arith::RemUIOp::create(b, col, index(kChunk));
  return add(mul(layout.swizzledChunk(chunk, row), index(kChunk)), within);
}

std::pair<Value, Value> CtaPrimitives::tileIndex(Value row, Value col,
                                                 int64_t tileRows) {
  if (!blockedTiles())
    return {row, swizzle(row, col)};
  Value block = arith::DivUIOp::create(b, col, index(kBlockColumns));
  Value within = arith::RemUIOp::create(b, col, index(kBlockColumns));
  return {add(row, mul(block, index(tileRows))), swizzle(row, within)};
}

Value CtaPrimitives::atEntry(std::pair<int64_t, void *> key,
                             function_ref<Value()> build) {
  Value &value = entry->values[key];
  if (!value) {
    OpBuilder::InsertionGuard guard(b);
    b.restoreInsertionPoint(entry->point);
    value = build();
    entry->point = b.saveInsertionPoint();
  }
  return value;
}

Value CtaPrimitives::swizzledColumn(int64_t chunk0, Value laneChunk,
                                    Value phase) {
  int64_t low = chunk0 % 8;
  // Every ldmatrix row is the lane's row mod 8 plus a multiple of 8, so the
  // swizzle of the lane's row is that of the lane itself (`phase`).
  Value within = atEntry({low, laneChunk.getAsOpaquePointer()}, [&] {
    Value chunk = add(index(low), laneChunk);
    return mul(layout.swizzledChunk(chunk, lane), index(kChunk));
  });
  return add(index((chunk0 - low) * kChunk), within);
}

Value CtaPrimitives::sharedTile(Value base, Value byteOffset, int64_t rows,
                                int64_t columns) {
  int64_t blocks = blockedTiles() ? columns / kBlockColumns : 1;
  auto type = MemRefType::get(
      {blocks * rows, columns / blocks}, s.element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  return memref::ViewOp::create(b, type, base, byteOffset, ValueRange{});
}

SmallVector<Value> CtaPrimitives::copyTile(Value source, Value batch,
                                           Value head, Value row0, int64_t rows,
                                           Extent length, int64_t columns,
                                           Value tile, RowMap rowOf) {
  TileCopyLayout<IndexArith> copy(
      arith, rows, llvm::alignTo(columns, 16) / kChunk, s.consumerThreads());
  // The thread's row in round 0 and its chunk and column, and, when the
  // rows of a round are a multiple of the swizzle period 8, its
  // shared-memory column, are the same in every copy with as many threads a
  // row: computed once at the kernel's entry.
  int64_t key = -8 * copy.lanesPerRow;
  Value laneRow =
      atEntry({key - 1, nullptr}, [&] { return copy.laneRow(tid); });
  Value laneChunk =
      atEntry({key - 2, nullptr}, [&] { return copy.chunk(tid); });
  Value col = atEntry({key - 3, nullptr},
                      [&] { return mul(laneChunk, index(kChunk)); });
  // In blocked tiles, the thread's column lies in 64-column block col / 64
  // (rows further in the tile), at col % 64 of its row there.
  Value laneColumn = col, blockRow;
  if (blockedTiles()) {
    Value laneBlock = atEntry({key - 4, nullptr}, [&] {
      return arith::DivUIOp::create(b, col, index(kBlockColumns));
    });
    laneColumn = atEntry({key - 5, nullptr}, [&] {
      return arith::RemUIOp::create(b, col, index(kBlockColumns));
    });
    blockRow = mul(laneBlock, index(rows));
  }
  Value laneSharedCol;
  if (copy.rowsPerRound() % 8 == 0)
    laneSharedCol = atEntry({key - 6, nullptr},
                            [&] { return swizzle(laneRow, laneColumn); });
  SmallVector<Value> tokens;
  for (int64_t round = 0; round < copy.rounds(); ++round) {
    Value row = copy.row(laneRow, round);
    // The threads that copy nothing in this round skip it. Their copies'
    // tokens are not needed: cp.async.commit_group groups every copy the
    // thread issued before it.
    std::optional<OpBuilder::InsertionGuard> guarded;
    bool idleThreads = copy.hasIdleThreads(round);
    if (idleThreads) {
      guarded.emplace(b);
      auto ifOp = scf::IfOp::create(b, copy.copies(laneChunk, row, round),
                                    /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    // Past the end of the rows or the columns: read nothing (the address
    // stays in bounds) and fill 0.
    Value sourceRow = add(row0, row);
    Value inBounds = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                           sourceRow, length.length);
    Value clamped = arith::MinUIOp::create(b, sourceRow, length.last);
    Value sourceHead = head;
    if (rowOf)
      std::tie(sourceHead, clamped) = rowOf(head, clamped);
    Value sourceCol = col;
    if (columns % 16 != 0) {
      inBounds = arith::AndIOp::create(
          b, inBounds,
          arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col,
                                index(columns)));
      sourceCol = arith::MinUIOp::create(b, col, index(columns - kChunk));
    }
    Value elements =
        arith::SelectOp::create(b, inBounds, index(kChunk), index(0));
    Value token = nvgpu::DeviceAsyncCopyOp::create(
        b, tile,
        ValueRange{blockRow ? add(row, blockRow) : row,
                   laneSharedCol ? laneSharedCol : swizzle(row, laneColumn)},
        source, ValueRange{batch, sourceHead, clamped, sourceCol},
        b.getIndexAttr(kChunk), elements, /*bypassL1=*/b.getUnitAttr());
    if (!idleThreads)
      tokens.push_back(token);
  }
  return tokens;
}

Value CtaPrimitives::zeroFragment() {
  Type fragC = VectorType::get({2, 2}, f32);
  return arith::ConstantOp::create(
      b, fragC, DenseElementsAttr::get(cast<ShapedType>(fragC), 0.0f));
}

Value CtaPrimitives::constantTable(DenseElementsAttr values) {
  return atEntry({-2, const_cast<void *>(values.getAsOpaquePointer())}, [&] {
    auto module =
        b.getBlock()->getParentOp()->getParentOfType<gpu::GPUModuleOp>();
    auto type =
        MemRefType::get(values.getType().getShape(), values.getElementType());
    SymbolTable symbols(module);
    OpBuilder detached(b.getContext());
    auto table = memref::GlobalOp::create(
        detached, b.getLoc(), "attn_table", detached.getStringAttr("private"),
        type, values, /*constant=*/true, /*alignment=*/IntegerAttr());
    // Renamed when the module already has the name.
    symbols.insert(table, module.getBody()->begin());
    return memref::GetGlobalOp::create(b, type, table.getSymName());
  });
}

void CtaPrimitives::inlineScoreOp(Operation &op, IRMapping &mapping) {
  // A constant tensor is a table in global memory, read element by element.
  if (op.getNumResults() == 1 && isa<TensorType>(op.getResult(0).getType()))
    return;
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    DenseElementsAttr values;
    matchPattern(extract.getTensor(), m_Constant(&values));
    // Rows past Sq (never stored) and keys past Sk (hidden) reach the
    // region too: their reads are clamped to the table's last element, so
    // that every read is in bounds (an immediate operand: no register).
    SmallVector<Value> indices;
    for (auto [dim, position] : llvm::enumerate(extract.getIndices()))
      indices.push_back(arith::MinUIOp::create(
          b, scoreValue(position, mapping),
          index(std::max<int64_t>(values.getType().getDimSize(dim) - 1, 0))));
    mapping.map(op.getResult(0),
                memref::LoadOp::create(b, constantTable(values), indices));
    return;
  }
  for (Value operand : op.getOperands())
    scoreValue(operand, mapping);
  Value in = op.getNumOperands() ? mapping.lookup(op.getOperand(0)) : Value();
  Value lowered =
      llvm::TypeSwitch<Operation *, Value>(&op)
          .Case([&](math::TanhOp) { return tanh(in); })
          .Case([&](math::ExpOp) { return exp2(mulF(in, f32Const(M_LOG2E))); })
          .Case([&](math::Exp2Op) { return exp2(in); })
          .Case([&](math::LogOp) { return mulF(log2(in), f32Const(M_LN2)); })
          .Case([&](math::Log2Op) { return log2(in); })
          // |x| = max(x, -x) and sqrt.rn: the LLVM intrinsics fabs and
          // sqrt are not legal in the NVVM lowering.
          .Case([&](math::AbsFOp) {
            return maxF(in, arith::NegFOp::create(b, in));
          })
          .Case([&](math::SqrtOp) {
            return intrinsic("llvm.nvvm.sqrt.rn.f", in);
          })
          .Default([](Operation *) { return Value(); });
  if (lowered)
    mapping.map(op.getResult(0), lowered);
  else
    b.clone(op, mapping);
}

Value CtaPrimitives::maskOperandElement(Value mask, Value batch, Value head,
                                        Value row, Value key, bool clampKey) {
  auto type = cast<MemRefType>(mask.getType());
  // The last row and key of the tensor, where reads past Sq and Sk are
  // clamped to (their scores are never stored, or hidden).
  auto last = [&](int64_t dim) {
    return atEntry({-3 - dim, mask.getAsOpaquePointer()}, [&] {
      return arith::SubIOp::create(b, b.createOrFold<memref::DimOp>(mask, dim),
                                   index(1));
    });
  };
  Value maskRow = arith::MinUIOp::create(b, row, last(2));
  Value maskKey = clampKey ? arith::MinUIOp::create(b, key, last(3)) : key;
  return memref::LoadOp::create(
      b, mask,
      ValueRange{broadcastIndex(type.getDimSize(0), batch),
                 broadcastIndex(type.getDimSize(1), head), maskRow, maskKey});
}

Value CtaPrimitives::applyMaskElement(Value x, Value element) {
  if (element.getType().isInteger(1))
    return arith::SelectOp::create(
        b, element, x, f32Const(-std::numeric_limits<float>::infinity()));
  return addF(x, element.getType() == f32
                     ? element
                     : arith::ExtFOp::create(b, f32, element));
}

Value CtaPrimitives::quadReduce(Value value, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value other = gpu::ShuffleOp::create(b, value, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = isMax ? maxF(value, other) : addF(value, other);
  }
  return value;
}

CtaPrimitives::Extent CtaPrimitives::extent(Value length) {
  if (std::optional<int64_t> known = getConstantIntValue(length))
    return {length, index(std::max<int64_t>(*known - 1, 0))};
  // A sequence's key length may be 0: its copies then read row 0, which
  // every tensor has, and fill zeros.
  return {length, arith::MaxSIOp::create(
                      b, arith::SubIOp::create(b, length, index(1)), index(0))};
}

SmallVector<Value> CtaPrimitives::elementsOf(ArrayRef<Value> fragments) {
  SmallVector<Value> elements;
  for (Value fragment : fragments)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t c = 0; c < 2; ++c)
        elements.push_back(
            vector::ExtractOp::create(b, fragment, ArrayRef<int64_t>{i, c}));
  return elements;
}

SmallVector<Value> CtaPrimitives::fragmentsOf(ArrayRef<Value> elements) {
  SmallVector<Value> fragments;
  auto type = VectorType::get({2, 2}, f32);
  for (size_t j = 0; j < elements.size(); j += 4)
    fragments.push_back(
        vector::FromElementsOp::create(b, type, elements.slice(j, 4)));
  return fragments;
}

SmallVector<Value> CtaPrimitives::packedRegisters(Value fragment) {
  SmallVector<Value> words;
  int64_t rows = cast<VectorType>(fragment.getType()).getDimSize(0);
  for (int64_t r = 0; r < rows; ++r) {
    Value halves = vector::ExtractOp::create(b, fragment, r);
    Value word = vector::BitCastOp::create(
        b, VectorType::get({1}, b.getI32Type()), halves);
    words.push_back(vector::ExtractOp::create(b, word, 0));
  }
  return words;
}

Value CtaPrimitives::tanh(Value x) {
  Value e = exp2(mulF(x, f32Const(2.0 * M_LOG2E)));
  Value reciprocal =
      intrinsic("llvm.nvvm.rcp.approx.ftz.f", addF(e, f32Const(1.0)));
  return subF(f32Const(1.0), mulF(f32Const(2.0), reciprocal));
}

void CtaPrimitives::setUpLanes() {
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, tid, index(kWarpSize));
  warp = arith::DivUIOp::create(b, tid, index(kWarpSize));
  groupId = layout.groupId(lane);
  laneInGroup = layout.laneInGroup(lane);
  // ldmatrix rows start at multiples of 8, so a lane's row mod 8 (its
  // swizzle phase) is lane mod 8 in every load.
  laneRow16 = layout.aRow(lane);
  laneHalf16 = layout.aChunk(lane);
  laneRow8 = layout.bRow(lane);
  laneHalf8 = layout.bChunk(lane);
  vRow = layout.vRow(lane);
  vChunk = layout.vChunk(lane);
  lanePhase = laneRow8;
}

void CtaPrimitives::setUpSharedMemory() {
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  shared = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), workgroup));
  // Per-lane values that addresses share are built ahead of the shared
  // memory's views, whatever the body builds after them.
  Operation *sharedOp = shared.getDefiningOp();
  entry->point =
      OpBuilder::InsertPoint(sharedOp->getBlock(), Block::iterator(sharedOp));
  if (blockedTiles())
    sharedAddress = memref::ExtractAlignedPointerAsIndexOp::create(b, shared);
}

void CtaPrimitives::copyTileByTensorMap(Value map, Value batch, Value head,
                                        Value row0, int64_t tileRows,
                                        int64_t boxRows, int64_t columns,
                                        Value offset, Value barrier) {
  // The tile's 64-column blocks lie one after the other, tileRows rows of
  // 128 bytes each, in the 128-byte swizzle the map writes with; a box of
  // boxRows rows (a multiple of 8) starts at a multiple of 1024 bytes,
  // where the swizzle's pattern starts again.
  assert(tileRows % boxRows == 0 && boxRows % 8 == 0 && "whole boxes");
  for (int64_t block = 0; block < columns / kBlockColumns; ++block)
    for (int64_t rows = 0; rows < tileRows; rows += boxRows)
      tensorCopy(
          b,
          sharedPointer(b, add(sharedAddress,
                               add(offset, index((block * tileRows + rows) *
                                                 kSwizzleRowBytes)))),
          map,
          ValueRange{index(block * kBlockColumns),
                     rows ? add(row0, index(rows)) : row0, head, batch},
          barrier);
}

CtaPrimitives::TileTail CtaPrimitives::keyBlockTail(Value key0, Value length,
                                                    Value offset,
                                                    int64_t columns,
                                                    Value copied) {
  Value partial = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                        add(key0, index(s.blockN)), length);
  if (copied)
    partial = arith::AndIOp::create(b, copied, partial);
  return {offset, s.blockN, columns, arith::SubIOp::create(b, length, key0),
          partial};
}

void CtaPrimitives::copyZeroingTails(Value full, Value own,
                                     ArrayRef<TileTail> tails,
                                     function_ref<void(Value barrier)> issue) {
  Value partial = tails.front().partial;
  for (const TileTail &tail : tails.drop_front())
    partial = arith::OrIOp::create(b, partial, tail.partial);
  auto ifPartial = scf::IfOp::create(b, partial, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifPartial.elseBlock());
  issue(full);
  b.setInsertionPointToStart(ifPartial.thenBlock());
  mbarrierInit(b, own, /*arrivals=*/1);
  fenceMbarrierInit(b);
  issue(own);
  mbarrierWait(b, own, arith::ConstantIntOp::create(b, b.getI32Type(), 0));
  for (const TileTail &tail : tails) {
    auto ifTail = scf::IfOp::create(b, tail.partial, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard tailGuard(b);
    b.setInsertionPointToStart(ifTail.thenBlock());
    zeroTail(tail, index(0), 1);
  }
  // The zeros, generic writes, before the products' reads through the
  // async proxy; the arrival releases them (and the copies the thread
  // waited for) to the threads that wait on `full`.
  fenceProxyAsyncShared(b);
  mbarrierInval(b, own);
  mbarrierArrive(b, full);
}

void CtaPrimitives::zeroTail(const TileTail &tail, Value thread,
                             int64_t threads) {
  // The tile's 64-column blocks lie one after the other, `rows` rows of
  // 128 bytes each (copyTileByTensorMap): a row's 128 bytes are contiguous
  // whatever the swizzle, so each block's keys from firstZero on are one
  // run of bytes, zeroed 16 at a time, thread t taking the chunks t,
  // t + threads, ...
  auto chunk = VectorType::get({4}, b.getI32Type());
  Value zeros = arith::ConstantOp::create(
      b, chunk, DenseElementsAttr::get(chunk, b.getI32IntegerAttr(0)));
  Value first =
      add(mul(tail.firstZero, index(kSwizzleRowBytes)), mul(thread, index(16)));
  for (int64_t block = 0; block < tail.columns / kBlockColumns; ++block) {
    Value base = add(tail.offset, index(block * tail.rows * kSwizzleRowBytes));
    scf::ForOp::create(b, add(base, first),
                       add(base, index(tail.rows * kSwizzleRowBytes)),
                       index(16 * threads), ValueRange{},
                       [&](OpBuilder &, Location, Value at, ValueRange) {
                         LLVM::StoreOp::create(
                             b, zeros, sharedPointer(b, add(sharedAddress, at)),
                             /*alignment=*/16);
                         scf::YieldOp::create(b);
                       });
  }
}

Value CtaPrimitives::mbarrierAt(Value address, Value i) {
  return sharedPointer(b, add(address, mul(i, index(kMbarrierBytes))));
}

void CtaPrimitives::waitForStage(Value barriers, Value group) {
  Value parity = arith::IndexCastUIOp::create(
      b, b.getI32Type(),
      arith::RemUIOp::create(
          b, arith::DivUIOp::create(b, group, index(s.stages)), index(2)));
  mbarrierWait(
      b,
      mbarrierAt(barriers, arith::RemUIOp::create(b, group, index(s.stages))),
      parity);
}

void CtaPrimitives::onThread(int64_t thread, function_ref<void()> build,
                             Value alsoIf) {
  Value cond =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, index(thread));
  if (alsoIf)
    cond = arith::AndIOp::create(b, cond, alsoIf);
  auto ifOp = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  build();
}

SmallVector<Value>
CtaPrimitives::uniformBranch(Value cond, TypeRange types,
                             function_ref<SmallVector<Value>()> onTrue,
                             function_ref<SmallVector<Value>()> onFalse) {
  auto ifOp = scf::IfOp::create(b, types, cond, /*withElseRegion=*/true);
  for (bool side : {true, false}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(side ? ifOp.thenBlock() : ifOp.elseBlock());
    scf::YieldOp::create(b, side ? onTrue() : onFalse());
  }
  return SmallVector<Value>(ifOp.getResults());
}

Value CtaPrimitives::blockStatus(Value parameter, Value batch, Value head,
                                 Value row0, Value key0) {
  if (!s.hasBlockMask())
    return Value();
  Value table =
      s.blockMaskValues ? constantTable(s.blockMaskValues) : parameter;
  auto type = cast<MemRefType>(table.getType());
  return memref::LoadOp::create(
      b, table,
      ValueRange{broadcastIndex(type.getDimSize(0), batch),
                 broadcastIndex(type.getDimSize(1), head),
                 arith::DivUIOp::create(b, row0, index(s.blockMaskRows)),
                 arith::DivUIOp::create(b, key0, index(s.blockMaskKeys))});
}

Value CtaPrimitives::isStatus(Value status, int8_t value) {
  return arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq, status,
      arith::ConstantIntOp::create(b, b.getI8Type(), value));
}

SmallVector<Value>
CtaPrimitives::unlessEmpty(Value status, ValueRange state,
                           function_ref<SmallVector<Value>()> body) {
  if (!status)
    return body();
  return uniformBranch(
      isStatus(status, BlockMaskValue::kEmpty), state.getTypes(),
      [&] { return SmallVector<Value>(state); }, body);
}
