//===- AttnToNVGPU.cpp - FlashAttention-2 kernels on tensor cores ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Builds, for each attn.attention, a gpu.func that runs FlashAttention-2's
// forward pass: the kernel skeleton maps the schedule's work onto CTAs
// (here FlashAttention-2's grid over query blocks, batch and heads) and each
// CTA runs the CTA body (CtaBody.cpp) over its range of key/value blocks.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "CtaBody.h"

#include "attn/Conversion/AttnToNVGPU/FragmentLayout.h"
#include "attn/Conversion/AttnToNVGPU/KernelName.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Analysis/WorkAssignment.h"
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
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTONVGPU
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// CUDA's limit on a grid's y and z sizes.
constexpr int64_t kMaxGridZ = 65535;

/// Whether the CTA body can inline the score region of `op`: scalar arith
/// and math operations, and constants from outside it; an error otherwise.
LogicalResult checkScoreRegion(AttentionOp op) {
  Block &region = op.getScore().front();
  for (Operation &inner : region.without_terminator()) {
    if (!isInlinableScoreOp(inner))
      return inner.emitError("attn-to-nvgpu inlines score regions of scalar "
                             "arith operations, math.tanh, exp, exp2, log, "
                             "log2, absf and sqrt, and tensor.extract from "
                             "constant tensors; '")
             << inner.getName() << "' is not one (attn-to-cpu runs any region)";
    for (Value operand : inner.getOperands()) {
      if (operand.getParentRegion() == &op.getScore())
        continue;
      Operation *def = operand.getDefiningOp();
      if (!def || !def->hasTrait<OpTrait::ConstantLike>())
        return inner.emitError("attn-to-nvgpu inlines a score region into a "
                               "kernel: it may use only its arguments, the "
                               "values it defines and constants");
    }
  }
  return success();
}

