//===- AttnAttrsTest.cpp - C++ API of the attn attributes ------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnAttrsTest : testing::Test {
  AttnAttrsTest() { context.loadDialect<AttnDialect>(); }
  MLIRContext context;
};

TEST_F(AttnAttrsTest, TargetComputeCapability) {
  auto parse = [&](StringRef text) {
    return cast<TargetAttr>(parseAttribute(text, &context));
  };
  TargetAttr h100 = parse(
      "#attn.target<chip = \"sm_90a\", sms = 132, smem_per_block = 232448, "
      "smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>");
  EXPECT_EQ(h100.getComputeCapability(), 90);
  EXPECT_TRUE(h100.isArchSpecific());
  // Typed arguments select the generated builder over the storage template.
  int64_t sms = 108, smemPerBlock = 166912, smemPerSm = 167936,
          regsPerSm = 65536, regsPerThread = 255;
  TargetAttr a100 = TargetAttr::get(&context, StringRef("sm_80"), sms,
                                    smemPerBlock, smemPerSm, regsPerSm,
                                    regsPerThread);
  EXPECT_EQ(a100.getComputeCapability(), 80);
  EXPECT_FALSE(a100.isArchSpecific());
}

TEST_F(AttnAttrsTest, GetCheckedRejectsWithDiagnostic) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto emitError = [&] {
    return mlir::emitError(UnknownLoc::get(&context));
  };
  int64_t blockM = 128, blockN = 64, badWarps = 3, warps = 4, stages = 2,
          packed = 1, badPacked = 0;
  EXPECT_FALSE(Fa2TilesAttr::getChecked(emitError, &context, blockM, blockN,
                                        badWarps, stages, packed));
  EXPECT_EQ(message, "warps must be a power of two from 1 to 16, got 3");
  EXPECT_FALSE(Fa2TilesAttr::getChecked(emitError, &context, blockM, blockN,
                                        warps, stages, badPacked));
  EXPECT_EQ(message, "packed_heads must be from 1 to 4096, got 0");
  int64_t one = 1;
  EXPECT_FALSE(TargetAttr::getChecked(emitError, &context, StringRef("gfx90a"),
                                      one, one, one, one, one));
  EXPECT_NE(message.find("NVPTX architecture"), std::string::npos);
  Fa2TilesAttr tiles = Fa2TilesAttr::getChecked(emitError, &context, blockM,
                                                blockN, warps, stages, packed);
  ASSERT_TRUE(tiles);
  EXPECT_EQ(tiles.getRowsPerWarp(), 32);
}

} // namespace
