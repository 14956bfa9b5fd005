//===- AttnToNVGPU.cpp - FlashAttention-2 kernels on tensor cores ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Builds, for each attn.attention, a gpu.func that runs FlashAttention-2's
// forward pass with mma.sync m16n8k16. Which lane holds which element of the
// A, B and C fragments, which row each lane addresses in an ldmatrix, and the
// shared-memory swizzle are FragmentLayout's formulas (unit-tested against
// the PTX ISA); the C fragments of two adjacent n8 tiles of S are, element
// for element, the A fragment of a k16 slice of P, so P never leaves the
// registers.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"
#include "attn/Conversion/AttnToNVGPU/KernelName.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/IndexArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTONVGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr int64_t kWarpSize = 32;
/// Elements of a 16-byte chunk of 16-bit values: one cp.async, one row of an
/// ldmatrix 8x8 matrix.
constexpr int64_t kChunk = 8;

/// Everything the kernel is specialised for.
struct KernelShape {
  AttentionProblem problem;
  Type element;
  int64_t blockM, blockN, warps;
  /// Shared-memory buffers of K and V: 1, or 2 to load the next block while
  /// the current one is computed.
  int64_t stages;
  float scaleLog2;
  bool withLse;

  int64_t threads() const { return kWarpSize * warps; }
  /// m16 tiles each warp owns.
  int64_t mTiles() const { return blockM / (16 * warps); }
  int64_t queryBlocks() const {
    return llvm::divideCeil(problem.queryLen, blockM);
  }
  /// Bytes of dynamic shared memory: the Q block, `stages` K and V tiles.
  int64_t sharedBytes() const {
    return fa2SharedMemoryBytes(Fa2Tiling{blockM, blockN, warps, stages},
                                problem.headDim, problem.valueDim,
                                /*elementBytes=*/2);
  }
  /// Whether some score needs an element mask (causal, window, or a tail of
  /// keys past Sk in the last block).
  bool needsElementMask() const {
    return problem.causal || problem.window ||
           problem.kvLen % blockN != 0;
  }
};

/// Why `op` cannot become a kernel, or its shape.
FailureOr<KernelShape> analyse(AttentionOp op) {
  std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
  if (!problem)
    return op.emitError("attn-to-nvgpu needs static sizes");
  Type element = op.getQuery().getType().getElementType();
  if (!element.isF16() && !element.isBF16())
    return op.emitError("attn-to-nvgpu supports f16 and bf16 operands, got ")
           << element;
  if (getElementTypeOrSelf(op.getInitOut().getType()) != element)
    return op.emitError("attn-to-nvgpu needs O in the element type of Q");
  if (op.getMask())
    return op.emitError("attn-to-nvgpu does not support the mask operand yet");
  if (op.getSoftcap())
    return op.emitError("attn-to-nvgpu does not support softcap yet");
  if (op.hasScoreModifier())
    return op.emitError("attn-to-nvgpu does not support a score region yet");
  if (op.getPartitionAttr())
    return op.emitError("attn-to-nvgpu does not support partitions yet, got ")
           << op.getPartitionAttr();
  if (problem->headDim != problem->valueDim || problem->headDim % 64 != 0)
    return op.emitError("attn-to-nvgpu needs D = Dv, a multiple of 64; got "
                        "D = ")
           << problem->headDim << ", Dv = " << problem->valueDim;

  KernelShape shape{*problem, element, 0, 0, 0, 0, 0, false};
  if (Fa2TilesAttr tiles = op.getTilesAttr()) {
    shape.blockM = tiles.getBlockM();
    shape.blockN = tiles.getBlockN();
    shape.warps = tiles.getWarps();
    shape.stages = tiles.getStages();
  } else {
    std::optional<Fa2Tiling> tiling = defaultFa2Tiling(
        problem->headDim, problem->valueDim, /*elementBytes=*/2, std::nullopt);
    if (!tiling)
      return op.emitError("no FlashAttention-2 tiling for this head dimension");
    shape.blockM = tiling->blockM;
    shape.blockN = tiling->blockN;
    shape.warps = tiling->warps;
    shape.stages = tiling->stages;
  }
  if (shape.blockM % (16 * shape.warps) != 0 || shape.blockN % 16 != 0)
    return op.emitError("attn-to-nvgpu needs block_m a multiple of 16 * warps "
                        "and block_n a multiple of 16");
  // Two stages at most, and one when two do not fit the target's shared
  // memory per block (without a target: sm_80's).
  int64_t sharedLimit = kSm80SharedBytesPerBlock;
  if (TargetAttr target = getEnclosingTarget(op))
    sharedLimit = target.getSmemPerBlock();
  shape.stages = std::min<int64_t>(shape.stages, 2);
  if (shape.stages == 2 && shape.sharedBytes() > sharedLimit)
    shape.stages = 1;
  if (shape.sharedBytes() > sharedLimit)
    return op.emitError("attn-to-nvgpu: the tiles need ")
           << shape.sharedBytes() << " bytes of shared memory per block; the "
           << "target allows " << sharedLimit;
  shape.scaleLog2 = op.getEffectiveScale() * static_cast<float>(M_LOG2E);
  shape.withLse = static_cast<bool>(op.getInitLse());
  return shape;
}