/// Why `op` cannot become a kernel, or its shape.
FailureOr<KernelShape> analyse(AttentionOp op) {
  if (TargetAttr target = getEnclosingTarget(op);
      target && target.getComputeCapability() < kMinComputeCapability)
    return op.emitError("attn-to-nvgpu generates sm_80 code (mma.sync "
                        "m16n8k16, cp.async); the target ")
           << target.getChip()
           << " is older: run the attention on the CPU (attn-to-cpu)";
  if (op.hasFrame())
    return op.emitError("attn-to-nvgpu does not support a frame (a part of a "
                        "larger attention, which attn-distribute makes) yet: "
                        "run the rank's program on the CPU (attn-to-cpu)");
  std::optional<AttentionProblem> problem =
      AttentionProblem::fromOp(op, /*dynamicLengths=*/true);
  if (!problem)
    return op.emitError("attn-to-nvgpu needs static head counts and head "
                        "dimensions (the kernel is specialised for them); "
                        "the batch, Sq and Sk may be dynamic");
  Type element = op.getQuery().getType().getElementType();
  if (!element.isF16() && !element.isBF16())
    return op.emitError("attn-to-nvgpu supports f16 and bf16 operands, got ")
           << element
           << ": the tensor cores multiply 16-bit inputs; convert Q, K and V "
              "(arith.truncf) to bf16 (f32's range) or f16 before the "
              "attention, or run it on the CPU (attn-to-cpu)";
  if (Type out = getElementTypeOrSelf(op.getInitOut().getType());
      out != element)
    return op.emitError("attn-to-nvgpu needs O in the element type of Q (")
           << element << "), got " << out
           << ": give O Q's element type and convert the result after the "
              "attention (arith.extf), or run it on the CPU (attn-to-cpu)";
  // A constant block mask is a table in the kernel; any other is the
  // kernel's block_mask parameter.
  DenseElementsAttr blockMaskValues;
  if (op.getBlockMask() &&
      matchPattern(op.getBlockMask(), m_Constant(&blockMaskValues)) &&
      !problem->hasStaticLengths())
    return op.emitError("attn-to-nvgpu: a constant block mask covers the "
                        "blocks of one Sq and Sk, and this attention's "
                        "lengths are known at run time only: pass the block "
                        "mask as an argument (the kernel's block_mask "
                        "parameter)");
  if (op.hasScoreModifier() && failed(checkScoreRegion(op)))
    return failure();
  Attribute partition = op.getPartitionAttr();
  if (partition && !isa<LeanAttr, SplitKVAttr>(partition))
    return op.emitError("attn-to-nvgpu lowers FlashAttention-2's grid, "
                        "#attn.split_kv and #attn.lean; not yet ")
           << partition
           << ": attn-distribute turns it into each rank's program, which "
              "runs on the CPU (attn-to-cpu)";
  // FlashAttention's rule: rows of whole 16-byte chunks; shared memory pads
  // them to 64 elements.
  for (int64_t dim : {problem->headDim, problem->valueDim})
    if (dim % kChunk != 0 || dim > kFa2MaxHeadDim)
      return op.emitError("attn-to-nvgpu needs head dimensions that are "
                          "multiples of 8 up to ")
             << kFa2MaxHeadDim << "; got D = " << problem->headDim
             << ", Dv = " << problem->valueDim
             << ": pad Q and K (or V) with zero columns to the next multiple "
                "of 8 (zero columns of Q and K leave the scores unchanged; "
                "drop V's padding from O), or run on the CPU (attn-to-cpu)";

  KernelShape shape{*problem, element, 0, 0, 0, 0, 0, false};
  std::optional<Fa2Tiling> tiling =
      op.getTilesAttr()
          ? fa2TilingOf(op.getTilesAttr())
          : defaultFa2Tiling(problem->headDim, problem->valueDim,
                             /*elementBytes=*/2, std::nullopt, scoreWorkOf(op),
                             op.splitsKeyValues(), op.getBlockMaskBlock());
  if (!tiling) {
    if (std::optional<std::string> unnestable = describeUnnestableBlocks(op))
      return op.emitError("attn-to-nvgpu: ") << *unnestable;
    return op.emitError("attn-to-nvgpu: no FlashAttention-2 tiling fits D = ")
           << problem->headDim << ", Dv = " << problem->valueDim
           << " in the registers: pin one with the op's tiles attribute "
              "(#attn.fa2<block_m = ..., block_n = ..., warps = ..., stages = "
              "...>)";
  }
  shape.blockM = tiling->blockM;
  shape.blockN = tiling->blockN;
  shape.warps = tiling->warps;
  shape.stages = tiling->stages;
  assert(shape.blockM % (16 * shape.warps) == 0 && shape.blockN % 16 == 0 &&
         "#attn.fa2's verifier and the default tilings keep block_m a "
         "multiple of 16 * warps and block_n one of 16");
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
           << "target allows " << sharedLimit
           << ": pin smaller tiles (block_m or block_n of the op's tiles "
              "attribute)";
  shape.scale = op.getEffectiveScale();
  shape.scaleLog2 = shape.scale * static_cast<float>(M_LOG2E);
  if (std::optional<APFloat> softcap = op.getSoftcap())
    shape.softcap = softcap->convertToFloat();
  if (op.hasScoreModifier())
    shape.scoreRegion = &op.getScore();
  if (op.getBlockMask()) {
    auto [maskRows, maskKeys] = *op.getBlockMaskBlock();
    if (maskRows % shape.blockM || maskKeys % shape.blockN)
      return op.emitError("attn-to-nvgpu: the tiles ")
             << shape.blockM << "x" << shape.blockN
             << " do not nest in the block mask's " << maskRows << "x"
             << maskKeys
             << " blocks: pin tiles whose block_m divides the blocks' rows "
                "and block_n their keys (the op's tiles attribute)";
    shape.blockMaskRows = maskRows;
    shape.blockMaskKeys = maskKeys;
    shape.blockMaskValues = blockMaskValues;
  }
  if (Value mask = op.getMask())
    shape.maskElement = getElementTypeOrSelf(mask);
  shape.withLse = static_cast<bool>(op.getInitLse());
  shape.keyLengths = op.hasKeyLengths();
  if (auto split = dyn_cast_or_null<SplitKVAttr>(partition)) {
    if (failed(checkSplitCount(op, split.getSplits(), shape.blockN)))
      return failure();
    // The grid's z is (head, split): at most 65535.
    if (split.getSplits() > kMaxGridZ / problem->tiledHeads())
      return op.emitError("attn-to-nvgpu: ")
             << problem->tiledHeads() << " query heads x " << split.getSplits()
             << " splits exceed the grid's " << kMaxGridZ
             << " CTAs in z: use at most "
             << std::max<int64_t>(1, kMaxGridZ / problem->tiledHeads())
             << " splits";
    shape.splits = split.getSplits();
  }
  if (auto lean = dyn_cast_or_null<LeanAttr>(partition)) {
    shape.leanCtas = lean.getCtas();
    // Every CTA must be resident at once, or a host waits for a contributor
    // that never starts. The estimate is the one attn-select-schedule picks
    // G with (a kernel that splits the key/value range).
    if (TargetAttr target = getEnclosingTarget(op)) {
      GpuLimits limits = gpuLimits(target);
      int64_t perSm =
          leanCtasPerSm(*problem, shape.tiling(), /*elementBytes=*/2,
                        scoreWorkOf(op), limits);
      if (shape.leanCtas > perSm * limits.sms)
        return op.emitError("#attn.lean with ")
               << shape.leanCtas << " CTAs cannot run on " << target.getChip()
               << ": its persistent CTAs must all be resident, and "
               << limits.sms << " SMs x " << perSm << " CTA(s) per SM hold "
               << perSm * limits.sms
               << ": use at most that many (#attn.lean<ctas = "
               << perSm * limits.sms << ">)";
      // ptxas needs holding only where that many CTAs leave a thread fewer
      // registers than it may have; elsewhere the bound is no promise, and
      // ptxas spilled with one it did not need (docs/gpu-kernel.md).
      int64_t needed = llvm::divideCeil(shape.leanCtas, limits.sms);
      if (allowedRegistersPerThread(needed * shape.threads(), limits) <
          limits.regsPerThread)
        shape.residentCtasPerSm = needed;
    }
  }
  return shape;
}

