//===- BlockMaskDerivation.cpp - Block sparsity known at compile time -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/BlockMaskDerivation.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Support/SizeLimits.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// What is known about one value of the score region over a block: an
/// interval of integers (i1 as 0 and 1) or of extended reals, or nothing.
/// Floats never hold NaN: an operation that could make one gives Unknown.
struct Interval {
  enum class Kind { Unknown, Integer, Real };
  Kind kind = Kind::Unknown;
  int64_t lo = 0, hi = 0;
  double rlo = 0, rhi = 0;

  static Interval unknown() { return {}; }
  static Interval integer(int64_t lo, int64_t hi) {
    Interval v;
    v.kind = Kind::Integer;
    v.lo = lo;
    v.hi = hi;
    return v;
  }
  static Interval boolean(std::optional<bool> known) {
    if (!known)
      return integer(0, 1);
    return integer(*known, *known);
  }
  static Interval real(double lo, double hi) {
    if (std::isnan(lo) || std::isnan(hi))
      return unknown();
    Interval v;
    v.kind = Kind::Real;
    v.rlo = lo;
    v.rhi = hi;
    return v;
  }
  bool isInteger() const { return kind == Kind::Integer; }
  bool isReal() const { return kind == Kind::Real; }
  bool isMinusInf() const { return isReal() && rhi == -kInf; }
  /// The truth of an i1 interval, when known.
  std::optional<bool> truth() const {
    if (!isInteger() || lo != hi)
      return std::nullopt;
    return lo != 0;
  }
};

Interval join(const Interval &a, const Interval &b) {
  if (a.isInteger() && b.isInteger())
    return Interval::integer(std::min(a.lo, b.lo), std::max(a.hi, b.hi));
  if (a.isReal() && b.isReal())
    return Interval::real(std::min(a.rlo, b.rlo), std::max(a.rhi, b.rhi));
  return Interval::unknown();
}

/// Whether [lo, hi] fits in `type` (index, i1 as 0..1, or a signed iN).
bool fits(Type type, int64_t lo, int64_t hi) {
  if (type.isIndex())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return false;
  unsigned width = integer.getWidth();
  if (width == 1)
    return lo >= 0 && hi <= 1;
  if (width >= 64)
    return true;
  int64_t max = (int64_t(1) << (width - 1)) - 1;
  return lo >= -max - 1 && hi <= max;
}

/// An integer interval of `type`, or Unknown when it does not fit.
Interval integerOf(Type type, std::optional<int64_t> lo,
                   std::optional<int64_t> hi) {
  if (!lo || !hi || !fits(type, *lo, *hi))
    return Interval::unknown();
  return Interval::integer(*lo, *hi);
}

std::optional<int64_t> add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
std::optional<int64_t> sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The truth of `a < b` (or `a <= b` when `orEqual`) for every pair.
std::optional<bool> less(const Interval &a, const Interval &b, bool orEqual) {
  if (orEqual ? a.hi <= b.lo : a.hi < b.lo)
    return true;
  if (orEqual ? a.lo > b.hi : a.lo >= b.hi)
    return false;
  return std::nullopt;
}

std::optional<bool> compare(arith::CmpIPredicate predicate, const Interval &a,
                            const Interval &b) {
  using P = arith::CmpIPredicate;
  bool unsignedPredicate = predicate == P::ult || predicate == P::ule ||
                           predicate == P::ugt || predicate == P::uge;
  // Unsigned orders agree with signed ones on non-negative values.
  if (unsignedPredicate && (a.lo < 0 || b.lo < 0))
    return std::nullopt;
  auto negate = [](std::optional<bool> v) -> std::optional<bool> {
    if (!v)
      return std::nullopt;
    return !*v;
  };
  switch (predicate) {
  case P::eq:
  case P::ne: {
    std::optional<bool> equal;
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo)
      equal = true;
    else if (a.hi < b.lo || b.hi < a.lo)
      equal = false;
    return predicate == P::eq ? equal : negate(equal);
  }
  case P::slt:
  case P::ult:
    return less(a, b, false);
  case P::sle:
  case P::ule:
    return less(a, b, true);
  case P::sgt:
  case P::ugt:
    return less(b, a, false);
  case P::sge:
  case P::uge:
    return less(b, a, true);
  }
  return std::nullopt;
}

/// A constant tensor's elements as numbers (i1 as 0 and 1), for min/max over
/// the boxes a tensor.extract reads.
struct ConstantTable {
  bool isReal = false;
  SmallVector<int64_t> shape;
  std::vector<int64_t> integers;
  std::vector<double> reals;
};

