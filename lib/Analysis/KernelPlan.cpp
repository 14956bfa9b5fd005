//===- KernelPlan.cpp - The GPU kernel of an attention, decided once ------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/KernelPlan.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/BlockMaskDerivation.h"

#include "mlir/IR/TypeUtilities.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// What the plans and checks of one op, forward or backward, share: its
/// sizes, its target's limits.
struct KernelFacts {
  TargetAttr target;
  StringRef chip;
  int64_t headDim, valueDim;
  bool keyLengths;
  /// The shared memory a block may have: the target's, else sm_80's.
  int64_t sharedLimit;

  template <typename OpTy>
  explicit KernelFacts(OpTy op)
      : target(getEnclosingTarget(op)),
        chip(target ? target.getChip() : StringRef()),
        headDim(op.getQuery().getType().getDimSize(3)),
        valueDim(op.getValue().getType().getDimSize(3)),
        keyLengths(op.hasKeyLengths()),
        sharedLimit(target ? target.getSmemPerBlock()
                           : kSm80SharedBytesPerBlock) {}

  int64_t tileBytes(const Fa2Tiling &tiling) const {
    return fa2SharedMemoryBytes(tiling, headDim, valueDim,
                                /*elementBytes=*/2);
  }
  std::string chipName() const {
    return chip.empty() ? std::string("none (no #attn.target)") : chip.str();
  }
};

/// The CTAs an SM a Lean kernel with `tiling` must hold at once
/// (ceil(CTAs / SMs)) when that many leave a thread fewer registers than it
/// may have, so that ptxas must be held to them; 0 otherwise (not Lean, no
/// target to count with, or no register bound needed).
int64_t leanResidency(AttentionOp op, const Fa2Tiling &tiling,
                      const KernelFacts &facts) {
  auto lean = dyn_cast_or_null<LeanAttr>(op.getPartitionAttr());
  if (!lean || !facts.target)
    return 0;
  GpuLimits limits = gpuLimits(facts.target);
  int64_t needed = llvm::divideCeil(lean.getCtas(), limits.sms);
  // ptxas needs holding only where that many CTAs leave a thread fewer
  // registers than it may have; elsewhere the bound is no promise, and
  // ptxas spilled with one it did not need (docs/gpu-kernel.md).
  if (allowedRegistersPerThread(needed * 32 * tiling.warps, limits) <
      limits.regsPerThread)
    return needed;
  return 0;
}

} // namespace

std::string mlir::attn::kernelUnfit(AttentionOp op) {
  if (op.hasFrame())
    return "a frame (a rank's part of a distributed attention)";
  Attribute partition = op.getPartitionAttr();
  if (partition && !isa<LeanAttr, SplitKVAttr>(partition))
    return "a distributed partition";
  Type element = op.getQuery().getType().getElementType();
  if (!element.isF16() && !element.isBF16())
    return "operands other than f16 and bf16";
  if (getElementTypeOrSelf(op.getInitOut().getType()) != element)
    return "O in another element type than Q";
  if (op.getQuery().getType().isDynamicDim(3) ||
      op.getValue().getType().isDynamicDim(3))
    return "dynamic head dimensions";
  if (TargetAttr target = getEnclosingTarget(op);
      target && target.getComputeCapability() < kMinComputeCapability)
    return "a target older than sm_80";
  return "";
}

FailureOr<KernelPlan> mlir::attn::planKernel(AttentionOp op, Fa2Tiling tiling,
                                             const KernelPlanRequest &request,
                                             std::string &why) {
  KernelFacts facts(op);
  // The tiles' stages, fewer while they do not fit.
  while (tiling.stages > 1 && facts.tileBytes(tiling) > facts.sharedLimit)
    --tiling.stages;
  if (facts.tileBytes(tiling) > facts.sharedLimit) {
    why = "the tiles need " + std::to_string(facts.tileBytes(tiling)) +
          " bytes of shared memory per block; the target allows " +
          std::to_string(facts.sharedLimit) +
          ": pin smaller tiles (block_m or block_n of the op's tiles "
          "attribute)";
    return failure();
  }
  std::optional<MatrixUnit> unit =
      chooseMatrixUnit(request.unit, facts.chip, tiling, facts.valueDim);
  if (!unit) {
    why = "matrix-unit=wgmma: " +
          wgmmaUnfit(facts.chipName(), tiling, facts.valueDim) +
          ": use matrix-unit=auto or pin tiles that fit (the op's tiles "
          "attribute)";
    return failure();
  }
  MLIRContext *context = op.getContext();
  int64_t minCtasPerSm = leanResidency(op, tiling, facts);
  if (*unit == MatrixUnit::MmaSync)
    return KernelPlan{tiling, mmaSyncKernelAttr(context, minCtasPerSm)};
  WgmmaBodyPlan body = wgmmaBodyPlanOf(op, tiling, op.splitsKeyValues(),
                                       request.blockMaskToCome);
  return KernelPlan{tiling, wgmmaKernelAttrOf(context, body, minCtasPerSm)};
}

