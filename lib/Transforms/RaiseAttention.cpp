//===- RaiseAttention.cpp - Front-end attention to attn.attention ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-raise-attention: finds softmax(scale * Q K^T + mask) V written as
// linalg ops on tensors and rewrites it into one attn.attention when, and
// only when, the computation is exactly that.
//
// Element-wise linalg.generic ops (all loops parallel, identity output map)
// are read as expression trees over their inputs, and a tensor produced by
// another element-wise op is read through it, so fused and unfused front-end
// output look the same: the matcher works on the trees. Reductions
// (linalg.generic or linalg.reduce over the last dimension) and contractions
// (any LinalgOp the contraction interface accepts) are matched by their
// structure, with their initial values checked.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/ElementIndex.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <map>
#include <memory>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRAISEATTENTION
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// A tree of element-wise arithmetic over tensors, read over the loops of
/// one root op.
struct Expr {
  enum class Kind { Leaf, Constant, Op };
  Kind kind = Kind::Leaf;
  /// Leaf: the tensor (seen through reshapes) and the element read, a
  /// function of the root's loops.
  Value tensor;
  ElementIndex element;
  /// Constant: its value.
  double constant = 0;
  /// Op: the operation name ("arith.addf", "math.exp", ...).
  StringRef name;
  SmallVector<std::shared_ptr<Expr>> operands;
  /// Op: the tensor that holds this value, at `element`, when it was read
  /// through the element-wise op that computes it (null when it is
  /// computed inside another op's body).
  Value origin;
  /// Op or opaque value: when computed in the body of a generic (`owner`),
  /// the value in that body and the owner's loop indices as functions of
  /// the root's.
  linalg::GenericOp owner;
  Value bodyValue;
  SmallVector<ElementIndex> ownerLoops;

  /// The tensor holding this value and the element read: a leaf's own, or
  /// an op's origin.
  std::pair<Value, ElementIndex> held() const {
    return {kind == Kind::Leaf ? tensor : origin, element};
  }

  bool isOp(StringRef opName) const {
    return kind == Kind::Op && name == opName;
  }
};
using ExprPtr = std::shared_ptr<Expr>;

bool sameExpr(const ExprPtr &a, const ExprPtr &b) {
  if (a == b)
    return true;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case Expr::Kind::Leaf:
    return a->tensor == b->tensor && a->element == b->element;
  case Expr::Kind::Constant:
    return a->constant == b->constant;
  case Expr::Kind::Op:
    if (a->name != b->name || a->operands.size() != b->operands.size())
      return false;
    for (auto [x, y] : llvm::zip(a->operands, b->operands))
      if (!sameExpr(x, y))
        return false;
    return true;
  }
  return false;
}

/// `e` without float extensions and truncations around it: the attention
/// computes in f32 whatever the front end rounded to.
ExprPtr stripConversions(ExprPtr e) {
  while (e->isOp("arith.extf") || e->isOp("arith.truncf"))
    e = e->operands[0];
  return e;
}

/// The value of a float constant, or of every element of a splat tensor
/// constant or a tensor.splat of one.
std::optional<double> floatConstant(Value value) {
  if (auto splat = value.getDefiningOp<tensor::SplatOp>())
    value = splat.getInput();
  FloatAttr attr;
  if (matchPattern(value, m_Constant(&attr)))
    return attr.getValueAsDouble();
  DenseElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// `value` read through same-type tensor.cast ops, which front ends leave
/// between steps (torch-mlir's per-op lowering; canonicalize folds them)
/// and through slices of the whole tensor.
Value skipNoOpCasts(Value value) {
  while (true) {
    if (auto cast = value.getDefiningOp<tensor::CastOp>()) {
      if (cast.getSource().getType() != cast.getType())
        break;
      value = cast.getSource();
      continue;
    }
    // A slice of the whole tensor (TOSA front ends leave chains of them).
    auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getSourceType() != slice.getResultType() ||
        !slice.hasZeroOffset() || !slice.hasUnitStride())
      break;
    value = slice.getSource();
  }
  return value;
}

/// Whether `op` is element-wise: every loop parallel, one output read
/// through the identity map.
bool isElementwise(linalg::LinalgOp op) {
  return op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         isa<linalg::GenericOp>(op.getOperation());
}

/// `tensor` seen through same-type casts, whole-tensor slices and
/// reshapes: reshapes keep every element's row-major index, so a read of
/// the result is the same read of the source.
Value throughReshapes(Value tensor) {
  while (true) {
    tensor = skipNoOpCasts(tensor);
    if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>())
      tensor = expand.getSrc();
    else if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>())
      tensor = collapse.getSrc();
    else
      return tensor;
  }
}

/// The constant `tensor` holds everywhere: filled with by a linalg.fill,
/// or a splat constant, seen through reshapes (reshape propagation moves
/// them between a fill and its user).
std::optional<double> filledWith(Value tensor) {
  tensor = throughReshapes(tensor);
  auto fill = tensor.getDefiningOp<linalg::FillOp>();
  return fill ? floatConstant(fill.getInputs()[0]) : floatConstant(tensor);
}

/// The row-major element a generic reads from `operand`, given the values
/// of its loops; invalid if its map is not a sum of loops and constants.
ElementIndex elementOf(linalg::LinalgOp op, OpOperand *operand,
                       ArrayRef<ElementIndex> loopValues) {
  SmallVector<ElementIndex> indices;
  for (AffineExpr result : op.getMatchingIndexingMap(operand).getResults()) {
    std::optional<ElementIndex> index = evaluate(result, loopValues);
    if (!index)
      return ElementIndex::invalid();
    indices.push_back(*index);
  }
  return linearize(indices,
                   cast<RankedTensorType>(operand->get().getType()).getShape());
}

/// The expression `tensor` holds at `element` (its row-major index as a
/// function of the root's loops, of sizes `loops`). A tensor made by an
/// element-wise generic is read through its payload: the generic's loop
/// indices are the element's indices, and its inputs are read at the
/// elements its maps give for them.
ExprPtr readExpr(Value tensor, const ElementIndex &element,
                 ArrayRef<int64_t> loops);

/// The reads of one match, memoized: a tensor read through the same map over
/// the same loops is one shared node, so a value that element-wise ops read
/// several times is read once, and the expressions stay as small as the IR
/// (a chain of ops that each read the previous one twice would otherwise
/// double at each step). Reads nest at most `maxDepth` ops deep; deeper ones
/// are opaque (match nothing).
struct ReadCache {
  static constexpr unsigned maxDepth = 256;
  /// By the loops read over, then by (tensor, element key).
  std::map<SmallVector<int64_t>,
           std::map<std::pair<const void *, SmallVector<int64_t>>, ExprPtr>>
      entries;
  unsigned depth = 0;
};
thread_local ReadCache *activeReads = nullptr;

/// Makes reads within its lifetime share one ReadCache.
class ReadScope {
public:
  ReadScope() : saved(activeReads) { activeReads = &cache; }
  ~ReadScope() { activeReads = saved; }
  ReadScope(const ReadScope &) = delete;
  ReadScope &operator=(const ReadScope &) = delete;

private:
  ReadCache cache;
  ReadCache *saved;
};

/// The expression `value` computes in the body of `generic`, whose block
/// arguments hold `args`; `ownerLoops` (the generic's loop indices as
/// functions of the root's), if given, are recorded with the ops and opaque
/// values.
ExprPtr readBody(Block *body, linalg::GenericOp generic, Value value,
                 DenseMap<Value, ExprPtr> &args,
                 ArrayRef<ElementIndex> ownerLoops);

ExprPtr readPayload(linalg::GenericOp generic, Value value,
                    DenseMap<Value, ExprPtr> &args,
                    ArrayRef<ElementIndex> ownerLoops = {}) {
  return readBody(generic.getBody(), generic, value, args, ownerLoops);
}

/// readPayload in `body`, the body of `generic` (or of a linalg.map, with
/// no generic and no owner loops).
ExprPtr readBody(Block *body, linalg::GenericOp generic, Value value,
                 DenseMap<Value, ExprPtr> &args,
                 ArrayRef<ElementIndex> ownerLoops) {
  if (ExprPtr known = args.lookup(value))
    return known;
  // Outside a match's scope, a scope of this read alone.
  std::optional<ReadScope> scope;
  if (!activeReads)
    scope.emplace();
  if (activeReads->depth >= ReadCache::maxDepth)
    return std::make_shared<Expr>();
  if (std::optional<double> c = floatConstant(value)) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Constant;
    e->constant = *c;
    return e;
  }
  auto e = std::make_shared<Expr>();
  Operation *def = value.getDefiningOp();
  if (!ownerLoops.empty() && def && def->getBlock() == body) {
    e->owner = generic;
    e->bodyValue = value;
    e->ownerLoops.assign(ownerLoops.begin(), ownerLoops.end());
  }
  if (!def || def->getBlock() != body || def->getNumResults() != 1 ||
      !isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
           arith::ExtFOp, arith::TruncFOp, math::ExpOp, math::LogOp,
           arith::SelectOp>(def))
    return e; // An opaque value (a leaf without a tensor): matches nothing.
  e->kind = Expr::Kind::Op;
  e->name = def->getName().getStringRef();
  ++activeReads->depth;
  for (Value operand : def->getOperands())
    e->operands.push_back(readBody(body, generic, operand, args, ownerLoops));
  --activeReads->depth;
  // Values the body uses several times are read once.
  args[value] = e;
  return e;
}

ExprPtr readUncached(Value tensor, const ElementIndex &element,
                     ArrayRef<int64_t> loops);

ExprPtr readExpr(Value tensor, const ElementIndex &element,
                 ArrayRef<int64_t> loops) {
  // Outside a match's scope, a scope of this read alone.
  std::optional<ReadScope> scope;
  if (!activeReads)
    scope.emplace();
  ReadCache &cache = *activeReads;
  auto &entries = cache.entries[SmallVector<int64_t>(loops)];
  auto key = std::make_pair(tensor.getAsOpaquePointer(), element.key());
  if (auto known = entries.find(key); known != entries.end())
    return known->second;
  if (cache.depth >= ReadCache::maxDepth)
    return std::make_shared<Expr>();
  ++cache.depth;
  ExprPtr e = readUncached(tensor, element, loops);
  --cache.depth;
  entries[key] = e;
  return e;
}

ExprPtr readUncached(Value tensor, const ElementIndex &element,
                     ArrayRef<int64_t> loops) {
  tensor = throughReshapes(tensor);
  if (std::optional<double> c = floatConstant(tensor)) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::Constant;
    e->constant = *c;
    return e;
  }
  // A transpose or broadcast reads its input at the element its map gives.
  auto layoutOp = tensor.getDefiningOp<linalg::LinalgOp>();
  if (layoutOp && isa<linalg::TransposeOp, linalg::BroadcastOp>(layoutOp))
    if (std::optional<SmallVector<ElementIndex>> loopValues = delinearize(
            element, cast<RankedTensorType>(tensor.getType()).getShape())) {
      OpOperand *input = layoutOp.getDpsInputOperand(0);
      return readExpr(input->get(), elementOf(layoutOp, input, *loopValues),
                      loops);
    }
  // A linalg.map (StableHLO's primitive element-wise ops) reads its inputs
  // at the element it computes.
  if (auto map = tensor.getDefiningOp<linalg::MapOp>())
    if (std::optional<SmallVector<ElementIndex>> loopValues = delinearize(
            element, cast<RankedTensorType>(tensor.getType()).getShape())) {
      Block &body = map.getMapper().front();
      DenseMap<Value, ExprPtr> args;
      for (OpOperand *input : map.getDpsInputOperands())
        args[body.getArgument(input->getOperandNumber())] = readExpr(
            input->get(), elementOf(map, input, *loopValues), loops);
      ExprPtr e = readBody(&body, {}, body.getTerminator()->getOperand(0),
                           args, {});
      if (e->kind == Expr::Kind::Op) {
        e->origin = tensor;
        e->element = element;
      }
      return e;
    }
  auto generic = tensor.getDefiningOp<linalg::GenericOp>();
  std::optional<SmallVector<ElementIndex>> loopValues;
  if (generic && isElementwise(generic))
    loopValues = delinearize(
        element, cast<RankedTensorType>(tensor.getType()).getShape());
  if (loopValues) {
    DenseMap<Value, ExprPtr> args;
    for (OpOperand *input : generic.getDpsInputOperands())
      args[generic.getMatchingBlockArgument(input)] = readExpr(
          input->get(), elementOf(generic, input, *loopValues), loops);
    // The output's block argument is not read by an element-wise op that
    // computes a value; if it is, it stays an opaque leaf.
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    ExprPtr e = readPayload(generic, yield.getOperand(0), args, *loopValues);
    if (e->kind == Expr::Kind::Op) {
      e->origin = tensor;
      e->element = element;
    }
    return e;
  }
  auto e = std::make_shared<Expr>();
  e->tensor = tensor;
  e->element = element;
  return e;
}

