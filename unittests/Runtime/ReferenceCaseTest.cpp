//===- ReferenceCaseTest.cpp - Reference cases and their GPU check --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Reference cases (lib/GpuCheck/ReferenceCase.cpp) written and read back, and
// the GPU check's use of one (runReferenceCase) on the fake CUDA driver:
// which case fits which kernel, and that the kernel's outputs are compared
// with the case's. The fake runs no kernel, so the outputs stay the NaN the
// check fills them with and the comparison fails, as it must.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"

#include "attn/GpuCheck/GpuCheck.h"
#include "attn/GpuCheck/ReferenceCase.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fake = attn::fakecuda;
namespace fs = std::filesystem;
using namespace attn::gpucheck;
using mlir::attn::NpyArray;
using mlir::attn::NpyElementType;

namespace {

// An attention kernel for run-time lengths that inlines a score region: Q,
// K, V and O of [?, 2, ?, 64] bf16 and LSE [?, 2, ?] f32.
constexpr const char *kManifest = R"({
  "format": "attn-kernel-bundle", "version": 8, "ptx": "kernels.ptx",
  "kernels": [{"name": "attn_region", "target": "sm_80", "params": [
    {"name": "Q", "type": "bf16", "shape": [null, 2, null, 64],
     "strides": [null, null, 64, 1], "alignment": 16},
    {"name": "K", "type": "bf16", "shape": [null, 2, null, 64],
     "strides": [null, null, 64, 1], "alignment": 16},
    {"name": "V", "type": "bf16", "shape": [null, 2, null, 64],
     "strides": [null, null, 64, 1], "alignment": 16},
    {"name": "O", "type": "bf16", "shape": [null, 2, null, 64],
     "strides": [null, null, 64, 1], "alignment": 16},
    {"name": "LSE", "type": "f32", "shape": [null, 2, null],
     "strides": [null, null, 1], "alignment": 4}],
    "grid": [{"param": "Q", "dim": 2, "ceil_div": 64},
             {"param": "Q", "dim": 0}, 2],
    "block": [128, 1, 1], "dynamic_shared_memory": 49152,
    "tiles": {"block_m": 64, "block_n": 64, "warps": 4, "stages": 2},
    "attention": {"scale": 0.125, "causal": false, "score_region": true}}]
})";

constexpr const char *kPtx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                             ".visible .entry attn_region(.param .u64 q, "
                             ".param .u64 k, .param .u64 v, .param .u64 o, "
                             ".param .u64 lse)\n{\n\tret;\n}\n";

/// An array of `type` and `shape` holding 0, 1, 2, ...
NpyArray counting(NpyElementType type, std::vector<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = static_cast<float>(i % 256);
  return mlir::attn::npyFromFloats(type, shape, values);
}

/// The case of attn_region with B = 2, Sq = 3, Sk = 5.
ReferenceCase regionCase() {
  ReferenceCase reference;
  reference.kernel = "attn_region";
  reference.query = counting(NpyElementType::BF16, {2, 2, 3, 64});
  reference.key = counting(NpyElementType::BF16, {2, 2, 5, 64});
  reference.value = counting(NpyElementType::BF16, {2, 2, 5, 64});
  reference.out.values = counting(NpyElementType::F32, {2, 2, 3, 64});
  reference.out.tolerance = 0.045;
  reference.out.toleranceOrigin = "2x naive bf16: 2.25e-02";
  reference.lse.emplace();
  reference.lse->values = counting(NpyElementType::F32, {2, 2, 3});
  reference.lse->tolerance = 1e-4;
  reference.lse->toleranceOrigin = "2x naive bf16: 5.00e-05";
  return reference;
}

class ReferenceCaseTest : public testing::Test {
protected:
  void SetUp() override {
    setenv("ATTNRT_LIBCUDA", ATTN_FAKE_CUDA_DRIVER, 1);
    fake::reset();
    std::string pattern =
        (fs::temp_directory_path() / "attn-reference-XXXXXX").string();
    ASSERT_TRUE(mkdtemp(pattern.data()));
    dir = pattern;
  }

  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    EXPECT_EQ(fake::liveAllocations(), 0u);
    EXPECT_EQ(fake::liveModules(), 0);
  }

  /// Runs attn_region on REFERENCE (with OPTIONS); the status's message,
  /// "" on success.
  std::string run(const ReferenceCase &reference, KernelReport &report,
                  CheckOptions options = CheckOptions()) {
    attnrt::Context context;
    EXPECT_EQ(attnrtContextCreate(0, context.out()), ATTNRT_SUCCESS);
    attnrt::Bundle bundle;
    EXPECT_EQ(attnrtBundleLoadFromMemory(context.get(), kManifest, kPtx,
                                         bundle.out()),
              ATTNRT_SUCCESS)
        << attnrtLastErrorMessage();
    attnrtKernel kernel = nullptr;
    EXPECT_EQ(attnrtBundleFindKernel(bundle.get(), "attn_region", &kernel),
              ATTNRT_SUCCESS);
    attnrt::Status status =
        runReferenceCase(context.get(), kernel, options, reference, report);
    return status.ok() ? "" : status.message;
  }

  fs::path dir;
};

