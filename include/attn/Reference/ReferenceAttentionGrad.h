//===- ReferenceAttentionGrad.h - Float64 attention gradient ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The backward pass of the attention ReferenceAttention.h defines, computed
// with plain loops to check compiled gradients against. Like the forward
// reference it shares no code with the compiler.
//
// For query i of head h in batch b, reading KV head g = h / (Hq / Hkv), with
// the scores of ReferenceAttention.h written step by step,
//   raw_k = scale * dot(q_i, k_k)
//   c_k   = softcap * tanh(raw_k / softcap)    (raw_k without a softcap)
//   m_k   = modifier(c_k, b, h, i, k)          (c_k without a modifier)
//   s_k   = m_k + mask[b, h, i, k]             (m_k without an additive mask)
//   P_k   = exp(s_k - LSE_i)                   for the keys that take part,
//                                              0 for the others,
// and dO_i the gradient of O_i:
//   dV_k += P_k dO_i
//   dP_k  = dot(dO_i, v_k)
//   D_i   = sum_k P_k dP_k                     (= dot(dO_i, O_i))
//   dS_k  = P_k (dP_k - D_i)                   (the additive mask's gradient)
//   dC_k  = dS_k * modifier'(c_k)
//   dRaw_k = dC_k * (1 - tanh^2(raw_k / softcap))
//   dQ_i += scale * dRaw_k * k_k
//   dK_k += scale * dRaw_k * q_i
// dK and dV of a KV head sum over the query heads that read it, and the
// gradient of a broadcast mask over the batches and heads that share it. A
// row that sees no key contributes nothing, keys past a sequence's key length
// get dK = dV = 0, and boolean and block masks have no gradient.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_REFERENCE_REFERENCEATTENTIONGRAD_H
#define ATTN_REFERENCE_REFERENCEATTENTIONGRAD_H

#include "attn/Reference/ReferenceAttention.h"

namespace mlir::attn::reference {

/// The gradients of the attention's inputs.
struct AttentionGradResult {
  /// [B, Hq, Sq, D].
  std::vector<double> dQuery;
  /// [B, Hkv, Sk, D], summed over the query heads of each KV head's group.
  std::vector<double> dKey;
  /// [B, Hkv, Sk, Dv], summed like dKey.
  std::vector<double> dValue;
  /// The gradient of the additive mask operand, with its own (broadcast)
  /// shape [maskBatch, maskHeads, Sq, Sk]: summed over the batches and heads
  /// that share a broadcast slice. Empty when there is no additive mask.
  std::vector<double> dMask;
};

/// d/dscore of AttentionOptions::scoreModifier at (score, b, h, q, k).
/// Without one, the gradient takes a central difference of the modifier
/// instead, which calls the modifier twice more per visible score.
using ScoreModifierDerivative = std::function<double(
    double score, int64_t b, int64_t h, int64_t q, int64_t k)>;

/// d/dscore of `modifier` by a central difference in double, accurate to
/// about 1e-10 relative when the modifier is computed in double (a modifier
/// computed in float needs a wider step).
ScoreModifierDerivative centralDifference(const ScoreModifier &modifier);

/// The exact float64 gradient of referenceAttention's O with respect to Q, K,
/// V and the additive mask, contracted with `gradOut` [B, Hq, Sq, Dv]:
///   dX = sum over (b, h, i, e) of gradOut[b, h, i, e] * dO[b, h, i, e] / dX.
/// It recomputes the forward (the same definition as referenceAttention).
/// Fails, saying why, on the inputs referenceAttention rejects and when
/// `gradOut` has the wrong size.
llvm::Expected<AttentionGradResult> referenceAttentionGrad(
    const AttentionSizes &shape, llvm::ArrayRef<double> query,
    llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
    llvm::ArrayRef<double> gradOut, const AttentionOptions &options,
    const ScoreModifierDerivative &modifierDerivative = {});

/// The same gradient computed naively in `format`, the yardstick of
/// flash-attention's rule for 16-bit inputs (autograd of a naive attention in
/// the format). Q, K, V and gradOut are rounded to `format`; dot products and
/// sums accumulate in float, and every intermediate is rounded to `format`:
/// the forward's as naiveHalfAttention rounds them (each score after each
/// step, each probability), then each dP_k, D_i, dS_k, the product with each
/// chain rule factor (modifier', the softcap's 1 - tanh^2, the scale), and
/// each element of dQ, of a query head's dK and dV, of their sum over a KV
/// head's group and of the mask gradient.
llvm::Expected<AttentionGradResult> naiveHalfAttentionGrad(
    const AttentionSizes &shape, llvm::ArrayRef<double> query,
    llvm::ArrayRef<double> key, llvm::ArrayRef<double> value,
    llvm::ArrayRef<double> gradOut, const AttentionOptions &options,
    HalfFormat format, const ScoreModifierDerivative &modifierDerivative = {});

} // namespace mlir::attn::reference

#endif // ATTN_REFERENCE_REFERENCEATTENTIONGRAD_H