/// Why the match failed, and the op of the step it stopped at, for the
/// remark.
struct Mismatch {
  std::string reason;
  Operation *at = nullptr;
};

/// What a reduction of the last dimension with `combiner`
/// ("arith.maximumf" or "arith.addf"), whose initial value passes `init`,
/// reduces: an expression over the softmax's loops `loops`, its input read
/// through the identity, or an element-wise expression of its inputs
/// computed in its body (linalg-fuse-elementwise-ops folds the producer of
/// the reduced values into the reduction). The reduction may run on
/// another view of the softmax's loops (reshape propagation adds unit loops
/// or splits the heads): its loop indices are those of the same element in
/// the softmax's order.
FailureOr<ExprPtr> rowReductionInput(Value result, ArrayRef<int64_t> loops,
                                     StringRef combiner,
                                     function_ref<bool(double)> init,
                                     Mismatch &why) {
  auto fail = [&](const Twine &reason) -> FailureOr<ExprPtr> {
    why.reason = reason.str();
    return failure();
  };
  result = skipNoOpCasts(result);
  why.at = result.getDefiningOp();
  Operation *def = result.getDefiningOp();
  ExprPtr reduced;
  Value initValue;
  Operation *combinerOp = nullptr;
  ElementIndex identity = ElementIndex::identity(loops);
  ElementIndex rows = ElementIndex::rows(loops);
  if (auto reduce = dyn_cast_or_null<linalg::ReduceOp>(def)) {
    auto inputType = cast<RankedTensorType>(reduce.getInputs()[0].getType());
    if (reduce.getInputs().size() != 1 ||
        reduce.getDimensions() != ArrayRef<int64_t>{inputType.getRank() - 1})
      return fail("a reduction is not over the last dimension");
    // Its loops are its input's dimensions: the input is read at the
    // softmax's element, the output at its row.
    std::optional<SmallVector<ElementIndex>> own =
        delinearize(identity, inputType.getShape());
    if (!own || linearize(ArrayRef(*own).drop_back(),
                          inputType.getShape().drop_back()) != rows)
      return fail("a reduction over other loops than the softmax's");
    reduced = readExpr(reduce.getInputs()[0], identity, loops);
    initValue = reduce.getInits()[0];
    combinerOp =
        reduce.getBody()->getTerminator()->getOperand(0).getDefiningOp();
  } else if (auto generic = dyn_cast_or_null<linalg::GenericOp>(def)) {
    // The statistic is one result; others must be unused (torch-mlir's max
    // also computes an argmax nothing reads).
    unsigned resultNumber = cast<OpResult>(result).getResultNumber();
    bool othersUnused = llvm::all_of(generic->getResults(), [&](OpResult r) {
      return r.getResultNumber() == resultNumber || r.use_empty();
    });
    if (generic.getNumDpsInputs() < 1 || !othersUnused ||
        generic.getNumReductionLoops() != 1 ||
        generic.getIteratorTypesArray().back() !=
            utils::IteratorType::reduction)
      return fail(!othersUnused
                      ? "a reduction has another result that is used"
                      : "a reduction is not over the last dimension alone");
    std::optional<SmallVector<ElementIndex>> own =
        delinearize(identity, generic.getStaticLoopRanges());
    if (!own)
      return fail("a reduction over other loops than the softmax's");
    OpOperand *out = generic.getDpsInitOperand(resultNumber);
    if (elementOf(generic, out, *own) != rows)
      return fail("a reduction reads or writes through unexpected maps");
    initValue = out->get();
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    combinerOp = yield.getOperand(resultNumber).getDefiningOp();
    Value outArg = generic.getMatchingBlockArgument(out);
    if (combinerOp && combinerOp->getNumOperands() == 2 &&
        llvm::is_contained(combinerOp->getOperands(), outArg)) {
      Value reducedValue = combinerOp->getOperand(0) == outArg
                               ? combinerOp->getOperand(1)
                               : combinerOp->getOperand(0);
      DenseMap<Value, ExprPtr> args;
      for (OpOperand *in : generic.getDpsInputOperands())
        args[generic.getMatchingBlockArgument(in)] =
            readExpr(in->get(), elementOf(generic, in, *own), loops);
      reduced = readPayload(generic, reducedValue, args, *own);
    } else {
      combinerOp = nullptr;
    }
  } else {
    return fail("a row statistic is not a reduction");
  }
  bool maxCombiner = combiner == "arith.maximumf";
  if (!combinerOp || !(combinerOp->getName().getStringRef() == combiner ||
                       (maxCombiner && isa<arith::MaxNumFOp>(combinerOp))))
    return fail(
        llvm::formatv("a reduction does not combine with {0}", combiner));
  std::optional<double> initConstant = filledWith(initValue);
  if (!initConstant || !init(*initConstant))
    return fail("a reduction starts from the wrong value");
  return reduced;
}

/// The permutation of `rank` dimensions that swaps the last two.
SmallVector<int64_t> lastTwoSwapped(int64_t rank) {
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  return permutation;
}

/// A contraction over the last index of the left operand, as attention's
/// two products are: its operands, and whether the right one is laid out
/// [.., k, n] (a matmul) rather than [.., n, k] (a matmul with B
/// transposed).
struct Contraction {
  Value lhs, rhs;
  bool rhsTransposed = false;
  /// How the product's result is laid out: the permutation
  /// (linalg.transpose's) that takes the product of `lhs` and `rhs` as
  /// [batch..., m, n] to it; empty for that layout. Swapping the operands
  /// (see matchContraction) swaps the last two.
  SmallVector<int64_t> resultLayout;
  /// The product of the batch loops' sizes.
  int64_t batchSize = 1;
  /// When an operand is read in another order than [batch..., m, k] (the
  /// left) or [batch..., k, n] (the right) or [batch..., n, k] (the right,
  /// rhsTransposed), the permutation (linalg.transpose's) that gives that
  /// order (reshape propagation moves [B, S, H, D] views into the
  /// products).
  SmallVector<int64_t> lhsPermutation, rhsPermutation;
  /// The left operand as a fused product computes it in its own body (see
  /// matchFusedProduct), read over the loops (batch..., m, k); `lhs` is
  /// null then unless it is an input read as it is.
  ExprPtr lhsExpr;
  /// The sizes of the loops `lhsExpr` is read over, and the type of its
  /// elements.
  SmallVector<int64_t> lhsLoops;
  Type lhsElementType;
};

FailureOr<Contraction> matchFusedProduct(linalg::GenericOp op, Mismatch &why,
                                         bool swapped);

/// The map from a product's loops (batch..., m, n, k) to an operand's
/// indices: the batch loops, then `trailing`.
AffineMap productMap(MLIRContext *ctx, unsigned loops, unsigned batch,
                     ArrayRef<unsigned> trailing) {
  SmallVector<AffineExpr> results;
  for (unsigned d = 0; d < batch; ++d)
    results.push_back(getAffineDimExpr(d, ctx));
  for (unsigned d : trailing)
    results.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(loops, 0, results, ctx);
}

/// Whether `map` reads an operand of `shape` as [.., a, b] with `trailing`
/// = (a, b) of a product's loops (batch..., m, n, k): its batch results
/// are the batch loops, or 0 into a dimension of size 1 (the operand is
/// broadcast over that batch loop: reshape propagation reads grouped-query
/// K this way, without the group dimension).
bool readsAsProductOperand(AffineMap map, ArrayRef<int64_t> shape,
                           unsigned batch, ArrayRef<unsigned> trailing) {
  if (map.getNumResults() != batch + trailing.size())
    return false;
  for (unsigned d = 0; d < map.getNumResults(); ++d) {
    AffineExpr result = map.getResult(d);
    unsigned loop = d < batch ? d : trailing[d - batch];
    auto constant = dyn_cast<AffineConstantExpr>(result);
    bool broadcast =
        d < batch && constant && constant.getValue() == 0 && shape[d] == 1;
    if (!broadcast && result != getAffineDimExpr(loop, map.getContext()))
      return false;
  }
  return true;
}

/// The permutation (linalg.transpose's: dimension i of the result is
/// dimension p[i] of the operand) that brings an operand of `shape` read
/// through `map` to the order of the loops `order` (of sizes `ranges`);
/// std::nullopt unless the map reads each of them once and nothing else (a
/// loop of size 1 may be read as 0 from a dimension of size 1).
std::optional<SmallVector<int64_t>>
layoutPermutation(AffineMap map, ArrayRef<int64_t> shape,
                  ArrayRef<int64_t> ranges, ArrayRef<unsigned> order) {
  if (map.getNumResults() != order.size())
    return std::nullopt;
  SmallVector<int64_t> permutation;
  llvm::SmallBitVector used(map.getNumResults());
  for (unsigned loop : order) {
    std::optional<int64_t> position;
    for (auto [j, result] : llvm::enumerate(map.getResults())) {
      auto constant = dyn_cast<AffineConstantExpr>(result);
      bool unitRead = ranges[loop] == 1 && shape[j] == 1 && constant &&
                      constant.getValue() == 0;
      if (!used[j] &&
          (result == getAffineDimExpr(loop, map.getContext()) || unitRead)) {
        position = j;
        break;
      }
    }
    if (!position)
      return std::nullopt;
    used.set(*position);
    permutation.push_back(*position);
  }
  return permutation;
}

/// `order` of a product's operand: the batch loops, then `trailing`.
SmallVector<unsigned> productOrder(unsigned batch,
                                   ArrayRef<unsigned> trailing) {
  SmallVector<unsigned> order;
  for (unsigned d = 0; d < batch; ++d)
    order.push_back(d);
  llvm::append_range(order, trailing);
  return order;
}

/// The product of the first `batch` loops' sizes of `op` (0 if dynamic).
int64_t batchSizeOf(linalg::LinalgOp op, unsigned batch) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t size = 1;
  for (int64_t range : ArrayRef(ranges).take_front(batch))
    if (ShapedType::isDynamic(range) || llvm::MulOverflow(size, range, size))
      return 0;
  return size;
}

/// A contraction whose loops are in the order (batch..., m, n, k), as named
/// products and torch-mlir's and TOSA's lowerings have them (see
/// matchContraction).
FailureOr<Contraction> matchOrderedContraction(linalg::LinalgOp op,
                                               bool swapped, Mismatch &why) {
  auto fail = [&](const Twine &reason) -> FailureOr<Contraction> {
    why.reason = reason.str();
    return failure();
  };
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return fail("a product with more than one row, column or reduced index");
  unsigned loops = op.getNumLoops();
  unsigned batch = dims->batch.size();
  MLIRContext *ctx = op.getContext();
  // Loops in the order (batch..., m, n, k).
  for (unsigned d = 0; d < batch; ++d)
    if (dims->batch[d] != d)
      return fail("batch indices out of order");
  if (dims->m[0] != batch || dims->n[0] != batch + 1 ||
      dims->k[0] != batch + 2 || loops != batch + 3)
    return fail("a product whose loops are not (batch..., m, n, k)");
  auto mapOf = [&](ArrayRef<unsigned> trailing) {
    return productMap(ctx, loops, batch, trailing);
  };
  // The loops of the result's rows and columns, which `swapped` exchanges
  // along with the operands.
  unsigned m = batch, n = batch + 1, k = batch + 2;
  if (op.getMatchingIndexingMap(op.getDpsInitOperand(0)) != mapOf({m, n}))
    return fail("a product that is not [.., m, k] x [.., k, n]");
  if (swapped)
    std::swap(m, n);
  // getDpsInputOperands returns a vector by value: keep it.
  SmallVector<OpOperand *> inputs = op.getDpsInputOperands();
  if (swapped)
    std::swap(inputs[0], inputs[1]);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto shapeOf = [](OpOperand *operand) {
    return cast<RankedTensorType>(operand->get().getType()).getShape();
  };
  std::optional<SmallVector<int64_t>> lhsPermutation =
      layoutPermutation(op.getMatchingIndexingMap(inputs[0]),
                        shapeOf(inputs[0]), ranges, productOrder(batch, {m, k}));
  if (!lhsPermutation)
    return fail("a product that is not [.., m, k] x [.., k, n]");
  Contraction c;
  c.lhs = skipNoOpCasts(inputs[0]->get());
  c.rhs = skipNoOpCasts(inputs[1]->get());
  c.batchSize = batchSizeOf(op, batch);
  if (swapped)
    c.resultLayout = lastTwoSwapped(batch + 2);
  if (op.getMatchingIndexingMap(inputs[0]) != mapOf({m, k}))
    c.lhsPermutation = *lhsPermutation;
  AffineMap rhsMap = op.getMatchingIndexingMap(inputs[1]);
  if (rhsMap == mapOf({n, k})) {
    c.rhsTransposed = true;
  } else if (rhsMap != mapOf({k, n})) {
    std::optional<SmallVector<int64_t>> permutation =
        layoutPermutation(rhsMap, shapeOf(inputs[1]), ranges,
                          productOrder(batch, {k, n}));
    if (!permutation)
      return fail("a product whose right operand is not read as [.., k, n] "
                  "in some order");
    c.rhsPermutation = *permutation;
  }
  std::optional<double> zero = filledWith(op.getDpsInitOperand(0)->get());
  if (!zero || *zero != 0.0)
    return fail("a product that does not start from zero");
  return c;
}

