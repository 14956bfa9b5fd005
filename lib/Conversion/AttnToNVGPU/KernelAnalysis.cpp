//===- KernelAnalysis.cpp - What an attention's kernel is made for --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "KernelAnalysis.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/KernelPlan.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Analysis/TileSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// CUDA's limit on a grid's y and z sizes.
constexpr int64_t kMaxGridZ = 65535;

} // namespace

namespace mlir::attn {

LogicalResult checkScoreRegion(Region &score) {
  Block &region = score.front();
  // The terminator's operand too: a region may yield a value of its
  // function only when it is a constant.
  for (Operation &inner : region) {
    if (&inner != region.getTerminator() && !isInlinableScoreOp(inner))
      return inner.emitError("attn-to-nvgpu inlines score regions of scalar "
                             "arith operations, math.tanh, exp, exp2, log, "
                             "log2, absf and sqrt, and tensor.extract from "
                             "constant tensors; '")
             << inner.getName() << "' is not one (attn-to-cpu runs any region)";
    for (Value operand : inner.getOperands()) {
      if (operand.getParentRegion() == &score)
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

LogicalResult checkComputeCapability(Operation *op, StringRef what) {
  if (TargetAttr target = getEnclosingTarget(op);
      target && target.getComputeCapability() < kMinComputeCapability)
    return op->emitError("attn-to-nvgpu generates sm_80 code (mma.sync "
                         "m16n8k16, cp.async); the target ")
           << target.getChip() << " is older: run " << what
           << " on the CPU (attn-to-cpu)";
  return success();
}

FailureOr<KernelShape> analyseKernel(AttentionOp op,
                                     MatrixUnitRequest request) {
  if (failed(checkComputeCapability(op, "the attention")))
    return failure();
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
  if (op.hasScoreModifier() && failed(checkScoreRegion(op.getScore())))
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

  TargetAttr target = getEnclosingTarget(op);
  std::string why;
  FailureOr<TileChoice> choice =
      chooseTiles(op, {TileTarget::Gpu, 0, 0, target, request}, why);
  if (failed(choice))
    return op.emitError("attn-to-nvgpu: ") << why;
  // The op's #attn.kernel as it is, or the plan of attn-select-schedule's
  // function.
  KernelPlan plan{choice->tiling, op.getKernelAttr()};
  if (plan.kernel) {
    if (failed(checkUnitRequest(plan.kernel, request, why)) ||
        failed(checkKernelPlan(op, plan.tiling, plan.kernel, why)))
      return op.emitError("attn-to-nvgpu: ") << why;
  } else {
    FailureOr<KernelPlan> planned = planKernel(op, plan.tiling, {request}, why);
    if (failed(planned))
      return op.emitError("attn-to-nvgpu: ") << why;
    plan = *planned;
  }
  const Fa2Tiling &tiling = plan.tiling;
  KernelAttr kernel = plan.kernel;
  problem->packedHeads = tiling.packedHeads;
  KernelShape shape{*problem, element, 0, 0, 0, 0, 0, false};
  shape.blockM = tiling.blockM;
  shape.blockN = tiling.blockN;
  shape.warps = tiling.warps;
  shape.stages = tiling.stages;
  assert(shape.blockM % (16 * shape.warps) == 0 && shape.blockN % 16 == 0 &&
         "#attn.fa2's verifier and the default tilings keep block_m a "
         "multiple of 16 * warps and block_n one of 16");
  shape.kernel = kernel;
  shape.scale = op.getEffectiveScale();
  shape.scaleLog2 = shape.scale * static_cast<float>(M_LOG2E);
  if (std::optional<APFloat> softcap = op.getSoftcap())
    shape.softcap = softcap->convertToFloat();
  if (op.hasScoreModifier())
    shape.scoreRegion = &op.getScore();
  if (op.getBlockMask()) {
    // chooseTiles checked that the tiles nest in the blocks.
    auto [maskRows, maskKeys] = *op.getBlockMaskBlock();
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
    if (target) {
      GpuLimits limits = gpuLimits(target, request);
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
    }
  }
  return shape;
}

} // namespace mlir::attn