/// What the kernel reads and writes, as its entry block sees them.
struct KernelArguments {
  /// Q, O and, when returned, LSE: memrefs of the operands' shapes; the key
  /// lengths when the attention has them.
  Value q, o, lse, keyLengths;
  /// K, V, and the mask operand and block mask parameter when the kernel
  /// has them.
  KeyValueOperands kv;
  /// The workspaces the runtime owns, after them.
  SmallVector<Value> workspaces;
  KernelLengths lengths;
};

/// A buffer the runtime owns for the kernel (the manifest's "workspaces"),
/// passed after the tensors. A dynamic leading dimension has one slot per
/// CTA of the launch's grid.
struct Workspace {
  StringRef name;
  MemRefType type;
  /// Zero when the kernel starts: the runtime zero-fills it before every
  /// launch, or, when the kernel leaves it zero, once when it allocates it.
  bool zeroInit = false;
  bool kernelResets = false;
};

/// The workspaces of the schedule's partials: Lean's, a slot per persistent
/// CTA with a flag each; split-KV's, a slot per CTA with a counter per CTA
/// (of which the kernel uses one per output tile).
SmallVector<Workspace> kernelWorkspaces(const KernelShape &s,
                                        MLIRContext *ctx) {
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32);
  int64_t slots = s.leanCtas ? s.leanCtas : ShapedType::kDynamic;
  if (!s.leanCtas && s.splits == 1)
    return {};
  return {{"partial_o",
           MemRefType::get({slots, s.blockM, s.problem.valueDim}, f32)},
          {"partial_lse", MemRefType::get({slots, s.blockM}, f32)},
          {s.leanCtas ? "flags" : "counters", MemRefType::get({slots}, i32),
           /*zeroInit=*/true, /*kernelResets=*/!s.leanCtas}};
}

/// The `attn.launch` entry of a workspace: its bytes (per CTA when it has a
/// slot per CTA) and how it is zeroed.
DictionaryAttr describeWorkspace(Builder &b, const Workspace &workspace) {
  MemRefType type = workspace.type;
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  bool perCta = type.getNumDynamicDims() != 0;
  for (int64_t size : type.getShape().drop_front(perCta ? 1 : 0))
    bytes *= size;
  SmallVector<NamedAttribute> entries{
      b.getNamedAttr("name", b.getStringAttr(workspace.name)),
      b.getNamedAttr("bytes", b.getI64IntegerAttr(bytes)),
      b.getNamedAttr("zero_init", b.getBoolAttr(workspace.zeroInit))};
  if (perCta)
    entries.push_back(b.getNamedAttr("per_cta", b.getUnitAttr()));
  if (workspace.kernelResets)
    entries.push_back(b.getNamedAttr("kernel_resets", b.getUnitAttr()));
  return b.getDictionaryAttr(entries);
}

/// The memref through which a kernel reads or writes `operand`: its shape,
/// rows contiguous. When a length is dynamic, the batch and head strides
/// are run-time values too, so a view of a larger buffer (a KV cache with
/// room for more rows) is accepted as it is.
MemRefType kernelView(Value operand) {
  auto type = cast<RankedTensorType>(operand.getType());
  if (type.hasStaticShape())
    return MemRefType::get(type.getShape(), type.getElementType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
  // Rows contiguous: dimensions 2 and up, each stride the product of the
  // sizes after it (dynamic from a dynamic size on: a mask's Sk).
  for (int64_t dim = rank - 1, stride = 1; dim >= 2; --dim) {
    strides[dim] = stride;
    stride = ShapedType::isDynamic(stride) || type.isDynamicDim(dim)
                 ? ShapedType::kDynamic
                 : stride * type.getDimSize(dim);
  }
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), /*offset=*/0, strides));
}

/// Calls `visit(isStride, dim, value)` for each size, then each stride, of
/// `view`: the order in which the kernel takes a view's dynamic ones.
void forEachExtent(MemRefType view,
                   function_ref<void(bool, int64_t, int64_t)> visit) {
  for (auto [dim, size] : llvm::enumerate(view.getShape()))
    visit(/*isStride=*/false, dim, size);
  auto [strides, offset] = view.getStridesAndOffset();
  for (auto [dim, stride] : llvm::enumerate(strides))
    visit(/*isStride=*/true, dim, stride);
}

