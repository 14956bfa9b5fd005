//===- AttnOps.cpp - The attn dialect's operations -----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "attn/Support/SizeLimits.h"

#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

static bool isSupportedFloat(Type type) {
  return type.isF16() || type.isBF16() || type.isF32();
}

std::string mlir::attn::formatDim(int64_t size) {
  return ShapedType::isDynamic(size) ? std::string("?") : std::to_string(size);
}

/// Checks that `value` has rank `rank`; `layout` spells the expected dims.
static LogicalResult verifyRank(Operation *op, StringRef name, Value value,
                                int64_t rank, StringRef layout) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == rank)
    return success();
  return op->emitOpError() << name << " must have rank " << rank << " ("
                           << layout << "), got rank " << type.getRank();
}

/// Checks that every static size of `value` is positive and that its static
/// sizes fit in a tensor any machine can hold (kMaxTensorBytes), so that no
/// later size computation overflows.
static LogicalResult verifyTensorSize(Operation *op, StringRef name,
                                      Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> staticSizes;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      continue;
    if (size == 0)
      return op->emitOpError()
             << name << " has a zero size (" << type
             << "): every size of an attention must be positive";
    staticSizes.push_back(size);
  }
  int64_t elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  if (!checkedTensorBytes(staticSizes, elementBytes))
    return op->emitOpError()
           << name << " (" << type << ") holds more than 2^48 bytes (256 TiB)"
           << ", more than any machine addresses";
  return success();
}

/// Checks that two sizes of the same quantity agree where both are static.
static LogicalResult verifySameSize(Operation *op, StringRef quantity,
                                    StringRef nameA, int64_t sizeA,
                                    StringRef nameB, int64_t sizeB) {
  if (ShapedType::isDynamic(sizeA) || ShapedType::isDynamic(sizeB) ||
      sizeA == sizeB)
    return success();
  return op->emitOpError() << quantity << " mismatch: " << nameA << " has "
                           << sizeA << ", " << nameB << " has " << sizeB;
}

/// Checks the `outs` operands against the results of a DPS op that writes O
/// and optionally LSE.
static LogicalResult verifyDestinations(Operation *op, ValueRange outputs,
                                        ValueRange results) {
  if (outputs.empty() || outputs.size() > 2)
    return op->emitOpError()
           << "expects 1 or 2 outs operands (O, then optionally LSE), got "
           << outputs.size();
  if (results.size() != outputs.size())
    return op->emitOpError() << "expects one result per outs operand ("
                             << outputs.size() << "), got " << results.size();
  for (auto [index, pair] : llvm::enumerate(llvm::zip(outputs, results))) {
    auto [output, result] = pair;
    if (output.getType() != result.getType())
      return op->emitOpError()
             << "result #" << index << " has type " << result.getType()
             << " but its destination has type " << output.getType();
  }
  return success();
}

static LogicalResult verifyFloatElement(Operation *op, StringRef name,
                                        Value value) {
  Type elementType = getElementTypeOrSelf(value.getType());
  if (isSupportedFloat(elementType))
    return success();
  return op->emitOpError() << name << " element type must be f16, bf16 or f32, "
                           << "got " << elementType;
}