/// The most elements one tensor.extract may range over.
constexpr int64_t kMaxExtractBox = int64_t(1) << 16;

class RegionEvaluator {
public:
  explicit RegionEvaluator(Block &body) : body(body) {}

  /// The region's result for arguments in `args` (score, b, h, q, k).
  Interval evaluate(ArrayRef<Interval> args) {
    values.clear();
    for (auto [argument, interval] : llvm::zip(body.getArguments(), args))
      values[argument] = interval;
    for (Operation &op : body.without_terminator()) {
      SmallVector<Interval> results = evaluateOp(op);
      for (auto [result, interval] : llvm::zip(op.getResults(), results))
        values[result] = interval;
    }
    return lookup(cast<YieldOp>(body.getTerminator()).getValue());
  }

private:
  Interval lookup(Value value) {
    auto it = values.find(value);
    if (it != values.end())
      return it->second;
    // Defined outside the region: only constants are known.
    Attribute attr;
    if (matchPattern(value, m_Constant(&attr)))
      return constant(value.getType(), attr);
    return Interval::unknown();
  }

  static Interval constant(Type type, Attribute attr) {
    if (auto integer = dyn_cast<IntegerAttr>(attr)) {
      if (type.isInteger(1))
        return Interval::boolean(integer.getValue().getBoolValue());
      if (integer.getValue().getSignificantBits() > 64)
        return Interval::unknown();
      int64_t v = integer.getValue().getSExtValue();
      return Interval::integer(v, v);
    }
    if (auto real = dyn_cast<FloatAttr>(attr)) {
      double v = real.getValueAsDouble();
      return Interval::real(v, v);
    }
    return Interval::unknown();
  }

  /// The table of a constant tensor, or null.
  const ConstantTable *table(Value tensor) {
    DenseElementsAttr dense;
    if (!matchPattern(tensor, m_Constant(&dense)))
      return nullptr;
    auto [it, inserted] = tables.try_emplace(dense);
    ConstantTable &t = it->second;
    if (!inserted)
      return &t;
    Type element = dense.getElementType();
    t.shape.assign(dense.getType().getShape().begin(),
                   dense.getType().getShape().end());
    if (isa<FloatType>(element)) {
      t.isReal = true;
      for (const APFloat &v : dense.getValues<APFloat>())
        t.reals.push_back(v.convertToDouble());
    } else if (element.isInteger(1)) {
      for (const APInt &v : dense.getValues<APInt>())
        t.integers.push_back(v.getBoolValue());
    } else if (isa<IndexType>(element) ||
               (isa<IntegerType>(element) &&
                element.getIntOrFloatBitWidth() <= 64)) {
      for (const APInt &v : dense.getValues<APInt>())
        t.integers.push_back(v.getSExtValue());
    } else {
      tables.erase(dense);
      return nullptr;
    }
    return &t;
  }

  /// min/max of the elements of a constant tensor over the box its index
  /// intervals span.
  Interval extract(tensor::ExtractOp op) {
    const ConstantTable *t = table(op.getTensor());
    if (!t)
      return Interval::unknown();
    SmallVector<int64_t> lo, hi;
    int64_t box = 1;
    for (auto [index, size] : llvm::zip(op.getIndices(), t->shape)) {
      Interval i = lookup(index);
      // Out of bounds is undefined: nothing to prove from.
      if (!i.isInteger() || i.lo < 0 || i.hi >= size)
        return Interval::unknown();
      lo.push_back(i.lo);
      hi.push_back(i.hi);
      box *= i.hi - i.lo + 1;
      if (box > kMaxExtractBox)
        return Interval::unknown();
    }
    Interval result;
    SmallVector<int64_t> at(lo);
    while (true) {
      int64_t flat = 0;
      for (auto [coordinate, size] : llvm::zip(at, t->shape))
        flat = flat * size + coordinate;
      Interval element =
          t->isReal ? Interval::real(t->reals[flat], t->reals[flat])
                    : Interval::integer(t->integers[flat], t->integers[flat]);
      result = result.kind == Interval::Kind::Unknown ? element
                                                      : join(result, element);
      int dim = static_cast<int>(at.size()) - 1;
      while (dim >= 0 && at[dim] == hi[dim]) {
        at[dim] = lo[dim];
        --dim;
      }
      if (dim < 0)
        break;
      ++at[dim];
    }
    return result;
  }

