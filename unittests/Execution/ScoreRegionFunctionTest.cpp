//===- ScoreRegionFunctionTest.cpp - A score region compiled alone
//---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/ScoreRegionFunction.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct ScoreRegionFunctionTest : testing::Test {
  // Lowering needs the dialects' bufferization and to-LLVM interfaces, as
  // in attn-run.
  ScoreRegionFunctionTest() : context(registry()) {
    context.loadDialect<AttnDialect>();
  }
  static DialectRegistry registry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registry.insert<AttnDialect>();
    return registry;
  }

  /// Parses one function whose attn.attention has `region` as its score
  /// region, with `prelude` before the op.
  AttentionOp parse(StringRef prelude, StringRef region) {
    std::string text =
        "func.func @f(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, "
        "%v: tensor<1x2x8x4xf32>, %o: tensor<1x2x8x4xf32>) -> "
        "tensor<1x2x8x4xf32> {\n" +
        prelude.str() +
        "\n  %r = attn.attention ins(%q, %k, %v : tensor<1x2x8x4xf32>, "
        "tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) outs(%o : "
        "tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> score {\n"
        "  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):\n" +
        region.str() + "\n  }\n  return %r : tensor<1x2x8x4xf32>\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module);
    AttentionOp op;
    module->walk([&](AttentionOp found) { op = found; });
    return op;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ScoreRegionFunctionTest, EvaluatesEveryArgument) {
  // s * 2 + b * 1000 + h * 100 + i * 10 + k
  AttentionOp op = parse("", R"mlir(
    %two = arith.constant 2.0 : f32
    %c1000 = arith.constant 1000 : index
    %c100 = arith.constant 100 : index
    %c10 = arith.constant 10 : index
    %x0 = arith.muli %b, %c1000 : index
    %x1 = arith.muli %h, %c100 : index
    %x2 = arith.muli %i, %c10 : index
    %x3 = arith.addi %x0, %x1 : index
    %x4 = arith.addi %x3, %x2 : index
    %x5 = arith.addi %x4, %j : index
    %xi = arith.index_cast %x5 : index to i64
    %xf = arith.sitofp %xi : i64 to f32
    %s2 = arith.mulf %s, %two : f32
    %y = arith.addf %s2, %xf : f32
    attn.yield %y : f32)mlir");
  auto function = ScoreRegionFunction::compile(op);
  ASSERT_TRUE(static_cast<bool>(function)) << toString(function.takeError());
  EXPECT_EQ((**function)(0.25f, 0, 0, 0, 0), 0.5f);
  EXPECT_EQ((**function)(-1.5f, 3, 4, 5, 6), 3456.0f - 3.0f);
  EXPECT_EQ((**function)(0.0f, 1, 0, 7, 2), 1072.0f);
}

TEST_F(ScoreRegionFunctionTest, ClonesCapturedConstantsAndMathOps) {
  // A document mask over constant ids, then tanh of the kept score.
  AttentionOp op =
      parse("  %docs = arith.constant dense<[0, 0, 0, 1, 1, 2, 2, 2]> : "
            "tensor<8xi32>\n  %hidden = arith.constant 0xFF800000 : f32",
            R"mlir(
    %di = tensor.extract %docs[%i] : tensor<8xi32>
    %dj = tensor.extract %docs[%j] : tensor<8xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %t = math.tanh %s : f32
    %y = arith.select %same, %t, %hidden : f32
    attn.yield %y : f32)mlir");
  auto function = ScoreRegionFunction::compile(op);
  ASSERT_TRUE(static_cast<bool>(function)) << toString(function.takeError());
  const float minusInf = -std::numeric_limits<float>::infinity();
  EXPECT_NEAR((**function)(0.5f, 0, 1, 0, 2), std::tanh(0.5f), 1e-6);
  EXPECT_EQ((**function)(0.5f, 0, 1, 2, 3), minusInf);
  EXPECT_NEAR((**function)(-2.0f, 0, 0, 4, 3), std::tanh(-2.0f), 1e-6);
  EXPECT_EQ((**function)(9.0f, 0, 0, 7, 4), minusInf);
  EXPECT_NEAR((**function)(1.0f, 0, 0, 7, 5), std::tanh(1.0f), 1e-6);
}

TEST_F(ScoreRegionFunctionTest, RefusesComputedCaptures) {
  AttentionOp op = parse("  %c = arith.constant 2.0 : f32\n"
                         "  %bias = arith.mulf %c, %c : f32",
                         "    %y = arith.addf %s, %bias : f32\n"
                         "    attn.yield %y : f32");
  auto function = ScoreRegionFunction::compile(op);
  ASSERT_FALSE(static_cast<bool>(function));
  std::string message = toString(function.takeError());
  EXPECT_NE(message.find("the reference evaluates the score region alone"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("uses a f32 defined outside it"), std::string::npos)
      << message;
}

} // namespace

TEST_F(ScoreRegionFunctionTest, WidenedToF64) {
  // s * 0.1 + tanh(s): in f32 the constant and every result round to f32;
  // widened, the body computes in double (the reference's derivatives of a
  // region take differences of it).
  AttentionOp op = parse("", R"mlir(
    %tenth = arith.constant 0.1 : f32
    %a = arith.mulf %s, %tenth : f32
    %t = math.tanh %s : f32
    %y = arith.addf %a, %t : f32
    attn.yield %y : f32)mlir");
  auto narrow = ScoreRegionFunction::compile(op);
  auto wide = ScoreRegionFunction::compile(op, /*widened=*/true);
  ASSERT_TRUE(static_cast<bool>(narrow)) << toString(narrow.takeError());
  ASSERT_TRUE(static_cast<bool>(wide)) << toString(wide.takeError());
  // The constant keeps its f32 value.
  double s = 0.3;
  double exact = s * static_cast<double>(0.1f) + std::tanh(s);
  EXPECT_NEAR((**wide)(s, 0, 0, 0, 0), exact, 1e-15);
  double single = (**narrow)(s, 0, 0, 0, 0);
  EXPECT_EQ(single, static_cast<double>(static_cast<float>(single)));
  EXPECT_GT(std::abs(single - exact), 1e-10);
  // A body that converts to f32 explicitly cannot be widened.
  AttentionOp converts = parse("", R"mlir(
    %d = arith.extf %s : f32 to f64
    %y = arith.truncf %d : f64 to f32
    attn.yield %y : f32)mlir");
  auto refused = ScoreRegionFunction::compile(converts, /*widened=*/true);
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_NE(toString(refused.takeError())
                .find("the score region cannot be evaluated in f64"),
            std::string::npos);
}