static LogicalResult verifyF32Element(Operation *op, StringRef name,
                                      Value value) {
  Type elementType = getElementTypeOrSelf(value.getType());
  if (elementType.isF32())
    return success();
  return op->emitOpError() << name << " element type must be f32, got "
                           << elementType;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

void AttentionOp::build(OpBuilder &builder, OperationState &state, Value query,
                        Value key, Value value, Value mask, Value initOut,
                        Value initLse) {
  SmallVector<Value> outputs{initOut};
  if (initLse)
    outputs.push_back(initLse);
  build(builder, state, ValueRange(outputs).getTypes(), query, key, value, mask,
        /*block_mask=*/nullptr, /*key_lengths=*/nullptr,
        /*query_offset=*/nullptr,
        /*key_offset=*/nullptr,
        /*query_total=*/nullptr, /*key_total=*/nullptr, outputs,
        /*scale=*/nullptr, /*causal=*/nullptr,
        /*window=*/nullptr, /*softcap=*/nullptr, /*block_mask_size=*/nullptr,
        /*tiles=*/nullptr, /*partition=*/nullptr, /*kernel=*/nullptr);
  // The score region is optional: leave it empty.
}

template <typename OpTy> static float effectiveScale(OpTy op) {
  if (std::optional<APFloat> scale = op.getScale())
    return scale->convertToFloat();
  int64_t headDim = op.getQuery().getType().getDimSize(3);
  return 1.0f / std::sqrt(static_cast<float>(headDim));
}

template <typename OpTy>
static std::optional<std::pair<int64_t, int64_t>> windowSizes(OpTy op) {
  std::optional<ArrayRef<int64_t>> window = op.getWindow();
  if (!window || window->size() != 2)
    return std::nullopt;
  return std::make_pair((*window)[0], (*window)[1]);
}

template <typename OpTy> static bool splitsKeyValues(OpTy op) {
  Attribute partition = op.getPartitionAttr();
  if (auto split = dyn_cast_or_null<SplitKVAttr>(partition))
    return split.getSplits() > 1;
  return isa_and_nonnull<LeanAttr>(partition);
}

bool AttentionOp::splitsKeyValues() { return ::splitsKeyValues(*this); }
bool PartialAttentionOp::splitsKeyValues() { return ::splitsKeyValues(*this); }

float AttentionOp::getEffectiveScale() { return effectiveScale(*this); }
float PartialAttentionOp::getEffectiveScale() { return effectiveScale(*this); }

std::optional<std::pair<int64_t, int64_t>> AttentionOp::getWindowSizes() {
  return windowSizes(*this);
}
std::optional<std::pair<int64_t, int64_t>>
PartialAttentionOp::getWindowSizes() {
  return windowSizes(*this);
}

static LogicalResult verifyPositiveFinite(Operation *op, StringRef name,
                                          std::optional<APFloat> value) {
  if (!value)
    return success();
  double v = value->convertToDouble();
  if (std::isfinite(v) && v > 0.0)
    return success();
  return op->emitOpError() << name << " must be positive and finite, got " << v;
}

/// Checks that the batch and head dimensions of `name`'s `shape` are 1
/// (broadcast) or those of Q (`qs`).
static LogicalResult verifyBroadcastBatchAndHeads(Operation *op, StringRef name,
                                                  ArrayRef<int64_t> shape,
                                                  ArrayRef<int64_t> qs) {
  const char *dimNames[] = {"batch (B)", "query heads (Hq)"};
  for (int dim = 0; dim < 2; ++dim) {
    if (ShapedType::isDynamic(shape[dim]) || shape[dim] == 1 ||
        ShapedType::isDynamic(qs[dim]) || shape[dim] == qs[dim])
      continue;
    return op->emitOpError() << name << " dimension " << dim << " ("
                             << dimNames[dim] << ") must be 1 or " << qs[dim]
                             << " to broadcast, got " << shape[dim];
  }
  return success();
}

/// Checks the block mask and its block size against Q's and K's shapes
/// `qs` and `ks`.
template <typename OpTy>
static LogicalResult verifyBlockMask(OpTy self, ArrayRef<int64_t> qs,
                                     ArrayRef<int64_t> ks) {
  Operation *op = self.getOperation();
  Value blockMask = self.getBlockMask();
  std::optional<ArrayRef<int64_t>> size = self.getBlockMaskSize();
  if (!blockMask) {
    if (size)
      return self.emitOpError()
             << "block_mask_size is given without a block mask";
    return success();
  }
  if (!size || size->size() != 2)
    return self.emitOpError() << "a block mask needs its block size [Bq, Bk]";
  for (int64_t side : *size)
    if (side < 1 || side > kMaxCount)
      return self.emitOpError() << "block mask blocks must be from 1 to "
                                << kMaxCount << " rows and keys, got ["
                                << (*size)[0] << ", " << (*size)[1] << "]";
  if (self.hasFrame())
    return self.emitOpError() << "a framed attention cannot carry a block mask";
  if (failed(verifyRank(op, "block mask", blockMask, 4,
                        "[B or 1, Hq or 1, Nq, Nk]")) ||
      failed(verifyTensorSize(op, "block mask", blockMask)))
    return failure();
  auto type = cast<RankedTensorType>(blockMask.getType());
  if (!type.getElementType().isInteger(8))
    return self.emitOpError()
           << "block mask element type must be i8 (0 empty, 1 partial, 2 "
              "full), got "
           << type.getElementType();
  ArrayRef<int64_t> bs = type.getShape();
  if (failed(verifyBroadcastBatchAndHeads(op, "block mask", bs, qs)))
    return failure();
  auto blocks = [](int64_t length, int64_t side) {
    return ShapedType::isDynamic(length) ? ShapedType::kDynamic
                                         : llvm::divideCeil(length, side);
  };
  if (failed(verifySameSize(op, "query block count (ceil(Sq / Bq))", "Q",
                            blocks(qs[2], (*size)[0]), "block mask", bs[2])) ||
      failed(verifySameSize(op, "key block count (ceil(Sk / Bk))", "K",
                            blocks(ks[2], (*size)[1]), "block mask", bs[3])))
    return failure();
  return success();
}

/// Checks the per-sequence key lengths against Q's shape `qs`.
template <typename OpTy>
static LogicalResult verifyKeyLengths(OpTy self, ArrayRef<int64_t> qs) {
  Value lengths = self.getKeyLengths();
  if (!lengths)
    return success();
  Operation *op = self.getOperation();
  if (failed(verifyRank(op, "key lengths", lengths, 1, "[B]")) ||
      failed(verifySameSize(
          op, "batch size (B)", "Q", qs[0], "key lengths",
          cast<RankedTensorType>(lengths.getType()).getDimSize(0))))
    return failure();
  if (self.hasFrame())
    return self.emitOpError()
           << "a framed attention cannot carry key lengths (its frame "
              "places its keys)";
  if (isa_and_nonnull<LeanAttr>(self.getPartitionAttr()))
    return self.emitOpError()
           << "#attn.lean cannot take key lengths: its work assignment "
              "counts every sequence's keys when it is built; use "
              "#attn.split_kv";
  return success();
}

/// Checks GQA packing (#attn.fa2's packed_heads) against the head counts
/// `hq` and `hkv` and the operands whose rows are one head's rows.
template <typename OpTy>
static LogicalResult verifyPackedHeads(OpTy self, int64_t hq, int64_t hkv) {
  Fa2TilesAttr tiles = self.getTilesAttr();
  if (!tiles || tiles.getPackedHeads() == 1)
    return success();
  int64_t packed = tiles.getPackedHeads();
  if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
    return self.emitOpError()
           << "packed_heads = " << packed << " needs static head counts";
  if ((hq / hkv) % packed != 0)
    return self.emitOpError()
           << "packed_heads = " << packed
           << " must divide the query heads per key/value head (Hq / Hkv = "
           << hq / hkv << ")";
  const char *rowOperand = self.getMask()        ? "a mask operand"
                           : self.getBlockMask() ? "a block mask"
                           : self.hasFrame()     ? "a frame"
                                                 : nullptr;
  if (rowOperand)
    return self.emitOpError()
           << "packed_heads = " << packed << " cannot pack " << rowOperand
           << " (its rows are one head's rows): use packed_heads = 1";
  return success();
}

/// The checks of an attention's operands and attributes that
/// attn.attention, attn.partial_attention and attn.attention_grad share: `o`
/// and `lse` (which may be null) are the attention's O and LSE, destinations
/// of the first two, operands of the gradient. The destinations of a partial
/// attention have `slotDims` = 1 leading slot dimension.
template <typename OpTy>
static LogicalResult verifyAttentionOperands(OpTy self, Value o, Value lse,
                                             int64_t slotDims) {
  Operation *op = self.getOperation();
  auto emitOpError = [&]() { return self.emitOpError(); };
  Value q = self.getQuery(), k = self.getKey(), v = self.getValue();

  bool partial = slotDims > 0;
  if (failed(verifyRank(op, "Q", q, 4, "[B, Hq, Sq, D]")) ||
      failed(verifyRank(op, "K", k, 4, "[B, Hkv, Sk, D]")) ||
      failed(verifyRank(op, "V", v, 4, "[B, Hkv, Sk, Dv]")) ||
      failed(verifyRank(op, "O", o, 4 + slotDims,
                        partial ? "[S, B, Hq, Sq, Dv]" : "[B, Hq, Sq, Dv]")) ||
      (lse && failed(verifyRank(op, "LSE", lse, 3 + slotDims,
                                partial ? "[S, B, Hq, Sq]" : "[B, Hq, Sq]"))))
    return failure();

  Type qElement = getElementTypeOrSelf(q.getType());
  if (failed(verifyFloatElement(op, "Q", q)))
    return failure();
  Type kElement = getElementTypeOrSelf(k.getType());
  Type vElement = getElementTypeOrSelf(v.getType());
  if (kElement != qElement || vElement != qElement)
    return emitOpError() << "Q, K and V must have the same element type, got "
                         << qElement << ", " << kElement << " and " << vElement;
  if (failed(verifyFloatElement(op, "O", o)) ||
      (lse && failed(verifyF32Element(op, "LSE", lse))))
    return failure();
  Value mask = self.getMask();
  if (failed(verifyTensorSize(op, "Q", q)) ||
      failed(verifyTensorSize(op, "K", k)) ||
      failed(verifyTensorSize(op, "V", v)) ||
      failed(verifyTensorSize(op, "O", o)) ||
      (lse && failed(verifyTensorSize(op, "LSE", lse))))
    return failure();

  ArrayRef<int64_t> qs = self.getQuery().getType().getShape();
  ArrayRef<int64_t> ks = self.getKey().getType().getShape();
  ArrayRef<int64_t> vs = self.getValue().getType().getShape();
  ArrayRef<int64_t> os =
      cast<RankedTensorType>(o.getType()).getShape().drop_front(slotDims);
  if (failed(verifySameSize(op, "batch size (B)", "Q", qs[0], "K", ks[0])) ||
      failed(verifySameSize(op, "batch size (B)", "Q", qs[0], "V", vs[0])) ||
      failed(verifySameSize(op, "key/value head count (Hkv)", "K", ks[1], "V",
                            vs[1])) ||
      failed(verifySameSize(op, "key/value length (Sk)", "K", ks[2], "V",
                            vs[2])) ||
      failed(verifySameSize(op, "head dimension (D)", "Q", qs[3], "K", ks[3])))
    return failure();

  int64_t hq = qs[1], hkv = ks[1];
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      hq % hkv != 0)
    return emitOpError() << "query heads (Hq = " << hq
                         << ") must be a multiple of key/value heads (Hkv = "
                         << hkv << ")";

  if (failed(verifySameSize(op, "batch size (B)", "Q", qs[0], "O", os[0])) ||
      failed(verifySameSize(op, "query head count (Hq)", "Q", qs[1], "O",
                            os[1])) ||
      failed(verifySameSize(op, "query length (Sq)", "Q", qs[2], "O", os[2])) ||
      failed(verifySameSize(op, "value head dimension (Dv)", "V", vs[3], "O",
                            os[3])))
    return failure();
  if (lse) {
    ArrayRef<int64_t> ls =
        cast<RankedTensorType>(lse.getType()).getShape().drop_front(slotDims);
    if (failed(
            verifySameSize(op, "batch size (B)", "Q", qs[0], "LSE", ls[0])) ||
        failed(verifySameSize(op, "query head count (Hq)", "Q", qs[1], "LSE",
                              ls[1])) ||
        failed(
            verifySameSize(op, "query length (Sq)", "Q", qs[2], "LSE", ls[2])))
      return failure();
  }

  if (mask) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    if (failed(verifyRank(op, "mask", mask, 4, "[B or 1, Hq or 1, Sq, Sk]")))
      return failure();
    Type maskElement = maskType.getElementType();
    if (!maskElement.isInteger(1) && !isSupportedFloat(maskElement))
      return emitOpError() << "mask element type must be i1 (boolean) or f16, "
                              "bf16, f32 (additive), got "
                           << maskElement;
    if (failed(verifyTensorSize(op, "mask", mask)))
      return failure();
    ArrayRef<int64_t> ms = maskType.getShape();
    if (failed(verifyBroadcastBatchAndHeads(op, "mask", ms, qs)))
      return failure();
    if (failed(verifySameSize(op, "query length (Sq)", "Q", qs[2], "mask",
                              ms[2])) ||
        failed(verifySameSize(op, "key/value length (Sk)", "K", ks[2], "mask",
                              ms[3])))
      return failure();
  }

  if (failed(verifyBlockMask(self, qs, ks)) ||
      failed(verifyKeyLengths(self, qs)))
    return failure();

  if (failed(verifyPositiveFinite(op, "scale", self.getScale())) ||
      failed(verifyPositiveFinite(op, "softcap", self.getSoftcap())))
    return failure();
  if (!self.getScale() && ShapedType::isDynamic(qs[3]))
    return emitOpError()
           << "scale is required when the head dimension D is dynamic";

  if (failed(verifyPackedHeads(self, hq, hkv)))
    return failure();

  if (std::optional<ArrayRef<int64_t>> window = self.getWindow()) {
    if (window->size() != 2)
      return emitOpError() << "window must have two entries [left, right], got "
                           << window->size();
    if ((*window)[0] < 0 || (*window)[1] < 0)
      return emitOpError() << "window sizes must be non-negative, got ["
                           << (*window)[0] << ", " << (*window)[1] << "]";
  }
  return success();
}

