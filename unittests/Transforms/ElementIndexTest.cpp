//===- ElementIndexTest.cpp - Row-major element indices -------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// ElementIndex against the arithmetic it stands for, evaluated at every
// point of the loops: what linearize and delinearize return must be the
// row-major index and the per-dimension indices of each element, and equal
// ElementIndexes must be equal functions.
//
//===----------------------------------------------------------------------===//

#include "attn/Transforms/ElementIndex.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <vector>

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The value of `index` at loop indices `point`.
int64_t valueAt(const ElementIndex &index, const std::vector<int64_t> &point) {
  int64_t value = index.constantTerm();
  for (const ElementIndex::Term &term : index.terms())
    value += term.coefficient * ((point[term.loop] / term.low) % term.count);
  return value;
}

/// Calls `visit` with every point of loops of sizes `loops`.
template <typename Visit>
void forEachPoint(llvm::ArrayRef<int64_t> loops, Visit visit) {
  std::vector<int64_t> point(loops.size(), 0);
  while (true) {
    visit(point);
    int64_t d = static_cast<int64_t>(loops.size()) - 1;
    for (; d >= 0; --d) {
      if (++point[d] < loops[d])
        break;
      point[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// The row-major index of `point` in `shape`.
int64_t rowMajor(const std::vector<int64_t> &point,
                 llvm::ArrayRef<int64_t> shape) {
  int64_t index = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    index = index * shape[d] + point[d];
  return index;
}

TEST(ElementIndexTest, IdentityIsTheRowMajorIndex) {
  std::vector<int64_t> loops{2, 3, 4};
  ElementIndex identity = ElementIndex::identity(loops);
  forEachPoint(loops, [&](const std::vector<int64_t> &point) {
    EXPECT_EQ(valueAt(identity, point), rowMajor(point, loops));
  });
}

TEST(ElementIndexTest, RowsLeaveOutTheLastLoop) {
  std::vector<int64_t> loops{2, 3, 4};
  ElementIndex rows = ElementIndex::rows(loops);
  forEachPoint(loops, [&](const std::vector<int64_t> &point) {
    EXPECT_EQ(valueAt(rows, point), point[0] * 3 + point[1]);
  });
}

// Reading a [B, Hq, S] view's element through its [B, Hkv, G, S] reshape:
// the heads' loop is cut into two digits, and gives back the same index.
TEST(ElementIndexTest, DelinearizeSplitsALoopAcrossDimensions) {
  std::vector<int64_t> loops{2, 4, 8};
  std::vector<int64_t> view{2, 2, 2, 8};
  ElementIndex identity = ElementIndex::identity(loops);
  auto indices = delinearize(identity, view);
  ASSERT_TRUE(indices.has_value());
  forEachPoint(loops, [&](const std::vector<int64_t> &point) {
    int64_t flat = rowMajor(point, loops);
    std::vector<int64_t> expected{flat / 32, flat / 16 % 2, flat / 8 % 2,
                                  flat % 8};
    for (size_t d = 0; d < view.size(); ++d)
      EXPECT_EQ(valueAt((*indices)[d], point), expected[d]) << d;
  });
  EXPECT_EQ(linearize(*indices, view), identity);
}

// The other way: a [B, Hkv, G, S] loop nest reads a [B, Hq, S] tensor at
// Hkv * G + g, which is the same function as the identity over its loops.
TEST(ElementIndexTest, LinearizeMergesDigitsOfOneLoop) {
  std::vector<int64_t> loops{2, 2, 2, 8};
  // Hkv * 2 + g as one dimension of size 4.
  ElementIndex head = ElementIndex()
                          .plus(ElementIndex::loop(1, loops), 2)
                          .plus(ElementIndex::loop(2, loops), 1);
  SmallVector<ElementIndex> merged{ElementIndex::loop(0, loops), head,
                                   ElementIndex::loop(3, loops)};
  EXPECT_EQ(linearize(merged, {2, 4, 8}), ElementIndex::identity(loops));
}

TEST(ElementIndexTest, EqualOnlyWhenTheSameFunction) {
  std::vector<int64_t> loops{4, 4};
  ElementIndex a = ElementIndex::identity(loops);
  ElementIndex transposed =
      linearize({ElementIndex::loop(1, loops), ElementIndex::loop(0, loops)},
                {4, 4});
  EXPECT_NE(a, transposed);
  EXPECT_EQ(a, linearize(*delinearize(a, {2, 2, 2, 2}), {2, 2, 2, 2}));
  // A loop of size 1 is index 0.
  std::vector<int64_t> unit{1, 4};
  EXPECT_EQ(ElementIndex::loop(0, unit), ElementIndex::constant(0));
  EXPECT_EQ(ElementIndex::identity(unit), ElementIndex::loop(1, unit));
}

// i0 + i1 over [3, 3] spans 0..4: as indices of a [2, 3] tensor its low
// part would carry, so it is not one.
TEST(ElementIndexTest, DelinearizeRefusesCarries) {
  std::vector<int64_t> loops{3, 3};
  ElementIndex sum =
      ElementIndex::loop(0, loops).plus(ElementIndex::loop(1, loops));
  EXPECT_FALSE(delinearize(sum, {2, 3}).has_value());
  // Out of bounds of the first dimension.
  EXPECT_FALSE(delinearize(ElementIndex::identity({4, 4}), {1, 4}).has_value());
  // 2 * i0 for i0 < 3 in a [2, 3] tensor is (0, 0), (0, 2), (1, 1): its
  // digit cannot be cut where the rows fall.
  EXPECT_FALSE(
      delinearize(ElementIndex().plus(ElementIndex::loop(0, {3}), 2), {2, 3})
          .has_value());
  // The first 6 elements of a [4, 3] tensor are rows 0 and 1.
  EXPECT_TRUE(delinearize(ElementIndex::identity({6}), {4, 3}).has_value());
}

TEST(ElementIndexTest, EvaluatesAffineExpressions) {
  MLIRContext context;
  std::vector<int64_t> loops{2, 3};
  SmallVector<ElementIndex> dims{ElementIndex::loop(0, loops),
                                 ElementIndex::loop(1, loops)};
  AffineExpr d0 = getAffineDimExpr(0, &context);
  AffineExpr d1 = getAffineDimExpr(1, &context);
  auto sum = evaluate(d0 * 3 + d1 + 1, dims);
  ASSERT_TRUE(sum.has_value());
  forEachPoint(loops, [&](const std::vector<int64_t> &point) {
    EXPECT_EQ(valueAt(*sum, point), point[0] * 3 + point[1] + 1);
  });
  EXPECT_FALSE(evaluate(d0 * d1, dims).has_value());
  EXPECT_FALSE(evaluate(d0.floorDiv(2), dims).has_value());
}

TEST(ElementIndexTest, OverflowIsInvalidNotWrapped) {
  std::vector<int64_t> huge{int64_t(1) << 40, int64_t(1) << 40};
  ElementIndex identity = ElementIndex::identity(huge);
  ElementIndex scaled = identity.plus(identity, int64_t(1) << 40);
  EXPECT_FALSE(scaled.valid());
  EXPECT_NE(scaled, scaled);
  EXPECT_FALSE(scaled.max().has_value());
  EXPECT_FALSE(ElementIndex::loop(0, {0}).valid());
}

} // namespace