/// The kernel's signature, in order: one parameter per view (the memref
/// itself when static, else a pointer: a rank-0 memref of its element
/// type), the workspaces, then one i64 per dynamic size and dynamic stride
/// of the views, view by view (forEachExtent's order). `scalars` says which
/// is which (the manifest's "scalars").
struct KernelSignature {
  SmallVector<Type> params;
  SmallVector<Attribute> scalars;
};

/// How the kernel takes a view or workspace: as itself when its shape is
/// static, else as a bare pointer (a rank-0 memref of its element type),
/// which the bare-pointer calling convention accepts.
MemRefType parameterType(MemRefType view) {
  return view.hasStaticShape() ? view
                               : MemRefType::get({}, view.getElementType());
}

KernelSignature kernelSignature(Builder &b, ArrayRef<MemRefType> views,
                                ArrayRef<MemRefType> workspaces) {
  KernelSignature signature;
  for (MemRefType type : llvm::concat<const MemRefType>(views, workspaces))
    signature.params.push_back(parameterType(type));
  for (auto [index, view] : llvm::enumerate(views)) {
    if (view.hasStaticShape())
      continue;
    forEachExtent(view, [&](bool isStride, int64_t dim, int64_t value) {
      if (ShapedType::isStatic(value))
        return;
      signature.params.push_back(b.getI64Type());
      signature.scalars.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("param", b.getI64IntegerAttr(index)),
           b.getNamedAttr(isStride ? "stride" : "size",
                          b.getI64IntegerAttr(dim))}));
    });
  }
  return signature;
}

