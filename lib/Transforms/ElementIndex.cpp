//===- ElementIndex.cpp - Row-major element indices as loop functions -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/ElementIndex.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <tuple>

using namespace mlir;
using namespace mlir::attn;

ElementIndex ElementIndex::constant(int64_t value) {
  ElementIndex index;
  index.constantPart = value;
  return index;
}

ElementIndex ElementIndex::invalid() {
  ElementIndex index;
  index.isValid = false;
  return index;
}

ElementIndex ElementIndex::loop(unsigned loop, ArrayRef<int64_t> loops) {
  ElementIndex index;
  if (loops[loop] <= 0 || ShapedType::isDynamic(loops[loop]))
    index.isValid = false;
  else if (loops[loop] != 1)
    index.termList.push_back({loop, 1, loops[loop], 1});
  return index;
}

ElementIndex ElementIndex::identity(ArrayRef<int64_t> loops) {
  SmallVector<ElementIndex> indices;
  for (unsigned d = 0; d < loops.size(); ++d)
    indices.push_back(loop(d, loops));
  return linearize(indices, loops);
}

ElementIndex ElementIndex::rows(ArrayRef<int64_t> loops) {
  SmallVector<ElementIndex> indices;
  for (unsigned d = 0; d + 1 < loops.size(); ++d)
    indices.push_back(loop(d, loops));
  return linearize(indices, loops.drop_back());
}

ElementIndex ElementIndex::plus(const ElementIndex &other,
                                int64_t scale) const {
  ElementIndex sum = *this;
  sum.isValid = isValid && other.isValid;
  for (Term term : other.termList) {
    if (llvm::MulOverflow(term.coefficient, scale, term.coefficient))
      sum.isValid = false;
    sum.termList.push_back(term);
  }
  int64_t scaled;
  if (llvm::MulOverflow(other.constantPart, scale, scaled) ||
      llvm::AddOverflow(sum.constantPart, scaled, sum.constantPart))
    sum.isValid = false;
  sum.normalize();
  return sum;
}

void ElementIndex::normalize() {
  if (!isValid) {
    termList.clear();
    constantPart = 0;
    return;
  }
  // Sort by digit, add the coefficients of equal digits, join a loop's
  // adjacent digits (low, c1) * k and (low * c1, c2) * k * c1 into
  // (low, c1 * c2) * k; repeat until nothing changes.
  bool changed = true;
  while (changed && isValid) {
    changed = false;
    llvm::sort(termList, [](const Term &a, const Term &b) {
      return std::tie(a.loop, a.low, a.count) <
             std::tie(b.loop, b.low, b.count);
    });
    SmallVector<Term, 4> merged;
    for (const Term &term : termList) {
      if (term.coefficient == 0 || term.count == 1) {
        changed |= true;
        continue;
      }
      if (!merged.empty()) {
        Term &last = merged.back();
        if (last.loop == term.loop && last.low == term.low &&
            last.count == term.count) {
          if (llvm::AddOverflow(last.coefficient, term.coefficient,
                                last.coefficient))
            isValid = false;
          changed = true;
          continue;
        }
        int64_t next, coefficient;
        if (last.loop == term.loop &&
            !llvm::MulOverflow(last.low, last.count, next) &&
            next == term.low &&
            !llvm::MulOverflow(last.coefficient, last.count, coefficient) &&
            coefficient == term.coefficient) {
          last.count *= term.count;
          changed = true;
          continue;
        }
      }
      merged.push_back(term);
    }
    termList = merged;
  }
  if (!isValid) {
    termList.clear();
    constantPart = 0;
  }
}

std::optional<int64_t> ElementIndex::max() const {
  if (!isValid || constantPart < 0)
    return std::nullopt;
  int64_t total = constantPart;
  for (const Term &term : termList) {
    int64_t part;
    if (term.coefficient < 0 ||
        llvm::MulOverflow(term.coefficient, term.count - 1, part) ||
        llvm::AddOverflow(total, part, total))
      return std::nullopt;
  }
  return total;
}

SmallVector<int64_t> ElementIndex::key() const {
  SmallVector<int64_t> key{isValid, constantPart};
  for (const Term &term : termList)
    llvm::append_range(key, ArrayRef<int64_t>{term.loop, term.low, term.count,
                                              term.coefficient});
  return key;
}