KernelAttr mlir::attn::mmaSyncKernelAttr(MLIRContext *context,
                                         int64_t minCtasPerSm) {
  return KernelAttr::get(context, MatrixUnit::MmaSync, TileCopy::CpAsync,
                         TileCopy::CpAsync, WarpRoles::NoRoles,
                         KernelLoop::Sequential, OutputStore::Lanes, 0, 0, 0,
                         minCtasPerSm);
}

KernelAttr mlir::attn::wgmmaKernelAttrOf(MLIRContext *context,
                                         const WgmmaBodyPlan &body,
                                         int64_t minCtasPerSm) {
  WarpRoleRegisters registers;
  if (body.warpRoles()) {
    registers = body.roleRegisters;
    // The kernel's .maxnreg then holds ptxas to the CTAs an SM.
    if (registers.reallocates())
      minCtasPerSm = 0;
  }
  KernelLoop loop = body.pingPong()  ? KernelLoop::PingPong
                    : body.overlap() ? KernelLoop::Overlapped
                                     : KernelLoop::Sequential;
  auto copy = [](bool tensor) {
    return tensor ? TileCopy::Tensor : TileCopy::CpAsync;
  };
  return KernelAttr::get(
      context, MatrixUnit::Wgmma, copy(body.tensorCopies()),
      copy(body.tensorCopies() && body.queryTensorCopy()),
      body.warpRoles() ? WarpRoles::Producer : WarpRoles::NoRoles, loop,
      body.outputTensorStore() ? OutputStore::Tensor : OutputStore::Lanes,
      registers.producer, registers.consumer, registers.entry, minCtasPerSm);
}

bool mlir::attn::blockMaskToCome(AttentionOp op, const Fa2Tiling &tiling) {
  return !op.getBlockMask() &&
         deriveBlockMask(op, tiling.blockM, tiling.blockN).has_value();
}

