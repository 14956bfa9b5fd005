//===- ElementIndex.h - Row-major element indices as loop functions -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The element an op reads from a tensor, as a function of the op's loop
// indices, in a form where reads of the same elements compare equal however
// the tensor is reshaped: attn-raise-attention compares the reads of the
// steps of an attention that front ends and reshape propagation write on
// different views of the same tensors ([B, Hq, S, S] and [B, Hkv, G, S, S],
// [B * H, S, D] and [B, H, S, D]).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TRANSFORMS_ELEMENTINDEX_H
#define ATTN_TRANSFORMS_ELEMENTINDEX_H

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::attn {

/// A non-negative integer function of the indices i_0, .., i_n-1 of loops
/// of static sizes: a constant plus coefficients times digits, the digit
/// (loop, low, count) being (i_loop floordiv low) mod count. The row-major
/// index of an element (its position in the tensor's storage) is such a
/// function, and every reshape keeps it, so a read through a reshape is the
/// same ElementIndex on the reshape's source. Digits are kept merged (a
/// loop's adjacent digits with matching coefficients join), so two
/// ElementIndexes of the same loops are equal exactly when they are the
/// same function. An index whose arithmetic overflowed is invalid and equal
/// to nothing.
class ElementIndex {
public:
  struct Term {
    unsigned loop;
    int64_t low, count, coefficient;
  };

  ElementIndex() = default;
  static ElementIndex constant(int64_t value);
  static ElementIndex invalid();
  /// i_loop, for loops of sizes `loops` (0 for a loop of size 1).
  static ElementIndex loop(unsigned loop, llvm::ArrayRef<int64_t> loops);
  /// The row-major index of element (i_0, .., i_n-1) of a tensor shaped
  /// like the loops: the identity read.
  static ElementIndex identity(llvm::ArrayRef<int64_t> loops);
  /// The row-major index of element (i_0, .., i_n-2) of a tensor of the
  /// loops' sizes but the last: one value per row.
  static ElementIndex rows(llvm::ArrayRef<int64_t> loops);

  /// this + scale * other.
  ElementIndex plus(const ElementIndex &other, int64_t scale = 1) const;
  /// The largest value over all loop indices; std::nullopt if invalid or
  /// a coefficient or the constant is negative.
  std::optional<int64_t> max() const;

  bool valid() const { return isValid; }
  llvm::ArrayRef<Term> terms() const { return termList; }
  int64_t constantTerm() const { return constantPart; }
  /// A flat encoding (validity, constant, terms) for keys and equality.
  llvm::SmallVector<int64_t> key() const;
  bool operator==(const ElementIndex &other) const;
  bool operator!=(const ElementIndex &other) const {
    return !(*this == other);
  }

private:
  void normalize();

  llvm::SmallVector<Term, 4> termList;
  int64_t constantPart = 0;
  bool isValid = true;

  friend std::optional<std::pair<ElementIndex, ElementIndex>>
  splitIndex(const ElementIndex &index, int64_t divisor);
};

/// (index floordiv divisor, index mod divisor), when both are
/// ElementIndexes: each term lies below the divisor or at a multiple of it
/// (a digit that straddles it is cut in two), and the low part cannot
/// carry.
std::optional<std::pair<ElementIndex, ElementIndex>>
splitIndex(const ElementIndex &index, int64_t divisor);

/// The row-major index of the element at `indices` of a tensor of static
/// `shape`.
ElementIndex linearize(llvm::ArrayRef<ElementIndex> indices,
                       llvm::ArrayRef<int64_t> shape);

/// The per-dimension indices of the element at row-major `index` of a
/// tensor of static `shape`, when each is an ElementIndex within its
/// dimension.
std::optional<llvm::SmallVector<ElementIndex>>
delinearize(const ElementIndex &index, llvm::ArrayRef<int64_t> shape);

/// `expr` (an affine expression of dimensions bound to `dims`) as an
/// ElementIndex: sums and products with constants of dimensions and
/// constants; std::nullopt otherwise.
std::optional<ElementIndex> evaluate(AffineExpr expr,
                                     llvm::ArrayRef<ElementIndex> dims);

} // namespace mlir::attn

#endif // ATTN_TRANSFORMS_ELEMENTINDEX_H