/// Builds one kernel. Values named after the algorithm; `b` inserts into the
/// kernel body. exp2 and log2 are NVVM's approximate intrinsics (what
/// FlashAttention's exp2f compiles to), so the PTX needs no libdevice.
class KernelBuilder {
public:
  KernelBuilder(ImplicitLocOpBuilder &b, const KernelShape &shape)
      : b(b), s(shape), f32(b.getF32Type()), arith{b}, layout{arith} {}

  void build(gpu::GPUFuncOp func);

private:
  Value index(int64_t value) { return arith::ConstantIndexOp::create(b, value); }
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
  Value atEntry(std::pair<int64_t, void *> key,
                function_ref<Value()> build);

  /// cp.async of rows [row0, row0 + rows) of `source[batch, head]` into
  /// `tile`; rows at or past `length` are zero-filled. Returns the copies'
  /// tokens, which `commit` groups.
  SmallVector<Value> copyTile(Value source, Value batch, Value head,
                              Value row0, int64_t rows, int64_t length,
                              Value tile);
  Value commit(ArrayRef<Value> tokens) {
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  }
  /// Waits until at most `pending` committed groups are still in flight.
  void waitGroups(Value group, int32_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, group, b.getI32IntegerAttr(pending));
  }

  /// The tile views of dynamic shared memory.
  Value sharedTile(Value base, Value byteOffset, int64_t rows);

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

  ImplicitLocOpBuilder &b;
  const KernelShape &s;
  Type f32;
  IndexArith arith;
  /// Every lane-to-element and lane-to-address formula (unit-tested).
  FragmentLayout<IndexArith> layout;
  Value lane, groupId, laneInGroup, tid;
  /// Per-lane ldmatrix row offsets and chunk offsets (see loadA/B).
  Value laneRow16, laneRow8, laneHalf16, laneHalf8, vRow, vChunk, lanePhase;


  OpBuilder::InsertPoint entryPoint;
  DenseMap<std::pair<int64_t, void *>, Value> entryValues;
};

Value KernelBuilder::swizzle(Value row, Value col) {
  Value chunk = arith::DivUIOp::create(b, col, index(kChunk));
  Value within = arith::RemUIOp::create(b, col, index(kChunk));
  return add(mul(layout.swizzledChunk(chunk, row), index(kChunk)), within);
}

Value KernelBuilder::atEntry(std::pair<int64_t, void *> key,
                             function_ref<Value()> build) {
  Value &value = entryValues[key];
  if (!value) {
    OpBuilder::InsertionGuard guard(b);
    b.restoreInsertionPoint(entryPoint);
    value = build();
    entryPoint = b.saveInsertionPoint();
  }
  return value;
}