LogicalResult mlir::attn::checkKernelPlan(AttentionOp op,
                                          const Fa2Tiling &tiling,
                                          KernelAttr kernel, std::string &why) {
  KernelFacts facts(op);
  auto refuse = [&](const Twine &field, const Twine &reason) {
    why = ("the pinned #attn.kernel's " + field + " cannot be built: " + reason)
              .str();
    return failure();
  };
  int64_t tileBytes = facts.tileBytes(tiling);
  int64_t sharedBytes =
      wgmmaSharedBytes(tileBytes, tiling.stages, kernel.tensorCopies(),
                       kernel.warpRoles(), facts.keyLengths);
  if (sharedBytes > facts.sharedLimit)
    return refuse("tiles", "its " + Twine(tiling.stages) + " stage(s) need " +
                               Twine(sharedBytes) +
                               " bytes of shared memory per block, and " +
                               facts.chipName() + " allows " +
                               Twine(facts.sharedLimit) +
                               ": pin fewer stages or smaller tiles");
  int64_t resident = leanResidency(op, tiling, facts);
  if (resident && !kernel.reallocatesRegisters() &&
      kernel.getMinCtasPerSm() < resident)
    return refuse("min_ctas_per_sm = " + Twine(kernel.getMinCtasPerSm()),
                  "Lean's persistent CTAs must all be resident, " +
                      Twine(resident) +
                      " an SM, which ptxas must be held "
                      "to: set min_ctas_per_sm = " +
                      Twine(resident));
  if (kernel.getUnit() == MatrixUnit::MmaSync)
    return success();

  if (std::string unfit = wgmmaUnfit(facts.chipName(), tiling, facts.valueDim);
      !unfit.empty())
    return refuse("unit = wgmma", unfit + "; use unit = mma_sync");
  GpuLimits limits = gpuLimits(facts.target);
  if (kernel.tensorCopies())
    if (std::string unfit = kvTensorCopiesUnfit(
            tiling, tileBytes, limits.smemPerBlock, facts.keyLengths);
        !unfit.empty())
      return refuse("kv = tensor", unfit + "; use kv = cp_async");
  if (kernel.queryTensorCopy() || kernel.outputTensorStore())
    if (std::string unfit = rowTileTensorMapUnfit(tiling); !unfit.empty())
      return refuse(kernel.queryTensorCopy() ? "q = tensor" : "o = tensor",
                    unfit + "; use q = cp_async and o = lanes");
  int64_t persistent = 0;
  if (auto lean = dyn_cast_or_null<LeanAttr>(op.getPartitionAttr()))
    persistent = llvm::divideCeil(lean.getCtas(), limits.sms);
  int64_t consumerRegisters = allowedRegistersPerThread(
      std::max<int64_t>(1, persistent) * 32 * tiling.warps, limits);
  if (kernel.warpRoles()) {
    if (std::string unfit =
            warpRolesUnfit(tiling, /*tensorCopies=*/true, tileBytes,
                           limits.smemPerBlock, facts.keyLengths);
        !unfit.empty())
      return refuse("roles = producer", unfit + "; use roles = none");
    if (persistent > 1)
      return refuse("roles = producer",
                    "a persistent kernel with " + Twine(persistent) +
                        " CTAs an SM keeps every warp a consumer; use "
                        "roles = none");
    consumerRegisters = limits.regsPerThread;
    if (kernel.reallocatesRegisters()) {
      int64_t consumerThreads = 32 * tiling.warps,
              threads = 32 * (tiling.warps + kProducerWarps);
      int64_t entry = kernel.getEntryRegisters();
      if (entry * threads > limits.regsPerSm || entry > limits.regsPerThread)
        return refuse("entry_registers = " + Twine(entry),
                      Twine(threads) + " threads at " + Twine(entry) +
                          " registers exceed the target's register file (" +
                          Twine(limits.regsPerSm) + " an SM, " +
                          Twine(limits.regsPerThread) + " a thread)");
      if (kernel.getProducerRegisters() * 32 * kProducerWarps +
              kernel.getConsumerRegisters() * consumerThreads >
          entry * threads)
        return refuse("registers",
                      "setmaxnreg moves the registers a block has: " +
                          Twine(kProducerWarps * 32) + " producer threads at " +
                          Twine(kernel.getProducerRegisters()) + " and " +
                          Twine(consumerThreads) + " consumer threads at " +
                          Twine(kernel.getConsumerRegisters()) +
                          " need more than " + Twine(threads) + " threads at " +
                          Twine(entry));
      int64_t widest = wgmmaEntryRegisters(tiling, facts.valueDim);
      if (entry < widest)
        return refuse("entry_registers = " + Twine(entry),
                      "ptxas needs " + Twine(widest) +
                          " at entry to compile the kernel's widest product");
      consumerRegisters = kernel.getConsumerRegisters();
    }
  }
  if (kernel.overlapped())
    if (std::string unfit = softmaxOverlapUnfit(
            tiling, facts.valueDim, scoreWorkOf(op),
            static_cast<bool>(op.getBlockMask()), op.splitsKeyValues(),
            kernel.tensorCopies(), kernel.warpRoles(), consumerRegisters);
        !unfit.empty())
      return refuse("loop = " + stringifyKernelLoop(kernel.getLoop()),
                    unfit + "; use loop = sequential");
  if (kernel.pingPong())
    if (std::string unfit =
            pingPongUnfit(tiling, facts.headDim, kernel.warpRoles(),
                          /*overlap=*/true);
        !unfit.empty())
      return refuse("loop = ping_pong", unfit + "; use loop = overlapped");
  return success();
}

WgmmaBodyPlan mlir::attn::wgmmaBodyPlanOf(AttentionOp op,
                                          const Fa2Tiling &tiling,
                                          bool splitsKv, bool blockMaskToCome) {
  GpuLimits limits = gpuLimits(getEnclosingTarget(op));
  WgmmaKernel kernel = wgmmaKernelOf(op, tiling, splitsKv, limits);
  kernel.blockMask |= blockMaskToCome;
  return planWgmmaBody(kernel, limits);
}