/// The checks attn.attention and attn.partial_attention share: their
/// destinations, operands and frame.
template <typename OpTy>
static LogicalResult verifyAttentionLike(OpTy self, int64_t slotDims) {
  if (failed(verifyDestinations(self.getOperation(), self.getOutputs(),
                                self.getResults())) ||
      failed(verifyAttentionOperands(self, self.getInitOut(), self.getInitLse(),
                                     slotDims)))
    return failure();
  int frameParts = !!self.getQueryOffset() + !!self.getKeyOffset() +
                   !!self.getQueryTotal() + !!self.getKeyTotal();
  bool framed = frameParts > 0;
  if (framed && frameParts != 4)
    return self.emitOpError() << "a frame needs all of query offset, key "
                                 "offset, query total and key total";
  if (framed && self.getPartitionAttr())
    return self.emitOpError()
           << "a framed attention cannot carry a partition; got "
           << self.getPartitionAttr();
  return success();
}

LogicalResult AttentionOp::verify() { return verifyAttentionLike(*this, 0); }

LogicalResult PartialAttentionOp::verify() {
  if (getOutputs().size() != 2)
    return emitOpError() << "needs two destinations, the partial O and LSE, "
                            "got "
                         << getOutputs().size();
  if (!getTilesAttr())
    return emitOpError() << "needs tiles: the pieces are made of its blocks";
  Attribute partition = getPartitionAttr();
  if (!isa_and_nonnull<SplitKVAttr, LeanAttr>(partition))
    return emitOpError() << "needs a split_kv or lean partition, got "
                         << partition;
  if (failed(verifyAttentionLike(*this, 1)) ||
      failed(verifyF32Element(*this, "partial O", getInitOut())))
    return failure();
  int64_t outSlots =
      cast<RankedTensorType>(getInitOut().getType()).getDimSize(0);
  int64_t lseSlots =
      cast<RankedTensorType>(getInitLse().getType()).getDimSize(0);
  if (failed(verifySameSize(*this, "slot count (S)", "O", outSlots, "LSE",
                            lseSlots)))
    return failure();
  // Whichever of the two is static.
  int64_t slots = ShapedType::isDynamic(outSlots) ? lseSlots : outSlots;
  if (ShapedType::isDynamic(slots))
    return success();
  if (auto split = dyn_cast<SplitKVAttr>(partition)) {
    if (slots != split.getSplits())
      return emitOpError() << "split_kv with " << split.getSplits()
                           << " splits needs " << split.getSplits()
                           << " slots, got " << slots;
    return success();
  }
  // Each piece of a tile is another CTA's; how many pieces the schedule
  // makes of these sizes is the lowering's to check (attn-decompose).
  int64_t ctas = cast<LeanAttr>(partition).getCtas();
  if (slots > ctas)
    return emitOpError() << "lean with " << ctas << " CTAs has at most " << ctas
                         << " pieces per tile, got " << slots << " slots";
  return success();
}

