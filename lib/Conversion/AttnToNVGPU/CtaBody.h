//===- CtaBody.h - The FlashAttention-2 CTA body on tensor cores -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What one CTA of every attention kernel runs: FlashAttention-2's forward
// loop over a range of key/value blocks with mma.sync m16n8k16, K and V
// staged through shared memory by cp.async, P kept in registers. The kernel
// skeletons (KernelSkeletons.cpp) map a schedule's work onto CTAs and call it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_CTABODY_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_CTABODY_H

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"
#include "attn/Conversion/AttnToNVGPU/TileCopyLayout.h"
#include "attn/Transforms/IndexArith.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

constexpr int64_t kWarpSize = 32;
/// Elements of a 16-byte chunk of 16-bit values: one cp.async, one row of an
/// ldmatrix 8x8 matrix.
constexpr int64_t kChunk = 8;

/// Everything the kernel is specialised for.
struct KernelShape {
  /// Batch, Sq and Sk are ShapedType::kDynamic when the kernel takes them at
  /// run time (KernelLengths).
  AttentionProblem problem;
  Type element;
  int64_t blockM, blockN, warps;
  /// Shared-memory buffers of K and V: 1, or 2 to load the next block while
  /// the current one is computed.
  int64_t stages;
  float scaleLog2;
  /// Score modification, in natural units before the masks: the softcap,
  /// then the op's score region (scalar arith and math operations, checked
  /// by attn-to-nvgpu), each when present.
  float scale = 1.0f;
  std::optional<float> softcap;
  Region *scoreRegion = nullptr;
  /// The block mask's blocks (Bq rows, Bk keys), which the tiles nest in;
  /// 0 without a block mask. Empty blocks are skipped, full ones read no
  /// mask operand.
  int64_t blockMaskRows = 0, blockMaskKeys = 0;
  /// A constant block mask's values ([B or 1, Hq or 1, Nq, Nk] i8, a table
  /// in the kernel's module); null when the kernel takes its block mask as
  /// the block_mask parameter (run-time values and lengths).
  DenseElementsAttr blockMaskValues;
  /// The mask operand's element type: i1 (a boolean mask) or a float (an
  /// additive one); null without a mask operand.
  Type maskElement;
  bool withLse;
  /// Per-sequence key lengths (key_lengths): each CTA's Sk is its
  /// sequence's.
  bool keyLengths = false;
  /// Lean attention's persistent CTAs; 0 for FlashAttention-2's grid.
  int64_t leanCtas = 0;
  /// The CTAs of a persistent kernel each SM of the target must hold at once
  /// (ceil(leanCtas / SMs)), which ptxas is held to (.minnctapersm); 0 when
  /// there is no target to count with or when that many CTAs fit the
  /// register file with every thread at the most registers it may have.
  int64_t residentCtasPerSm = 0;
  /// Split-KV's pieces of each output tile's key/value blocks; 1 for
  /// FlashAttention-2's grid.
  int64_t splits = 1;

  bool modifiesScores() const { return softcap || scoreRegion; }
  bool hasBlockMask() const { return blockMaskRows != 0; }
  /// Whether the block mask is the kernel's block_mask parameter.
  bool blockMaskParameter() const { return hasBlockMask() && !blockMaskValues; }
  int64_t threads() const { return kWarpSize * warps; }
  /// m16 tiles each warp owns.
  int64_t mTiles() const { return blockM / (16 * warps); }
  /// Query blocks per (batch, tiled head); with static lengths only.
  int64_t queryBlocks() const { return problem.queryBlocks(blockM); }
  Fa2Tiling tiling() const {
    return {blockM, blockN, warps, stages, problem.packedHeads};
  }
  /// Elements of a shared-memory row of Q and K, of V, and of the Q tile,
  /// which also stages the O block (fa2SharedRowElements: D and Dv padded
  /// to 64).
  int64_t keyRow() const { return fa2SharedRowElements(problem.headDim); }
  int64_t valueRow() const { return fa2SharedRowElements(problem.valueDim); }
  int64_t queryRow() const { return std::max(keyRow(), valueRow()); }
  /// The mma k steps of S = Q K^T: D rounded up to 16, the columns past D
  /// zero in shared memory.
  int64_t kSteps() const { return llvm::divideCeil(problem.headDim, 16); }
  /// Bytes of dynamic shared memory: the Q block, `stages` K and V tiles.
  int64_t sharedBytes() const {
    return fa2SharedMemoryBytes(tiling(), problem.headDim, problem.valueDim,
                                /*elementBytes=*/2);
  }
  /// Whether some score needs an element mask (causal, window, or a tail of
  /// keys past Sk in the last block, which a run-time Sk or a sequence's key
  /// length may have).
  bool needsElementMask() const {
    return problem.masksByPosition() || keyLengths ||
           ShapedType::isDynamic(problem.kvLen) || problem.kvLen % blockN != 0;
  }
};

/// The lengths the kernel computes with, as values of its entry block:
/// constants when the attention's are static, else read from the kernel's
/// arguments; with key lengths, kvLen is the CTA's sequence's.
struct KernelLengths {
  Value batch, queryLen, kvLen;
};

/// The tensors the CTA body reads key/value block by block, as memrefs: K
/// and V, and when the attention has them the mask operand ([B or 1, Hq or
/// 1, Sq, Sk]) and the block mask parameter ([B or 1, Hq or 1, Nq, Nk] i8;
/// null for a constant block mask, which the body reads from its table).
struct KeyValueOperands {
  Value k, v, mask, blockMask;
};

