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
/// where `role` is the consumers', else (WarpRole::All) ctaBarrier; never
/// for the producer.
void consumerBarrier(ImplicitLocOpBuilder &b, const KernelShape &s,
                     WarpRole role);

/// FlashAttention-3's ping-pong (KernelShape::pingPong): the two consumer
/// warpgroups take turns at issuing a step's products, warpgroup w's turn
/// being named barrier 2 + w over both warpgroups' threads. A range opens
/// with warpgroup 0 arriving on its own turn (openTurns: it goes first);
/// each step issues between awaitTurn (bar.sync on the warpgroup's turn) and
/// passTurn (bar.arrive on the other's); warpgroup 0's closeTurns takes the
/// turn warpgroup 1 passed last, so every range leaves both barriers as it
/// found them. `warpgroup` is the consumer warpgroup's index (0 or 1).
void openTurns(ImplicitLocOpBuilder &b, const KernelShape &s, Value warpgroup);
void awaitTurn(ImplicitLocOpBuilder &b, const KernelShape &s, Value warpgroup);
void passTurn(ImplicitLocOpBuilder &b, const KernelShape &s, Value warpgroup);
void closeTurns(ImplicitLocOpBuilder &b, const KernelShape &s, Value warpgroup);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPROLES_H