/// Binds the kernel's parameters (kernelSignature's order) at the start of
/// its entry block: a pointer and its scalars become a view
/// (memref.reinterpret_cast), a workspace with a slot per CTA a memref with
/// as many slots as the grid has CTAs, and the lengths are read off Q and
/// K.
KernelArguments bindArguments(ImplicitLocOpBuilder &b, const KernelShape &shape,
                              ArrayRef<MemRefType> views,
                              ArrayRef<MemRefType> workspaces,
                              gpu::GPUFuncOp func) {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  unsigned nextScalar = views.size() + workspaces.size();
  SmallVector<Value> bound;
  for (auto [index, view] : llvm::enumerate(views)) {
    Value param = entry.getArgument(index);
    if (view.hasStaticShape()) {
      bound.push_back(param);
      continue;
    }
    SmallVector<OpFoldResult> sizes, strides;
    forEachExtent(view, [&](bool isStride, int64_t, int64_t value) {
      OpFoldResult extent =
          ShapedType::isStatic(value)
              ? OpFoldResult(b.getIndexAttr(value))
              : OpFoldResult(Value(arith::IndexCastOp::create(
                    b, b.getIndexType(), entry.getArgument(nextScalar++))));
      (isStride ? strides : sizes).push_back(extent);
    });
    bound.push_back(memref::ReinterpretCastOp::create(
        b, view, param, b.getIndexAttr(0), sizes, strides));
  }
  // The order of the views (AttnToNVGPUPass): Q, K, V, O, then those the
  // kernel has of LSE, the mask, the block mask and the key lengths.
  KernelArguments args;
  args.q = bound[0];
  args.kv.k = bound[1];
  args.kv.v = bound[2];
  args.o = bound[3];
  unsigned next = 4;
  if (shape.withLse)
    args.lse = bound[next++];
  if (shape.maskElement)
    args.kv.mask = bound[next++];
  if (shape.blockMaskParameter())
    args.kv.blockMask = bound[next++];
  if (shape.keyLengths)
    args.keyLengths = bound[next++];
  Value ctas;
  for (auto [i, workspace] : llvm::enumerate(workspaces)) {
    Value param = entry.getArgument(views.size() + i);
    if (workspace.hasStaticShape()) {
      args.workspaces.push_back(param);
      continue;
    }
    if (!ctas)
      ctas = b.createOrFold<arith::MulIOp>(
          b.createOrFold<arith::MulIOp>(
              gpu::GridDimOp::create(b, gpu::Dimension::x),
              gpu::GridDimOp::create(b, gpu::Dimension::y)),
          gpu::GridDimOp::create(b, gpu::Dimension::z));
    SmallVector<OpFoldResult> sizes{ctas}, strides;
    for (int64_t size : workspace.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(size));
    for (int64_t stride : workspace.getStridesAndOffset().first)
      strides.push_back(b.getIndexAttr(stride));
    args.workspaces.push_back(memref::ReinterpretCastOp::create(
        b, workspace, param, b.getIndexAttr(0), sizes, strides));
  }
  args.lengths = {b.createOrFold<memref::DimOp>(args.q, 0),
                  b.createOrFold<memref::DimOp>(args.q, 2),
                  b.createOrFold<memref::DimOp>(args.kv.k, 2)};
  return args;
}

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
      lengths.kvLen =
          MaskGeometry<IndexArith>::sequenceKeys(a, length, lengths.kvLen);
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
  Value batch, head, kvHead, row0, rows, qGroup, blockBegin, blockEnd;

  static OutputTile load(ImplicitLocOpBuilder &b, CtaBody &body, IndexArith &a,
                         const KernelShape &s, const KernelArguments &args,
                         Value queryBlock, Value batch, Value head) {
    OutputTile t{batch, head};
    t.kvHead = a.div(a.mul(head, s.problem.packedHeads), s.problem.groupSize());
    MaskGeometry<IndexArith> geometry = body.geometry();
    std::tie(t.row0, t.rows) = geometry.queryBlockRows(queryBlock, s.blockM);
    t.qGroup = body.loadQueryBlock(args.q, batch, head, t.row0);
    std::tie(t.blockBegin, t.blockEnd) =
        geometry.kvBlockRange(t.row0, t.rows, s.blockN);
    return t;
  }

  /// The CTA body over key/value blocks [begin, end) of the tile.
  SmallVector<Value> run(CtaBody &body, const KernelArguments &args,
                         Value begin, Value end) const {
    return body.runKvRange(args.kv, qGroup, batch, head, kvHead, row0, rows,
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

/// Keeps LLVM's loop-invariant code motion out of `loop` (loops nested in
/// it are still optimised). A persistent kernel's loop over its pieces must
/// not have the per-lane addresses of a piece's query load, output store and
/// merge hoisted above it: they would stay live through the CTA body's loop
/// over key/value blocks (LICM does not weigh register pressure). Measured
/// on the Lean kernel with run-time lengths, D = 128, 64 x 64 tiles, sm_90a:
/// 96 bytes spilled with LICM, none without. scf-to-cf forwards the
/// attribute (an LLVM dialect attribute named as llvm.br's) to the loop's
/// back edge, and the translation emits llvm.licm.disable.
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

/// FlashAttention-2's kernel: CTA (m, b, h) of the grid (ceil(Sq / block_m),
/// B, Hq) computes query block m of (b, h) over every key/value block its
/// rows can see; with GQA packing, (ceil(p Sq / block_m), B, Hq / p) over
/// tiled heads.
void buildFa2Kernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                    const KernelArguments &args) {
  CtaBody body(b, s);
  auto [queryBlock, batch, head] = GridCta::setUp(b, body, args);
  IndexArith a{b};
  auto tile = OutputTile::load(b, body, a, s, args, queryBlock, batch, head);
  SmallVector<Value> state =
      tile.run(body, args, tile.blockBegin, tile.blockEnd);
  body.storeOutput(state, args.o, args.lse, batch, head, tile.row0);
  gpu::ReturnOp::create(b);
}

/// Split-KV (flash-decoding) in one launch: CTA (m, b, h S + s) of the grid
/// (ceil(Sq / block_m), B, Hq S) computes piece s of the key/value blocks
/// query block m of (b, h) can see (splitKVPiece: the CPU's pieces) and
/// writes its normalised partial into its slot; the CTA that completes an
/// output tile's S pieces (a per-tile counter, raised after a fence) merges
/// its S slots in slot order, writes O and LSE, and resets the counter for
/// the next launch. Whoever merges, the order is the same, so results are
/// bitwise deterministic, and no CTA waits for another: any grid size runs.
/// Workspace parameters after the attention's, a slot per CTA: partial O
/// [block_m, Dv] and LSE [block_m] in f32, and an i32 counter (zero when
/// allocated, left zero).
void buildSplitKvKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                        const KernelArguments &args) {
  Value partialO = args.workspaces[0], partialLse = args.workspaces[1],
        counters = args.workspaces[2];
  CtaBody body(b, s);
  auto [queryBlock, batch, headSplit] = GridCta::setUp(b, body, args);
  IndexArith a{b};
  Value head = a.div(headSplit, s.splits);
  Value split = a.sub(headSplit, a.mul(head, s.splits));
  auto tile = OutputTile::load(b, body, a, s, args, queryBlock, batch, head);
  auto [pieceBegin, pieceEnd] =
      splitKVPiece(a, tile.blockBegin, tile.blockEnd, split, s.splits);
  SmallVector<Value> state = tile.run(body, args, pieceBegin, pieceEnd);

  // Output tile (b, h, m) owns slots [S t, S t + S) and counter t.
  Value queryBlocks = gpu::GridDimOp::create(b, gpu::Dimension::x);
  Value tileIndex = a.add(
      a.mul(a.add(a.mul(batch, s.problem.tiledHeads()), head), queryBlocks),
      queryBlock);
  Value firstSlot = a.mul(tileIndex, s.splits);
  body.storePartial(state, partialO, partialLse, a.add(firstSlot, split));

  // A release: the CTA's stores happen before the barrier, thread 0's fence
  // orders them (cumulatively) before its increment. The barrier's OR
  // tells every thread whether thread 0 saw the other S - 1 pieces done.
  gpu::BarrierOp::create(b);
  Type i32 = b.getI32Type();
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value isFirstThread =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, a.constant(0));
  auto count = scf::IfOp::create(b, TypeRange{i32}, isFirstThread,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(count.thenBlock());
    Value before = releaseAndIncrement(b, counters, tileIndex);
    Value last = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, before,
        arith::ConstantIntOp::create(b, s.splits - 1, 32));
    scf::YieldOp::create(b, ValueRange{arith::ExtUIOp::create(b, i32, last)});
    b.setInsertionPointToStart(count.elseBlock());
    scf::YieldOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
  }
  Value anyLast =
      NVVM::BarrierOp::create(b, i32, /*barrierId=*/Value(),
                              /*numberOfThreads=*/Value(),
                              NVVM::BarrierReductionAttr::get(
                                  b.getContext(), NVVM::BarrierReduction::OR),
                              count.getResult(0))
          .getRes();
  Value isLast = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, anyLast,
                                       arith::ConstantIntOp::create(b, 0, 32));
  auto merge = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
  b.setInsertionPointToStart(merge.thenBlock());
  // An acquire: thread 0's fence after it saw the count, then the barrier,
  // orders the CTA's loads of the partials after the other pieces' stores.
  auto acquire = scf::IfOp::create(b, isFirstThread, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(acquire.thenBlock());
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  }
  gpu::BarrierOp::create(b);
  SmallVector<Value> merged =
      body.mergePartials(body.initialState(), partialO, partialLse, firstSlot,
                         a.add(firstSlot, s.splits - 1));
  body.storeOutput(merged, args.o, args.lse, batch, head, tile.row0,
                   /*perLaneSums=*/false);
  // Every piece of the tile has counted: the next launch starts from zero.
  auto reset = scf::IfOp::create(b, isFirstThread, /*withElseRegion=*/false);
  b.setInsertionPointToStart(reset.thenBlock());
  memref::StoreOp::create(b, arith::ConstantIntOp::create(b, 0, 32), counters,
                          ValueRange{tileIndex});
  b.setInsertionPointAfter(merge);
  gpu::ReturnOp::create(b);
}