/// The loops a product reads `operand` with, in the order of its
/// dimensions; std::nullopt unless it reads each dimension with one loop.
std::optional<SmallVector<int64_t>> loopsRead(linalg::LinalgOp op,
                                              OpOperand *operand) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
    return std::nullopt;
  SmallVector<int64_t> loops;
  for (unsigned d = 0; d < map.getNumResults(); ++d)
    loops.push_back(map.getDimPosition(d));
  return loops;
}

/// The permutation (linalg.transpose's) that brings an operand whose
/// dimensions are read with `loops` to the order `wanted`; std::nullopt if
/// it reads other loops.
std::optional<SmallVector<int64_t>> permutationTo(ArrayRef<int64_t> loops,
                                                  ArrayRef<int64_t> wanted) {
  if (loops.size() != wanted.size())
    return std::nullopt;
  SmallVector<int64_t> permutation;
  for (int64_t loop : wanted) {
    const auto *at = llvm::find(loops, loop);
    if (at == loops.end())
      return std::nullopt;
    permutation.push_back(at - loops.begin());
  }
  return permutation;
}

/// `permutation`, or empty when it is the identity.
SmallVector<int64_t> unlessIdentity(ArrayRef<int64_t> permutation) {
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    return {};
  return SmallVector<int64_t>(permutation);
}

/// The last reduced loop of `op` (its only one, for a product).
int64_t reducedLoop(linalg::LinalgOp op) {
  int64_t k = -1;
  for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type == utils::IteratorType::reduction)
      k = d;
  return k;
}

/// The loop order (batch..., m, n, k) of a product whose result the scores
/// read through the permutation `resultOrder` (linalg.transpose's): the
/// result's loops in that order, then the reduced loop.
FailureOr<SmallVector<int64_t>> orderFromResult(linalg::LinalgOp op,
                                                ArrayRef<int64_t> resultOrder,
                                                Mismatch &why) {
  std::optional<SmallVector<int64_t>> outLoops =
      loopsRead(op, op.getDpsInitOperand(0));
  if (!outLoops || resultOrder.size() != outLoops->size()) {
    why.reason = "the scores are read in another order than the product's";
    return failure();
  }
  SmallVector<int64_t> order;
  for (int64_t d : resultOrder)
    order.push_back((*outLoops)[d]);
  order.push_back(reducedLoop(op));
  return order;
}

/// The rest of a product read in the loop order `order` (batch..., m, n, k;
/// see matchReorderedContraction), whose right operand is `rhs`: how the
/// right operand and the result are laid out, and the batch size.
LogicalResult readReordered(linalg::LinalgOp op, ArrayRef<int64_t> order,
                            OpOperand *rhs, Contraction &c, Mismatch &why) {
  auto fail = [&](const Twine &reason) {
    why.reason = reason.str();
    return failure();
  };
  size_t batch = order.size() - 3;
  int64_t n = order[batch + 1], k = order[batch + 2];
  if (llvm::SmallDenseSet<int64_t>(order.begin(), order.end()).size() !=
          order.size() ||
      order.size() != op.getNumLoops())
    return fail("a product whose loops are not batch, row, column and "
                "reduced indices");
  // The right operand reads every batch loop, or all but the group of
  // (B, Hkv, G): grouped-query K or V, read once for the G query heads of
  // a key/value head (the attention's view collapses (Hkv, G) into its
  // query heads, G inner, and reads K and V with Hkv heads).
  std::optional<SmallVector<int64_t>> rhsLoops = loopsRead(op, rhs);
  bool groupBroadcast =
      rhsLoops && batch == 3 && !llvm::is_contained(*rhsLoops, order[2]);
  SmallVector<int64_t> rhsWanted;
  for (size_t d = 0; d < batch; ++d)
    if (!(groupBroadcast && d == 2))
      rhsWanted.push_back(order[d]);
  rhsWanted.append({k, n});
  std::optional<SmallVector<int64_t>> rhsPermutation =
      rhsLoops ? permutationTo(*rhsLoops, rhsWanted) : std::nullopt;
  if (!rhsPermutation)
    return fail("a product whose right operand is not [.., k, n] in some "
                "order");
  c.rhs = skipNoOpCasts(rhs->get());
  c.rhsPermutation = unlessIdentity(*rhsPermutation);
  // Result dimension j holds the loop the result reads there.
  std::optional<SmallVector<int64_t>> outLoops =
      loopsRead(op, op.getDpsInitOperand(0));
  std::optional<SmallVector<int64_t>> resultLayout =
      outLoops ? permutationTo(ArrayRef(order).drop_back(), *outLoops)
               : std::nullopt;
  if (!resultLayout)
    return fail("a product whose result is not [.., m, n] in some order");
  c.resultLayout = unlessIdentity(*resultLayout);
  std::optional<double> zero = filledWith(op.getDpsInitOperand(0)->get());
  if (!zero || *zero != 0.0)
    return fail("a product that does not start from zero");
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  c.batchSize = 1;
  for (size_t d = 0; d < batch; ++d)
    if (ShapedType::isDynamic(ranges[order[d]]) ||
        llvm::MulOverflow(c.batchSize, ranges[order[d]], c.batchSize))
      c.batchSize = 0;
  return success();
}

/// A contraction whose loops are in any order, each operand reading each of
/// its loops once (StableHLO's dot_general lowers to loops (batch..., left
/// free..., right free..., contracting)). Its loops are read in the order
/// (batch..., m, n, k) of the attention's view: with `resultOrder` (the
/// permutation, linalg.transpose's, that the scores are read through) the
/// batch loops, m and n are the result's dimensions in that order;
/// otherwise the left operand (the second input when `swapped`) gives the
/// batch loops and m, in the order it reads them, followed by k. A batch
/// loop that the right operand does not read is a group of query heads
/// over one key/value head (JAX's grouped-query form, Q as [B, S, Hkv, G,
/// D] against K as [B, S, Hkv, D]): allowed as the third of (B, Hkv, G).
FailureOr<Contraction>
matchReorderedContraction(linalg::LinalgOp op, bool swapped,
                          ArrayRef<int64_t> resultOrder, Mismatch &why) {
  auto fail = [&](const Twine &reason) -> FailureOr<Contraction> {
    why.reason = reason.str();
    return failure();
  };
  if (op.getNumReductionLoops() != 1 || op.getNumDpsInits() != 1)
    return fail("a product with more than one reduced index");
  SmallVector<OpOperand *> inputs = op.getDpsInputOperands();
  SmallVector<int64_t> order;
  if (!resultOrder.empty()) {
    FailureOr<SmallVector<int64_t>> fromResult =
        orderFromResult(op, resultOrder, why);
    if (failed(fromResult))
      return failure();
    order = *fromResult;
    // The left operand is the one that reads m.
    std::optional<SmallVector<int64_t>> first = loopsRead(op, inputs[0]);
    if (first && !llvm::is_contained(*first, order[order.size() - 3]))
      std::swap(inputs[0], inputs[1]);
  } else {
    if (swapped)
      std::swap(inputs[0], inputs[1]);
    std::optional<SmallVector<int64_t>> lhsLoops = loopsRead(op, inputs[0]);
    std::optional<SmallVector<int64_t>> rhsLoops = loopsRead(op, inputs[1]);
    if (!lhsLoops || !rhsLoops || lhsLoops->empty() ||
        op.getIteratorTypesArray()[lhsLoops->back()] !=
            utils::IteratorType::reduction)
      return fail("a product whose left operand is not [.., m, k] in loop "
                  "order");
    int64_t k = lhsLoops->back();
    order.assign(lhsLoops->begin(), lhsLoops->end() - 1);
    // n: the loop the right operand reads and the left does not.
    SmallVector<int64_t> columns;
    for (int64_t d : *rhsLoops)
      if (d != k && !llvm::is_contained(*lhsLoops, d))
        columns.push_back(d);
    if (columns.size() != 1)
      return fail("a product with more than one column index");
    order.append({columns.front(), k});
  }
  if (order.size() < 3)
    return fail("not a matrix product");
  Contraction c;
  if (failed(readReordered(op, order, inputs[1], c, why)))
    return failure();
  size_t batch = order.size() - 3;
  SmallVector<int64_t> lhsWanted(order.begin(), order.begin() + batch);
  lhsWanted.append({order[batch], order[batch + 2]});
  std::optional<SmallVector<int64_t>> lhsLoops = loopsRead(op, inputs[0]);
  std::optional<SmallVector<int64_t>> lhsPermutation =
      lhsLoops ? permutationTo(*lhsLoops, lhsWanted) : std::nullopt;
  if (!lhsPermutation)
    return fail("a product whose left operand is not [.., m, k] in some "
                "order");
  c.lhs = skipNoOpCasts(inputs[0]->get());
  c.lhsPermutation = unlessIdentity(*lhsPermutation);
  return c;
}

/// matchFusedProduct for a product whose loops are in any order: read in
/// the loop order (batch..., m, n, k) that `resultOrder` gives (see
/// matchReorderedContraction), or else that an input of the left operand's
/// expression reads as [batch..., m, k] (the softmax's division fused into
/// JAX's V^T P^T, whose inputs are read over P's loops).
FailureOr<Contraction>
matchReorderedFusedProduct(linalg::GenericOp op, ArrayRef<int64_t> resultOrder,
                           Mismatch &why);

/// The product that computes `result`, a contraction over the last index of
/// its left operand. `swapped` matches it the other way round, as the
/// product of its right operand and its left, whose transpose it computes
/// (StableHLO's dot_general of V and P gives O^T = V^T P^T, JAX's form):
/// the result is [.., m, n] over the op's loops (batch..., m, n, k) either
/// way, and with `swapped` the returned left operand is the one read over
/// (batch..., n, k). A product whose loops are in another order is read
/// in the attention's order (matchReorderedContraction); `resultOrder` is
/// the permutation the scores read its result through.
FailureOr<Contraction> matchContraction(Value result, Mismatch &why,
                                        bool swapped = false,
                                        ArrayRef<int64_t> resultOrder = {}) {
  auto fail = [&](const Twine &reason) -> FailureOr<Contraction> {
    why.reason = reason.str();
    return failure();
  };
  why.at = skipNoOpCasts(result).getDefiningOp();
  auto op = skipNoOpCasts(result).getDefiningOp<linalg::LinalgOp>();
  if (op && !linalg::isaContractionOpInterface(op))
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
      if (!resultOrder.empty())
        return matchReorderedFusedProduct(generic, resultOrder, why);
      FailureOr<Contraction> ordered = matchFusedProduct(generic, why, swapped);
      if (succeeded(ordered))
        return ordered;
      Mismatch ignored;
      FailureOr<Contraction> reordered =
          matchReorderedFusedProduct(generic, {}, ignored);
      // Without an order to follow, the reordered product is read with X
      // as its left operand: once, as written.
      if (succeeded(reordered) && !swapped)
        return reordered;
      return failure();
    }
  if (!op || !linalg::isaContractionOpInterface(op) ||
      op.getNumDpsInputs() != 2)
    return fail("not a matrix product");
  if (!resultOrder.empty())
    return matchReorderedContraction(op, swapped, resultOrder, why);
  FailureOr<Contraction> ordered = matchOrderedContraction(op, swapped, why);
  if (succeeded(ordered))
    return ordered;
  Mismatch ignored;
  FailureOr<Contraction> reordered =
      matchReorderedContraction(op, swapped, {}, ignored);
  if (succeeded(reordered))
    return reordered;
  return failure();
}

/// The term `X * V` of a product `out + X * V` computed in the body of
/// `op`, which has one reduced loop.
FailureOr<arith::MulFOp> fusedProductTerm(linalg::GenericOp op,
                                          Mismatch &why) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() < 3 ||
      op.getNumReductionLoops() != 1) {
    why.reason = "not a matrix product";
    return failure();
  }
  Block *body = op.getBody();
  Value outArg = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  auto mul = add && add->getBlock() == body &&
                     llvm::is_contained(add->getOperands(), outArg)
                 ? (add.getLhs() == outArg ? add.getRhs() : add.getLhs())
                       .getDefiningOp<arith::MulFOp>()
                 : arith::MulFOp();
  if (!mul || mul->getBlock() != body) {
    why.reason = "not a matrix product";
    return failure();
  }
  return mul;
}

