//===- AttnCApiTest.cpp - The C API's checks and run-time lengths ---------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What a C caller (and the Python package over it) gets from include/attn-c:
// a spec refused field by field before anything is built, one compiled
// attention of run-time lengths run at several batch sizes and lengths
// against the float64 reference (lib/Reference, which shares no code with
// the compiler), and the runs it refuses. Also the counts the spec builder
// under it (lib/Execution/AttentionSpec.cpp, attn-run's too) checks before
// anything computes with them.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Attn.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Execution/AttentionSpec.h"
#include "attn/Reference/ReferenceAttention.h"
#include "attn/Reference/ReferenceAttentionGrad.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

/// The message of a failed call, freed.
std::string take(char *error) {
  std::string message = error ? error : "";
  attnStringFree(error);
  return message;
}

AttnAttentionSpec gqaSpec() {
  AttnAttentionSpec spec{};
  spec.batch = 1;
  spec.query_heads = 4;
  spec.kv_heads = 2;
  spec.query_len = 1;
  spec.key_len = 1;
  spec.head_dim = 16;
  spec.value_dim = 8;
  spec.dtype = "f32";
  spec.causal = true;
  spec.with_lse = true;
  return spec;
}

TEST(AttnCApi, SpecCheckNamesTheField) {
  struct Case {
    void (*edit)(AttnAttentionSpec &);
    const char *message;
  };
  const Case cases[] = {
      {[](AttnAttentionSpec &s) { s.batch = 0; },
       "batch must be from 1 to 2^62, got 0"},
      {[](AttnAttentionSpec &s) { s.key_len = INT64_MAX; },
       "key_len must be from 1 to 2^62, got 9223372036854775807"},
      {[](AttnAttentionSpec &s) { s.kv_heads = 3; },
       "heads (4) must be a multiple of kv_heads (3)"},
      {[](AttnAttentionSpec &s) { s.dtype = "f64"; },
       "dtype must be f32, f16 or bf16, got 'f64'"},
      {[](AttnAttentionSpec &s) { s.dtype = nullptr; },
       "dtype must be f32, f16 or bf16, got none"},
      {[](AttnAttentionSpec &s) {
         s.has_scale = true;
         s.scale = NAN;
       },
       "scale must be positive and finite"},
      {[](AttnAttentionSpec &s) {
         s.has_softcap = true;
         s.softcap = -1;
       },
       "softcap must be positive and finite, got -1"},
      {[](AttnAttentionSpec &s) {
         s.has_window = true;
         s.window_left = -1;
       },
       "window sides must not be negative, got (-1, 0)"},
      {[](AttnAttentionSpec &s) {
         s.block_rows = 16;
         s.block_keys = (int64_t(1) << 62) + 1;
       },
       "block_keys must be from 1 to 2^62"},
  };
  for (const Case &c : cases) {
    AttnAttentionSpec spec = gqaSpec();
    c.edit(spec);
    char *error = nullptr;
    EXPECT_FALSE(attnAttentionSpecCheck(&spec, &error));
    EXPECT_NE(take(error).find(c.message), std::string::npos) << c.message;
    // The compile functions refuse it the same way, before building.
    error = nullptr;
    EXPECT_EQ(attnCpuAttentionCompile(&spec, &error), nullptr);
    EXPECT_NE(take(error).find(c.message), std::string::npos) << c.message;
  }
  AttnAttentionSpec good = gqaSpec();
  EXPECT_TRUE(attnAttentionSpecCheck(&good, nullptr));
}

std::vector<float> randomValues(size_t count, std::mt19937 &rng) {
  std::normal_distribution<float> normal;
  std::vector<float> values(count);
  for (float &v : values)
    v = normal(rng);
  return values;
}

