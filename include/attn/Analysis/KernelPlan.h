//===- KernelPlan.h - An attention's GPU kernel, decided once --*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Every decision of an attention's GPU kernel beyond its tiles and
// partition, made here and written into the IR as `#attn.kernel`: the matrix
// unit, how K, V and Q arrive, warp roles and their registers, the loop
// form, O's stores, and the CTAs an SM ptxas is held to. attn-select-schedule
// writes the plan; attn-to-nvgpu builds it (or plans an op that has none, by
// the same function); the plan report prints it. A pinned plan is checked
// here (checkKernelPlan) and built as it is or refused with the reason.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_KERNELPLAN_H
#define ATTN_ANALYSIS_KERNELPLAN_H

#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/MatrixUnit.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include <string>

namespace mlir::attn {

/// An attention's kernel: its tiles (their stages those that fit the target's
/// shared memory) and its #attn.kernel.
struct KernelPlan {
  Fa2Tiling tiling;
  KernelAttr kernel;
};

/// What planKernel is asked for.
struct KernelPlanRequest {
  /// The matrix unit asked for (the passes' matrix-unit option).
  MatrixUnitRequest unit = MatrixUnitRequest::Auto;
  /// Whether the op will have a block mask by the time it becomes a kernel
  /// although it has none yet (attn-derive-block-mask will attach one): a
  /// block mask keeps the loop sequential (softmaxOverlapUnfit).
  bool blockMaskToCome = false;
};

/// Why `op` is not an attention attn-to-nvgpu makes a kernel of whatever its
/// plan (a frame, a distributed partition, operands other than f16 or bf16),
/// or "": nothing is planned for such an op. attn-to-nvgpu's errors say
/// how to go on.
std::string kernelUnfit(AttentionOp op);

/// The kernel of `op` with `tiling` (the op's tiles or the default): the
/// stages cut one at a time while the tiles do not fit the shared memory a
/// block may have (the op's #attn.target's, else sm_80's); the unit
/// (chooseMatrixUnit); on wgmma, planWgmmaBody's tensor copies, warp roles
/// and registers, loop form and stores; for Lean attention, the CTAs an SM
/// ptxas is held to where its persistent CTAs would otherwise not all be
/// resident. Failure with `why` (what to change) when the tiles do not fit
/// with one stage or the unit asked for does not fit.
FailureOr<KernelPlan> planKernel(AttentionOp op, Fa2Tiling tiling,
                                 const KernelPlanRequest &request,
                                 std::string &why);

/// Whether the pinned `kernel` can be built for `op` with `tiling` on the
/// op's #attn.target: each decision against the rule planKernel takes it
/// by (wgmmaUnfit, kvTensorCopiesUnfit, warpRolesUnfit, softmaxOverlapUnfit,
/// pingPongUnfit, rowTileTensorMapUnfit; the shared memory of the stages
/// with the plan's mbarriers; setmaxnreg's registers within the register
/// file; Lean's residency). Failure with `why`, naming the field to change.
LogicalResult checkKernelPlan(AttentionOp op, const Fa2Tiling &tiling,
                              KernelAttr kernel, std::string &why);

/// Whether a pinned `kernel` agrees with the matrix unit a pass's option
/// `request`s (auto agrees with both); failure with `why` otherwise. A pass
/// option never overrides a plan.
LogicalResult checkUnitRequest(KernelAttr kernel, MatrixUnitRequest request,
                               std::string &why);

/// Why the backward `op` is not an attention attn-to-nvgpu makes a backward
/// kernel of (a partition, operands other than f16 or bf16, run-time sizes,
/// the mask's gradient, a target older than sm_80), or "".
std::string gradKernelUnfit(AttentionGradOp op);

/// The backward kernel of `op` (fa2GradKernelTiling's tiles): its unit
/// (chooseGradMatrixUnit) and on wgmma its tiles by tensor copies where they
/// fit (gradTensorCopiesUnfit); every warp computes, the loop is sequential,
/// results leave by lanes. Failure with `why` when the unit asked for does
/// not fit.
FailureOr<KernelAttr>
planGradKernel(AttentionGradOp op, MatrixUnitRequest request, std::string &why);

/// Whether the pinned `kernel` can be built for the backward `op`:
/// checkKernelPlan's rules for what the backward kernel has (gradWgmmaUnfit,
/// gradTensorCopiesUnfit; Q's copies go with K's and V's), and none of the
/// forward's warp roles, overlapped loops or tensor stores.
LogicalResult checkGradKernelPlan(AttentionGradOp op, KernelAttr kernel,
                                  std::string &why);

/// The planWgmmaBody of a kernel of `op` with `tiling` on its #attn.target
/// (which must have warpgroup MMA), `splitsKv` or not, a block mask to come
/// or not: what planKernel decides a wgmma kernel by, and the plan report's
/// reasons for what such a kernel does not do.
WgmmaBodyPlan wgmmaBodyPlanOf(AttentionOp op, const Fa2Tiling &tiling,
                              bool splitsKv, bool blockMaskToCome);

/// The #attn.kernel of a wgmma kernel planned as `body`, held to
/// `minCtasPerSm` CTAs an SM unless its warp roles move registers (its
/// .maxnreg then holds ptxas).
KernelAttr wgmmaKernelAttrOf(MLIRContext *context, const WgmmaBodyPlan &body,
                             int64_t minCtasPerSm);

/// The #attn.kernel of an mma.sync kernel: cp.async, every warp computing,
/// the sequential loop, O by lanes.
KernelAttr mmaSyncKernelAttr(MLIRContext *context, int64_t minCtasPerSm);

/// Whether attn-derive-block-mask will attach a block mask to `op` with
/// `tiling`'s tiles (it has none and the IR proves some block empty or
/// full): the sequential loop is planned for it.
bool blockMaskToCome(AttentionOp op, const Fa2Tiling &tiling);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_KERNELPLAN_H