/// Whether the CTA body can inline `op` of a score region: a scalar arith
/// operation, one of the math operations it lowers to the hardware's
/// approximations (tanh, exp, exp2, log, log2, absf, sqrt), a constant
/// tensor, or a tensor.extract from one (a table in the kernel's global
/// memory).
bool isInlinableScoreOp(Operation &op);

/// The CTA body of every schedule: the FlashAttention-2 forward loop of one
/// CTA over a range of key/value blocks, and what it needs (per-thread
/// values, shared-memory tiles, the query block). Kernel skeletons decide
/// which CTA computes which (batch, head, query block, block range) and call
/// it. Values are named after the algorithm; `b` inserts into the kernel
/// body. exp2 and log2 are NVVM's approximate intrinsics (what
/// FlashAttention's exp2f compiles to), so the PTX needs no libdevice.
class CtaBody {
public:
  CtaBody(ImplicitLocOpBuilder &b, const KernelShape &shape)
      : b(b), s(shape), f32(b.getF32Type()), arith{b}, layout{arith} {}

  /// Per-thread values and the shared-memory tiles, at the kernel's entry:
  /// first, before the other calls.
  void setUp(const KernelLengths &lengths);

  /// Starts the cp.async of tiled rows [row0, row0 + block_m) of tiled head
  /// `head` of Q[batch] (a head's rows without GQA packing; MaskGeometry.h)
  /// into shared memory; returns its group.
  Value loadQueryBlock(Value q, Value batch, Value head, Value row0);

  /// The state before any key: O = 0, m = -inf, l = 0 (storeOutput gives
  /// O = 0 and LSE = -inf for it).
  SmallVector<Value> initialState();

  /// The FlashAttention-2 loop over key/value blocks [blockBegin, blockEnd)
  /// of (batch, kvHead) for the `rows` tiled rows of the query block at row0
  /// of tiled head `head` (loaded by loadQueryBlock as `qGroup`), reading
  /// `kv`: with the score modification of the shape, the block mask's empty
  /// blocks skipped, the mask operand applied outside its full blocks, and
  /// MaskGeometry's element masks on the blocks that straddle a mask
  /// boundary. Returns the final state: the O accumulators [mTiles][Dv / 8],
  /// then m and l per m tile (l a per-lane partial sum). No copy is in
  /// flight afterwards.
  SmallVector<Value> runKvRange(const KeyValueOperands &kv, Value qGroup,
                                Value batch, Value head, Value kvHead,
                                Value row0, Value rows, Value blockBegin,
                                Value blockEnd);

  /// O = acc / l into the tiled rows row0... of tiled head `head` of
  /// O[batch] (rows below p Sq) in the element type, and LSE = (m + log2 l) ln
  /// 2 when `lse` is given; rows that saw no key get 0 and -inf. `perLaneSums`:
  /// l is the lane's share of the row sum (runKvRange's state), else the whole
  /// row sum (mergePartials').
  void storeOutput(ValueRange state, Value o, Value lse, Value batch,
                   Value head, Value row0, bool perLaneSums = true);

  /// Writes the normalised partial of `state` into workspace slot `slot`:
  /// O / l as f32 into partialO[slot] ([block_m, Dv]) and its LSE into
  /// partialLse[slot] ([block_m]), each lane the elements it holds.
  void storePartial(ValueRange state, Value partialO, Value partialLse,
                    Value slot);

  /// The log-sum-exp merge of this CTA's partial (`state`, first) with the
  /// partials in workspace slots first..last (inclusive), in slot order, as
  /// a state for storeOutput with whole row sums. Deterministic: the order
  /// is fixed, whoever finished first.
  SmallVector<Value> mergePartials(ValueRange state, Value partialO,
                                   Value partialLse, Value first, Value last);

  /// The masking geometry of the attention's tiled rows, as IR.
  MaskGeometry<IndexArith> geometry() {
    return {arith,
            queryLen.length,
            kvLen.length,
            s.problem.causalHidesKeys(),
            s.problem.window,
            std::nullopt,
            s.problem.packedHeads};
  }

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

  /// The column at which element `col` of row `row` of a tile is stored:
  /// 16-byte chunks XOR-swizzled with row % 8, so that the 8 rows an
  /// ldmatrix phase reads, and the 8 chunks of a row a cp.async phase
  /// writes, fall in distinct banks.
  Value swizzle(Value row, Value col);

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
  /// elements.
  Value sharedTile(Value base, Value byteOffset, int64_t rows, int64_t columns);
  /// The K and V tiles of pipeline stage `stage`.
  std::pair<Value, Value> kvTiles(Value stage);
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
  /// at row `row0 + laneRow`, 16-byte chunk `col0 / 8 + laneChunk`.
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
  RowTotal rowTotal(ValueRange state, int64_t mt, int64_t i, bool perLaneSums);
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
  Extent queryLen, kvLen, tiledLen;
  /// Dynamic shared memory, its Q tile, and the same memory as the O block's
  /// staging tile (rows Dv wide).
  Value shared, qTile, oTile;
  /// Per-lane ldmatrix row offsets and chunk offsets (see loadA/B).
  Value laneRow16, laneRow8, laneHalf16, laneHalf8, vRow, vChunk, lanePhase;

  OpBuilder::InsertPoint entryPoint;
  DenseMap<std::pair<int64_t, void *>, Value> entryValues;
};

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_CTABODY_H