/// One compilation of run-time lengths serves every (B, Sq, Sk), each run
/// checked against the float64 reference.
TEST(AttnCApi, RunTimeLengthsCompileOnce) {
  AttnAttentionSpec spec = gqaSpec();
  spec.run_time_lengths = true;
  char *error = nullptr;
  AttnCpuAttentionRef attention = attnCpuAttentionCompile(&spec, &error);
  ASSERT_NE(attention, nullptr) << take(error);
  std::mt19937 rng(7);
  for (AttnAttentionLengths lengths :
       {AttnAttentionLengths{1, 1, 1}, AttnAttentionLengths{2, 1, 37},
        AttnAttentionLengths{3, 5, 64}, AttnAttentionLengths{1, 9, 4}}) {
    mlir::attn::AttentionSizes shape{
        lengths.batch,   spec.query_heads, spec.kv_heads, lengths.query_len,
        lengths.key_len, spec.head_dim,    spec.value_dim};
    std::vector<float> q = randomValues(
        shape.batch * shape.queryHeads * shape.queryLen * shape.headDim, rng);
    std::vector<float> k = randomValues(
        shape.batch * shape.kvHeads * shape.keyLen * shape.headDim, rng);
    std::vector<float> v = randomValues(
        shape.batch * shape.kvHeads * shape.keyLen * shape.valueDim, rng);
    std::vector<float> o(shape.batch * shape.queryHeads * shape.queryLen *
                         shape.valueDim);
    std::vector<float> lse(shape.batch * shape.queryHeads * shape.queryLen);
    ASSERT_TRUE(attnCpuAttentionRun(attention, &lengths, q.data(), k.data(),
                                    v.data(), nullptr, nullptr, nullptr,
                                    o.data(), lse.data(), &error))
        << take(error);
    mlir::attn::reference::AttentionOptions options;
    options.scale = 1 / std::sqrt(double(spec.head_dim));
    options.causal = true;
    auto wide = [](const std::vector<float> &x) {
      return std::vector<double>(x.begin(), x.end());
    };
    auto expected = mlir::attn::reference::referenceAttention(
        shape, wide(q), wide(k), wide(v), options);
    ASSERT_TRUE(static_cast<bool>(expected));
    for (size_t i = 0; i < o.size(); ++i)
      ASSERT_NEAR(o[i], expected->out[i], 1e-5) << "O[" << i << "]";
    for (size_t i = 0; i < lse.size(); ++i) {
      if (std::isinf(expected->lse[i]))
        ASSERT_TRUE(std::isinf(lse[i]) && lse[i] < 0) << "LSE[" << i << "]";
      else
        ASSERT_NEAR(lse[i], expected->lse[i], 1e-5) << "LSE[" << i << "]";
    }
  }
  // Lengths are required, and positive.
  float dummy[1];
  EXPECT_FALSE(attnCpuAttentionRun(attention, nullptr, dummy, dummy, dummy,
                                   nullptr, nullptr, nullptr, dummy, dummy,
                                   &error));
  EXPECT_NE(take(error).find("give the run's lengths"), std::string::npos);
  AttnAttentionLengths empty{1, 1, 0};
  EXPECT_FALSE(attnCpuAttentionRun(attention, &empty, dummy, dummy, dummy,
                                   nullptr, nullptr, nullptr, dummy, dummy,
                                   &error));
  EXPECT_NE(take(error).find("the run's key_len must be from 1 to 2^62, got 0"),
            std::string::npos);
  attnCpuAttentionDestroy(attention);
}