template <typename OpTy> static LogicalResult verifyScoreRegion(OpTy self) {
  auto emitOpError = [&]() { return self.emitOpError(); };
  Region &region = self.getScore();
  if (region.empty())
    return success();
  if (!region.hasOneBlock())
    return emitOpError() << "score region must have exactly one block";
  Block &block = region.front();
  Builder b(self.getContext());
  SmallVector<Type> expected{b.getF32Type(), b.getIndexType(), b.getIndexType(),
                             b.getIndexType(), b.getIndexType()};
  if (block.getArgumentTypes() != ArrayRef<Type>(expected)) {
    std::string got;
    llvm::raw_string_ostream os(got);
    llvm::interleaveComma(block.getArgumentTypes(), os);
    return emitOpError() << "score region arguments must be (f32 score, "
                            "index b, index h, index q, index k), got ("
                         << got << ")";
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "score region must end with attn.yield";
  if (!yield.getValue().getType().isF32())
    return emitOpError() << "score region must yield an f32 score, got "
                         << yield.getValue().getType();
  return success();
}

LogicalResult AttentionOp::verifyRegions() { return verifyScoreRegion(*this); }

Value mlir::attn::inlineScoreRegion(OpBuilder &b, Region &score,
                                    ValueRange args, IRMapping &mapping) {
  Block &body = score.front();
  mapping.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator())
    b.clone(inner, mapping);
  return mapping.lookupOrDefault(
      cast<YieldOp>(body.getTerminator()).getValue());
}
LogicalResult PartialAttentionOp::verifyRegions() {
  return verifyScoreRegion(*this);
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

void AttentionGradOp::build(OpBuilder &builder, OperationState &state,
                            AttentionOp forward, Value out, Value lse,
                            Value gradOut, ValueRange inits) {
  assert(!forward.hasFrame() && "the gradient of a framed attention");
  build(builder, state, inits.getTypes(), forward.getQuery(), forward.getKey(),
        forward.getValue(), out, lse, gradOut, forward.getMask(),
        forward.getBlockMask(), forward.getKeyLengths(), inits,
        forward.getScaleAttr(), forward.getCausalAttr(),
        forward.getWindowAttr(), forward.getSoftcapAttr(),
        forward.getBlockMaskSizeAttr(), /*tiles=*/nullptr,
        /*partition=*/nullptr, /*deterministic=*/nullptr,
        /*kernel=*/nullptr);
  IRMapping mapping;
  forward.getScore().cloneInto(state.regions.front().get(), mapping);
}

float AttentionGradOp::getEffectiveScale() { return effectiveScale(*this); }

std::optional<std::pair<int64_t, int64_t>> AttentionGradOp::getWindowSizes() {
  return windowSizes(*this);
}

LogicalResult AttentionGradOp::verify() {
  Operation *op = getOperation();
  size_t numOutputs = getOutputs().size();
  if (numOutputs != 3 && numOutputs != 4)
    return emitOpError() << "expects 3 or 4 outs operands (dQ, dK, dV, then "
                            "optionally dMask), got "
                         << numOutputs;
  if (getResults().size() != numOutputs)
    return emitOpError() << "expects one result per outs operand ("
                         << numOutputs << "), got " << getResults().size();
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(getOutputs(), getResults()))) {
    auto [output, result] = pair;
    if (output.getType() != result.getType())
      return emitOpError() << "result #" << index << " has type "
                           << result.getType()
                           << " but its destination has type "
                           << output.getType();
  }
  if (failed(verifyAttentionOperands(*this, getOut(), getLse(), 0)))
    return failure();
  // dO is O's gradient, dQ, dK and dV those of Q, K and V: the same shapes.
  struct Gradient {
    const char *name;
    Value gradient;
    const char *of;
    Value value;
  };
  SmallVector<Gradient> gradients{{"dO", getGradOut(), "O", getOut()},
                                  {"dQ", getOutputs()[0], "Q", getQuery()},
                                  {"dK", getOutputs()[1], "K", getKey()},
                                  {"dV", getOutputs()[2], "V", getValue()}};
  if (Value gradMask = getInitGradMask()) {
    Value mask = getMask();
    if (!mask || getElementTypeOrSelf(mask).isInteger(1))
      return emitOpError() << "dMask is the gradient of an additive mask, "
                              "and the op has "
                           << (mask ? "a boolean mask" : "no mask");
    gradients.push_back({"dMask", gradMask, "the mask", mask});
    // The mask's batch and head sizes say what dMask sums over (a static 1
    // broadcasts); dS is kept in f32 at every (batch, head, row, key).
    auto maskType = cast<RankedTensorType>(mask.getType());
    auto gradType = cast<RankedTensorType>(gradMask.getType());
    for (int64_t dim : {0, 1})
      if (maskType.isDynamicDim(dim) != gradType.isDynamicDim(dim))
        return emitOpError()
               << "dMask's batch and head sizes must be the mask's, dynamic "
                  "where the mask's are (they say what dMask sums over): "
                  "mask "
               << maskType << ", dMask " << gradType;
    SmallVector<int64_t> scores;
    for (int64_t size :
         {getQuery().getType().getDimSize(0),
          getQuery().getType().getDimSize(1),
          getQuery().getType().getDimSize(2), getKey().getType().getDimSize(2)})
      if (!ShapedType::isDynamic(size))
        scores.push_back(size);
    if (!checkedTensorBytes(scores, 4))
      return emitOpError() << "dMask's f32 scores [B, Hq, Sq, Sk] hold more "
                              "than 2^48 bytes (256 TiB)";
  }
  for (const Gradient &g : gradients) {
    if (failed(verifyFloatElement(op, g.name, g.gradient)))
      return failure();
    auto gradientShape =
        cast<RankedTensorType>(g.gradient.getType()).getShape();
    auto valueShape = cast<RankedTensorType>(g.value.getType()).getShape();
    bool compatible =
        gradientShape.size() == valueShape.size() &&
        llvm::all_of(llvm::zip(gradientShape, valueShape), [](auto pair) {
          auto [a, b] = pair;
          return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
        });
    if (!compatible)
      return emitOpError() << g.name << " must have the shape of " << g.of
                           << " (" << g.value.getType() << "), got "
                           << g.gradient.getType();
  }
  if (Fa2TilesAttr tiles = getTilesAttr(); tiles && tiles.getPackedHeads() != 1)
    return emitOpError() << "the gradient takes packed_heads = 1, got "
                         << tiles.getPackedHeads();
  Attribute partition = getPartitionAttr();
  if (partition && !isa<SplitKVAttr>(partition))
    return emitOpError() << "the gradient's partition cuts the key/value "
                            "blocks into pieces: #attn.split_kv, got "
                         << partition;
  // Each piece keeps an f32 copy of dQ.
  if (auto split = dyn_cast_or_null<SplitKVAttr>(partition)) {
    SmallVector<int64_t> copies{split.getSplits()};
    for (int64_t size : getQuery().getType().getShape())
      if (!ShapedType::isDynamic(size))
        copies.push_back(size);
    if (!checkedTensorBytes(copies, 4))
      return emitOpError() << split.getSplits()
                           << " pieces' f32 copies of dQ hold more than 2^48 "
                              "bytes (256 TiB)";
  }
  return success();
}

