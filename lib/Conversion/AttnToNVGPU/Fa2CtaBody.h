//===- Fa2CtaBody.h - FlashAttention-2's CTA body ---------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-2's forward loop over a range of key/value blocks, K and V
// staged through shared memory by cp.async, P kept in registers, the rows of
// the query block split between the warps (split-Q); its two products on
// mma.sync m16n8k16 (sm_80 and later) or on warpgroup MMA (sm_90a,
// WarpgroupMma.h), chosen by KernelShape::matrixUnit.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H

#include "CtaBody.h"

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"
#include "attn/Conversion/AttnToNVGPU/TileCopyLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::attn {

/// FlashAttention-2's CTA body (CtaBody.h has what each call does). Its state:
/// the O accumulators [mTiles][Dv / 8] (C fragments), then m (base 2) and l
/// per m tile, each a pair for the lane's rows g and g + 8. Values are named
/// after the algorithm. exp2 and log2 are NVVM's approximate intrinsics (what
/// FlashAttention's exp2f compiles to), so the PTX needs no libdevice.
class Fa2CtaBody final : public CtaBody {
public:
  Fa2CtaBody(ImplicitLocOpBuilder &b, const KernelShape &shape)
      : b(b), s(shape), f32(b.getF32Type()), arith{b}, layout{arith} {}