Value KernelBuilder::swizzledColumn(int64_t chunk0, Value laneChunk,
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

Value KernelBuilder::sharedTile(Value base, Value byteOffset, int64_t rows) {
  auto type = MemRefType::get(
      {rows, s.problem.headDim}, s.element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(b.getContext(),
                                 gpu::AddressSpace::Workgroup));
  return memref::ViewOp::create(b, type, base, byteOffset, ValueRange{});
}

SmallVector<Value> KernelBuilder::copyTile(Value source, Value batch,
                                           Value head, Value row0,
                                           int64_t rows, int64_t length,
                                           Value tile) {
  int64_t chunksPerRow = s.problem.headDim / kChunk;
  // Each round the threads copy `rowsPerRound` whole rows; thread `tid`
  // always copies chunk tid % chunksPerRow of row tid / chunksPerRow (+ a
  // multiple of rowsPerRound), so its shared-memory column is the same in
  // every round when rowsPerRound is a multiple of the swizzle period 8.
  int64_t rowsPerRound = s.threads() / chunksPerRow;
  Value laneRow = atEntry({-1, nullptr}, [&] {
    return arith::DivUIOp::create(b, tid, index(chunksPerRow));
  });
  Value col = atEntry({-2, nullptr}, [&] {
    return mul(arith::RemUIOp::create(b, tid, index(chunksPerRow)),
               index(kChunk));
  });
  Value sharedCol;
  if (rowsPerRound % 8 == 0)
    sharedCol = atEntry({-3, nullptr},
                        [&] { return swizzle(laneRow, col); });
  SmallVector<Value> tokens;
  for (int64_t first = 0; first < rows; first += rowsPerRound) {
    Value row = add(laneRow, index(first));
    // Past the end: read nothing (the address stays in bounds) and fill 0.
    Value sourceRow = add(row0, row);
    Value inBounds = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                           sourceRow, index(length));
    Value clamped = arith::MinUIOp::create(b, sourceRow, index(length - 1));
    Value elements =
        arith::SelectOp::create(b, inBounds, index(kChunk), index(0));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, tile, ValueRange{row, sharedCol ? sharedCol : swizzle(row, col)},
        source, ValueRange{batch, head, clamped, col}, b.getIndexAttr(kChunk),
        elements, /*bypassL1=*/b.getUnitAttr()));
  }
  return tokens;
}

Value KernelBuilder::ldmatrix(Value tile, Value row0, Value laneRow,
                              Value laneChunk, int64_t col0, int64_t numTiles,
                              bool transpose) {
  Value row = add(row0, laneRow);
  Value col = swizzledColumn(col0 / kChunk, laneChunk, lanePhase);
  return nvgpu::LdMatrixOp::create(
      b, VectorType::get({numTiles, 2}, s.element), tile, ValueRange{row, col},
      transpose, static_cast<uint32_t>(numTiles));
}

Value KernelBuilder::loadA(Value tile, Value row0, int64_t col0) {
  // Lanes 0-15 address rows 0-15 at col0, lanes 16-31 the same rows at
  // col0 + 8: matrices a0a1 | a2a3 | a4a5 | a6a7.
  return ldmatrix(tile, row0, laneRow16, laneHalf16, col0, 4, false);
}

Value KernelBuilder::loadB(Value tile, Value row0, int64_t col0) {
  // K stored [key][d]: lanes 0-7 address keys row0..+7 at d = col0, lanes
  // 8-15 the same keys at col0 + 8 (lanes 16-31 repeat; x2 ignores them).
  return ldmatrix(tile, row0, laneRow8, laneHalf8, col0, 2, false);
}

Value KernelBuilder::loadBTransposed(Value tile, Value row0, int64_t col0) {
  // V stored [key][d]: lanes 0-15 address keys row0..+15 at d = col0; the
  // transposed x2 load hands lane l keys 2t, 2t+1 (+8) of column g.
  return ldmatrix(tile, row0, vRow, vChunk, col0, 2, true);
}