/// The gradient through the C API, with run-time lengths, against the
/// float64 reference gradient; missing and extra buffers are refused.
TEST(AttnCApi, GradientOfRunTimeLengths) {
  AttnAttentionSpec spec = gqaSpec();
  spec.run_time_lengths = true;
  char *error = nullptr;
  AttnCpuAttentionRef attention = attnCpuAttentionCompile(&spec, &error);
  ASSERT_NE(attention, nullptr) << take(error);
  AttnCpuAttentionGradRef grad =
      attnCpuAttentionGradCompile(&spec, /*mask_grad=*/false,
                                  /*deterministic=*/true, &error);
  ASSERT_NE(grad, nullptr) << take(error);
  std::mt19937 rng(11);
  for (AttnAttentionLengths lengths :
       {AttnAttentionLengths{2, 3, 37}, AttnAttentionLengths{1, 40, 9}}) {
    mlir::attn::AttentionSizes shape{
        lengths.batch,   spec.query_heads, spec.kv_heads, lengths.query_len,
        lengths.key_len, spec.head_dim,    spec.value_dim};
    int64_t rows = shape.batch * shape.queryHeads * shape.queryLen;
    int64_t keys = shape.batch * shape.kvHeads * shape.keyLen;
    std::vector<float> q = randomValues(rows * shape.headDim, rng);
    std::vector<float> k = randomValues(keys * shape.headDim, rng);
    std::vector<float> v = randomValues(keys * shape.valueDim, rng);
    std::vector<float> gradOut = randomValues(rows * shape.valueDim, rng);
    std::vector<float> o(rows * shape.valueDim), lse(rows);
    ASSERT_TRUE(attnCpuAttentionRun(attention, &lengths, q.data(), k.data(),
                                    v.data(), nullptr, nullptr, nullptr,
                                    o.data(), lse.data(), &error))
        << take(error);
    std::vector<float> dq(q.size()), dk(k.size()), dv(v.size());
    ASSERT_TRUE(attnCpuAttentionGradRun(
        grad, &lengths, q.data(), k.data(), v.data(), o.data(), lse.data(),
        gradOut.data(), nullptr, nullptr, nullptr, dq.data(), dk.data(),
        dv.data(), nullptr, &error))
        << take(error);
    mlir::attn::reference::AttentionOptions options;
    options.scale = 1 / std::sqrt(double(spec.head_dim));
    options.causal = true;
    auto wide = [](const std::vector<float> &x) {
      return std::vector<double>(x.begin(), x.end());
    };
    auto expected = mlir::attn::reference::referenceAttentionGrad(
        shape, wide(q), wide(k), wide(v), wide(gradOut), options);
    ASSERT_TRUE(static_cast<bool>(expected));
    for (auto [name, got, exact] :
         {std::tuple("dQ", &dq, &expected->dQuery),
          std::tuple("dK", &dk, &expected->dKey),
          std::tuple("dV", &dv, &expected->dValue)})
      for (size_t i = 0; i < got->size(); ++i)
        ASSERT_NEAR((*got)[i], (*exact)[i], 1e-4) << name << "[" << i << "]";
  }
  float dummy[1];
  AttnAttentionLengths lengths{1, 1, 1};
  EXPECT_FALSE(attnCpuAttentionGradRun(grad, &lengths, dummy, dummy, dummy,
                                       dummy, dummy, nullptr, nullptr,
                                       nullptr, nullptr, dummy, dummy, dummy,
                                       nullptr, &error));
  EXPECT_NE(take(error).find("a buffer is missing (Q, K, V, O, LSE, dO"),
            std::string::npos);
  EXPECT_FALSE(attnCpuAttentionGradRun(grad, &lengths, dummy, dummy, dummy,
                                       dummy, dummy, dummy, dummy, nullptr,
                                       nullptr, dummy, dummy, dummy, nullptr,
                                       &error));
  EXPECT_NE(take(error).find("a buffer is missing or extra"),
            std::string::npos);
  EXPECT_FALSE(attnCpuAttentionGradRun(grad, nullptr, dummy, dummy, dummy,
                                       dummy, dummy, dummy, nullptr, nullptr,
                                       nullptr, dummy, dummy, dummy, nullptr,
                                       &error));
  EXPECT_NE(take(error).find("give the run's lengths"), std::string::npos);
  // A mask's gradient needs an additive mask.
  EXPECT_EQ(attnCpuAttentionGradCompile(&spec, /*mask_grad=*/true,
                                        /*deterministic=*/false, &error),
            nullptr);
  EXPECT_NE(take(error).find("mask_grad: the gradient of a mask is that of an "
                             "additive mask, and the spec has none"),
            std::string::npos);
  attnCpuAttentionGradDestroy(grad);
  attnCpuAttentionDestroy(attention);
}

TEST(AttnCApi, StaticLengthsRefuseOthers) {
  AttnAttentionSpec spec = gqaSpec();
  spec.key_len = 8;
  char *error = nullptr;
  AttnCpuAttentionRef attention = attnCpuAttentionCompile(&spec, &error);
  ASSERT_NE(attention, nullptr) << take(error);
  std::vector<float> buffer(4 * 8 * 16);
  AttnAttentionLengths other{1, 1, 9};
  EXPECT_FALSE(attnCpuAttentionRun(attention, &other, buffer.data(),
                                   buffer.data(), buffer.data(), nullptr,
                                   nullptr, nullptr, buffer.data(),
                                   buffer.data(), &error));
  EXPECT_NE(take(error).find("compiled for B = 1, Sq = 1, Sk = 8"),
            std::string::npos);
  AttnAttentionLengths same{1, 1, 8};
  EXPECT_TRUE(attnCpuAttentionRun(attention, &same, buffer.data(),
                                  buffer.data(), buffer.data(), nullptr,
                                  nullptr, nullptr, buffer.data(),
                                  buffer.data(), &error));
  attnCpuAttentionDestroy(attention);
}