/// `v` without additions of 0 in the body of `op` (TOSA's zero-add
/// broadcast of V, fused, reads the operand).
Value withoutZeroAdds(linalg::GenericOp op, Value v) {
  while (auto add = v.getDefiningOp<arith::AddFOp>()) {
    if (add->getBlock() != op.getBody())
      break;
    std::optional<double> lhs = floatConstant(add.getLhs());
    std::optional<double> rhs = floatConstant(add.getRhs());
    if (rhs && *rhs == 0)
      v = add.getLhs();
    else if (lhs && *lhs == 0)
      v = add.getRhs();
    else
      break;
  }
  return v;
}

/// The left operand X of a fused product, `lhsValue` in its body, read
/// over the loops `rows` (the product's loops (batch..., m, k), without n):
/// c's lhsLoops, lhsExpr and lhsElementType. The inputs that read n are
/// not read by X (an opaque leaf if they are).
void readFusedLeft(linalg::GenericOp op, Value lhsValue,
                   ArrayRef<int64_t> rows, int64_t n, Contraction &c) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  c.lhsLoops.clear();
  for (int64_t d : rows)
    c.lhsLoops.push_back(ranges[d]);
  // The product's loop indices as functions of those (n, unused, as 0).
  SmallVector<ElementIndex> loopValues(op.getNumLoops());
  for (auto [position, d] : llvm::enumerate(rows))
    loopValues[d] = ElementIndex::loop(position, c.lhsLoops);
  DenseMap<Value, ExprPtr> args;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (llvm::any_of(map.getResults(), [&](AffineExpr e) {
          return e.isFunctionOfDim(n);
        }))
      continue;
    args[op.getMatchingBlockArgument(input)] = readExpr(
        input->get(), elementOf(op, input, loopValues), c.lhsLoops);
  }
  c.lhsExpr = readPayload(op, lhsValue, args);
  c.lhsElementType = lhsValue.getType();
}

/// A product `out + X * V` whose left operand X is an element-wise
/// expression computed in its body from other inputs
/// (linalg-fuse-elementwise-ops folds the softmax's division into the
/// second product): loops (batch..., m, n, k), V read as [.., k, n] or
/// [.., n, k], X independent of n; X is read over the loops (batch..., m,
/// k) of the left operand. `swapped` as in matchContraction: V read with
/// the result's rows, X with its columns.
FailureOr<Contraction> matchFusedProduct(linalg::GenericOp op, Mismatch &why,
                                         bool swapped) {
  auto fail = [&](const Twine &reason) -> FailureOr<Contraction> {
    why.reason = reason.str();
    return failure();
  };
  FailureOr<arith::MulFOp> mul = fusedProductTerm(op, why);
  if (failed(mul))
    return failure();
  unsigned loops = op.getNumLoops();
  if (op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return fail("a product whose loops are not (batch..., m, n, k)");
  unsigned batch = loops - 3, m = batch, n = batch + 1, k = batch + 2;
  MLIRContext *ctx = op.getContext();
  auto mapOf = [&](ArrayRef<unsigned> trailing) {
    return productMap(ctx, loops, batch, trailing);
  };
  OpOperand *init = op.getDpsInitOperand(0);
  if (op.getMatchingIndexingMap(init) != mapOf({m, n}))
    return fail("a product that is not [.., m, k] x [.., k, n]");
  if (swapped)
    std::swap(m, n);
  Block *body = op.getBody();
  Contraction c;
  c.batchSize = batchSizeOf(op, batch);
  if (swapped)
    c.resultLayout = lastTwoSwapped(batch + 2);
  Value lhsValue;
  for (int side : {1, 0}) {
    auto arg =
        dyn_cast<BlockArgument>(withoutZeroAdds(op, (*mul)->getOperand(side)));
    if (!arg || arg.getOwner() != body || c.rhs)
      continue;
    OpOperand *input = op.getMatchingOpOperand(arg);
    if (!op.isDpsInput(input))
      continue;
    AffineMap map = op.getMatchingIndexingMap(input);
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(input->get().getType()).getShape();
    bool transposed = readsAsProductOperand(map, shape, batch, {n, k});
    bool inOrder = readsAsProductOperand(map, shape, batch, {k, n});
    std::optional<SmallVector<int64_t>> permutation =
        transposed || inOrder
            ? std::nullopt
            : layoutPermutation(map, shape, op.getStaticLoopRanges(),
                                productOrder(batch, {k, n}));
    if (transposed || inOrder || permutation) {
      c.rhs = skipNoOpCasts(input->get());
      c.rhsTransposed = transposed;
      if (permutation)
        c.rhsPermutation = *permutation;
      lhsValue = (*mul)->getOperand(1 - side);
    }
  }
  if (!c.rhs)
    return fail("a product whose right operand is not read as [.., k, n] in "
                "some order");
  SmallVector<int64_t> rows = llvm::to_vector(llvm::seq<int64_t>(0, batch));
  rows.append({m, k});
  readFusedLeft(op, lhsValue, rows, n, c);
  // A left operand that is an input as it is (not computed in the body):
  // also the operand itself, in some order of [batch..., m, k].
  if (auto arg = dyn_cast<BlockArgument>(lhsValue);
      arg && arg.getOwner() == body) {
    OpOperand *input = op.getMatchingOpOperand(arg);
    std::optional<SmallVector<int64_t>> permutation = layoutPermutation(
        op.getMatchingIndexingMap(input),
        cast<RankedTensorType>(input->get().getType()).getShape(),
        op.getStaticLoopRanges(), productOrder(batch, {m, k}));
    if (op.isDpsInput(input) && permutation) {
      c.lhs = skipNoOpCasts(input->get());
      c.lhsPermutation = unlessIdentity(*permutation);
    }
  }
  std::optional<double> zero = filledWith(init->get());
  if (!zero || *zero != 0.0)
    return fail("a product that does not start from zero");
  return c;
}

FailureOr<Contraction>
matchReorderedFusedProduct(linalg::GenericOp op, ArrayRef<int64_t> resultOrder,
                           Mismatch &why) {
  auto fail = [&](const Twine &reason) -> FailureOr<Contraction> {
    why.reason = reason.str();
    return failure();
  };
  FailureOr<arith::MulFOp> mul = fusedProductTerm(op, why);
  if (failed(mul))
    return failure();
  int64_t k = reducedLoop(op);
  SmallVector<int64_t> fromResult;
  if (!resultOrder.empty()) {
    FailureOr<SmallVector<int64_t>> order =
        orderFromResult(op, resultOrder, why);
    if (failed(order))
      return failure();
    fromResult = *order;
  }
  Block *body = op.getBody();
  // V: an input read as it is by one side of the product, which reads k
  // and, with `resultOrder`, n.
  for (int side : {1, 0}) {
    auto arg =
        dyn_cast<BlockArgument>(withoutZeroAdds(op, (*mul)->getOperand(side)));
    if (!arg || arg.getOwner() != body)
      continue;
    OpOperand *rhs = op.getMatchingOpOperand(arg);
    std::optional<SmallVector<int64_t>> rhsLoops = loopsRead(op, rhs);
    if (!op.isDpsInput(rhs) || !rhsLoops || !llvm::is_contained(*rhsLoops, k))
      continue;
    SmallVector<int64_t> order = fromResult;
    if (order.empty()) {
      // The loop order of an input of X read as [batch..., m, k], then n:
      // the loop V reads and that input does not.
      for (OpOperand *input : op.getDpsInputOperands()) {
        std::optional<SmallVector<int64_t>> loops = loopsRead(op, input);
        if (input == rhs || !loops || loops->empty() || loops->back() != k)
          continue;
        SmallVector<int64_t> columns;
        for (int64_t d : *rhsLoops)
          if (d != k && !llvm::is_contained(*loops, d))
            columns.push_back(d);
        if (columns.size() != 1)
          continue;
        order.assign(loops->begin(), loops->end() - 1);
        order.append({columns.front(), k});
        break;
      }
    }
    if (order.size() < 3 ||
        !llvm::is_contained(*rhsLoops, order[order.size() - 2]))
      continue;
    Contraction c;
    if (failed(readReordered(op, order, rhs, c, why)))
      return failure();
    size_t batch = order.size() - 3;
    int64_t n = order[batch + 1];
    SmallVector<int64_t> rows(order.begin(), order.begin() + batch);
    rows.append({order[batch], order[batch + 2]});
    Value lhsValue = (*mul)->getOperand(1 - side);
    readFusedLeft(op, lhsValue, rows, n, c);
    if (auto lhsArg = dyn_cast<BlockArgument>(lhsValue);
        lhsArg && lhsArg.getOwner() == body) {
      OpOperand *input = op.getMatchingOpOperand(lhsArg);
      std::optional<SmallVector<int64_t>> loops = loopsRead(op, input);
      std::optional<SmallVector<int64_t>> permutation =
          loops ? permutationTo(*loops, rows) : std::nullopt;
      if (op.isDpsInput(input) && permutation) {
        c.lhs = skipNoOpCasts(input->get());
        c.lhsPermutation = unlessIdentity(*permutation);
      }
    }
    return c;
  }
  return fail("a product whose right operand is not read as [.., k, n] in "
              "some order");
}

/// A value computed in the body of a generic that also computes other steps
/// (linalg-fuse-elementwise-ops fuses a mask's computation into the
/// addition to the scores), to be computed by a generic of its own over the
/// loops it depends on.
struct BodySlice {
  linalg::GenericOp owner;
  Value value;
  /// The body's ops that compute it, in order, and the inputs they read.
  SmallVector<Operation *> ops;
  SmallVector<OpOperand *> inputs;
  /// The owner's loops it depends on, ascending, and their sizes: the
  /// shape of the tensor that holds it.
  SmallVector<unsigned> loops;
  SmallVector<int64_t> shape;
  /// The element of that tensor the root reads, as a function of its loops.
  ElementIndex element;
  /// Whether the tensor holds the value's negation (an i1 value).
  bool negate = false;
};

/// The slice of the body that computes `value` (by default `e`'s), where
/// `e` is an op or opaque value read through the body of an element-wise
/// generic or reduction; failure if it reads the generic's output or has
/// side effects or regions.
FailureOr<BodySlice> bodySliceOf(const ExprPtr &e, Value value = {}) {
  if (!e->owner || !e->bodyValue)
    return failure();
  BodySlice slice;
  slice.owner = e->owner;
  slice.value = value ? value : e->bodyValue;
  Block *body = slice.owner.getBody();
  unsigned loops = slice.owner.getNumLoops();
  llvm::SmallBitVector usedLoops(loops);
  llvm::SetVector<Operation *> ops;
  llvm::SetVector<OpOperand *> inputs;
  SmallVector<Value> work{slice.value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != body)
        continue;
      OpOperand *operand = slice.owner.getMatchingOpOperand(arg);
      if (!slice.owner.isDpsInput(operand))
        return failure();
      inputs.insert(operand);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || ops.contains(def))
      continue; // Defined above the generic: usable as it is.
    if (def->getNumRegions() != 0 || !isMemoryEffectFree(def))
      return failure();
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      usedLoops.set(index.getDim());
    ops.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  for (OpOperand *input : inputs) {
    slice.inputs.push_back(input);
    for (AffineExpr result :
         slice.owner.getMatchingIndexingMap(input).getResults())
      result.walk([&](AffineExpr sub) {
        if (auto dim = dyn_cast<AffineDimExpr>(sub))
          usedLoops.set(dim.getPosition());
      });
  }
  for (Operation &op : body->without_terminator())
    if (ops.contains(&op))
      slice.ops.push_back(&op);
  SmallVector<int64_t> ranges = slice.owner.getStaticLoopRanges();
  SmallVector<ElementIndex> read;
  for (unsigned d : usedLoops.set_bits()) {
    if (ShapedType::isDynamic(ranges[d]))
      return failure();
    slice.loops.push_back(d);
    slice.shape.push_back(ranges[d]);
    read.push_back(e->ownerLoops[d]);
  }
  slice.element = linearize(read, slice.shape);
  return slice;
}