LogicalResult mlir::attn::checkUnitRequest(KernelAttr kernel,
                                           MatrixUnitRequest request,
                                           std::string &why) {
  if (request == MatrixUnitRequest::Auto ||
      (request == MatrixUnitRequest::Wgmma) ==
          (kernel.getUnit() == MatrixUnit::Wgmma))
    return success();
  why = ("the op's #attn.kernel says unit = " +
         stringifyMatrixUnit(kernel.getUnit()) + ", and matrix-unit=" +
         (request == MatrixUnitRequest::Wgmma ? "wgmma" : "mma-sync") +
         " asks for the other (attn-to-ptx asks for mma-sync on a chip "
         "without wgmma): compile for the chip the plan was made for, drop "
         "the option, or edit the plan's unit")
            .str();
  return failure();
}

std::string mlir::attn::gradKernelUnfit(AttentionGradOp op) {
  if (op.getPartitionAttr())
    return "a partition (the CPU's loops)";
  Type element = op.getQuery().getType().getElementType();
  if (!element.isF16() && !element.isBF16())
    return "operands other than f16 and bf16";
  if (!AttentionProblem::fromOp(op))
    return "run-time sizes";
  if (op.getInitGradMask())
    return "the mask's gradient";
  if (TargetAttr target = getEnclosingTarget(op);
      target && target.getComputeCapability() < kMinComputeCapability)
    return "a target older than sm_80";
  return "";
}

FailureOr<KernelAttr> mlir::attn::planGradKernel(AttentionGradOp op,
                                                 MatrixUnitRequest request,
                                                 std::string &why) {
  KernelFacts facts(op);
  std::optional<MatrixUnit> unit =
      chooseGradMatrixUnit(request, facts.chip, facts.headDim, facts.valueDim);
  if (!unit) {
    why = "matrix-unit=wgmma: " +
          gradWgmmaUnfit(facts.chipName(), facts.headDim, facts.valueDim) +
          ": use matrix-unit=auto";
    return failure();
  }
  MLIRContext *context = op.getContext();
  if (*unit == MatrixUnit::MmaSync)
    return mmaSyncKernelAttr(context, 0);
  TileCopy copies = gradTensorCopiesUnfit(facts.headDim, facts.valueDim,
                                          facts.keyLengths, facts.sharedLimit)
                            .empty()
                        ? TileCopy::Tensor
                        : TileCopy::CpAsync;
  return KernelAttr::get(context, MatrixUnit::Wgmma, copies, copies,
                         WarpRoles::NoRoles, KernelLoop::Sequential,
                         OutputStore::Lanes, 0, 0, 0, 0);
}

LogicalResult mlir::attn::checkGradKernelPlan(AttentionGradOp op,
                                              KernelAttr kernel,
                                              std::string &why) {
  KernelFacts facts(op);
  auto refuse = [&](const Twine &field, const Twine &reason) {
    why = ("the pinned #attn.kernel's " + field +
           " cannot be built for the backward kernel: " + reason)
              .str();
    return failure();
  };
  if (kernel.warpRoles() || kernel.overlapped() || kernel.outputTensorStore() ||
      kernel.getMinCtasPerSm())
    return refuse("roles, loop, o or min_ctas_per_sm",
                  "every warp computes, in the sequential loop, and dQ, dK "
                  "and dV leave by lanes; use roles = none, loop = "
                  "sequential, o = lanes and no min_ctas_per_sm");
  if (kernel.queryTensorCopy() != kernel.tensorCopies())
    return refuse("q", "Q's tiles come as K's and V's do; use q = " +
                           stringifyTileCopy(kernel.getKv()));
  if (kernel.getUnit() == MatrixUnit::MmaSync)
    return success();
  if (std::string unfit =
          gradWgmmaUnfit(facts.chipName(), facts.headDim, facts.valueDim);
      !unfit.empty())
    return refuse("unit = wgmma", unfit + "; use unit = mma_sync");
  if (kernel.tensorCopies())
    if (std::string unfit = gradTensorCopiesUnfit(
            facts.headDim, facts.valueDim, facts.keyLengths, facts.sharedLimit);
        !unfit.empty())
      return refuse("kv = tensor", unfit + "; use kv = cp_async and q = "
                                           "cp_async");
  return success();
}
