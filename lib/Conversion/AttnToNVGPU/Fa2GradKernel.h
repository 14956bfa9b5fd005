//===- Fa2GradKernel.h - The backward pass on tensor cores ------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The kernel of an attn.attention_grad: FlashAttention-2's backward over
// key/value blocks for dK and dV, and over query blocks for dQ, in one
// launch (docs/backward.md, "On the GPU").
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2GRADKERNEL_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2GRADKERNEL_H

#include "CtaBody.h"

#include "attn/Analysis/MatrixUnit.h"
#include "attn/Dialect/Attn/IR/Attn.h"

namespace mlir::attn {

/// The tensors of the backward kernel, in its parameters' order; the mask
/// operand ([B or 1, Hq or 1, Sq, Sk]), the block mask parameter ([B or 1,
/// Hq or 1, Nq, Nk] i8; null for a constant block mask, a table in the
/// kernel) and the key lengths ([B] i32), after dV, only when the gradient
/// has them.
struct GradArguments {
  Value q, k, v, o, lse, gradOut, gradQuery, gradKey, gradValue, mask,
      blockMask, keyLengths;
  /// With tensor copies, the tensor maps of Q, K, V and dO
  /// (gradKernelTensorMaps), the kernel's last parameters.
  Value qMap, kMap, vMap, gradOutMap;
};

/// Why `op` cannot become a backward kernel, or its shape: the tiles of
/// fa2GradKernelTiling, its products on the matrix unit `request` asks for
/// (chooseMatrixUnit with the op's #attn.target: wgmma on sm_90a), and on
/// wgmma its tiles by tensor copies where gradTensorCopiesUnfit allows.
FailureOr<KernelShape> analyseGradKernel(AttentionGradOp op,
                                         MatrixUnitRequest request);

/// Bytes of dynamic shared memory of the backward kernel.
int64_t gradSharedBytes(const KernelShape &s);

/// The grid of the backward kernel: (key/value blocks x Hkv + query blocks
/// x Hq, B, 1).
SmallVector<int64_t> gradGrid(const KernelShape &s);

/// The backward kernel's body. CTA x of key/value head h = x / Nk owns key
/// block x mod Nk: K and V stay in shared memory while it walks the query
/// heads of h's group and the query blocks that see the block
/// (MaskGeometry::queryBlockRange), and it writes the block's dK and dV.
/// The CTAs after those own a query block of a query head each: Q and dO
/// stay while they walk the key/value blocks the block sees, and they write
/// its dQ. With key lengths, a sequence's keys past its length are absent
/// (dK = dV = 0 there), as in the forward (MaskGeometry::sequenceKeys). A
/// mask operand applies to every score both walks recompute: a boolean one
/// hides, an additive one adds to the logit (dS is unchanged: the mask is a
/// constant of the score). A block mask's empty blocks are skipped in both
/// walks (each visited block reads its status), its full ones read no mask
/// operand; the tiles nest in its blocks.
/// Both recompute P from the LSE and Dsum = rowsum(dO O); no CTA
/// writes what another reads, so the results are the same bytes run to
/// run.
void buildFa2GradKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                        const GradArguments &args);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_FA2GRADKERNEL_H