  SmallVector<Interval> evaluateOp(Operation &op) {
    SmallVector<Interval> results(op.getNumResults(), Interval::unknown());
    if (op.getNumResults() != 1 || op.getNumRegions() != 0)
      return results;
    Type type = op.getResult(0).getType();
    auto operand = [&](unsigned i) { return lookup(op.getOperand(i)); };
    auto integers = [&](unsigned n) {
      for (unsigned i = 0; i < n; ++i)
        if (!operand(i).isInteger())
          return false;
      return true;
    };
    auto reals = [&](unsigned n) {
      for (unsigned i = 0; i < n; ++i)
        if (!operand(i).isReal())
          return false;
      return true;
    };
    Attribute attr;
    if (matchPattern(op.getResult(0), m_Constant(&attr))) {
      results[0] = constant(type, attr);
      return results;
    }
    results[0] =
        llvm::TypeSwitch<Operation *, Interval>(&op)
            .Case(
                [&](tensor::ExtractOp extractOp) { return extract(extractOp); })
            .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp>([&](auto) {
              if (!integers(2))
                return Interval::unknown();
              Interval a = operand(0), b = operand(1);
              if (isa<arith::AddIOp>(op))
                return integerOf(type, add(a.lo, b.lo), add(a.hi, b.hi));
              if (isa<arith::SubIOp>(op))
                return integerOf(type, sub(a.lo, b.hi), sub(a.hi, b.lo));
              std::optional<int64_t> p[] = {mul(a.lo, b.lo), mul(a.lo, b.hi),
                                            mul(a.hi, b.lo), mul(a.hi, b.hi)};
              if (llvm::any_of(p, [](auto v) { return !v; }))
                return Interval::unknown();
              return integerOf(type, std::min({*p[0], *p[1], *p[2], *p[3]}),
                               std::max({*p[0], *p[1], *p[2], *p[3]}));
            })
            .Case<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp,
                  arith::RemSIOp, arith::RemUIOp>([&](auto) {
              // Non-negative dividends over a positive constant divisor,
              // where all these agree and division is monotone.
              if (!integers(2))
                return Interval::unknown();
              Interval a = operand(0), d = operand(1);
              if (d.lo != d.hi || d.lo <= 0 || a.lo < 0)
                return Interval::unknown();
              if (isa<arith::RemSIOp, arith::RemUIOp>(op)) {
                if (a.lo / d.lo == a.hi / d.lo)
                  return Interval::integer(a.lo % d.lo, a.hi % d.lo);
                return Interval::integer(0, d.lo - 1);
              }
              return Interval::integer(a.lo / d.lo, a.hi / d.lo);
            })
            .Case<arith::MinSIOp, arith::MaxSIOp>([&](auto) {
              if (!integers(2))
                return Interval::unknown();
              Interval a = operand(0), b = operand(1);
              if (isa<arith::MinSIOp>(op))
                return Interval::integer(std::min(a.lo, b.lo),
                                         std::min(a.hi, b.hi));
              return Interval::integer(std::max(a.lo, b.lo),
                                       std::max(a.hi, b.hi));
            })
            .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                  arith::ExtUIOp, arith::TruncIOp>([&](auto) {
              if (!integers(1))
                return Interval::unknown();
              Interval a = operand(0);
              bool zeroExtends = isa<arith::IndexCastUIOp, arith::ExtUIOp>(op);
              if (zeroExtends && a.lo < 0)
                return Interval::unknown();
              return integerOf(type, a.lo, a.hi);
            })
            .Case<arith::SIToFPOp, arith::UIToFPOp>([&](auto) {
              if (!integers(1) ||
                  (isa<arith::UIToFPOp>(op) && operand(0).lo < 0))
                return Interval::unknown();
              return Interval::real(static_cast<double>(operand(0).lo),
                                    static_cast<double>(operand(0).hi));
            })
            .Case([&](arith::CmpIOp cmp) {
              if (!integers(2))
                return Interval::unknown();
              return Interval::boolean(
                  compare(cmp.getPredicate(), operand(0), operand(1)));
            })
            .Case<arith::AndIOp, arith::OrIOp, arith::XOrIOp>([&](auto) {
              if (!type.isInteger(1) || !integers(2))
                return Interval::unknown();
              std::optional<bool> a = operand(0).truth(),
                                  b = operand(1).truth();
              if (isa<arith::AndIOp>(op)) {
                if (a == false || b == false)
                  return Interval::boolean(false);
                return Interval::boolean(a && b ? std::optional<bool>(true)
                                                : std::nullopt);
              }
              if (isa<arith::OrIOp>(op)) {
                if (a == true || b == true)
                  return Interval::boolean(true);
                return Interval::boolean(a && b ? std::optional<bool>(false)
                                                : std::nullopt);
              }
              if (a && b)
                return Interval::boolean(*a != *b);
              return Interval::boolean(std::nullopt);
            })
            .Case([&](arith::SelectOp select) {
              std::optional<bool> condition = operand(0).truth();
              if (!condition)
                return join(operand(1), operand(2));
              return *condition ? operand(1) : operand(2);
            })
            .Case<arith::AddFOp, arith::SubFOp>([&](auto) {
              if (!reals(2))
                return Interval::unknown();
              Interval a = operand(0), b = operand(1);
              if (isa<arith::SubFOp>(op))
                b = Interval::real(-b.rhi, -b.rlo);
              // inf + -inf would be NaN.
              if ((a.rhi == kInf || b.rhi == kInf) &&
                  (a.rlo == -kInf || b.rlo == -kInf))
                return Interval::unknown();
              return Interval::real(a.rlo + b.rlo, a.rhi + b.rhi);
            })
            .Case([&](arith::MulFOp) {
              if (!reals(2))
                return Interval::unknown();
              Interval a = operand(0), b = operand(1);
              double p[] = {a.rlo * b.rlo, a.rlo * b.rhi, a.rhi * b.rlo,
                            a.rhi * b.rhi};
              // 0 * inf would be NaN (and is one of the corners if it can be).
              if (llvm::any_of(p, [](double v) { return std::isnan(v); }))
                return Interval::unknown();
              return Interval::real(std::min({p[0], p[1], p[2], p[3]}),
                                    std::max({p[0], p[1], p[2], p[3]}));
            })
            .Case([&](arith::NegFOp) {
              if (!reals(1))
                return Interval::unknown();
              return Interval::real(-operand(0).rhi, -operand(0).rlo);
            })
            .Case<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
                  arith::MinNumFOp>([&](auto) {
              if (!reals(2))
                return Interval::unknown();
              Interval a = operand(0), b = operand(1);
              if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
                return Interval::real(std::max(a.rlo, b.rlo),
                                      std::max(a.rhi, b.rhi));
              return Interval::real(std::min(a.rlo, b.rlo),
                                    std::min(a.rhi, b.rhi));
            })
            .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) {
              // Widening keeps every value; narrowing keeps -inf.
              Interval a = operand(0);
              if (isa<arith::ExtFOp>(op) || a.isMinusInf())
                return a;
              return Interval::unknown();
            })
            .Default([](Operation *) { return Interval::unknown(); });
    return results;
  }

  Block &body;
  llvm::DenseMap<Value, Interval> values;
  llvm::DenseMap<Attribute, ConstantTable> tables;
};