TEST_F(ReferenceCaseTest, WrittenCasesReadBack) {
  ReferenceCase written = regionCase();
  written.keyLengths = counting(NpyElementType::I32, {2});
  std::string caseDir = (dir / "case").string();
  ASSERT_EQ(writeReferenceCase(caseDir, written), "");
  EXPECT_TRUE(isReferenceCase(caseDir));
  EXPECT_FALSE(isReferenceCase(dir.string()));

  ReferenceCase read;
  ASSERT_EQ(readReferenceCase(caseDir, read), "");
  EXPECT_EQ(read.kernel, "attn_region");
  // bf16 inputs are '<V2' in their files and read back as bf16.
  EXPECT_EQ(read.query.elementType, NpyElementType::BF16);
  EXPECT_EQ(read.query.data, written.query.data);
  EXPECT_EQ(read.key.shape, written.key.shape);
  EXPECT_EQ(read.value.data, written.value.data);
  EXPECT_FALSE(read.mask);
  EXPECT_FALSE(read.blockMask);
  ASSERT_TRUE(read.keyLengths);
  EXPECT_EQ(read.keyLengths->data, written.keyLengths->data);
  EXPECT_EQ(read.out.values.data, written.out.values.data);
  EXPECT_EQ(read.out.tolerance, 0.045);
  EXPECT_EQ(read.out.toleranceOrigin, "2x naive bf16: 2.25e-02");
  ASSERT_TRUE(read.lse);
  EXPECT_EQ(read.lse->tolerance, 1e-4);

  // Written again without key lengths and LSE, the old files go.
  written.keyLengths.reset();
  written.lse.reset();
  ASSERT_EQ(writeReferenceCase(caseDir, written), "");
  ReferenceCase again;
  ASSERT_EQ(readReferenceCase(caseDir, again), "");
  EXPECT_FALSE(again.keyLengths);
  EXPECT_FALSE(again.lse);
  EXPECT_FALSE(fs::exists(fs::path(caseDir) / "lse.npy"));
}

TEST_F(ReferenceCaseTest, BrokenCasesAreRefusedWithTheReason) {
  std::string caseDir = (dir / "case").string();
  auto readError = [&] {
    ReferenceCase read;
    return readReferenceCase(caseDir, read);
  };
  auto describe = [&](const std::string &json) {
    std::ofstream(fs::path(caseDir) / "reference.json") << json;
  };
  EXPECT_NE(readError().find("reference.json"), std::string::npos);

  ASSERT_EQ(writeReferenceCase(caseDir, regionCase()), "");
  describe("[1, 2]");
  EXPECT_NE(readError().find("not a JSON object"), std::string::npos);
  describe(R"({"format": 2, "kernel": "attn_region"})");
  EXPECT_NE(readError().find("format 2; this attn-launch reads format 1"),
            std::string::npos);
  describe(R"({"format": 1, "kernel": ""})");
  EXPECT_NE(readError().find("\"kernel\" must name the kernel"),
            std::string::npos);
  describe(R"({"format": 1, "kernel": "attn_region", "outputs": {"O": {}}})");
  EXPECT_NE(readError().find("outputs.O needs a number \"tolerance\""),
            std::string::npos);
  describe(R"({"format": 1, "kernel": "attn_region", "outputs":
      {"O": {"tolerance": -1, "tolerance_origin": "f32"}}})");
  EXPECT_NE(readError().find("outputs.O.tolerance must be positive"),
            std::string::npos);
  describe(R"({"format": 1, "kernel": "attn_region", "outputs":
      {"O": {"tolerance": 1e-5, "tolerance_origin": "f32"}}})");
  EXPECT_NE(readError().find("lse.npy is there, but outputs.LSE is not"),
            std::string::npos);

  // Arrays that do not make one attention.
  ReferenceCase wrong = regionCase();
  wrong.key = counting(NpyElementType::F16, {2, 2, 5, 64});
  ASSERT_EQ(writeReferenceCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("not one attention: Q, K and V differ in "
                             "element type"),
            std::string::npos);
  wrong = regionCase();
  wrong.value = counting(NpyElementType::BF16, {2, 2, 4, 64});
  ASSERT_EQ(writeReferenceCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("not one attention: Q [2, 2, 3, 64], K [2, 2, "
                             "5, 64], V [2, 2, 4, 64]"),
            std::string::npos);
  wrong = regionCase();
  wrong.out.values = counting(NpyElementType::F32, {2, 2, 3, 32});
  ASSERT_EQ(writeReferenceCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("O has shape [2, 2, 3, 32], expected [2, 2, 3, "
                             "64]"),
            std::string::npos);
  fs::remove(fs::path(caseDir) / "v.npy");
  EXPECT_NE(readError().find("v.npy"), std::string::npos);
}