bool ElementIndex::operator==(const ElementIndex &other) const {
  return isValid && other.isValid && key() == other.key();
}

std::optional<std::pair<ElementIndex, ElementIndex>>
mlir::attn::splitIndex(const ElementIndex &index, int64_t divisor) {
  if (!index.valid() || divisor <= 0 || index.constantPart < 0)
    return std::nullopt;
  ElementIndex high, low;
  for (const ElementIndex::Term &term : index.termList) {
    if (term.coefficient <= 0)
      return std::nullopt;
    if (term.coefficient % divisor == 0) {
      high.termList.push_back({term.loop, term.low, term.count,
                               term.coefficient / divisor});
    } else if (term.count - 1 <= (divisor - 1) / term.coefficient) {
      // Wholly below the divisor (with the others: checked below).
      low.termList.push_back(term);
    } else if (divisor % term.coefficient == 0 &&
               term.count % (divisor / term.coefficient) == 0) {
      // Straddles it: cut the digit where the divisor falls.
      int64_t lowCount = divisor / term.coefficient;
      low.termList.push_back(
          {term.loop, term.low, lowCount, term.coefficient});
      int64_t highLow;
      if (llvm::MulOverflow(term.low, lowCount, highLow))
        return std::nullopt;
      high.termList.push_back({term.loop, highLow, term.count / lowCount, 1});
    } else {
      return std::nullopt;
    }
  }
  high.constantPart = index.constantPart / divisor;
  low.constantPart = index.constantPart % divisor;
  high.normalize();
  low.normalize();
  std::optional<int64_t> lowMax = low.max();
  if (!lowMax || *lowMax >= divisor)
    return std::nullopt; // The low part would carry into the high one.
  return std::make_pair(high, low);
}

ElementIndex mlir::attn::linearize(ArrayRef<ElementIndex> indices,
                                   ArrayRef<int64_t> shape) {
  ElementIndex index;
  int64_t stride = 1;
  bool valid = indices.size() == shape.size();
  for (int64_t d = static_cast<int64_t>(indices.size()) - 1; d >= 0 && valid;
       --d) {
    index = index.plus(indices[d], stride);
    valid = shape[d] > 0 && !ShapedType::isDynamic(shape[d]) &&
            !llvm::MulOverflow(stride, shape[d], stride);
  }
  return valid ? index : ElementIndex::invalid();
}

std::optional<SmallVector<ElementIndex>>
mlir::attn::delinearize(const ElementIndex &index, ArrayRef<int64_t> shape) {
  if (!index.valid() || shape.empty())
    return std::nullopt;
  SmallVector<ElementIndex> indices(shape.size());
  ElementIndex rest = index;
  for (size_t d = shape.size() - 1; d > 0; --d) {
    if (shape[d] <= 0 || ShapedType::isDynamic(shape[d]))
      return std::nullopt;
    auto parts = splitIndex(rest, shape[d]);
    if (!parts)
      return std::nullopt;
    rest = parts->first;
    indices[d] = parts->second;
  }
  std::optional<int64_t> restMax = rest.max();
  if (shape[0] <= 0 || ShapedType::isDynamic(shape[0]) || !restMax ||
      *restMax >= shape[0])
    return std::nullopt;
  indices[0] = rest;
  return indices;
}

std::optional<ElementIndex> mlir::attn::evaluate(AffineExpr expr,
                                                 ArrayRef<ElementIndex> dims) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return dim.getPosition() < dims.size()
               ? std::optional<ElementIndex>(dims[dim.getPosition()])
               : std::nullopt;
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return ElementIndex::constant(constant.getValue());
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return std::nullopt;
  std::optional<ElementIndex> lhs = evaluate(binary.getLHS(), dims);
  std::optional<ElementIndex> rhs = evaluate(binary.getRHS(), dims);
  if (!lhs || !rhs)
    return std::nullopt;
  if (expr.getKind() == AffineExprKind::Add)
    return lhs->plus(*rhs);
  if (expr.getKind() == AffineExprKind::Mul) {
    if (rhs->terms().empty())
      return ElementIndex().plus(*lhs, rhs->constantTerm());
    if (lhs->terms().empty())
      return ElementIndex().plus(*rhs, lhs->constantTerm());
  }
  return std::nullopt;
}