/// A constant mask operand's elements, [B or 1, Hq or 1, Sq, Sk], as whether
/// each hides (false or -inf) or keeps (true or 0) its score.
struct ConstantMask {
  int64_t batch = 1, heads = 1;
  /// 0: hides, 1: keeps, 2: neither (an additive bias).
  std::vector<int8_t> effect;
};

std::optional<ConstantMask> constantMask(Value mask) {
  DenseElementsAttr dense;
  if (!mask || !matchPattern(mask, m_Constant(&dense)))
    return std::nullopt;
  ConstantMask result;
  ArrayRef<int64_t> shape = dense.getType().getShape();
  result.batch = shape[0];
  result.heads = shape[1];
  int64_t count = dense.getNumElements();
  result.effect.reserve(count);
  // A splat stores one value; getValues repeats it.
  if (dense.getElementType().isInteger(1)) {
    for (bool keep : dense.getValues<bool>())
      result.effect.push_back(keep ? 1 : 0);
  } else {
    for (const APFloat &v : dense.getValues<APFloat>())
      result.effect.push_back(v.isInfinity() && v.isNegative() ? 0
                              : v.isZero()                     ? 1
                                                               : 2);
  }
  return result;
}

} // namespace

std::optional<DerivedBlockMask> mlir::attn::deriveBlockMask(AttentionOp op,
                                                            int64_t blockRows,
                                                            int64_t blockKeys) {
  if (op.getBlockMask() || op.hasFrame() || blockRows < 1 || blockKeys < 1)
    return std::nullopt;
  // A block mask's rows are one head's rows: GQA packing's tiles keep their
  // element masks.
  if (Fa2TilesAttr tiles = op.getTilesAttr();
      tiles && tiles.getPackedHeads() != 1)
    return std::nullopt;
  ArrayRef<int64_t> q = op.getQuery().getType().getShape();
  int64_t keyLen = op.getKey().getType().getDimSize(2);
  if (ShapedType::isDynamicShape(q.take_front(3)) ||
      ShapedType::isDynamic(keyLen))
    return std::nullopt;
  const int64_t batch = q[0], heads = q[1], queryLen = q[2];
  const int64_t rowBlocks = llvm::divideCeil(queryLen, blockRows);
  const int64_t keyBlocks = llvm::divideCeil(keyLen, blockKeys);

  // The region, per (batch, head) only where it reads them.
  std::optional<RegionEvaluator> region;
  int64_t regionBatch = 1, regionHeads = 1;
  if (op.hasScoreModifier()) {
    Block &body = op.getScore().front();
    regionBatch = body.getArgument(1).use_empty() ? 1 : batch;
    regionHeads = body.getArgument(2).use_empty() ? 1 : heads;
    std::optional<int64_t> evaluations = checkedProduct(
        ArrayRef<int64_t>{regionBatch, regionHeads, rowBlocks, keyBlocks});
    if (evaluations && *evaluations <= kMaxDerivedRegionBlocks)
      region.emplace(body);
  }
  std::optional<ConstantMask> mask = constantMask(op.getMask());
  if (!region && !mask)
    return std::nullopt;

  DerivedBlockMask result;
  result.blockRows = blockRows;
  result.blockKeys = blockKeys;
  int64_t outBatch = std::max(region ? regionBatch : 1, mask ? mask->batch : 1);
  int64_t outHeads = std::max(region ? regionHeads : 1, mask ? mask->heads : 1);
  result.shape = {outBatch, outHeads, rowBlocks, keyBlocks};
  result.values.assign(outBatch * outHeads * rowBlocks * keyBlocks,
                       BlockMaskValue::kPartial);

  // Which blocks the region hides, per (batch, head) it distinguishes.
  std::vector<bool> regionHides;
  if (region) {
    regionHides.resize(regionBatch * regionHeads * rowBlocks * keyBlocks);
    auto range = [](int64_t count, int64_t distinct, int64_t index) {
      return distinct == 1 ? Interval::integer(0, count - 1)
                           : Interval::integer(index, index);
    };
    int64_t flat = 0;
    for (int64_t b = 0; b < regionBatch; ++b)
      for (int64_t h = 0; h < regionHeads; ++h)
        for (int64_t x = 0; x < rowBlocks; ++x)
          for (int64_t y = 0; y < keyBlocks; ++y) {
            Interval args[] = {
                Interval::real(-FLT_MAX, FLT_MAX), range(batch, regionBatch, b),
                range(heads, regionHeads, h),
                Interval::integer(x * blockRows,
                                  std::min(queryLen, (x + 1) * blockRows) - 1),
                Interval::integer(y * blockKeys,
                                  std::min(keyLen, (y + 1) * blockKeys) - 1)};
            regionHides[flat++] = region->evaluate(args).isMinusInf();
          }
  }

  for (int64_t b = 0; b < outBatch; ++b)
    for (int64_t h = 0; h < outHeads; ++h)
      for (int64_t x = 0; x < rowBlocks; ++x)
        for (int64_t y = 0; y < keyBlocks; ++y) {
          bool hidden = false, kept = false;
          if (region)
            hidden = regionHides[((std::min(b, regionBatch - 1) * regionHeads +
                                   std::min(h, regionHeads - 1)) *
                                      rowBlocks +
                                  x) *
                                     keyBlocks +
                                 y];
          if (mask) {
            const int8_t *rows = mask->effect.data() +
                                 (std::min(b, mask->batch - 1) * mask->heads +
                                  std::min(h, mask->heads - 1)) *
                                     queryLen * keyLen;
            bool allHide = true, allKeep = true;
            for (int64_t i = x * blockRows;
                 i < std::min(queryLen, (x + 1) * blockRows); ++i)
              for (int64_t k = y * blockKeys;
                   k < std::min(keyLen, (y + 1) * blockKeys); ++k) {
                allHide &= rows[i * keyLen + k] == 0;
                allKeep &= rows[i * keyLen + k] == 1;
              }
            hidden |= allHide;
            kept = allKeep;
          }
          int8_t &value =
              result
                  .values[((b * outHeads + h) * rowBlocks + x) * keyBlocks + y];
          if (hidden) {
            value = BlockMaskValue::kEmpty;
            ++result.emptyBlocks;
          } else if (kept) {
            value = BlockMaskValue::kFull;
            ++result.fullBlocks;
          }
        }
  if (!result.emptyBlocks && !result.fullBlocks)
    return std::nullopt;
  return result;
}