LogicalResult AttentionGradOp::verifyRegions() {
  return verifyScoreRegion(*this);
}

//===----------------------------------------------------------------------===//
// MergeOp
//===----------------------------------------------------------------------===//

/// `shape` without dimension `dim`.
static SmallVector<int64_t> dropDim(ArrayRef<int64_t> shape, int64_t dim) {
  SmallVector<int64_t> result(shape);
  result.erase(result.begin() + dim);
  return result;
}

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os,
                        [&](int64_t size) { os << formatDim(size); });
  os << "]";
  return text;
}

/// Checks that `actual` has `expected` shape where both sizes are static.
static LogicalResult verifyMergedShape(Operation *op, StringRef name,
                                       ArrayRef<int64_t> actual,
                                       ArrayRef<int64_t> expected,
                                       StringRef origin, int64_t dim) {
  bool compatible =
      actual.size() == expected.size() &&
      llvm::all_of(llvm::zip(actual, expected), [](auto pair) {
        auto [a, e] = pair;
        return ShapedType::isDynamic(a) || ShapedType::isDynamic(e) || a == e;
      });
  if (compatible)
    return success();
  return op->emitOpError() << name << " must have shape "
                           << formatShape(expected) << " (" << origin
                           << " without dimension " << dim << "), got "
                           << formatShape(actual);
}