TEST(AttnCApi, GpuGradientBundle) {
  AttnAttentionSpec spec = gqaSpec();
  spec.query_len = 100;
  spec.key_len = 150;
  spec.head_dim = spec.value_dim = 64;
  spec.dtype = "bf16";
  spec.with_lse = false;
  AttnGpuTarget target{"sm_80", 108, 166912};
  char *manifest = nullptr, *ptx = nullptr, *error = nullptr;
  ASSERT_TRUE(
      attnGpuAttentionGradCompile(&spec, &target, &manifest, &ptx, &error))
      << take(error);
  std::string text = take(manifest);
  EXPECT_NE(take(ptx).find(".entry attention_grad_attention_grad0"),
            std::string::npos);
  // One kernel: the backward one, of the nine tensors.
  EXPECT_NE(text.find("\"gradient\": true"), std::string::npos) << text;
  EXPECT_EQ(text.find("\"name\": \"attention_grad_attention0\""),
            std::string::npos);
  for (const char *name : {"\"LSE\"", "\"dO\"", "\"dQ\"", "\"dK\"", "\"dV\""})
    EXPECT_NE(text.find(name), std::string::npos) << name;
  // A mask is the kernel's parameter after dV.
  spec.mask_dtype = "i1";
  spec.mask_batch = spec.mask_heads = 1;
  ASSERT_TRUE(
      attnGpuAttentionGradCompile(&spec, &target, &manifest, &ptx, &error))
      << take(error);
  take(ptx);
  text = take(manifest);
  EXPECT_LT(text.find("\"dV\""), text.find("\"mask\"")) << text;
  // What the kernel does not take is refused with the reason: block-mask
  // blocks its tiles do not nest in.
  spec.block_rows = spec.block_keys = 32;
  spec.block_mask_batch = spec.block_mask_heads = 1;
  EXPECT_FALSE(
      attnGpuAttentionGradCompile(&spec, &target, &manifest, &ptx, &error));
  std::string refusal = take(error);
  EXPECT_NE(refusal.find("cannot compile the gradient of the attention for "
                         "sm_80"),
            std::string::npos)
      << refusal;
  EXPECT_NE(refusal.find("multiples of 64"), std::string::npos) << refusal;
}

/// The target's counts are checked as an #attn.target's are, and the SM's
/// shared memory (the block's and the bytes reserved per block) is summed
/// without overflowing: the schedules multiply them.
TEST(AttnCApi, GpuTargetCountsAreChecked) {
  AttnAttentionSpec spec = gqaSpec();
  spec.query_len = spec.key_len = 64;
  spec.head_dim = spec.value_dim = 64;
  spec.dtype = "bf16";
  struct Case {
    AttnGpuTarget target;
    const char *message;
  };
  const Case cases[] = {
      {{"sm_80", INT64_MAX, 166912},
       "sms must be at most 2147483647, got 9223372036854775807"},
      {{"sm_80", 108, INT64_MAX},
       "smem_per_block (9223372036854775807) and the 1024 bytes reserved per "
       "block overflow"},
      {{"sm_80", 108, INT32_MAX},
       "smem_per_sm must be at most 2147483647, got 2147484671"},
  };
  for (const Case &c : cases) {
    char *manifest = nullptr, *ptx = nullptr, *error = nullptr;
    EXPECT_FALSE(
        attnGpuAttentionCompile(&spec, &c.target, &manifest, &ptx, &error));
    EXPECT_NE(take(error).find(c.message), std::string::npos) << c.message;
  }
}