/// A generic that computes `slice` over its own loops: the tensor that
/// holds the value.
Value materialize(ImplicitLocOpBuilder &b, BodySlice slice) {
  MLIRContext *ctx = b.getContext();
  unsigned loops = slice.loops.size();
  SmallVector<AffineExpr> ownLoops(slice.owner.getNumLoops(),
                                   getAffineConstantExpr(0, ctx));
  for (auto [i, d] : llvm::enumerate(slice.loops))
    ownLoops[d] = getAffineDimExpr(i, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : slice.inputs) {
    inputs.push_back(input->get());
    maps.push_back(slice.owner.getMatchingIndexingMap(input)
                       .replaceDimsAndSymbols(ownLoops, {}, loops, 0));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(loops, ctx));
  Type elementType = slice.value.getType();
  Value init = tensor::EmptyOp::create(b, slice.shape, elementType);
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, RankedTensorType::get(slice.shape, elementType), inputs, init, maps,
      iterators, [&](OpBuilder &nb, Location loc, ValueRange args) {
        IRMapping mapping;
        for (auto [input, arg] : llvm::zip(slice.inputs, args))
          mapping.map(slice.owner.getMatchingBlockArgument(input), arg);
        for (Operation *op : slice.ops) {
          if (auto index = dyn_cast<linalg::IndexOp>(op)) {
            unsigned own = llvm::find(slice.loops, index.getDim()) -
                           slice.loops.begin();
            mapping.map(index.getResult(),
                        linalg::IndexOp::create(nb, loc, own).getResult());
            continue;
          }
          nb.clone(*op, mapping);
        }
        Value result = mapping.lookupOrDefault(slice.value);
        if (slice.negate)
          result = arith::XOrIOp::create(
              nb, loc, result,
              arith::ConstantOp::create(nb, loc, nb.getBoolAttr(true)));
        linalg::YieldOp::create(nb, loc, result);
      });
  return generic->getResult(0);
}

/// Whether `value` may be computed from the result of `op` (bounded search
/// through the ops it is computed by: a search cut short says yes).
bool mayDependOn(Value value, Operation *op) {
  SmallVector<Value> work{value};
  DenseSet<Operation *> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (def == op || seen.size() > 512)
      return true;
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// Whether `values` are computed from an exponential and a row reduction
/// (through element-wise generics, reductions, casts and reshapes), or by
/// a linalg.softmax: what a softmax's probabilities look like.
bool looksLikeProbabilities(ValueRange values) {
  SmallVector<Value> work(values);
  DenseSet<Operation *> seen;
  bool exponential = false, reduction = false;
  while (!work.empty() && seen.size() < 64) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<linalg::SoftmaxOp>(def))
      return true;
    if (isa<linalg::ReduceOp>(def))
      reduction = true;
    auto generic = dyn_cast<linalg::GenericOp>(def);
    if ((generic && !linalg::isaContractionOpInterface(generic)) ||
        isa<linalg::MapOp>(def)) {
      auto linalgOp = cast<linalg::LinalgOp>(def);
      linalgOp->walk([&](math::ExpOp) { exponential = true; });
      reduction |= linalgOp.getNumReductionLoops() > 0;
      for (OpOperand *input : linalgOp.getDpsInputOperands())
        work.push_back(input->get());
      continue;
    }
    if (isa<math::ExpOp, tensor::CastOp, tensor::CollapseShapeOp,
            tensor::ExpandShapeOp, linalg::ReduceOp, linalg::TransposeOp,
            linalg::BroadcastOp, arith::ExtFOp, arith::TruncFOp,
            arith::DivFOp, arith::MulFOp, arith::SubFOp>(def)) {
      exponential |= isa<math::ExpOp>(def);
      llvm::append_range(work, def->getOperands());
    }
  }
  return exponential && reduction;
}

/// A tensor read as an operand of the raised attention: seen as `view` (a
/// reshape of it: the same elements in row-major order; empty for its own
/// shape), then transposed by `permutation` (linalg.transpose's; empty for
/// none).
struct OperandRead {
  Value tensor;
  SmallVector<int64_t> view, permutation;
};

/// What the matcher found: O = softmax(scale * Q K^T [+ mask]) V.
struct Attention {
  /// The products' operands, brought to [batch..., S, D] (or [batch..., D,
  /// S] when transposed) by their views and permutations.
  OperandRead query, key, value;
  Value mask;
  bool keyTransposed = false, valueTransposed = false;
  double scale = 1.0;
  /// The mask is [1, .., 1, Sq, Sk]: it is used as [1, 1, Sq, Sk] (needed
  /// when the softmax runs on another view of the batch than the products).
  bool maskIs2D = false;
  /// The mask has one row for every query ([.., 1, Sk], a key-padding
  /// mask): it is broadcast to [.., Sq, Sk], the form attn.attention takes.
  bool maskRowsBroadcast = false;
  /// The decomposed softmax's row maximum and sum, as the softmax reads
  /// them (null for linalg.softmax): a log-sum-exp the front end computes
  /// from them is the op's LSE.
  Value rowMax, rowSum;
  /// A mask computed in the body of a step that also computes others: the
  /// raise computes it on its own (`mask` is null then).
  std::optional<BodySlice> maskSlice;
  /// The layout of the second product's result (Contraction's
  /// resultLayout): O^T ([.., Dv, Sq]) for V^T P^T; empty for [.., Sq, Dv].
  SmallVector<int64_t> outputLayout;
};

/// The source of a tensor.collapse_shape or tensor.expand_shape that only
/// regroups the leading (batch) dimensions of `value`, or null: front ends
/// fold heads into the batch around their products.
Value batchReshapeSource(Value value) {
  value = skipNoOpCasts(value);
  auto lastTwoKept = [](ArrayRef<ReassociationIndices> groups,
                        ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
    return groups.size() >= 2 && groups.back().size() == 1 &&
           groups[groups.size() - 2].size() == 1 && from.size() >= 2 &&
           to.size() >= 2 && from.take_back(2) == to.take_back(2);
  };
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>())
    if (lastTwoKept(collapse.getReassociationIndices(),
                    collapse.getSrcType().getShape(),
                    collapse.getResultType().getShape()))
      return skipNoOpCasts(collapse.getSrc());
  if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>())
    if (lastTwoKept(expand.getReassociationIndices(),
                    expand.getSrcType().getShape(),
                    expand.getResultType().getShape()))
      return skipNoOpCasts(expand.getSrc());
  return Value();
}

/// `e` as base * factor with a positive finite constant factor (a
/// multiplication by it, or a division by its inverse): the base and the
/// factor; `e` and 1 when `e` is neither a multiplication nor a division;
/// failure when it multiplies or divides by something else.
FailureOr<std::pair<ExprPtr, double>> splitPositiveScale(ExprPtr e) {
  if (!e->isOp("arith.mulf") && !e->isOp("arith.divf"))
    return std::make_pair(e, 1.0);
  bool divide = e->isOp("arith.divf");
  ExprPtr factor = stripConversions(e->operands[1]);
  ExprPtr base = e->operands[0];
  if (!divide && factor->kind != Expr::Kind::Constant)
    std::swap(factor, base);
  factor = stripConversions(factor);
  if (factor->kind != Expr::Kind::Constant || factor->constant <= 0 ||
      !std::isfinite(factor->constant))
    return failure();
  return std::make_pair(stripConversions(base),
                        divide ? 1.0 / factor->constant : factor->constant);
}

/// Whether `e` is 0 whatever the inputs: the constant 0, or 0 times a
/// finite constant or a tensor filled with one (torch-mlir's baddbmm with
/// beta = 0 adds 0 * a zero fill to the scores). 0 times an unknown tensor
/// is not: it is NaN where the tensor is infinite.
bool isZeroTerm(const ExprPtr &e) {
  ExprPtr x = stripConversions(e);
  auto finite = [](const ExprPtr &y) {
    if (y->kind == Expr::Kind::Constant)
      return std::isfinite(y->constant);
    if (y->kind != Expr::Kind::Leaf || !y->tensor)
      return false;
    std::optional<double> value = filledWith(y->tensor);
    return value && std::isfinite(*value);
  };
  if (x->kind == Expr::Kind::Constant)
    return x->constant == 0;
  if (!x->isOp("arith.mulf"))
    return false;
  for (int side : {0, 1}) {
    ExprPtr zero = stripConversions(x->operands[side]);
    if (zero->kind == Expr::Kind::Constant && zero->constant == 0 &&
        finite(stripConversions(x->operands[1 - side])))
      return true;
  }
  return false;
}

/// Whether a tensor of shape `view` is one of shape `shape`, or the [B, Hkv
/// * G, S, X] tensor whose [B, Hkv, G, S, X] view it is (reshape
/// propagation splits the heads of grouped-query attention).
bool isHeadsView(ArrayRef<int64_t> view, ArrayRef<int64_t> shape) {
  if (view == shape)
    return true;
  return view.size() == 5 && shape.size() == 4 && view[0] == shape[0] &&
         view[1] * view[2] == shape[1] && view.take_back(2) == shape.take_back(2);
}

/// How a tensor of `elements` elements, read at `element` over loops of
/// sizes `loops`, is the loops in some order: the view of it whose
/// dimensions are the loops in that order (its row-major index of the
/// loops is `element`) and the permutation (linalg.transpose's) that
/// brings the view to the loops' order (empty for the identity);
/// std::nullopt when the read is not of that kind. The orders are tried one
/// by one, for at most 6 loops (attention's tensors have 5 at most).
std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
readOrder(const ElementIndex &element, int64_t elements,
          ArrayRef<int64_t> loops) {
  if (loops.size() > 6 || ShapedType::getNumElements(loops) != elements)
    return std::nullopt;
  // order[j]: the loop that dimension j of the view is read with.
  SmallVector<int64_t> order = llvm::to_vector(
      llvm::seq<int64_t>(0, static_cast<int64_t>(loops.size())));
  do {
    SmallVector<int64_t> view;
    SmallVector<ElementIndex> indices;
    for (int64_t loop : order) {
      view.push_back(loops[loop]);
      indices.push_back(ElementIndex::loop(loop, loops));
    }
    if (linearize(indices, view) != element)
      continue;
    if (llvm::is_sorted(order))
      return std::make_pair(view, SmallVector<int64_t>());
    return std::make_pair(view, invertPermutationVector(order));
  } while (std::next_permutation(order.begin(), order.end()));
  return std::nullopt;
}

/// The tensor a product operand of type `type` reads, given the expression
/// it holds over the operand's loops, and the positive constant it is
/// scaled by first (front ends scale Q, or Q and K^T, before the product
/// instead of the scores): the tensor itself, one it is a heads view of
/// (isHeadsView), or one it is another reshape of (seen as the operand);
/// std::nullopt when it is computed otherwise. With `permuted`, the tensor
/// may also be read in another order of the loops (a [B, S, H, D] tensor
/// read by a product over [B, H, S, D], when the scaling is fused into the
/// product): it is seen as its readOrder.
std::optional<std::pair<OperandRead, double>>
scaledOperand(const ExprPtr &operand, RankedTensorType type,
              bool permuted = false) {
  FailureOr<std::pair<ExprPtr, double>> split = splitPositiveScale(operand);
  if (failed(split))
    return std::nullopt;
  auto [base, factor] = *split;
  if (base->kind != Expr::Kind::Leaf || !base->tensor)
    return std::nullopt;
  auto baseType = cast<RankedTensorType>(base->tensor.getType());
  if (baseType.getElementType() != type.getElementType() ||
      !baseType.hasStaticShape() || !type.hasStaticShape())
    return std::nullopt;
  OperandRead read{base->tensor, {}, {}};
  if (base->element == ElementIndex::identity(type.getShape()) &&
      baseType.getNumElements() == type.getNumElements()) {
    if (isHeadsView(type.getShape(), baseType.getShape()))
      return std::make_pair(read, factor);
    // Another reshape is worth seeing through only to take a scaling.
    if (factor == 1.0)
      return std::nullopt;
    read.view = llvm::to_vector(type.getShape());
    return std::make_pair(read, factor);
  }
  if (!permuted)
    return std::nullopt;
  auto order =
      readOrder(base->element, baseType.getNumElements(), type.getShape());
  if (!order)
    return std::nullopt;
  std::tie(read.view, read.permutation) = *order;
  if (ArrayRef<int64_t>(read.view) == baseType.getShape())
    read.view.clear();
  return std::make_pair(read, factor);
}

