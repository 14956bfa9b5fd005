//===- WarpRoles.h - Producer and consumer warps of a CTA -------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// FlashAttention-3's warp specialisation (its section 3.1), as the kernel
// skeletons and the CTA body see it. A warp-specialised kernel
// (KernelShape::warpSpecialised) runs its skeleton twice over: once in the
// producer warpgroup (the warps after the consumers'), whose body only
// issues the tensor copies, and once in the consumer warpgroups, whose body
// computes. The two paths meet only at the kernel's end, so that ptxas holds
// each to the registers setmaxnreg gives its role. The skeleton's CTA-wide
// barriers are then executed by different instructions in the two paths,
// which the PTX ISA allows only of barriers without .aligned; barriers among
// the consumers alone are a named barrier.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPROLES_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPROLES_H

#include "CtaBody.h"

namespace mlir::attn {

/// Builds `skeleton` with the CTA body of each warp role of `s`: once with
/// WarpRole::All, or, warp-specialised, in a branch per role, each starting
/// with the role's setmaxnreg where the kernel reallocates registers.
void buildForEachWarpRole(ImplicitLocOpBuilder &b, const KernelShape &s,
                          function_ref<void(CtaBody &)> skeleton);

/// A barrier of every thread of the CTA: bar.sync 0, or, warp-specialised,
/// barrier.sync 0 (not .aligned: the roles reach it by different
/// instructions).
void ctaBarrier(ImplicitLocOpBuilder &b, const KernelShape &s);

/// ctaBarrier that also tells every thread whether `predicate` (i1) held for
/// any thread of the CTA.
Value ctaBarrierAny(ImplicitLocOpBuilder &b, const KernelShape &s,
                    Value predicate);

/// A barrier of the consumer warps (named barrier 1 over their threads)
/// where `role` is the consumers', else ctaBarrier.
void consumerBarrier(ImplicitLocOpBuilder &b, const KernelShape &s,
                     WarpRole role);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPROLES_H