/// The mask's gradient keeps f32 scores [B, Hq, Sq, Sk]: of run-time
/// lengths, a run whose operands all fit is refused when those do not, here
/// 2^67 bytes, which would wrap to 0 in the compiled code.
TEST(AttnCApi, MaskGradientScoresAreBounded) {
  AttnAttentionSpec spec = gqaSpec();
  spec.run_time_lengths = true;
  spec.mask_dtype = "f32";
  spec.mask_batch = spec.mask_heads = 1;
  char *error = nullptr;
  AttnCpuAttentionGradRef grad = attnCpuAttentionGradCompile(
      &spec, /*mask_grad=*/true, /*deterministic=*/false, &error);
  ASSERT_NE(grad, nullptr) << take(error);
  // Q [2^17, 4, 2^23, 16] f32 is 2^48 bytes, the mask [1, 1, 2^23, 2^23]
  // 2^48.
  AttnAttentionLengths lengths{int64_t(1) << 17, int64_t(1) << 23,
                               int64_t(1) << 23};
  float dummy[1];
  EXPECT_FALSE(attnCpuAttentionGradRun(
      grad, &lengths, dummy, dummy, dummy, dummy, dummy, dummy, dummy,
      nullptr, nullptr, dummy, dummy, dummy, dummy, &error));
  EXPECT_NE(take(error).find("dMask's f32 scores [B, Hq, Sq, Sk] = [131072, "
                             "4, 8388608, 8388608] hold more than 2^48 bytes"),
            std::string::npos);
  attnCpuAttentionGradDestroy(grad);
}

/// What buildAttention refuses before anything computes with a spec's
/// counts: `message` for the spec `edit` makes of attn-run's default.
void expectBuildRefuses(void (*edit)(mlir::attn::AttentionSpec &),
                        const char *message) {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(&context));
  mlir::attn::AttentionSpec spec;
  edit(spec);
  llvm::Expected<mlir::attn::AttentionOp> op =
      mlir::attn::buildAttention(*module, spec);
  ASSERT_FALSE(static_cast<bool>(op)) << message;
  EXPECT_NE(llvm::toString(op.takeError()).find(message), std::string::npos)
      << message;
}

/// The partition's counts are bounded as the parser bounds them (the op's
/// verifier checks no attribute): the schedules multiply them.
TEST(AttnSpec, PartitionCountsAreChecked) {
  expectBuildRefuses([](mlir::attn::AttentionSpec &s) { s.splits = INT64_MAX; },
                     "splits must be at most 2147483647, got "
                     "9223372036854775807");
  expectBuildRefuses(
      [](mlir::attn::AttentionSpec &s) { s.leanCtas = INT64_MAX; },
      "ctas must be at most 2147483647, got 9223372036854775807");
  expectBuildRefuses(
      [](mlir::attn::AttentionSpec &s) { s.ringDevices = INT64_MAX; },
      "devices must be at most 2147483647, got 9223372036854775807");
  expectBuildRefuses(
      [](mlir::attn::AttentionSpec &s) { s.attention2d = {1 << 16, 1 << 16}; },
      "q_parts x kv_parts must be at most 2147483647 ranks, got 65536 x "
      "65536");
}

/// Packed heads choose tiles from a verified attention only: choosing them
/// multiplies the query heads per key/value head by Sq, here 2^40 x 2^40
/// (an overflow the sanitizers report), where Q's 2^86 elements are refused
/// first.
TEST(AttnSpec, PackedHeadsTileAVerifiedAttention) {
  expectBuildRefuses(
      [](mlir::attn::AttentionSpec &s) {
        s.queryHeads = s.queryLen = int64_t(1) << 40;
        s.kvHeads = 1;
        s.packedHeads = 2;
      },
      "holds more than 2^48 bytes");
}

TEST(AttnCApi, RunPipelineAppliesTheSourceBounds) {
  char *error = nullptr;
  std::string nested = "module attributes {a = " + std::string(5000, '[') +
                       std::string(5000, ']') + "} {}";
  EXPECT_EQ(attnRunPipeline(nested.c_str(), "builtin.module(cse)", &error),
            nullptr);
  EXPECT_NE(take(error).find("nested more than 1000 levels"),
            std::string::npos);
  std::string digits =
      "module attributes {a = " + std::string(5000, '9') + " : i64} {}";
  EXPECT_EQ(attnRunPipeline(digits.c_str(), "builtin.module(cse)", &error),
            nullptr);
  EXPECT_NE(take(error).find("more than 4096 digits"), std::string::npos);
}

} // namespace
