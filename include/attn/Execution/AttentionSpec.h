//===- AttentionSpec.h - An attention described on the command line -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EXECUTION_ATTENTIONSPEC_H
#define ATTN_EXECUTION_ATTENTIONSPEC_H

#include "attn/Support/AttentionSizes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::attn {

class AttentionOp;
class AttentionGradOp;

enum class MaskKind { None, Boolean, Additive };

/// Everything attn-run and the C API need to build one attention without a
/// module: its sizes (by default B = 1, Hq = Hkv = 8, Sq = Sk = 128, D = Dv =
/// 64, attn-run's) and what it computes.
struct AttentionSpec : AttentionSizes, PositionMask {
  AttentionSpec() : AttentionSizes{1, 8, 8, 128, 128, 64, 64} {}
  /// f16, bf16 or f32, for Q, K and V; O uses `outType`.
  std::string inputType = "f32";
  std::string outType = "f32";
  std::optional<float> scale;
  std::optional<float> softcap;
  /// The mask operand, [B or 1, Hq or 1, Sq, Sk]: i1 when boolean, of
  /// `additiveMaskType` (f16, bf16 or f32) when additive.
  MaskKind mask = MaskKind::None;
  std::string additiveMaskType = "f32";
  /// Whether the mask has a slice per sequence (B) and per query head (Hq),
  /// or one that broadcasts (1).
  bool maskPerSequence = true;
  bool maskPerHead = false;
  /// A block mask of blocks of (rows, keys), [B or 1, Hq or 1,
  /// ceil(Sq / rows), ceil(Sk / keys)] i8.
  std::optional<std::pair<int64_t, int64_t>> blockMask;
  bool blockMaskPerSequence = true;
  bool blockMaskPerHead = true;
  /// A key_lengths operand [B] i32: each sequence attends to its own first
  /// keys (the values are run-time data).
  bool keyLengths = false;
  /// ALiBi through the score region: score + slope(h) * (k - q - (Sk - Sq)),
  /// slope(h) = 2^(-8 (h + 1) / Hq).
  bool alibi = false;
  bool withLse = false;
  /// Batch, Sq and Sk dynamic in the function's types (one compiled
  /// attention serves every length; the sizes above are not used then).
  bool runTimeLengths = false;
  /// GQA packing when > 1: the op gets FlashAttention-2's default tiles for
  /// its head dimension with this many packed_heads.
  int64_t packedHeads = 1;
  /// Split-KV partition when > 1.
  int64_t splits = 1;
  /// Lean-attention partition over this many CTAs when > 0.
  int64_t leanCtas = 0;
  /// ATTENTION2D over a grid of (query parts, key/value parts) ranks.
  std::optional<std::pair<int64_t, int64_t>> attention2d;
  /// Ring attention over this many ranks when > 0.
  int64_t ringDevices = 0;
  /// Zig-zag shards (balanced causal work) for attention2d and ring.
  bool zigzag = false;
};

/// The lengths of one call: batch, Sq and Sk (ShapedType::kDynamic for
/// run-time ones).
struct AttentionLengths {
  int64_t batch, queryLen, keyLen;
};

/// The shapes of the function's operands in order: Q, K, V, [mask], [block
/// mask], [key lengths], O, [LSE], for `lengths`. The one place that says
/// how an attention's sizes shape its operands (buildAttention's types and a
/// caller's buffers).
std::vector<std::vector<int64_t>> operandShapes(const AttentionSpec &spec,
                                                AttentionLengths lengths);

/// The ALiBi slope of query head `head` out of `heads`.
double alibiSlope(int64_t head, int64_t heads);

/// Appends `func.func @attention` holding the attention of `spec` to
/// `module` and returns the op. Errors name the offending field.
llvm::Expected<AttentionOp> buildAttention(ModuleOp module,
                                           const AttentionSpec &spec);

/// The gradient of `forward` (which writes LSE and has no frame), built
/// right after it to be compiled with CpuExecutable::compile: its dO, dQ, dK
/// and dV operands (and dMask's with `maskGrad`, which needs an additive
/// mask) are placeholders of their types (the forward's O, Q, K, V and
/// mask), which the compiled entry's arguments replace by position, so the
/// gradients take the element types of what they are gradients of. With
/// `pieces` > 1 it carries #attn.split_kv<splits = pieces>. The caller erases
/// it.
AttentionGradOp buildAttentionGrad(AttentionOp forward, int64_t pieces,
                                   bool deterministic, bool maskGrad);

/// Appends `func.func @attention_grad` holding the gradient of `spec`'s
/// attention alone, what a GPU bundle of the backward kernel is compiled
/// from: its arguments are the forward's operands (Q, K, V, [mask], [block
/// mask], [key lengths]), the forward's O and LSE, then dO; it returns dQ,
/// dK and dV. The gradient is `deterministic`. Errors as buildAttention's.
llvm::Expected<AttentionGradOp>
buildAttentionGradFunction(ModuleOp module, const AttentionSpec &spec);

} // namespace mlir::attn

#endif // ATTN_EXECUTION_ATTENTIONSPEC_H
