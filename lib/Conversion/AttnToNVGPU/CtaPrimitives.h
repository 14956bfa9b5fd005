//===- CtaPrimitives.h - The building blocks of the CTA bodies --*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What every CTA body of attn-to-nvgpu and each of its components builds
// from: the per-lane values of the fragment layouts, the CTA's rows and
// their mask geometry, tiles of dynamic shared memory (16-byte chunks
// XOR-swizzled), cp.async and tensor copies of tiles from global memory,
// quad reductions and the hardware's approximate math. The forward's body
// (Fa2CtaBody) and the backward's (Fa2GradBody) derive from it, and so do
// their components (SoftmaxStep, CtaEpilogue, the product units, the
// operand stagings), each a copy of its body's, so a fragment or an
// address is formed one way in every kernel.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_CTAPRIMITIVES_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_CTAPRIMITIVES_H

#include "CtaBody.h"

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"
#include "attn/Conversion/AttnToNVGPU/TileCopyLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn {

/// A tile of dynamic shared memory: its view (indexed as tileIndex says)
/// and its byte offset (what wgmma's descriptors and tensor copies take).
struct SharedTile {
  Value view, offset;
};

class CtaPrimitives {
protected:
  CtaPrimitives(ImplicitLocOpBuilder &b, const KernelShape &shape)
      : b(b), s(shape), f32(b.getF32Type()), arith{b}, layout{arith},
        entry(std::make_shared<EntryValues>()) {}
  /// A component of the same CTA (a body's softmax step, its epilogue):
  /// the lanes, rows and shared memory `cta` set up, and the values built
  /// at the kernel's entry, shared with it.
  CtaPrimitives(const CtaPrimitives &cta)
      : b(cta.b), s(cta.s), f32(cta.f32), arith{cta.b}, layout{arith},
        lane(cta.lane), groupId(cta.groupId), laneInGroup(cta.laneInGroup),
        tid(cta.tid), warp(cta.warp), shared(cta.shared),
        sharedAddress(cta.sharedAddress), laneRow16(cta.laneRow16),
        laneRow8(cta.laneRow8), laneHalf16(cta.laneHalf16),
        laneHalf8(cta.laneHalf8), vRow(cta.vRow), vChunk(cta.vChunk),
        lanePhase(cta.lanePhase), warpRow(cta.warpRow), queryLen(cta.queryLen),
        keyLen(cta.keyLen), tiledLen(cta.tiledLen), entry(cta.entry) {}
  CtaPrimitives &operator=(const CtaPrimitives &) = delete;