/// The attention whose second product is `pv`, read as written or with its
/// operands `swapped` (matchContraction).
FailureOr<Attention> matchAttentionAs(linalg::LinalgOp pv, bool swapped,
                                      Mismatch &why) {
  auto fail = [&](const Twine &reason) -> FailureOr<Attention> {
    why.reason = reason.str();
    return failure();
  };
  FailureOr<Contraction> product =
      matchContraction(pv->getResult(0), why, swapped);
  if (failed(product))
    return failure();
  // P may be read transposed, [.., key, query] (IREE's canonical form of
  // a dot_general transposes P before a batch matmul): it is read at the
  // transposed element of the attention's loops.
  ArrayRef<int64_t> pOrder = product->lhsPermutation;
  bool probabilitiesTransposed =
      product->lhs && !product->lhsExpr && pOrder.size() >= 2 &&
      llvm::equal(pOrder, lastTwoSwapped(pOrder.size()));
  if (product->lhs && !product->lhsExpr && !pOrder.empty() &&
      !probabilitiesTransposed &&
      !llvm::equal(pOrder, llvm::seq<int64_t>(0, pOrder.size())))
    return fail("the second product reads the probabilities in another order "
                "than [.., query, key]");
  Attention attention;
  attention.outputLayout = product->resultLayout;
  attention.value = {product->rhs, {}, product->rhsPermutation};
  attention.valueTransposed = product->rhsTransposed;
  // The softmax may run on another view of the batch than the products.
  // P computed in the product's body (or read by it) is read over the
  // product's loops.
  Value probabilities = product->lhsExpr ? Value() : product->lhs;
  bool reshaped = false;
  if (Value source = batchReshapeSource(probabilities)) {
    probabilities = source;
    reshaped = true;
  }
  why.at = probabilities ? skipNoOpCasts(probabilities).getDefiningOp()
                         : pv.getOperation();
  SmallVector<int64_t> loopSizes =
      probabilities ? llvm::to_vector(
                          cast<RankedTensorType>(probabilities.getType())
                              .getShape())
                    : product->lhsLoops;
  unsigned loops = loopSizes.size();
  if (probabilitiesTransposed)
    std::swap(loopSizes[loops - 2], loopSizes[loops - 1]);
  ElementIndex identity = ElementIndex::identity(loopSizes);
  ElementIndex row = ElementIndex::rows(loopSizes);
  // The element of P's tensor at the attention's loops.
  ElementIndex pElement = identity;
  if (probabilitiesTransposed) {
    SmallVector<ElementIndex> indices;
    for (unsigned d = 0; d < loops; ++d)
      indices.push_back(ElementIndex::loop(d, loopSizes));
    std::swap(indices[loops - 2], indices[loops - 1]);
    pElement = linearize(
        indices, cast<RankedTensorType>(probabilities.getType()).getShape());
  }

  // P = softmax(X) over the last dimension.
  ExprPtr scores;
  auto softmax = probabilities && !probabilitiesTransposed
                     ? probabilities.getDefiningOp<linalg::SoftmaxOp>()
                     : linalg::SoftmaxOp();
  if (softmax) {
    if (softmax.getDimension() != loops - 1)
      return fail("the softmax is not over the keys (the last dimension)");
    scores = readExpr(softmax.getInput(), identity, loopSizes);
  } else {
    // P = E / rowsum(E), E = exp(X - rowmax(X)).
    // The division may be a multiplication by the rows' reciprocals, 1 / x
    // computed element-wise on the row statistic (TOSA's reciprocal).
    ExprPtr p = stripConversions(product->lhsExpr
                                     ? product->lhsExpr
                                     : readExpr(probabilities, pElement,
                                                loopSizes));
    // 1 / rowsum, read through the element-wise op that computes it or
    // computed in place (linalg-fuse-elementwise-ops fuses the reciprocal
    // into its user).
    auto reciprocalOf = [&](const ExprPtr &product) -> Value {
      ExprPtr factor = stripConversions(product);
      if (!factor->isOp("arith.divf"))
        return Value();
      ExprPtr one = stripConversions(factor->operands[0]);
      ExprPtr sum = stripConversions(factor->operands[1]);
      if (one->kind == Expr::Kind::Constant && one->constant == 1.0 &&
          sum->kind == Expr::Kind::Leaf && sum->element == row)
        return sum->tensor;
      return Value();
    };
    ExprPtr e;
    Value sumTensor;
    if (p->isOp("arith.divf")) {
      e = stripConversions(p->operands[0]);
      ExprPtr sum = stripConversions(p->operands[1]);
      if (sum->kind != Expr::Kind::Leaf || sum->element != row)
        return fail("the softmax does not divide by a row sum");
      sumTensor = sum->tensor;
    } else if (p->isOp("arith.mulf")) {
      for (int side : {1, 0})
        if (Value inverse = reciprocalOf(p->operands[side])) {
          e = stripConversions(p->operands[1 - side]);
          sumTensor = inverse;
          break;
        }
      if (!sumTensor)
        return fail("the left operand of the second product is not a "
                    "softmax");
    } else if (p->isOp("math.exp")) {
      // P = exp(X - lse), lse = rowmax(X) + log(rowsum(exp(X - rowmax(X)))):
      // the softmax through its log-sum-exp, no division. E is then
      // exp(X - rowmax(X)), which the sum must reduce.
      ExprPtr shifted = stripConversions(p->operands[0]);
      ExprPtr lse = shifted->isOp("arith.subf")
                        ? stripConversions(shifted->operands[1])
                        : ExprPtr();
      if (!lse || !lse->isOp("arith.addf"))
        return fail("the exponential is not of the scores minus their row "
                    "maximum or log-sum-exp");
      for (int side : {0, 1}) {
        ExprPtr log = stripConversions(lse->operands[side]);
        ExprPtr max = stripConversions(lse->operands[1 - side]);
        if (!log->isOp("math.log") || max->kind != Expr::Kind::Leaf ||
            max->element != row)
          continue;
        ExprPtr sum = stripConversions(log->operands[0]);
        if (sum->kind != Expr::Kind::Leaf || sum->element != row)
          continue;
        sumTensor = sum->tensor;
        auto difference = std::make_shared<Expr>();
        difference->kind = Expr::Kind::Op;
        difference->name = "arith.subf";
        difference->operands = {shifted->operands[0], max};
        e = std::make_shared<Expr>();
        e->kind = Expr::Kind::Op;
        e->name = "math.exp";
        e->operands = {difference};
      }
      if (!sumTensor)
        return fail("the exponential subtracts something else than a "
                    "log-sum-exp of row statistics");
    } else {
      return fail("the left operand of the second product is not a softmax");
    }
    FailureOr<ExprPtr> summed = rowReductionInput(
        sumTensor, loopSizes, "arith.addf", [](double v) { return v == 0.0; }, why);
    if (failed(summed))
      return failure();
    if (!sameExpr(stripConversions(*summed), e))
      return fail("the softmax divides by the sum of something else");
    if (!e->isOp("math.exp"))
      return fail("the softmax's numerator is not an exponential");
    ExprPtr shifted = e->operands[0];
    if (!shifted->isOp("arith.subf"))
      return fail("the exponential is not of the scores minus their row "
                  "maximum");
    ExprPtr max = shifted->operands[1];
    if (max->kind != Expr::Kind::Leaf || max->element != row)
      return fail("the exponential subtracts something else than a row "
                  "maximum");
    // -inf, or the lowest finite value of the scores' type (f16's -65504,
    // which torch-mlir uses for f16): no finite score is below it, so the
    // maximum is the same.
    double lowest = -APFloat::getLargest(
                         cast<FloatType>(getElementTypeOrSelf(
                                             max->tensor.getType()))
                             .getFloatSemantics())
                         .convertToDouble();
    FailureOr<ExprPtr> maxed = rowReductionInput(
        max->tensor, loopSizes, "arith.maximumf",
        [&](double v) { return std::isinf(v) ? v < 0 : v <= lowest; }, why);
    if (failed(maxed))
      return failure();
    scores = shifted->operands[0];
    if (!sameExpr(stripConversions(*maxed),
                  stripConversions(scores)))
      return fail("the row maximum is of something else than the scores");
    attention.rowMax = max->tensor;
    attention.rowSum = sumTensor;
  }

  // X = [scale *] S [+ mask], S = Q K^T.
  scores = stripConversions(scores);
  if (Value held = scores->held().first)
    why.at = held.getDefiningOp();
  // Terms that are 0 whatever the inputs are dropped.
  while (scores->isOp("arith.addf")) {
    int zero = isZeroTerm(scores->operands[1])   ? 1
               : isZeroTerm(scores->operands[0]) ? 0
                                                 : -1;
    if (zero < 0)
      break;
    scores = stripConversions(scores->operands[1 - zero]);
  }
  // The mask is a tensor of `shape` (float, or i1 for a boolean mask) read
  // (canonically) through `map`: through its trailing dimensions, its
  // leading ones and its query dimension possibly broadcast (size 1, index
  // 0: a key-padding mask [B, 1, 1, Sk]), which sets `rowsBroadcast`.
  auto isMaskRead = [&](ArrayRef<int64_t> shape, const ElementIndex &element,
                        Type elementType, bool &rowsBroadcast) {
    rowsBroadcast = false;
    // Leading unit dimensions beyond the loops broadcast like missing ones.
    while (shape.size() > loops && shape.front() == 1)
      shape = shape.drop_front();
    unsigned rank = shape.size();
    if (!(isa<FloatType>(elementType) || elementType.isInteger(1)) ||
        rank < 1 || rank > loops)
      return false;
    std::optional<SmallVector<ElementIndex>> indices =
        delinearize(element, shape);
    if (!indices)
      return false;
    // One value per key, the same for every query (a key-padding mask
    // computed over the keys alone).
    if (rank == 1) {
      rowsBroadcast = loopSizes[loops - 2] != 1;
      return shape[0] != 1 &&
             (*indices)[0] == ElementIndex::loop(loops - 1, loopSizes);
    }
    for (unsigned i = 0; i < rank; ++i) {
      unsigned loop = loops - rank + i;
      bool isLoop = (*indices)[i] == ElementIndex::loop(loop, loopSizes);
      bool broadcast = i + 1 < rank && shape[i] == 1 &&
                       (*indices)[i] == ElementIndex::constant(0);
      if (!isLoop && !broadcast)
        return false;
      rowsBroadcast |= !isLoop && i + 2 == rank;
      // Across a reshape of the batch only a mask of one [Sq, Sk] matrix
      // keeps its meaning.
      bool leading = i + 2 < rank;
      if (reshaped && leading && shape[i] != 1)
        return false;
    }
    return true;
  };
  // A mask read as `e` where it is added (or selected on): a tensor, or a
  // value computed in the body of that step (fused), which gets a generic
  // of its own over the loops it depends on. `value` picks another value of
  // that body than `e`'s; `negate` makes the mask its negation.
  auto takeMask = [&](const ExprPtr &e, Value value, bool negate) {
    if (attention.mask || attention.maskSlice)
      return false; // attn.attention has one mask operand.
    auto [tensor, element] = e->held();
    if (tensor && !value && !negate) {
      auto type = cast<RankedTensorType>(tensor.getType());
      if (!isMaskRead(type.getShape(), element, type.getElementType(),
                      attention.maskRowsBroadcast))
        return false;
      attention.mask = tensor;
    } else {
      FailureOr<BodySlice> slice = bodySliceOf(e, value);
      if (failed(slice) ||
          !isMaskRead(slice->shape, slice->element, slice->value.getType(),
                      attention.maskRowsBroadcast))
        return false;
      slice->negate = negate;
      attention.maskSlice = *slice;
    }
    attention.maskIs2D = reshaped;
    return true;
  };
  // The scores come from a product; the other terms make the mask.
  DenseMap<Expr *, bool> productSeen;
  std::function<bool(const ExprPtr &)> hasProduct =
      [&](const ExprPtr &e) -> bool {
    auto [known, inserted] = productSeen.try_emplace(e.get(), false);
    if (!inserted)
      return known->second;
    bool result;
    if (e->kind == Expr::Kind::Leaf) {
      auto op = e->tensor ? e->tensor.getDefiningOp<linalg::LinalgOp>()
                          : linalg::LinalgOp();
      result = op && linalg::isaContractionOpInterface(op);
    } else {
      result = llvm::any_of(e->operands, hasProduct);
    }
    productSeen[e.get()] = result;
    return result;
  };
  // select(c, X, -inf) (or select(c, -inf, X)): a boolean mask c (or not c).
  if (scores->isOp("arith.select")) {
    auto isMinusInf = [](const ExprPtr &e) {
      ExprPtr x = stripConversions(e);
      return x->kind == Expr::Kind::Constant && std::isinf(x->constant) &&
             x->constant < 0;
    };
    bool keepWhenTrue = isMinusInf(scores->operands[2]);
    if (!keepWhenTrue && !isMinusInf(scores->operands[1]))
      return fail("the scores are selected from something else than -inf");
    auto select = scores->bodyValue
                      ? scores->bodyValue.getDefiningOp<arith::SelectOp>()
                      : arith::SelectOp();
    // A condition read from a tensor as it is (through broadcasts, which
    // JAX writes before its where) is that tensor; else the body slice
    // that computes it.
    ExprPtr condition = scores->operands[0];
    bool tensorRead = keepWhenTrue && condition->kind == Expr::Kind::Leaf &&
                      condition->tensor &&
                      takeMask(condition, Value(), false);
    if (!tensorRead &&
        (!select || hasProduct(condition) ||
         !takeMask(scores, select.getCondition(), !keepWhenTrue)))
      return fail("the scores are selected by something else than a mask");
    scores = stripConversions(scores->operands[keepWhenTrue ? 1 : 2]);
  }
  if (scores->isOp("arith.addf")) {
    ExprPtr lhs = stripConversions(scores->operands[0]);
    ExprPtr rhs = stripConversions(scores->operands[1]);
    bool maskRight = !hasProduct(rhs);
    ExprPtr maskExpr = maskRight ? rhs : lhs;
    scores = maskRight ? lhs : rhs;
    if (hasProduct(maskExpr) || !takeMask(maskExpr, Value(), false))
      return fail("a term added to the scores is not a mask tensor");
  }
  FailureOr<std::pair<ExprPtr, double>> scaled = splitPositiveScale(scores);
  if (failed(scaled))
    return fail("the scores are scaled by something else than a positive "
                "constant");
  std::tie(scores, attention.scale) = *scaled;
  // The scores are the product's result as it is, or transposed (JAX's
  // grouped-query scores, [B, Hkv, Sk, S, G] transposed to the softmax's
  // [B, Hkv, G, S, Sk]).
  std::optional<SmallVector<int64_t>> scoreOrder;
  if (scores->kind == Expr::Kind::Leaf && scores->tensor) {
    auto type = cast<RankedTensorType>(scores->tensor.getType());
    auto order = type.hasStaticShape()
                     ? readOrder(scores->element, type.getNumElements(),
                                 loopSizes)
                     : std::nullopt;
    if (order && ArrayRef<int64_t>(order->first) == type.getShape())
      scoreOrder = order->second;
  }
  if (!scoreOrder && (scores->kind != Expr::Kind::Leaf ||
                      scores->element != identity))
    return fail("the scores are not a matrix product (or are modified in a "
                "way attn.attention does not express)");
  Value scoreTensor = scores->tensor;
  if (Value source = batchReshapeSource(scoreTensor);
      source && (!scoreOrder || scoreOrder->empty()))
    scoreTensor = source;
  FailureOr<Contraction> qk = matchContraction(
      scoreTensor, why, false,
      scoreOrder ? ArrayRef<int64_t>(*scoreOrder) : ArrayRef<int64_t>());
  if (failed(qk))
    return failure();
  // The products may group their batch differently ([B, Hkv, G] and
  // [B, Hq]); the scores and P already read the same elements.
  if (qk->batchSize != product->batchSize || qk->batchSize == 0)
    return fail("the two products have different batch sizes");
  // A mask computed from the scores would keep their product: not raised.
  Operation *scoresOp = scoreTensor.getDefiningOp();
  if ((attention.mask && mayDependOn(attention.mask, scoresOp)) ||
      (attention.maskSlice &&
       llvm::any_of(attention.maskSlice->inputs, [&](OpOperand *input) {
         return mayDependOn(input->get(), scoresOp);
       })))
    return fail("a term added to the scores is computed from them");
  // Q and K^T may be scaled before the product: the scale is the product
  // of the factors.
  // A product operand read through its scaling (a reshape of it is seen as
  // the operand's shape), then permuted as the product reads it.
  // An operand the product reads as it is may also be a scaled tensor
  // transposed (IREE's canonical form of dot_general transposes Q after
  // JAX scaled it): read in its order when that finds a scale.
  auto operandRead = [&](Value tensor, ArrayRef<int64_t> permutation) {
    auto type = cast<RankedTensorType>(tensor.getType());
    ExprPtr e = readExpr(tensor, ElementIndex::identity(type.getShape()),
                         type.getShape());
    std::optional<std::pair<OperandRead, double>> read =
        scaledOperand(e, type);
    if (!read && permutation.empty())
      if (auto reordered = scaledOperand(e, type, /*permuted=*/true);
          reordered && reordered->second != 1.0)
        return *reordered;
    std::pair<OperandRead, double> result =
        read.value_or(std::make_pair(OperandRead{tensor, {}, {}}, 1.0));
    result.first.permutation.assign(permutation.begin(), permutation.end());
    return result;
  };
  std::optional<std::pair<OperandRead, double>> query =
      !qk->lhs ? scaledOperand(qk->lhsExpr,
                               RankedTensorType::get(qk->lhsLoops,
                                                     qk->lhsElementType),
                               /*permuted=*/true)
               : operandRead(qk->lhs, qk->lhsPermutation);
  if (!query)
    return fail("the queries are computed inside the product in a way "
                "attn.attention does not express");
  std::pair<OperandRead, double> key = operandRead(qk->rhs, qk->rhsPermutation);
  attention.query = query->first;
  attention.key = key.first;
  attention.scale *= query->second * key.second;
  // V read in place of a copy (a scaled V scales O: not read through).
  std::pair<OperandRead, double> value =
      operandRead(attention.value.tensor, attention.value.permutation);
  if (value.second == 1.0)
    attention.value = value.first;
  // Q K^T reads K as [.., n, k] ("transposed B"); a matmul reads K^T.
  attention.keyTransposed = !qk->rhsTransposed;
  return attention;
}