/// A backward kernel's case: GQA 2:1, Sq = 3, Sk = 5, D = 64, Dv = 32.
GradientCase gradientCase() {
  GradientCase reference;
  reference.kernel = "attn_grad";
  reference.query = counting(NpyElementType::BF16, {1, 2, 3, 64});
  reference.key = counting(NpyElementType::BF16, {1, 1, 5, 64});
  reference.value = counting(NpyElementType::BF16, {1, 1, 5, 32});
  reference.out = counting(NpyElementType::BF16, {1, 2, 3, 32});
  reference.lse = counting(NpyElementType::F32, {1, 2, 3});
  reference.gradOut = counting(NpyElementType::BF16, {1, 2, 3, 32});
  for (auto [output, shape] :
       {std::pair{&reference.gradQuery, std::vector<int64_t>{1, 2, 3, 64}},
        std::pair{&reference.gradKey, std::vector<int64_t>{1, 1, 5, 64}},
        std::pair{&reference.gradValue, std::vector<int64_t>{1, 1, 5, 32}}}) {
    output->values = counting(NpyElementType::F32, shape);
    output->tolerance = 7e-3;
    output->toleranceOrigin = "2x naive bf16: 3.50e-03";
  }
  return reference;
}

TEST_F(ReferenceCaseTest, GradientCasesReadBackAndBrokenOnesAreRefused) {
  std::string caseDir = (dir / "grad").string();
  ASSERT_EQ(writeGradientCase(caseDir, gradientCase()), "");
  EXPECT_TRUE(isReferenceCase(caseDir));
  EXPECT_TRUE(isGradientCase(caseDir));
  GradientCase read;
  ASSERT_EQ(readGradientCase(caseDir, read), "");
  EXPECT_EQ(read.kernel, "attn_grad");
  EXPECT_EQ(read.query.elementType, NpyElementType::BF16);
  EXPECT_EQ(read.gradOut.data, gradientCase().gradOut.data);
  EXPECT_EQ(read.lse.shape, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(read.gradKey.values.data, gradientCase().gradKey.values.data);
  EXPECT_EQ(read.gradValue.tolerance, 7e-3);
  EXPECT_EQ(read.gradQuery.toleranceOrigin, "2x naive bf16: 3.50e-03");
  EXPECT_FALSE(read.keyLengths);
  // With key lengths ([B] int32), and without them again: the old file
  // goes.
  GradientCase withLengths = gradientCase();
  withLengths.keyLengths = counting(NpyElementType::I32, {1});
  ASSERT_EQ(writeGradientCase(caseDir, withLengths), "");
  GradientCase readLengths;
  ASSERT_EQ(readGradientCase(caseDir, readLengths), "");
  ASSERT_TRUE(readLengths.keyLengths);
  EXPECT_EQ(readLengths.keyLengths->data, withLengths.keyLengths->data);
  withLengths.keyLengths = counting(NpyElementType::I32, {2});
  ASSERT_EQ(writeGradientCase(caseDir, withLengths), "");
  EXPECT_NE(readGradientCase(caseDir, readLengths)
                .find("the key lengths have shape [2], expected [1]"),
            std::string::npos);
  ASSERT_EQ(writeGradientCase(caseDir, gradientCase()), "");
  EXPECT_FALSE(fs::exists(fs::path(caseDir) / "key_lengths.npy"));
  // With a mask operand, broadcast over the heads ([B, 1, Sq, Sk]), read in
  // its own type; one of another attention's rows is refused.
  GradientCase withMask = gradientCase();
  withMask.mask = counting(NpyElementType::Bool, {1, 1, 3, 5});
  ASSERT_EQ(writeGradientCase(caseDir, withMask), "");
  GradientCase readMask;
  ASSERT_EQ(readGradientCase(caseDir, readMask), "");
  ASSERT_TRUE(readMask.mask);
  EXPECT_EQ(readMask.mask->elementType, NpyElementType::Bool);
  EXPECT_EQ(readMask.mask->data, withMask.mask->data);
  withMask.mask = counting(NpyElementType::F32, {1, 2, 4, 5});
  ASSERT_EQ(writeGradientCase(caseDir, withMask), "");
  EXPECT_NE(readGradientCase(caseDir, readMask)
                .find("the mask has shape [1, 2, 4, 5], expected [B, Hq, Sq, "
                      "Sk] = [1, 2, 3, 5] (its batch and head dimensions may "
                      "be 1)"),
            std::string::npos);
  // With a block mask parameter (int8, its blocks the kernel's); one of
  // another batch is refused.
  GradientCase withBlocks = gradientCase();
  withBlocks.blockMask = counting(NpyElementType::I8, {1, 2, 1, 1});
  ASSERT_EQ(writeGradientCase(caseDir, withBlocks), "");
  GradientCase readBlocks;
  ASSERT_EQ(readGradientCase(caseDir, readBlocks), "");
  ASSERT_TRUE(readBlocks.blockMask);
  EXPECT_EQ(readBlocks.blockMask->data, withBlocks.blockMask->data);
  withBlocks.blockMask = counting(NpyElementType::I8, {3, 1, 1, 1});
  ASSERT_EQ(writeGradientCase(caseDir, withBlocks), "");
  EXPECT_NE(readGradientCase(caseDir, readBlocks)
                .find("the block mask has shape [3, 1, 1, 1], expected [B, "
                      "Hq, Nq, Nk] with B = 1 and Hq = 2 (or 1)"),
            std::string::npos);
  ASSERT_EQ(writeGradientCase(caseDir, gradientCase()), "");
  EXPECT_FALSE(fs::exists(fs::path(caseDir) / "mask.npy"));

  auto readError = [&] {
    GradientCase again;
    return readGradientCase(caseDir, again);
  };
  // A forward kernel's case is not a gradient case, and the other way.
  std::string forwardDir = (dir / "forward").string();
  ASSERT_EQ(writeReferenceCase(forwardDir, regionCase()), "");
  EXPECT_FALSE(isGradientCase(forwardDir));
  GradientCase notOne;
  EXPECT_NE(readGradientCase(forwardDir, notOne)
                .find("a forward kernel's case, not a backward one"),
            std::string::npos);
  // Arrays that do not make one attention's gradient.
  GradientCase wrong = gradientCase();
  wrong.key = counting(NpyElementType::BF16, {1, 1, 5, 32});
  ASSERT_EQ(writeGradientCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("not one attention: Q [1, 2, 3, 64], K [1, 1, "
                             "5, 32], V [1, 1, 5, 32]"),
            std::string::npos);
  wrong = gradientCase();
  wrong.gradKey.values = counting(NpyElementType::F32, {1, 2, 5, 64});
  ASSERT_EQ(writeGradientCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("not one attention's gradient: an array has "
                             "shape [1, 2, 5, 64], expected [1, 1, 5, 64]"),
            std::string::npos);
  wrong = gradientCase();
  wrong.lse = counting(NpyElementType::F32, {1, 2, 4});
  ASSERT_EQ(writeGradientCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("expected [1, 2, 3]"), std::string::npos);
  wrong = gradientCase();
  wrong.gradValue.tolerance = 0;
  ASSERT_EQ(writeGradientCase(caseDir, wrong), "");
  EXPECT_NE(readError().find("outputs.dV.tolerance must be positive"),
            std::string::npos);
  ASSERT_EQ(writeGradientCase(caseDir, gradientCase()), "");
  fs::remove(fs::path(caseDir) / "do.npy");
  EXPECT_NE(readError().find("do.npy"), std::string::npos);
}

TEST(KernelReportTest, FlopsOfForwardAndBackwardKernels) {
  KernelReport report;
  report.sizes = {1, 2, 2, 100, 200, 64, 64};
  EXPECT_EQ(report.flops(), 4.0 * 2 * 100 * 200 * 64);
  report.attention.causal = true;
  EXPECT_EQ(report.flops(), 2.0 * 2 * 100 * 200 * 64);
  // A backward pass: five products to the forward's two.
  report.gradient = true;
  EXPECT_EQ(report.flops(), 2.5 * 2.0 * 2 * 100 * 200 * 64);
}

TEST_F(ReferenceCaseTest, TheKernelRunsOnTheCaseAndIsComparedWithIt) {
  KernelReport report;
  ASSERT_EQ(run(regionCase(), report), "");
  // The lengths are the case's.
  EXPECT_EQ(report.sizes.batch, 2);
  EXPECT_EQ(report.sizes.queryLen, 3);
  EXPECT_EQ(report.sizes.keyLen, 5);
  EXPECT_TRUE(report.unchecked.empty()) << report.unchecked;
  ASSERT_EQ(report.checks.size(), 3u);
  EXPECT_EQ(report.checks[0].name, "repeat");
  const OutputCheck &out = report.checks[1];
  EXPECT_EQ(out.name, "O");
  EXPECT_EQ(out.tolerance, 0.045);
  EXPECT_EQ(out.toleranceOrigin, "reference case, 2x naive bf16: 2.25e-02");
  // The fake ran nothing: every element is the NaN the outputs were filled
  // with, and the check fails.
  EXPECT_EQ(out.nanCount, 2 * 2 * 3 * 64);
  EXPECT_FALSE(out.passed);
  EXPECT_EQ(report.checks[2].name, "LSE");
  EXPECT_EQ(report.checks[2].nanCount, 2 * 2 * 3);

  CheckOptions tolerant;
  tolerant.tolerance = 0.5;
  KernelReport overridden;
  ASSERT_EQ(run(regionCase(), overridden, tolerant), "");
  EXPECT_EQ(overridden.checks[1].tolerance, 0.5);
  EXPECT_EQ(overridden.checks[1].toleranceOrigin,
            "--tolerance; reference case");

  // Without a case, the GPU reference cannot check a score region.
  attnrt::Context context;
  ASSERT_EQ(attnrtContextCreate(0, context.out()), ATTNRT_SUCCESS);
  attnrt::Bundle bundle;
  ASSERT_EQ(
      attnrtBundleLoadFromMemory(context.get(), kManifest, kPtx, bundle.out()),
      ATTNRT_SUCCESS);
  attnrtKernel kernel = nullptr;
  ASSERT_EQ(attnrtBundleFindKernel(bundle.get(), "attn_region", &kernel),
            ATTNRT_SUCCESS);
  CheckOptions lengths;
  lengths.lengths = CheckOptions::Lengths{2, 3, 5};
  // The case's inputs: seeded ones would load the GPU check's own kernels,
  // which stay loaded for the process.
  ReferenceCase inputs = regionCase();
  HostInputs given;
  given.query = inputs.query.data.data();
  given.key = inputs.key.data.data();
  given.value = inputs.value.data.data();
  KernelReport unchecked;
  ASSERT_TRUE(runKernel(context.get(), kernel, lengths, given, unchecked).ok());
  EXPECT_NE(unchecked.unchecked.find("check it against a reference case"),
            std::string::npos);
  EXPECT_EQ(unchecked.checks.size(), 1u);
}

TEST_F(ReferenceCaseTest, ACaseMustFitItsKernel) {
  KernelReport report;
  ReferenceCase other = regionCase();
  other.kernel = "attn_other";
  EXPECT_EQ(run(other, report),
            "the reference case of kernel attn_other does not fit kernel "
            "attn_region: it checks another kernel");

  ReferenceCase halfKeys = regionCase();
  halfKeys.key = counting(NpyElementType::F16, {2, 2, 5, 64});
  halfKeys.value = counting(NpyElementType::F16, {2, 2, 5, 64});
  halfKeys.query = counting(NpyElementType::F16, {2, 2, 3, 64});
  EXPECT_NE(run(halfKeys, report).find("Q holds f16, the kernel takes bf16"),
            std::string::npos);

  ReferenceCase narrow = regionCase();
  narrow.out.values = counting(NpyElementType::F32, {2, 2, 3, 32});
  EXPECT_NE(run(narrow, report)
                .find("O has shape [2, 2, 3, 32], the "
                      "kernel's is [2, 2, 3, 64]"),
            std::string::npos);

  ReferenceCase withoutLse = regionCase();
  withoutLse.lse.reset();
  EXPECT_NE(run(withoutLse, report)
                .find("the kernel has an LSE, the case has "
                      "none"),
            std::string::npos);

  ReferenceCase masked = regionCase();
  masked.mask = counting(NpyElementType::Bool, {2, 1, 3, 5});
  EXPECT_NE(run(masked, report)
                .find("the case has a mask, the kernel has "
                      "none"),
            std::string::npos);

  CheckOptions lengths;
  lengths.lengths = CheckOptions::Lengths{1, 1, 1};
  EXPECT_EQ(run(regionCase(), report, lengths),
            "the reference case of kernel attn_region fixes the lengths: "
            "give no --lengths");
}

} // namespace