  /// The thread's lane, warp and the lane's ldmatrix offsets (below), at
  /// the kernel's entry.
  void setUpLanes();
  /// The dynamic shared memory; values built later by atEntry go before it.
  void setUpSharedMemory();

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, value);
  }
  Value f32Const(double value) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value addF(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value mulF(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value subF(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value maxF(Value x, Value y) { return arith::MaximumFOp::create(b, x, y); }
  Value exp2(Value x) { return intrinsic("llvm.nvvm.ex2.approx.ftz.f", x); }
  Value log2(Value x) { return intrinsic("llvm.nvvm.lg2.approx.ftz.f", x); }
  /// tanh(x) = 1 - 2 / (2^(2 x log2(e)) + 1) with ex2.approx and
  /// rcp.approx: within about 1e-7 of tanh absolutely (tanh.approx.f32 errs
  /// up to 2^-11 relatively), and no division's slow path.
  Value tanh(Value x);
  Value intrinsic(StringRef name, Value x) {
    return LLVM::CallIntrinsicOp::create(b, f32, b.getStringAttr(name),
                                         ValueRange{x})
        .getResult(0);
  }

  /// The column at which element `col` (< 64) of row `row` of a 64-column
  /// block is stored: 16-byte chunks XOR-swizzled with row % 8, so that the
  /// 8 rows an ldmatrix phase reads, and the 8 chunks of a row a cp.async
  /// phase writes, fall in distinct banks.
  Value swizzle(Value row, Value col);
  /// Where element (row, col) of a tile of `tileRows` rows is stored in its
  /// view. For wgmma (blockedTiles) tiles are kept as 64-column blocks one
  /// after the other ([columns / 64][tileRows][64], each block swizzled as
  /// above), the 128-byte swizzle's canonical layout that wgmma reads
  /// (K-major for Q and K, MN-major for V) and a tensor copy with a
  /// 64-element box writes; for mma.sync as whole rows ([tileRows][columns],
  /// each row's 64-column blocks swizzled as above), which costs its
  /// address arithmetic a register less (D = 256 on sm_80 spilled with
  /// blocks).
  std::pair<Value, Value> tileIndex(Value row, Value col, int64_t tileRows);
  bool blockedTiles() const { return s.matrixUnit() == MatrixUnit::Wgmma; }

  /// The swizzled column of 16-byte chunk `chunk0 + laneChunk` in a row
  /// whose index is `phase` mod 8, with `laneChunk` 0 or 1 and `chunk0` even
  /// when it can be 1. The lane-dependent part is computed once at the
  /// kernel's entry, so every address in the loop is a per-lane base plus a
  /// constant.
  Value swizzledColumn(int64_t chunk0, Value laneChunk, Value phase);
  /// Builds `build` at the kernel's entry, once per `key`.
  Value atEntry(std::pair<int64_t, void *> key, function_ref<Value()> build);

  /// A run-time length and its last index (length - 1, and 0 for an empty
  /// length), built at the entry.
  struct Extent {
    Value length, last;
  };
  Extent extent(Value length);

  /// The source head and row of row `row` of head `head` of a copied tile
  /// (a tiled head's rows with GQA packing, MaskGeometry.h); null: the
  /// head's own rows.
  using RowMap = function_ref<std::pair<Value, Value>(Value, Value)>;
  /// cp.async of rows [row0, row0 + rows) of `source[batch, head]`, whose
  /// rows have `columns` elements, into `tile`, in 16-byte chunks up to the
  /// next multiple of 16 elements (an mma k step); rows at or past `length`
  /// and chunks past `columns` are zero-filled. Returns the tokens of the
  /// copies every thread makes, which `commit` groups.
  SmallVector<Value> copyTile(Value source, Value batch, Value head, Value row0,
                              int64_t rows, Extent length, int64_t columns,
                              Value tile, RowMap rowOf = nullptr);
  Value commit(ArrayRef<Value> tokens) {
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  }
  /// Waits until at most `pending` committed groups are still in flight.
  void waitGroups(Value group, int32_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(pending));
  }

  /// Tensor copies (sm_90a, blocked tiles) of rows [row0, row0 +
  /// `tileRows`) of `map`'s tensor at (batch, head) into the tile at shared
  /// offset `offset`, whose rows have `columns` elements: a copy a 64-column
  /// block and `boxRows` rows (the map's box), completing on `barrier`.
  void copyTileByTensorMap(Value map, Value batch, Value head, Value row0,
                           int64_t tileRows, int64_t boxRows, int64_t columns,
                           Value offset, Value barrier);
  /// A tile that copyTileByTensorMap filled (`rows` rows of `columns`
  /// elements at shared offset `offset`) whose rows from `firstZero` on
  /// are keys past a sequence's length, where `partial` (i1) holds.
  struct TileTail {
    Value offset;
    int64_t rows, columns;
    Value firstZero, partial;
  };
  /// The tail of a tile of s.blockN keys from `key0` (at shared `offset`,
  /// `columns` wide) for a sequence of `length` keys: partial where the
  /// block ends past them (and `copied`, an i1, holds when given).
  TileTail keyBlockTail(Value key0, Value length, Value offset, int64_t columns,
                        Value copied = Value());
  /// The issuing thread's copy group of tensor copies, which `issue` issues
  /// (an arrive.expect_tx on the mbarrier it is given, then the copies),
  /// completing `full`'s phase. Where a tile of `tails` is partial, the
  /// copies land on `own` (the thread's mbarrier, initialised for the group
  /// and invalidated after it) first, the thread zeroes the tiles' keys
  /// past the sequence's length (the padding of K and V, which may hold
  /// anything: P V and dS K multiply it by 0), fences them for the async
  /// proxy that wgmma reads through, and only then arrives on `full`: what
  /// cp.async's zero-fill gives, at the cost of the issuing thread's wait
  /// for one block a range.
  void copyZeroingTails(Value full, Value own, ArrayRef<TileTail> tails,
                        function_ref<void(Value barrier)> issue);
  /// Zeroes the keys of `tail` past the sequence's length (its rows from
  /// firstZero on, in each 64-column block), shared by `threads` threads of
  /// which this is `thread`: 16-byte generic stores, which the async proxy
  /// sees only after a fence.proxy.async of each writer.
  void zeroTail(const TileTail &tail, Value thread, int64_t threads);
  /// The mbarrier `i` of the array at byte `address` of the shared window.
  Value mbarrierAt(Value address, Value i);
  /// Every thread waits for copy group `group` of a ring of s.stages stages
  /// (the groups take the stages in turn), each guarded by a "full"
  /// mbarrier of the array at `barriers`: the phase (group / stages) % 2 of
  /// the mbarrier of stage group % stages.
  void waitForStage(Value barriers, Value group);

  /// The tile views of dynamic shared memory: `rows` rows of `columns`
  /// elements (a multiple of 64), as tileIndex indexes them.
  Value sharedTile(Value base, Value byteOffset, int64_t rows, int64_t columns);

  /// C fragments (vector<2x2xf32>) as their elements in order, and back:
  /// the registers of a wgmma accumulator (WarpgroupMma.h).
  SmallVector<Value> elementsOf(ArrayRef<Value> fragments);
  SmallVector<Value> fragmentsOf(ArrayRef<Value> elements);
  /// A or B fragment rows (pairs of 16-bit values) as 32-bit registers.
  SmallVector<Value> packedRegisters(Value fragment);

  /// A C fragment (vector<2x2xf32>) of zeros.
  Value zeroFragment();
  /// The masking geometry of the CTA's lengths (queryLen, keyLen) and the
  /// shape's packed heads.
  MaskGeometry<IndexArith> geometry() {
    return {arith,
            queryLen.length,
            keyLen.length,
            s.problem.causalHidesKeys(),
            s.problem.window,
            std::nullopt,
            s.problem.packedHeads};
  }
  /// The row within the tile of C-fragment row i (0: row g, 1: row g + 8)
  /// of m tile mt of the lane, in the warp's slice from warpRow.
  Value fragmentRow(int64_t mt, int64_t i) {
    return add(add(warpRow, index(mt * 16)),
               add(layout.cRow(groupId, 0), index(8 * i)));
  }
  /// Whether row `rowInTile` of the output tile whose first tiled row is
  /// `row0` is a query row (below Sq, or Sq x packed heads).
  Value isQueryRow(Value row0, Value rowInTile) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                 add(row0, rowInTile), tiledLen.length);
  }
  /// The query head and query row of tiled row `row` of tiled head `head`.
  std::pair<Value, Value> queryRowOf(Value head, Value row) {
    MaskGeometry<IndexArith> g = geometry();
    return {g.queryHead(head, row), g.queryRow(row)};
  }

  /// Builds `op` of a score region's body into the kernel, mapping its
  /// result in `mapping` (a ScoreOpBuilder): math ops become the hardware's
  /// approximations (no libdevice), a tensor.extract from a constant tensor
  /// a read of its table in global memory, any other op a clone; a constant
  /// tensor itself builds nothing.
  void inlineScoreOp(Operation &op, IRMapping &mapping);
  /// What `mapping` gives `value` of a score region: a scalar constant from
  /// outside the region (attn-to-nvgpu allows no other value) is cloned
  /// where it is first used.
  Value scoreValue(Value value, IRMapping &mapping) {
    if (!mapping.contains(value))
      mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));
    return mapping.lookup(value);
  }
  /// A constant tensor as a constant memref.global of the kernel's module,
  /// read at the kernel's entry.
  Value constantTable(DenseElementsAttr values);
  /// `value` as the index of a mask's (block mask's or mask operand's)
  /// dimension of `size`: 0 where the dimension broadcasts (size 1).
  Value broadcastIndex(int64_t size, Value value) {
    return size == 1 ? index(0) : value;
  }
  /// The element of the mask operand `mask` ([B or 1, Hq or 1, Sq, Sk]) at
  /// query `row` and `key` of query head `head` in batch `batch`, read from
  /// global memory (size-1 batch and head dimensions broadcast). A row past
  /// the tensor's reads its last one, and so does a key with `clampKey`,
  /// which a block that ends past Sk needs (its element mask hides those
  /// keys).
  Value maskOperandElement(Value mask, Value batch, Value head, Value row,
                           Value key, bool clampKey);
  /// The score `x` with the mask operand's `element`: an additive mask's
  /// element added (x in natural units), a boolean mask's false hiding the
  /// score (-inf, whatever the units).
  Value applyMaskElement(Value x, Value element);

  /// `cond ? onTrue() : onFalse()`, each giving values of `types`, as one
  /// uniform branch.
  SmallVector<Value> uniformBranch(Value cond, TypeRange types,
                                   function_ref<SmallVector<Value>()> onTrue,
                                   function_ref<SmallVector<Value>()> onFalse);
  /// What `build` builds, run by thread `thread` of the CTA alone (and only
  /// where `alsoIf`, an i1, holds, when given).
  void onThread(int64_t thread, function_ref<void()> build,
                Value alsoIf = Value());
  /// The block mask's status of the block of tiled rows from `row0` and keys
  /// from `key0` of (batch, head) (the tiles nest in its blocks), read from
  /// the shape's constant table or else from `parameter` (the block_mask
  /// parameter); null without a block mask.
  Value blockStatus(Value parameter, Value batch, Value head, Value row0,
                    Value key0);
  /// Whether the block mask's `status` is `value` (BlockMaskValue).
  Value isStatus(Value status, int8_t value);
  /// `body()`, the new `state` of a visited block, unless the block mask's
  /// `status` (null without one) says the block is empty: then `state`
  /// (one uniform branch).
  SmallVector<Value> unlessEmpty(Value status, ValueRange state,
                                 function_ref<SmallVector<Value>()> body);

  /// max / sum of `value` over the 4 lanes of a quad.
  Value quadReduce(Value value, bool isMax);

  ImplicitLocOpBuilder &b;
  const KernelShape &s;
  Type f32;
  IndexArith arith;
  /// Every lane-to-element and lane-to-address formula (unit-tested).
  FragmentLayout<IndexArith> layout;
  Value lane, groupId, laneInGroup, tid, warp;
  /// Dynamic shared memory, and with blocked tiles its shared-window byte
  /// address (wgmma's descriptors address shared memory so).
  Value shared, sharedAddress;
  /// Per-lane ldmatrix row offsets and chunk offsets (see loadA/B).
  Value laneRow16, laneRow8, laneHalf16, laneHalf8, vRow, vChunk, lanePhase;
  /// The first row of this warp's slice of a tile of block_m rows; Sq, the
  /// CTA's Sk (a sequence's, with key lengths), and the tiled rows p Sq of
  /// a tiled head (Sq without GQA packing). The body sets them up.
  Value warpRow;
  Extent queryLen, keyLen, tiledLen;

private:
  /// Where atEntry builds, and what it built, for every component of the
  /// CTA.
  struct EntryValues {
    OpBuilder::InsertPoint point;
    DenseMap<std::pair<int64_t, void *>, Value> values;
  };
  std::shared_ptr<EntryValues> entry;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_CTAPRIMITIVES_H