/// The values a product's left operand is read from: the operand, or the
/// tensors the expression computed in a fused product's body reads (its
/// nodes visited once: reads are shared, so the expression is a DAG).
SmallVector<Value> leftOperandSources(const Contraction &c) {
  if (!c.lhsExpr)
    return {c.lhs};
  SetVector<Value> sources;
  SmallVector<const Expr *> work{c.lhsExpr.get()};
  DenseSet<const Expr *> seen{c.lhsExpr.get()};
  while (!work.empty()) {
    const Expr *e = work.pop_back_val();
    if (e->kind == Expr::Kind::Leaf && e->tensor)
      sources.insert(e->tensor);
    for (const ExprPtr &operand : e->operands)
      if (seen.insert(operand.get()).second)
        work.push_back(operand.get());
  }
  return sources.takeVector();
}

/// The attention whose second product is `pv`: P V as written, or V^T P^T
/// (O^T, the product's operands swapped). When neither matches and `why`
/// is given, it tells the failure of the reading whose left operand is the
/// one that looks like the softmax's probabilities.
FailureOr<Attention> matchAttention(linalg::LinalgOp pv, Mismatch *why) {
  Mismatch asWritten, swapped;
  if (FailureOr<Attention> attention = matchAttentionAs(pv, false, asWritten);
      succeeded(attention))
    return attention;
  if (FailureOr<Attention> attention = matchAttentionAs(pv, true, swapped);
      succeeded(attention))
    return attention;
  if (!why)
    return failure();
  Mismatch ignored;
  FailureOr<Contraction> written =
      matchContraction(pv->getResult(0), ignored, false);
  FailureOr<Contraction> reversed =
      matchContraction(pv->getResult(0), ignored, true);
  bool swappedIsSoftmax =
      succeeded(reversed) &&
      (failed(written) ||
       (!looksLikeProbabilities(leftOperandSources(*written)) &&
        looksLikeProbabilities(leftOperandSources(*reversed))));
  *why = swappedIsSoftmax ? swapped : asWritten;
  return failure();
}

/// The reassociation between rank 4 and rank `rank` (<= 4) that puts the
/// unit dimensions rank 4 adds in front into the first group.
SmallVector<ReassociationIndices> frontUnitGroups(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices first;
  for (int64_t d = 0; d <= 4 - rank; ++d)
    first.push_back(d);
  groups.push_back(first);
  for (int64_t d = 5 - rank; d < 4; ++d)
    groups.push_back({d});
  return groups;
}

/// `value` transposed by `permutation` (linalg.transpose's); a front end's
/// own transpose by the inverse permutation is read through rather than
/// undone.
Value permuted(ImplicitLocOpBuilder &b, Value value,
               ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (transpose &&
      llvm::equal(transpose.getPermutation(),
                  invertPermutationVector(permutation)))
    return transpose.getInput();
  SmallVector<int64_t> shape;
  for (int64_t d : permutation)
    shape.push_back(type.getDimSize(d));
  Value init = tensor::EmptyOp::create(b, shape, type.getElementType());
  return linalg::TransposeOp::create(b, value, init, permutation)
      .getResult()[0];
}

/// The tensor `read` describes: its tensor seen as its view (through a
/// collapse to one dimension and an expansion, which canonicalize folds
/// with the front end's own reshapes), then permuted.
Value operandValue(ImplicitLocOpBuilder &b, const OperandRead &read) {
  Value value = read.tensor;
  auto type = cast<RankedTensorType>(value.getType());
  if (!read.view.empty() && ArrayRef<int64_t>(read.view) != type.getShape()) {
    ReassociationIndices all;
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.push_back(d);
    Value flat = type.getRank() == 1
                     ? value
                     : tensor::CollapseShapeOp::create(
                           b, value, ArrayRef<ReassociationIndices>{all});
    ReassociationIndices into;
    for (size_t d = 0; d < read.view.size(); ++d)
      into.push_back(d);
    value = tensor::ExpandShapeOp::create(b, type.clone(read.view), flat,
                                          ArrayRef<ReassociationIndices>{into});
  }
  return read.permutation.empty() ? value
                                  : permuted(b, value, read.permutation);
}

/// `value` ([.., S, X] of rank `rank`) as rank 4 with unit dimensions in
/// front; `swapLast` first swaps its last two dimensions.
Value toRank4(ImplicitLocOpBuilder &b, Value value, bool swapLast) {
  // Reshapes that only add or drop leading unit dimensions are looked
  // through, to the front end's own transposes and head repeats.
  while (true) {
    // A transpose undone by another (TOSA front ends transpose K twice).
    if (auto outer = value.getDefiningOp<linalg::TransposeOp>())
      if (auto inner = outer.getInput().getDefiningOp<linalg::TransposeOp>()) {
        ArrayRef<int64_t> o = outer.getPermutation(), i = inner.getPermutation();
        if (llvm::all_of(llvm::seq<size_t>(0, o.size()),
                         [&](size_t d) { return i[o[d]] == int64_t(d); })) {
          value = skipNoOpCasts(inner.getInput());
          continue;
        }
      }
    Value source;
    if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>())
      source = expand.getSrc();
    else if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>())
      source = collapse.getSrc();
    if (!source)
      break;
    // [1, Hkv, G, S, X] collapsed into [Hkv * G, S, X] (TOSA's reshapes
    // folded into one) is [1, Hkv * G, S, X] without its unit dimension:
    // make that view, in which repeatedHeads finds the group.
    auto sourceType = cast<RankedTensorType>(source.getType());
    auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
    if (collapse && sourceType.getRank() == 5 &&
        sourceType.getDimSize(0) == 1 &&
        collapse.getReassociationIndices() ==
            SmallVector<ReassociationIndices>{{0, 1, 2}, {3}, {4}}) {
      value = tensor::CollapseShapeOp::create(
          b, source, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
      break;
    }
    auto from = cast<RankedTensorType>(source.getType()).getShape();
    auto to = cast<RankedTensorType>(value.getType()).getShape();
    auto withoutLeadingUnits = [](ArrayRef<int64_t> shape) {
      while (!shape.empty() && shape.front() == 1)
        shape = shape.drop_front();
      return shape;
    };
    if (from.size() > 4 || withoutLeadingUnits(from) != withoutLeadingUnits(to) ||
        withoutLeadingUnits(to).size() < 2)
      break;
    value = skipNoOpCasts(source);
  }
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (swapLast) {
    SmallVector<int64_t> permutation;
    for (int64_t d = 0; d < rank; ++d)
      permutation.push_back(d);
    std::swap(permutation[rank - 2], permutation[rank - 1]);
    value = permuted(b, value, permutation);
    type = cast<RankedTensorType>(value.getType());
  }
  if (rank == 4)
    return value;
  // [B, Hkv, G, S, X] (grouped-query heads split by reshape propagation) is
  // [B, Hkv * G, S, X]: head h = hkv * G + g, repeat_kv's order.
  if (rank == 5)
    return tensor::CollapseShapeOp::create(
        b, value, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  SmallVector<int64_t> shape(4 - rank, 1);
  llvm::append_range(shape, type.getShape());
  return tensor::ExpandShapeOp::create(b, type.clone(shape), value,
                                       frontUnitGroups(rank));
}