Value KernelBuilder::mma(Value a, Value bFrag, Value c) {
  if (s.element.isF16())
    return nvgpu::MmaSyncOp::create(b, a, bFrag, c,
                                    ArrayRef<int64_t>{16, 8, 16});
  Type i32 = b.getI32Type();
  auto registers = [&](Value fragment) {
    SmallVector<Value> words;
    int64_t rows = cast<VectorType>(fragment.getType()).getDimSize(0);
    for (int64_t r = 0; r < rows; ++r) {
      Value halves = vector::ExtractOp::create(b, fragment, r);
      Value word = vector::BitCastOp::create(b, VectorType::get({1}, i32),
                                             halves);
      words.push_back(vector::ExtractOp::create(b, word, 0));
    }
    return words;
  };
  SmallVector<Value> accumulators;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j)
      accumulators.push_back(
          vector::ExtractOp::create(b, c, ArrayRef<int64_t>{i, j}));
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(4, f32));
  Value d = NVVM::MmaOp::create(
      b, structType, registers(a), registers(bFrag), accumulators,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                    NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < 4; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, d, i));
  return vector::FromElementsOp::create(
      b, VectorType::get({2, 2}, f32), elements);
}

Value KernelBuilder::quadReduce(Value value, bool isMax) {
  for (int32_t offset : {1, 2}) {
    Value other = gpu::ShuffleOp::create(b, value, offset, kWarpSize,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    value = isMax ? maxF(value, other) : addF(value, other);
  }
  return value;
}

void KernelBuilder::build(gpu::GPUFuncOp func) {
  const AttentionProblem &p = s.problem;
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value q = entry.getArgument(0), k = entry.getArgument(1),
        v = entry.getArgument(2), o = entry.getArgument(3);
  Value lse = s.withLse ? entry.getArgument(4) : Value();

  Value queryBlock = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  Value batch = gpu::BlockIdOp::create(b, gpu::Dimension::y);
  Value head = gpu::BlockIdOp::create(b, gpu::Dimension::z);
  tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  lane = arith::RemUIOp::create(b, tid, index(kWarpSize));
  Value warp = arith::DivUIOp::create(b, tid, index(kWarpSize));
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
  Value kvHead = arith::DivUIOp::create(b, head, index(p.groupSize()));
  Value row0 = mul(queryBlock, index(s.blockM));
  // The first row of this warp's slice of the query block.
  Value warpRow = mul(warp, index(s.blockM / s.warps));

  auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                              gpu::AddressSpace::Workgroup);
  Value shared = gpu::DynamicSharedMemoryOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                         MemRefLayoutAttrInterface(), workgroup));
  // Layout: the Q block, then `stages` K tiles, then `stages` V tiles.
  int64_t tileBytes = 2 * p.headDim;
  int64_t kvTileBytes = s.blockN * tileBytes;
  int64_t kBase = s.blockM * tileBytes;
  int64_t vBase = kBase + s.stages * kvTileBytes;
  Value qTile = sharedTile(shared, index(0), s.blockM);
  // Per-lane values that addresses share are built here, ahead of the loop.
  entryPoint = b.saveInsertionPoint();
  auto kvTiles = [&](Value stage) {
    Value offset = mul(stage, index(kvTileBytes));
    return std::make_pair(
        sharedTile(shared, add(index(kBase), offset), s.blockN),
        sharedTile(shared, add(index(vBase), offset), s.blockN));
  };

  Value qGroup =
      commit(copyTile(q, batch, head, row0, s.blockM, p.queryLen, qTile));
  // The K and V tiles of `block` into `stage`, as one group.
  auto copyKV = [&](Value block, Value stage) {
    auto [kStage, vStage] = kvTiles(stage);
    Value key0 = mul(block, index(s.blockN));
    SmallVector<Value> tokens =
        copyTile(k, batch, kvHead, key0, s.blockN, p.kvLen, kStage);
    llvm::append_range(
        tokens, copyTile(v, batch, kvHead, key0, s.blockN, p.kvLen, vStage));
    return commit(tokens);
  };

  // KV blocks [begin, end): MaskGeometry's, as in the decomposition.
  MaskGeometry<IndexArith> geometry{arith, index(p.queryLen), index(p.kvLen),
                                    p.causal, p.window};
  Value rows = arith::MinUIOp::create(
      b, index(s.blockM), arith::SubIOp::create(b, index(p.queryLen), row0));
  auto [blockBegin, blockEnd] = geometry.kvBlockRange(row0, rows, s.blockN);

  Type fragC = VectorType::get({2, 2}, f32);
  Type pair = VectorType::get({2}, f32);
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8,
          oTiles = p.valueDim / 8, kSteps = p.headDim / 16;
  Value zeroC = arith::ConstantOp::create(
      b, fragC, DenseElementsAttr::get(cast<ShapedType>(fragC), 0.0f));
  Value minusInfPair = arith::ConstantOp::create(
      b, pair,
      DenseElementsAttr::get(cast<ShapedType>(pair),
                             -std::numeric_limits<float>::infinity()));
  Value zeroPair = arith::ConstantOp::create(
      b, pair, DenseElementsAttr::get(cast<ShapedType>(pair), 0.0f));

  // Loop state: O fragments [mTiles][oTiles], then m and l per m tile (one
  // f32 for row g and one for row g + 8 of the tile).
  SmallVector<Value> init(mTiles * oTiles, zeroC);
  init.append(mTiles, minusInfPair);
  init.append(mTiles, zeroPair);
  Value minusInf = f32Const(-std::numeric_limits<float>::infinity());
  Value zeroF = f32Const(0.0);

  // Q, and with two stages the first K and V tiles, are in flight.
  if (s.stages == 2) {
    copyKV(blockBegin, index(0));
    waitGroups(qGroup, 1);
  } else {
    waitGroups(qGroup, 0);
  }
  auto loop = scf::ForOp::create(
      b, blockBegin, blockEnd, index(1), init,
      [&](OpBuilder &, Location, Value block, ValueRange state) {
        Value key0 = mul(block, index(s.blockN));
        // The tiles of the previous block have been read by every warp.
        gpu::BarrierOp::create(b);
        Value stage = index(0);
        if (s.stages == 2) {
          // Block n is in stage (n - begin) % 2 (issued one iteration ago);
          // the next block goes to the other stage while this one is used.
          stage = arith::RemUIOp::create(
              b, arith::SubIOp::create(b, block, blockBegin), index(2));
          Value next = arith::MinUIOp::create(
              b, add(block, index(1)),
              arith::SubIOp::create(b, blockEnd, index(1)));
          Value group =
              copyKV(next, arith::SubIOp::create(b, index(1), stage));
          waitGroups(group, 1);
        } else {
          waitGroups(copyKV(block, stage), 0);
        }
        gpu::BarrierOp::create(b);
        auto [kTile, vTile] = kvTiles(stage);

        // S = Q K^T for all of the warp's m16 tiles at once, so that each
        // K fragment is loaded once and used by every tile.
        SmallVector<SmallVector<Value>> scores(
            mTiles, SmallVector<Value>(nTiles, zeroC));
        for (int64_t ks = 0; ks < kSteps; ++ks) {
          SmallVector<Value> aFrags;
          for (int64_t mt = 0; mt < mTiles; ++mt)
            aFrags.push_back(
                loadA(qTile, add(warpRow, index(mt * 16)), ks * 16));
          for (int64_t nt = 0; nt < nTiles; ++nt) {
            Value bFrag = loadB(kTile, index(nt * 8), ks * 16);
            for (int64_t mt = 0; mt < mTiles; ++mt)
              scores[mt][nt] = mma(aFrags[mt], bFrag, scores[mt][nt]);
          }
        }

        // Scaled scores in base 2, [mt][nt][i][j] flattened; with `masked`,
        // keys a row cannot see are -inf.
        Value scale = f32Const(s.scaleLog2);
        auto scaledScores = [&](bool masked) {
          SmallVector<Value> values;
          for (int64_t mt = 0; mt < mTiles; ++mt) {
            Value tileRow = add(row0, add(warpRow, index(mt * 16)));
            // C rows g and g + 8 (layout.cRow(lane, 1) = cRow(lane, 0) + 8).
            Value rowG = add(tileRow, layout.cRow(groupId, 0));
            SmallVector<Value> rowOf = {rowG, add(rowG, index(8))};
            for (int64_t nt = 0; nt < nTiles; ++nt)
              for (int64_t i = 0; i < 2; ++i)
                for (int64_t j = 0; j < 2; ++j) {
                  Value x = mulF(vector::ExtractOp::create(
                                     b, scores[mt][nt], ArrayRef<int64_t>{i, j}),
                                 scale);
                  if (masked) {
                    Value key = add(add(key0, index(nt * 8 + j)),
                                    layout.cCol(laneInGroup, 0));
                    Value hidden = geometry.isHidden(rowOf[i], key);
                    x = arith::SelectOp::create(b, hidden, minusInf, x);
                  }
                  values.push_back(x);
                }
          }
          return values;
        };
        SmallVector<Value> flat;
        if (!s.needsElementMask()) {
          flat = scaledScores(/*masked=*/false);
        } else {
          // Only blocks that straddle a mask boundary pay for the mask: the
          // block is whole for every row when its last key is visible from
          // the first row, its first key from the last row, and it ends
          // within Sk. One uniform branch per block.
          Value straddles = geometry.needsElementMask(
              row0, rows, key0, add(key0, index(s.blockN)));
          SmallVector<Type> types(mTiles * nTiles * 4, f32);
          auto ifOp = scf::IfOp::create(b, types, straddles,
                                        /*withElseRegion=*/true);
          for (bool masked : {true, false}) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(masked ? ifOp.thenBlock()
                                              : ifOp.elseBlock());
            scf::YieldOp::create(b, scaledScores(masked));
          }
          llvm::append_range(flat, ifOp.getResults());
        }

        SmallVector<Value> mNext, lNext;
        SmallVector<SmallVector<Value>> pFrags(mTiles), alphas(mTiles);
        for (int64_t mt = 0; mt < mTiles; ++mt) {
          SmallVector<SmallVector<Value>> elems(nTiles);
          for (int64_t nt = 0; nt < nTiles; ++nt)
            for (int64_t e = 0; e < 4; ++e)
              elems[nt].push_back(flat[(mt * nTiles + nt) * 4 + e]);
          // Online softmax, per row (i = 0: row g, i = 1: row g + 8).
          Value mOld = state[mTiles * oTiles + mt];
          Value lOld = state[mTiles * oTiles + mTiles + mt];
          Value mNew = mOld, lNew = lOld;
          for (int64_t i = 0; i < 2; ++i) {
            Value rowMax = minusInf;
            for (int64_t nt = 0; nt < nTiles; ++nt)
              for (int64_t j = 0; j < 2; ++j)
                rowMax = maxF(rowMax, elems[nt][2 * i + j]);
            rowMax = quadReduce(rowMax, /*isMax=*/true);
            Value old = vector::ExtractOp::create(b, mOld, i);
            Value updated = maxF(old, rowMax);
            Value isEmpty = arith::CmpFOp::create(
                b, arith::CmpFPredicate::OEQ, updated, minusInf);
            Value safe = arith::SelectOp::create(b, isEmpty, zeroF, updated);
            alphas[mt].push_back(exp2(subF(old, safe)));
            Value rowSum = zeroF;
            for (int64_t nt = 0; nt < nTiles; ++nt)
              for (int64_t j = 0; j < 2; ++j) {
                Value &x = elems[nt][2 * i + j];
                x = exp2(subF(x, safe));
                rowSum = addF(rowSum, x);
              }
            // l stays a per-lane partial sum; the quad adds it up at the end.
            Value lRow = addF(
                mulF(alphas[mt][i], vector::ExtractOp::create(b, lOld, i)),
                rowSum);
            mNew = vector::InsertOp::create(b, updated, mNew, i);
            lNew = vector::InsertOp::create(b, lRow, lNew, i);
          }
          mNext.push_back(mNew);
          lNext.push_back(lNew);

          // P's A fragments: S's C fragments of n tiles 2 kk and 2 kk + 1,
          // rounded to the input type.
          Type fragA = VectorType::get({4, 2}, s.element);
          for (int64_t kk = 0; kk < nTiles / 2; ++kk) {
            SmallVector<Value> halves;
            for (int64_t nt : {2 * kk, 2 * kk + 1})
              for (int64_t i = 0; i < 2; ++i)
                for (int64_t j = 0; j < 2; ++j)
                  halves.push_back(arith::TruncFOp::create(
                      b, s.element, elems[nt][2 * i + j]));
            pFrags[mt].push_back(vector::FromElementsOp::create(
                b, cast<VectorType>(fragA), halves));
          }
        }

        // O = alpha * O + P V; each V fragment serves every m16 tile.
        SmallVector<Value> next;
        for (int64_t mt = 0; mt < mTiles; ++mt)
          for (int64_t ot = 0; ot < oTiles; ++ot) {
            Value acc = state[mt * oTiles + ot];
            for (int64_t i = 0; i < 2; ++i) {
              Value rowPair = vector::ExtractOp::create(b, acc, i);
              Value scaled = mulF(rowPair, vector::BroadcastOp::create(
                                               b, pair, alphas[mt][i]));
              acc = vector::InsertOp::create(b, scaled, acc, i);
            }
            next.push_back(acc);
          }
        for (int64_t kk = 0; kk < nTiles / 2; ++kk)
          for (int64_t ot = 0; ot < oTiles; ++ot) {
            Value bFrag = loadBTransposed(vTile, index(kk * 16), ot * 8);
            for (int64_t mt = 0; mt < mTiles; ++mt) {
              Value &acc = next[mt * oTiles + ot];
              acc = mma(pFrags[mt][kk], bFrag, acc);
            }
          }
        next.append(mNext);
        next.append(lNext);
        scf::YieldOp::create(b, next);
      });

  // O = acc / l once; LSE = (m + log2 l) ln 2; l = 0 gives 0 and -inf.
  // No copy may still be writing shared memory when the CTA ends.
  b.setInsertionPointAfter(loop);
  if (s.stages == 2)
    waitGroups(qGroup, 0);
  // O goes through the warp's own rows of the Q tile (which only this warp
  // reads), so that global memory gets whole 16-byte chunks.
  for (int64_t mt = 0; mt < mTiles; ++mt) {
    Value localRow = add(warpRow, index(mt * 16));
    Value mFinal = loop.getResult(mTiles * oTiles + mt);
    Value lPartial = loop.getResult(mTiles * oTiles + mTiles + mt);
    for (int64_t i = 0; i < 2; ++i) {
      Value rowInTile =
          add(add(localRow, layout.cRow(groupId, 0)), index(8 * i));
      Value row = add(row0, rowInTile);
      Value l = quadReduce(vector::ExtractOp::create(b, lPartial, i),
                           /*isMax=*/false);
      Value empty =
          arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, l, zeroF);
      Value inverse = arith::SelectOp::create(
          b, empty, zeroF, arith::DivFOp::create(b, f32Const(1.0), l));
      Value inverses = vector::BroadcastOp::create(b, pair, inverse);
      for (int64_t ot = 0; ot < oTiles; ++ot) {
        Value rowPair = vector::ExtractOp::create(
            b, loop.getResult(mt * oTiles + ot), i);
        Value out = arith::TruncFOp::create(
            b, VectorType::get({2}, s.element), mulF(rowPair, inverses));
        Value col = add(swizzle(rowInTile, index(ot * 8)),
                        layout.cCol(laneInGroup, 0));
        vector::StoreOp::create(b, out, qTile, ValueRange{rowInTile, col});
      }
      if (lse) {
        Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult,
                                              row, index(p.queryLen));
        Value first = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                            laneInGroup, index(0));
        auto store = scf::IfOp::create(
            b, arith::AndIOp::create(b, inRange, first),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(store.thenBlock());
        Value m = vector::ExtractOp::create(b, mFinal, i);
        Value value = mulF(addF(m, log2(l)), f32Const(M_LN2));
        value = arith::SelectOp::create(b, empty, minusInf, value);
        memref::StoreOp::create(b, value, lse, ValueRange{batch, head, row});
      }
    }
  }
  gpu::BarrierOp::create(b);
  // Each lane copies 16-byte chunks of its warp's rows to O.
  int64_t rowsPerWarp = s.blockM / s.warps;
  int64_t chunksPerRow = p.valueDim / kChunk;
  Type chunkType = VectorType::get({kChunk}, s.element);
  for (int64_t first = 0; first < rowsPerWarp * chunksPerRow;
       first += kWarpSize) {
    Value chunk = add(lane, index(first));
    Value rowInTile = add(
        warpRow, arith::DivUIOp::create(b, chunk, index(chunksPerRow)));
    Value col = mul(arith::RemUIOp::create(b, chunk, index(chunksPerRow)),
                    index(kChunk));
    Value row = add(row0, rowInTile);
    Value inRange = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, row,
                                          index(p.queryLen));
    auto ifOp = scf::IfOp::create(b, inRange, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value values = vector::LoadOp::create(
        b, chunkType, qTile, ValueRange{rowInTile, swizzle(rowInTile, col)});
    // Rows of D = 64k 16-bit elements keep every chunk 16-byte aligned
    // (the bundle requires 16-byte aligned tensors).
    vector::StoreOp::create(b, values, o, ValueRange{batch, head, row, col},
                            /*nontemporal=*/false, llvm::Align(16));
  }
  gpu::ReturnOp::create(b);
}