  void setUp(const KernelLengths &lengths) override;
  MaskGeometry<IndexArith> geometry() override {
    return {arith,
            queryLen.length,
            keyLen.length,
            s.problem.causalHidesKeys(),
            s.problem.window,
            std::nullopt,
            s.problem.packedHeads};
  }
  Value loadQueryBlock(Value q, Value batch, Value head, Value row0) override;
  CtaState initialState() override;
  CtaState runKvRange(const KeyValueOperands &kv, Value qGroup, Value batch,
                      Value head, Value kvHead, Value row0, Value rows,
                      Value blockBegin, Value blockEnd) override;
  void storeOutput(const CtaState &state, Value o, Value lse, Value batch,
                   Value head, Value row0) override;
  void storePartial(const CtaState &state, Value partialO, Value partialLse,
                    Value slot, Value row0) override;
  CtaState mergePartials(const CtaState &state, Value partialO,
                         Value partialLse, Value first, Value last,
                         Value row0) override;
  /// The epilogue stages O through the Q tile: a barrier.
  void finishTile() override;

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, value);
  }
  /// `value` as the index of a mask's (block mask's or mask operand's)
  /// dimension of `size`: 0 where the dimension broadcasts (size 1).
  Value broadcastIndex(int64_t size, Value value) {
    return size == 1 ? index(0) : value;
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
  /// The score `x` (natural units) after the softcap and the score region,
  /// at query `row` and `key` of query head `head` in batch `batch`.
  Value modifyScore(Value x, Value batch, Value head, Value row, Value key);
  /// The element of the mask operand `mask` at query `row` and `key` of
  /// query head `head` in batch `batch`, read from global memory (size-1
  /// batch and head dimensions broadcast). A row past the tensor's reads its
  /// last one, and so does a key with `clampKey`, which a block that ends
  /// past Sk needs (its element mask hides those keys).
  Value maskOperandElement(Value mask, Value batch, Value head, Value row,
                           Value key, bool clampKey);
  /// A constant tensor as a constant memref.global of the kernel's module,
  /// read at the kernel's entry.
  Value constantTable(DenseElementsAttr values);
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
  bool blockedTiles() const { return s.matrixUnit == MatrixUnit::Wgmma; }

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

  /// Whether row `rowInTile` of the output tile whose first tiled row is
  /// `row0` is a query row (below Sq, or Sq x packed heads).
  Value isQueryRow(Value row0, Value rowInTile) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                 add(row0, rowInTile), tiledLen.length);
  }

  /// cp.async of rows [row0, row0 + rows) of `source[batch, head]`, whose
  /// rows have `columns` elements, into `tile`, in 16-byte chunks up to the
  /// next multiple of 16 elements (an mma k step); rows at or past `length`
  /// and chunks past `columns` are zero-filled. With `tiledRows`, `head`
  /// and the rows are a tiled head's (queryRowOf). Returns the tokens of the
  /// copies every thread makes, which `commit` groups.
  SmallVector<Value> copyTile(Value source, Value batch, Value head, Value row0,
                              int64_t rows, Extent length, int64_t columns,
                              Value tile, bool tiledRows = false);
  /// The query head and query row of tiled row `row` of tiled head `head`.
  std::pair<Value, Value> queryRowOf(Value head, Value row) {
    MaskGeometry<IndexArith> g = geometry();
    return {g.queryHead(head, row), g.queryRow(row)};
  }
  Value commit(ArrayRef<Value> tokens) {
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  }
  /// Waits until at most `pending` committed groups are still in flight.
  void waitGroups(Value group, int32_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(pending));
  }

  /// The tile views of dynamic shared memory: `rows` rows of `columns`
  /// elements (a multiple of 64), as tileIndex indexes them.
  Value sharedTile(Value base, Value byteOffset, int64_t rows, int64_t columns);
  /// The K and V tiles of a pipeline stage, and their byte offsets in
  /// shared memory.
  struct StageTiles {
    Value k, v, kOffset, vOffset;
  };
  StageTiles kvTiles(Value stage);
  /// S = Q K^T of the warp's m16 tiles: [mTiles][block_n / 8] C fragments.
  SmallVector<SmallVector<Value>> scoreProducts(const StageTiles &tiles);
  /// acc += P V, acc the O fragments [mTiles][Dv / 8], `pFrags` P's A
  /// fragments [mTiles][block_n / 16].
  void valueProducts(SmallVector<Value> &acc,
                     ArrayRef<SmallVector<Value>> pFrags,
                     const StageTiles &tiles);
  /// C fragments (vector<2x2xf32>) as their elements in order, and back:
  /// the registers of a wgmma accumulator (WarpgroupMma.h).
  SmallVector<Value> elementsOf(ArrayRef<Value> fragments);
  SmallVector<Value> fragmentsOf(ArrayRef<Value> elements);
  /// A or B fragment rows (pairs of 16-bit values) as 32-bit registers.
  SmallVector<Value> packedRegisters(Value fragment);
  /// The cp.async of the K and V tiles of `block` into `stage`, as one group.
  Value copyKV(Value k, Value v, Value batch, Value kvHead, Value block,
               Value stage);
  /// Shared-memory layout: the Q block, then `stages` K tiles, then
  /// `stages` V tiles.
  int64_t kTileBytes() const { return s.blockN * 2 * s.keyRow(); }
  int64_t vTileBytes() const { return s.blockN * 2 * s.valueRow(); }
  int64_t kBase() const { return s.blockM * 2 * s.queryRow(); }
  int64_t vBase() const { return kBase() + s.stages * kTileBytes(); }

  /// ldmatrix.x`numTiles` of the 8x8 matrices whose rows lane l addresses
  /// at row `row0 + laneRow`, 16-byte chunk `col0 / 8 + laneChunk` (the
  /// mma.sync products only, whose tiles keep whole rows).
  Value ldmatrix(Value tile, Value row0, Value laneRow, Value laneChunk,
                 int64_t col0, int64_t numTiles, bool transpose);
  /// Per-lane ldmatrix operands.
  Value loadA(Value tile, Value row0, int64_t col0);
  Value loadB(Value tile, Value row0, int64_t col0);
  Value loadBTransposed(Value tile, Value row0, int64_t col0);

  /// D = A B + C, m16n8k16. nvgpu.mma.sync for f16; for bf16, whose
  /// nvgpu lowering cannot name the PTX type, nvvm.mma.sync on the packed
  /// 32-bit registers.
  Value mma(Value a, Value bFrag, Value c);

  /// max / sum of `value` over the 4 lanes of a quad.
  Value quadReduce(Value value, bool isMax);

  /// Per row of the lane (m tile mt, i = 0 for row g, 1 for row g + 8):
  /// the row sum, 1 / sum (0 for an empty row), and the natural LSE (-inf
  /// for an empty row).
  struct RowTotal {
    Value sum, inverse, lse;
  };
  RowTotal rowTotal(const CtaState &state, int64_t mt, int64_t i);
  /// The row within the tile of C-fragment row i of m tile mt of the lane.
  Value fragmentRow(int64_t mt, int64_t i);
  /// Where a lane's elements of O tile ot sit in a [block_m, Dv] slot.
  Value fragmentCol(int64_t ot) {
    return add(index(ot * 8), layout.cCol(laneInGroup, 0));
  }

  ImplicitLocOpBuilder &b;
  const KernelShape &s;
  Type f32;
  IndexArith arith;
  /// Every lane-to-element and lane-to-address formula (unit-tested).
  FragmentLayout<IndexArith> layout;
  Value lane, groupId, laneInGroup, tid, warp;
  /// The first row of this warp's slice of the query block.
  Value warpRow;
  /// Sq, Sk, and the tiled rows p Sq of a tiled head.
  Extent queryLen, keyLen, tiledLen;
  /// Dynamic shared memory, its Q tile, and the same memory as the O block's
  /// staging tile (rows Dv wide); with wgmma, its shared-window address
  /// and the descriptor of the warpgroup's rows of the Q tile.
  Value shared, qTile, oTile, sharedAddress, queryDescriptor;
  /// Per-lane ldmatrix row offsets and chunk offsets (see loadA/B).
  Value laneRow16, laneRow8, laneHalf16, laneHalf8, vRow, vChunk, lanePhase;

  OpBuilder::InsertPoint entryPoint;
  DenseMap<std::pair<int64_t, void *>, Value> entryValues;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2CTABODY_H