/// `value` ([B, Hkv, G, S, X]) as the broadcast of a [B, Hkv, S, X] tensor
/// along dimension 2, or null: a linalg.broadcast, or an element-wise
/// generic that copies a [B, Hkv, S, X] tensor, read without dimension 2
/// (torch-mlir's aten.expand after an unsqueeze, TOSA's addition of a
/// full-size zero constant to a [B, Hkv, 1, S, X] reshape).
Value groupBroadcastSource(ImplicitLocOpBuilder &b, Value value) {
  if (auto broadcast = value.getDefiningOp<linalg::BroadcastOp>())
    return broadcast.getDimensions() == ArrayRef<int64_t>{2}
               ? broadcast.getInput()
               : Value();
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.hasStaticShape() || type.getRank() != 5)
    return Value();
  ArrayRef<int64_t> loops = type.getShape();
  ExprPtr e = readExpr(value, ElementIndex::identity(loops), loops);
  while (e->isOp("arith.addf") && isZeroTerm(e->operands[1]))
    e = e->operands[0];
  while (e->isOp("arith.addf") && isZeroTerm(e->operands[0]))
    e = e->operands[1];
  if (e->kind != Expr::Kind::Leaf || !e->tensor)
    return Value();
  auto source = cast<RankedTensorType>(e->tensor.getType());
  SmallVector<int64_t> shape{loops[0], loops[1], loops[3], loops[4]};
  ElementIndex withoutGroup = linearize(
      {ElementIndex::loop(0, loops), ElementIndex::loop(1, loops),
       ElementIndex::loop(3, loops), ElementIndex::loop(4, loops)},
      shape);
  if (source.getShape() != ArrayRef(shape) ||
      source.getElementType() != type.getElementType() ||
      e->element != withoutGroup)
    return Value();
  return e->tensor;
}

/// The key/value heads that `value` ([B, Hq, S, X]) repeats the way front
/// ends write grouped-query attention (Llama's repeat_kv: a group
/// dimension after the heads, broadcast, folded into the heads): head h
/// holds key/value head h / G, attn.attention's own mapping. (A repeat that
/// interleaves, head h holding h mod Hkv, is not this.) Null otherwise.
Value repeatedHeads(ImplicitLocOpBuilder &b, Value value) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrcType().getRank() != 5 ||
      collapse.getReassociationIndices() !=
          SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}})
    return Value();
  return groupBroadcastSource(b, collapse.getSrc());
}

struct AttnRaiseAttentionPass
    : public attn::impl::AttnRaiseAttentionBase<AttnRaiseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    bool raised = false;
    SmallVector<linalg::LinalgOp> candidates;
    getOperation()->walk([&](linalg::LinalgOp op) {
      Mismatch ignored;
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (op->getNumResults() == 1 &&
          (linalg::isaContractionOpInterface(op) ||
           (generic && succeeded(fusedProductTerm(generic, ignored)))))
        candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates) {
      ReadScope reads;
      Mismatch why;
      // Why a product is not raised is worked out for the remarks only.
      FailureOr<Attention> attention =
          matchAttention(op, remarks ? &why : nullptr);
      if (failed(attention)) {
        if (remarks && looksLikeAttention(op)) {
          InFlightDiagnostic remark =
              op.emitRemark() << "not raised to attn.attention: " << why.reason;
          if (why.at) {
            remark << " (the match stopped at " << why.at->getName();
            if (auto file = dyn_cast<FileLineColLoc>(why.at->getLoc()))
              remark << " on line " << file.getLine();
            remark << ")";
          }
        }
        continue;
      }
      raise(op, *attention);
      raised = true;
    }
    if (!raised)
      return;
    // The front end's ops that fed only the raised attentions, users before
    // the values they use and nested ops before their parents (reversed
    // pre-order), so that nothing is visited after it was erased.
    SmallVector<Operation *> ops;
    getOperation()->walk<WalkOrder::PreOrder>(
        [&](Operation *op) { ops.push_back(op); });
    for (Operation *op : llvm::reverse(ops))
      if (op != getOperation() && isOpTriviallyDead(op))
        op->erase();
  }

  /// A product one of whose operands looks like a softmax's probabilities
  /// (looksLikeProbabilities; a fused product computes its left operand
  /// from any of its inputs): what a user would expect to be raised, so the
  /// reason it is not is worth a remark.
  static bool looksLikeAttention(linalg::LinalgOp op) {
    if (!linalg::isaContractionOpInterface(op))
      return looksLikeProbabilities(op.getDpsInputs());
    return llvm::any_of(op.getDpsInputs(), [](Value input) {
      return looksLikeProbabilities(input);
    });
  }

  /// An element-wise f32 generic computing log(rowsum) + rowmax from the
  /// decomposed softmax's statistics, read as the softmax reads them: the
  /// natural log-sum-exp of the scaled, masked scores, which the raised op
  /// computes as its LSE. Null when there is none.
  static linalg::GenericOp findLogSumExp(const Attention &attention) {
    if (!attention.rowMax)
      return {};
    auto rows = cast<RankedTensorType>(attention.rowMax.getType());
    // The maximum's users, through casts and reshapes.
    SmallVector<Value> work{attention.rowMax};
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (isa<tensor::CastOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                user)) {
          work.push_back(user->getResult(0));
          continue;
        }
        auto generic = dyn_cast<linalg::GenericOp>(user);
        if (!generic || !isElementwise(generic) ||
            generic->getNumResults() != 1)
          continue;
        auto type = cast<RankedTensorType>(generic->getResult(0).getType());
        if (!type.getElementType().isF32() || !type.hasStaticShape() ||
            type.getNumElements() != rows.getNumElements())
          continue;
        ElementIndex identity = ElementIndex::identity(type.getShape());
        ExprPtr e = stripConversions(
            readExpr(generic->getResult(0), identity, type.getShape()));
        if (!e->isOp("arith.addf"))
          continue;
        auto isLeaf = [&](const ExprPtr &x, Value tensor) {
          return x->kind == Expr::Kind::Leaf && x->tensor == tensor &&
                 x->element == identity;
        };
        for (int side : {0, 1}) {
          ExprPtr log = stripConversions(e->operands[side]);
          ExprPtr max = stripConversions(e->operands[1 - side]);
          if (log->isOp("math.log") &&
              isLeaf(stripConversions(log->operands[0]), attention.rowSum) &&
              isLeaf(max, attention.rowMax))
            return generic;
        }
      }
    }
    return {};
  }

  /// Where the front end's log-sum-exp `lse` is used once the raised op's
  /// LSE replaces it. The raised op is built at the product `pv`: the uses
  /// by ops that feed `pv` (the softmax's) keep the front end's value, and
  /// the other users, with what they feed, that come before `pv` (as ops
  /// of its block, in their order) must move after it. Fails when one of
  /// them is outside pv's block, where no move helps.
  struct LseUses {
    SetVector<Operation *> feedProduct;
    SmallVector<Operation *> toMove;
  };
  static FailureOr<LseUses> lseUses(linalg::LinalgOp pv,
                                    linalg::GenericOp lse) {
    Block *block = pv->getBlock();
    LseUses uses;
    BackwardSliceOptions backward;
    backward.omitUsesFromAbove = false;
    (void)getBackwardSlice(pv.getOperation(), &uses.feedProduct, backward);
    SetVector<Operation *> users, late;
    getForwardSlice(lse->getResult(0), &users);
    for (Operation *user : users) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return failure();
      if (!uses.feedProduct.contains(inBlock) && inBlock->isBeforeInBlock(pv))
        late.insert(inBlock);
    }
    uses.toMove.assign(late.begin(), late.end());
    llvm::sort(uses.toMove, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return uses;
  }

  void raise(linalg::LinalgOp pv, const Attention &attention) {
    linalg::GenericOp lse = findLogSumExp(attention);
    FailureOr<LseUses> lseUsers = LseUses();
    if (lse && failed(lseUsers = lseUses(pv, lse))) {
      pv->emitRemark() << "not raised to attn.attention: the front end's "
                          "log-sum-exp is used outside the product's block";
      return;
    }
    ImplicitLocOpBuilder b(pv.getLoc(), pv);
    auto outType = cast<RankedTensorType>(pv->getResult(0).getType());
    Value q = toRank4(b, operandValue(b, attention.query), false);
    Value k = toRank4(b, operandValue(b, attention.key),
                      attention.keyTransposed);
    Value v = toRank4(b, operandValue(b, attention.value),
                      attention.valueTransposed);
    // Key/value heads repeated for grouped-query attention are read in
    // place instead, when K and V then have the same heads (one of them
    // may already be unrepeated: reshape propagation reads K broadcast
    // within the product).
    Value kHeads = repeatedHeads(b, k);
    Value vHeads = repeatedHeads(b, v);
    Value kIn = kHeads ? kHeads : k, vIn = vHeads ? vHeads : v;
    auto headsOf = [](Value x) {
      return cast<RankedTensorType>(x.getType()).getDimSize(1);
    };
    bool grouped = (kHeads || vHeads) && headsOf(kIn) == headsOf(vIn);
    if (grouped) {
      k = kIn;
      v = vIn;
    }
    Value mask = attention.maskSlice ? materialize(b, *attention.maskSlice)
                                     : attention.mask;
    if (mask && attention.maskIs2D) {
      auto type = cast<RankedTensorType>(mask.getType());
      if (type.getRank() > 2) {
        ReassociationIndices first;
        for (int64_t d = 0; d < type.getRank() - 1; ++d)
          first.push_back(d);
        mask = tensor::CollapseShapeOp::create(
            b, mask,
            ArrayRef<ReassociationIndices>{first, {type.getRank() - 1}});
      }
    }
    auto q4 = cast<RankedTensorType>(q.getType());
    if (mask)
      mask = toRank4(b, mask, false);
    if (mask && attention.maskRowsBroadcast) {
      auto type = cast<RankedTensorType>(mask.getType());
      Value rows = tensor::CollapseShapeOp::create(
          b, mask, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
      SmallVector<int64_t> shape(type.getShape());
      shape[2] = q4.getDimSize(2);
      Value init = tensor::EmptyOp::create(b, shape, type.getElementType());
      mask = linalg::BroadcastOp::create(b, rows, init, ArrayRef<int64_t>{2})
                 .getResult()[0];
    }
    auto v4 = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> oShape(q4.getShape());
    oShape.back() = v4.getDimSize(3);
    Value init = tensor::EmptyOp::create(b, oShape, outType.getElementType());
    Value lseInit;
    if (lse)
      lseInit = tensor::EmptyOp::create(
          b, ArrayRef(oShape).drop_back(), b.getF32Type());
    auto op = AttentionOp::create(b, q, k, v, mask, init, lseInit);
    op.setScaleAttr(b.getF32FloatAttr(static_cast<float>(attention.scale)));
    if (failed(mlir::verify(op))) {
      // Shapes the product allowed but attention does not (e.g. K and V
      // with different batch sizes): leave the front end's ops.
      op.emitRemark() << "not raised to attn.attention: the matched "
                         "operands do not form a valid attention";
      op->erase();
      return;
    }
    Value result = op.getResult(0);
    // The product as [batch..., Sq, Dv] (reshapes regroup the batch
    // dimensions only), then laid out as the product's result.
    int64_t rank = outType.getRank();
    ArrayRef<int64_t> layout = attention.outputLayout;
    RankedTensorType rowsLast =
        layout.empty()
            ? outType
            : outType.clone(applyPermutation(
                  outType.getShape(), invertPermutationVector(layout)));
    if (rank == 5)
      result = tensor::ExpandShapeOp::create(
          b, rowsLast, result,
          ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    else if (rank != 4)
      result = tensor::CollapseShapeOp::create(b, rowsLast, result,
                                               frontUnitGroups(rank));
    if (!layout.empty())
      result = permuted(b, result, layout);
    pv->getResult(0).replaceAllUsesWith(result);
    if (lse) {
      // The front end's [.., Sq] or [.., Sq, 1] view of the rows, through
      // one dimension (the element counts agree: the statistics are one
      // value per row).
      auto lseType = cast<RankedTensorType>(lse->getResult(0).getType());
      Value rows = op.getResult(1);
      if (lseType != rows.getType()) {
        Value flat = tensor::CollapseShapeOp::create(
            b, rows, ArrayRef<ReassociationIndices>{{0, 1, 2}});
        ReassociationIndices all;
        for (int64_t d = 0; d < lseType.getRank(); ++d)
          all.push_back(d);
        rows = tensor::ExpandShapeOp::create(
            b, lseType, flat, ArrayRef<ReassociationIndices>{all});
      }
      lse->getResult(0).replaceUsesWithIf(rows, [&](OpOperand &use) {
        return !lseUsers->feedProduct.contains(
            pv->getBlock()->findAncestorOpInBlock(*use.getOwner()));
      });
      // Its other users before the product, after it, in their order: they
      // use nothing defined later.
      Operation *cursor = rows.getDefiningOp();
      for (Operation *user : lseUsers->toMove) {
        user->moveAfter(cursor);
        cursor = user;
      }
    }
    if (remarks)
      op.emitRemark() << "raised to attn.attention (scale " << attention.scale
                      << (!mask                ? ""
                          : getElementTypeOrSelf(mask.getType()).isInteger(1)
                              ? ", boolean mask"
                              : ", additive mask")
                      << (grouped ? ", grouped-query heads read in place" : "")
                      << (lse ? ", the front end's log-sum-exp as its LSE" : "")
                      << ")";
  }
};

} // namespace