LogicalResult MergeOp::verify() {
  Operation *op = getOperation();
  if (failed(verifyDestinations(op, getOutputs(), getResults())))
    return failure();
  auto partialOut = getPartialOut().getType();
  auto partialLse = getPartialLse().getType();
  int64_t rank = partialLse.getRank();
  if (rank < 1)
    return emitOpError() << "partial LSE must have rank at least 1 (it holds "
                            "the split dimension)";
  if (partialOut.getRank() != rank + 1)
    return emitOpError() << "partial O must have rank one more than partial "
                            "LSE (the feature dimension), got ranks "
                         << partialOut.getRank() << " and " << rank;
  int64_t dim = getDim();
  if (dim < 0 || dim >= rank)
    return emitOpError() << "dim must be in [0, " << rank << "), got " << dim;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t a = partialOut.getDimSize(d), b = partialLse.getDimSize(d);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitOpError() << "partial O and partial LSE disagree in dimension "
                           << d << ": " << a << " vs " << b;
  }
  if (failed(verifyF32Element(op, "partial O", getPartialOut())) ||
      failed(verifyF32Element(op, "partial LSE", getPartialLse())) ||
      failed(verifyFloatElement(op, "O", getInitOut())))
    return failure();
  if (failed(verifyMergedShape(
          op, "O", cast<RankedTensorType>(getInitOut().getType()).getShape(),
          dropDim(partialOut.getShape(), dim), "partial O", dim)))
    return failure();
  if (Value lse = getInitLse()) {
    if (failed(verifyF32Element(op, "LSE", lse)) ||
        failed(verifyMergedShape(
            op, "LSE", cast<RankedTensorType>(lse.getType()).getShape(),
            dropDim(partialLse.getShape(), dim), "partial LSE", dim)))
      return failure();
  }
  return success();
}