/// Lean attention's persistent kernel over WorkAssignment's even split:
/// CTA c of the grid (G) walks LeanTiles [ctaBegin(c), ctaBegin(c + 1)) of
/// the output tiles in (batch, head, query block) order, counted from the
/// lengths the kernel runs with (static or run-time: G stays fixed). Each
/// piece finds its query block with LeanTileOrder::locate, resumed from the
/// previous piece's. Each run inside one
/// tile is a piece, computed by the CTA body over its key/value blocks: a
/// host piece that covers its tile writes O; a contributor piece (never the
/// first of its tile, always the first of its CTA) writes its normalised
/// partial to the CTA's workspace slot, fences and raises the CTA's flag; a
/// host piece that does not cover its tile (always the last of its CTA)
/// waits for the flags of the tile's contributors, the next CTAs, and merges
/// their partials in CTA order (the order of the CPU's slots). Output
/// tiles with no visible key are shared out after the walk. Workspace
/// parameters after the attention's: partial O [G, block_m, Dv] and LSE
/// [G, block_m] in f32, flags [G] in i32, zeroed before every launch.
void buildLeanKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                     const KernelArguments &args) {
  const AttentionProblem &p = s.problem;
  Value q = args.q, o = args.o, lse = args.lse;
  const KeyValueOperands &kv = args.kv;
  Value partialO = args.workspaces[0], partialLse = args.workspaces[1],
        flags = args.workspaces[2];

  Value cta = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  CtaBody body(b, s);
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
  LeanTileOrder<IndexArith> &order = work.order;
  LeanAssignment<IndexArith> &lean = work.assignment;
  Value perHead = work.perHead;
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
        Value batchHead = a.div(g, perHead);
        Value offset = a.sub(g, a.mul(batchHead, perHead));
        // The query block holding the LeanTile, and where its tile starts:
        // in the previous piece's head, scanned on from its query block.
        Value resume = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                             batchHead, args[1]);
        auto [queryBlock, tileOffset] = order.locate(
            queryBlocks, offset, a.select(resume, args[2], a.constant(0)),
            a.select(resume, args[3], a.constant(0)));
        Value tileFirst = a.add(a.mul(batchHead, perHead), tileOffset);
        auto [row0, rows] = geometry.queryBlockRows(queryBlock, s.blockM);
        auto [tileBegin, tileEnd] = geometry.kvBlockRange(row0, rows, s.blockN);
        Value tileLast = a.add(tileFirst, a.sub(tileEnd, tileBegin));
        Value pieceEnd = a.min(end, tileLast);
        auto [batch, head] = splitBatchHead(batchHead);
        Value kvHead = a.div(a.mul(head, p.packedHeads), p.groupSize());

        // The previous piece's output went through the Q tile.
        gpu::BarrierOp::create(b);
        Value qGroup = body.loadQueryBlock(q, batch, head, row0);
        Value blockBegin = a.add(tileBegin, a.sub(g, tileFirst));
        Value blockEnd = a.add(tileBegin, a.sub(pieceEnd, tileFirst));
        SmallVector<Value> state = body.runKvRange(
            kv, qGroup, batch, head, kvHead, row0, rows, blockBegin, blockEnd);

        Value isHost =
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq, g, tileFirst);
        Value covers = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                             pieceEnd, tileLast);
        Value isFirstThread = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                                    tid, a.constant(0));
        auto role = scf::IfOp::create(b, isHost, /*withElseRegion=*/true);
        {
          // A contributor: publish the partial, then the flag. The CTA's
          // stores happen before the barrier, thread 0's fence orders them
          // (cumulatively) before its flag update: a release.
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(role.elseBlock());
          body.storePartial(state, partialO, partialLse, cta);
          gpu::BarrierOp::create(b);
          auto signal = scf::IfOp::create(b, isFirstThread, false);
          b.setInsertionPointToStart(signal.thenBlock());
          releaseAndIncrement(b, flags, cta);
        }
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(role.thenBlock());
        auto alone = scf::IfOp::create(b, covers, /*withElseRegion=*/true);
        b.setInsertionPointToStart(alone.thenBlock());
        body.storeOutput(state, o, lse, batch, head, row0);
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
        gpu::BarrierOp::create(b);
        SmallVector<Value> merged =
            body.mergePartials(state, partialO, partialLse, first, last);
        body.storeOutput(merged, o, lse, batch, head, row0,
                         /*perLaneSums=*/false);
        b.setInsertionPointAfter(role);
        scf::YieldOp::create(
            b, ValueRange{pieceEnd, batchHead, queryBlock, tileOffset});
      });
  disableLoopInvariantCodeMotion(walk);
  b.setInsertionPointAfter(walk);

  // Output tiles with no visible key (causal rows before the first key, any
  // tile when Sk = 0 at run time) have no LeanTile: the CTAs share the
  // output tiles out, round-robin, and write O = 0, LSE = -inf into those.
  bool mayBeEmpty = !p.hasStaticLengths() ||
                    llvm::is_contained(p.kvBlockCounts(s.blockM, s.blockN), 0);
  if (mayBeEmpty)
    scf::ForOp::create(
        b, cta, a.mul(batchHeads, queryBlocks), a.constant(s.leanCtas),
        ValueRange{}, [&](OpBuilder &, Location, Value tile, ValueRange) {
          Value batchHead = a.div(tile, queryBlocks);
          Value queryBlock = a.sub(tile, a.mul(batchHead, queryBlocks));
          Value empty =
              arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                    order.blocksOf(queryBlock), a.constant(0));
          auto store = scf::IfOp::create(b, empty, /*withElseRegion=*/false);
          b.setInsertionPointToStart(store.thenBlock());
          auto [batch, head] = splitBatchHead(batchHead);
          // The previous output went through the Q tile.
          gpu::BarrierOp::create(b);
          body.storeOutput(body.initialState(), o, lse, batch, head,
                           a.mul(queryBlock, s.blockM));
          b.setInsertionPointAfter(store);
          scf::YieldOp::create(b);
        });
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
  if (std::optional<APFloat> softcap = op.getSoftcap())
    entries.push_back(b.getNamedAttr(
        "softcap", b.getF32FloatAttr(softcap->convertToFloat())));
  // Arbitrary IR, and a constant block mask's values, which the GPU
  // reference does not know: checkers that cannot evaluate them must say so.
  if (op.hasScoreModifier())
    entries.push_back(b.getNamedAttr("score_region", b.getUnitAttr()));
  if (op.getBlockMask() && matchPattern(op.getBlockMask(), m_Constant()))
    entries.push_back(b.getNamedAttr("block_mask", b.getUnitAttr()));
  // The block mask's blocks, for whoever checks or fills the block_mask
  // parameter ([B or 1, Hq or 1, ceil(Sq / Bq), ceil(Sk / Bk)]).
  if (std::optional<std::pair<int64_t, int64_t>> blocks =
          op.getBlockMaskBlock())
    entries.push_back(b.getNamedAttr(
        "block_mask_blocks",
        b.getDenseI64ArrayAttr({blocks->first, blocks->second})));
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
      ImplicitLocOpBuilder kb(op.getLoc(), ctx);
      kb.setInsertionPointToEnd(kernels.getBody());

      SmallVector<MemRefType> views;
      for (Value operand : {Value(op.getQuery()), Value(op.getKey()),
                            Value(op.getValue()), op.getInitOut()})
        views.push_back(kernelView(operand));
      SmallVector<Attribute> names{kb.getStringAttr("Q"), kb.getStringAttr("K"),
                                   kb.getStringAttr("V"),
                                   kb.getStringAttr("O")};
      if (shape->withLse) {
        views.push_back(kernelView(op.getInitLse()));
        names.push_back(kb.getStringAttr("LSE"));
      }
      if (shape->maskElement) {
        views.push_back(kernelView(op.getMask()));
        names.push_back(kb.getStringAttr("mask"));
      }
      if (shape->blockMaskParameter()) {
        views.push_back(kernelView(op.getBlockMask()));
        names.push_back(kb.getStringAttr("block_mask"));
      }
      if (shape->keyLengths) {
        views.push_back(kernelView(op.getKeyLengths()));
        names.push_back(kb.getStringAttr("key_lengths"));
      }
      // The runtime passes the workspaces after the tensors.
      SmallVector<Workspace> workspaces = kernelWorkspaces(*shape, ctx);
      SmallVector<MemRefType> workspaceTypes;
      SmallVector<Attribute> workspaceEntries;
      for (const Workspace &workspace : workspaces) {
        workspaceTypes.push_back(workspace.type);
        workspaceEntries.push_back(describeWorkspace(kb, workspace));
      }
      KernelSignature signature = kernelSignature(kb, views, workspaceTypes);
      auto func = gpu::GPUFuncOp::create(
          kb, name, kb.getFunctionType(signature.params, {}));
      func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), kb.getUnitAttr());
      int32_t threads = static_cast<int32_t>(shape->threads());
      func.setKnownBlockSizeAttr(kb.getDenseI32ArrayAttr({threads, 1, 1}));
      // The registers the estimate allowed are a promise ptxas must keep:
      // with more, fewer CTAs are resident and the waits never end (the
      // runtime would refuse the launch).
      if (shape->residentCtasPerSm)
        func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                      kb.getI32IntegerAttr(
                          static_cast<int32_t>(shape->residentCtasPerSm)));
      // A grid size that depends on a run-time length is dynamic.
      const AttentionProblem &problem = shape->problem;
      int64_t ctas = shape->leanCtas;
      SmallVector<int64_t> grid =
          ctas ? SmallVector<int64_t>{ctas, 1, 1}
               : SmallVector<int64_t>{ShapedType::isDynamic(problem.queryLen)
                                          ? ShapedType::kDynamic
                                          : shape->queryBlocks(),
                                      problem.batch,
                                      problem.tiledHeads() * shape->splits};
      SmallVector<Attribute> viewTypes;
      for (MemRefType view : views)
        viewTypes.push_back(TypeAttr::get(view));
      SmallVector<NamedAttribute> launch{
          kb.getNamedAttr("params", kb.getArrayAttr(viewTypes)),
          kb.getNamedAttr("param_names", kb.getArrayAttr(names)),
          kb.getNamedAttr("scalars", kb.getArrayAttr(signature.scalars)),
          kb.getNamedAttr("grid", kb.getDenseI64ArrayAttr(grid)),
          kb.getNamedAttr("block", kb.getDenseI64ArrayAttr({threads, 1, 1})),
          kb.getNamedAttr("dynamic_shared_memory",
                          kb.getI64IntegerAttr(shape->sharedBytes())),
          kb.getNamedAttr("tiles", fa2TilesAttrOf(ctx, shape->tiling())),
          kb.getNamedAttr("attention", describeAttention(kb, op))};
      // All CTAs must be resident at once: the runtime checks before
      // launching.
      if (ctas)
        launch.push_back(kb.getNamedAttr("persistent", kb.getUnitAttr()));
      if (!workspaces.empty())
        launch.push_back(
            kb.getNamedAttr("workspaces", kb.getArrayAttr(workspaceEntries)));
      func->setAttr(AttnDialect::getLaunchAttrName(),
                    kb.getDictionaryAttr(launch));
      KernelArguments args =
          bindArguments(kb, *shape, views, workspaceTypes, func);
      if (ctas)
        buildLeanKernel(kb, *shape, args);
      else if (shape->splits > 1)
        buildSplitKvKernel(kb, *shape, args);
      else
        buildFa2Kernel(kb, *shape, args);
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