/// What the kernel computes, for whoever checks it: the effective scale,
/// causal, and the window when there is one.
DictionaryAttr describeAttention(Builder &b, AttentionOp op) {
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("scale", b.getF32FloatAttr(op.getEffectiveScale())),
      b.getNamedAttr("causal", b.getBoolAttr(op.getCausal()))};
  if (std::optional<ArrayRef<int64_t>> window = op.getWindow())
    entries.push_back(
        b.getNamedAttr("window", b.getDenseI64ArrayAttr(*window)));
  return b.getDictionaryAttr(entries);
}

struct AttnToNVGPUPass : public attn::impl::AttnToNVGPUBase<AttnToNVGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    MLIRContext *ctx = &getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    ImplicitLocOpBuilder b(module.getLoc(), ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, "attn_kernels");

    for (AttentionOp op : ops) {
      FailureOr<KernelShape> shape = analyse(op);
      if (failed(shape))
        return signalPassFailure();
      std::string name = getAttentionKernelName(op);

      SmallVector<Type> params;
      for (Value operand : {Value(op.getQuery()), Value(op.getKey()),
                            Value(op.getValue()),
                            op.getInitOut()}) {
        auto type = cast<RankedTensorType>(operand.getType());
        params.push_back(MemRefType::get(type.getShape(), type.getElementType()));
      }
      if (shape->withLse) {
        auto type = cast<RankedTensorType>(op.getInitLse().getType());
        params.push_back(MemRefType::get(type.getShape(), type.getElementType()));
      }
      ImplicitLocOpBuilder kb(op.getLoc(), ctx);
      kb.setInsertionPointToEnd(kernels.getBody());
      auto func = gpu::GPUFuncOp::create(kb, name,
                                         kb.getFunctionType(params, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kb.getUnitAttr());
      int32_t threads = static_cast<int32_t>(shape->threads());
      func.setKnownBlockSizeAttr(kb.getDenseI32ArrayAttr({threads, 1, 1}));
      func->setAttr(
          AttnDialect::getLaunchAttrName(),
          kb.getDictionaryAttr({
              kb.getNamedAttr("grid", kb.getDenseI64ArrayAttr(
                                          {shape->queryBlocks(),
                                           shape->problem.batch,
                                           shape->problem.queryHeads})),
              kb.getNamedAttr("block",
                              kb.getDenseI64ArrayAttr({threads, 1, 1})),
              kb.getNamedAttr("dynamic_shared_memory",
                              kb.getI64IntegerAttr(shape->sharedBytes())),
              kb.getNamedAttr("tiles",
                              Fa2TilesAttr::get(ctx, shape->blockM,
                                                shape->blockN, shape->warps,
                                                shape->stages)),
              kb.getNamedAttr("attention", describeAttention(kb, op)),
          }));
      KernelBuilder(kb, *shape).build(func);
    }
  }
};

} // namespace

std::string mlir::attn::getAttentionKernelName(AttentionOp op) {
  auto parent = op->getParentOfType<FunctionOpInterface>();
  Operation *root = parent ? parent.getOperation()
                           : op->getParentOfType<ModuleOp>().getOperation();
  int index = 0;
  root->walk([&](AttentionOp other) {
    if (other == op)
      return WalkResult::interrupt();
    if (other->getParentOfType<FunctionOpInterface>() == parent)
      ++index;
    return WalkResult::advance();
  });
  std::string base = parent ? parent.getName().str() : "attention";
  return base + "_attention" + std::to_string(index);
}