namespace {
/// A merge of one partial is the identity: with f32 results it is a reshape
/// that drops the unit split dimension.
struct FoldSinglePartialMerge : OpRewritePattern<MergeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MergeOp op,
                                PatternRewriter &rewriter) const override {
    int64_t dim = op.getDim();
    if (op.getPartialLse().getType().getDimSize(dim) != 1)
      return rewriter.notifyMatchFailure(op, "more than one partial");
    SmallVector<Value> partials{op.getPartialOut(), op.getPartialLse()};
    SmallVector<Value> replacements;
    for (auto [partial, result] : llvm::zip(partials, op.getResults())) {
      auto sourceType = cast<RankedTensorType>(partial.getType());
      auto resultType = cast<RankedTensorType>(result.getType());
      if (resultType.getShape() !=
              ArrayRef(dropDim(sourceType.getShape(), dim)) ||
          resultType.getElementType() != sourceType.getElementType())
        return rewriter.notifyMatchFailure(op, "result is not a reshape");
      std::optional<SmallVector<ReassociationIndices>> reassociation =
          getReassociationIndicesForCollapse(sourceType.getShape(),
                                             resultType.getShape());
      if (!reassociation)
        return rewriter.notifyMatchFailure(op, "no collapsing reassociation");
      replacements.push_back(tensor::CollapseShapeOp::create(
          rewriter, op.getLoc(), resultType, partial, *reassociation));
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};
} // namespace

void MergeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<FoldSinglePartialMerge>(context);
}
