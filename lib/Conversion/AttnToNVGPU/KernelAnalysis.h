//===- KernelAnalysis.h - What an attention's kernel is made for -*- C++
//-*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The first step of attn-to-nvgpu: the checks an attention must pass to
// become a kernel, and the kernel's shape (tiles, warps, stages, the
// score modification, masks, the schedule's CTAs) that the kernel ABI,
// the skeletons and the CTA body are built for.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELANALYSIS_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELANALYSIS_H

#include "CtaBody.h"

#include "attn/Dialect/Attn/IR/Attn.h"

namespace mlir::attn {

/// Why `op` cannot become a kernel, or its shape, its products on the
/// matrix unit `request` asks for (chooseMatrixUnit with the op's
/// #attn.target).
FailureOr<KernelShape> analyseKernel(AttentionOp op, MatrixUnitRequest request);

/// That `op`'s #attn.target, if any, runs the kernels (sm_80 or newer);
/// else an error on `op` saying to run `what` ("the attention", "the
/// gradient") on the CPU.
LogicalResult checkComputeCapability(Operation *op, StringRef what);

/// Whether a CTA body can inline the score region `score`: scalar
/// arith and math operations (isInlinableScoreOp), and constants from
/// outside it; an error naming the op that stops it otherwise.
LogicalResult checkScoreRegion(Region &score);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELANALYSIS_H
