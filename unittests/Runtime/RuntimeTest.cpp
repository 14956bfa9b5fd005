//===- RuntimeTest.cpp - libattnrt against a fake CUDA driver -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The runtime's logic (manifest checks, argument checks, grids, workspaces,
// streams, errors) tested on a machine without a GPU: ATTNRT_LIBCUDA points
// the runtime at libAttnFakeCudaDriver, which records every driver call.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"

#include "attn/Runtime/attnrt.hpp"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace fake = attn::fakecuda;
namespace fs = std::filesystem;

namespace {

// Two kernels of the shape attn-compile writes: attn_fwd with static and
// dynamic extents, a grid formula and scalar parameters for three of the
// run-time sizes and strides; attn_split with workspaces.
constexpr const char *kManifest = R"({
  "format": "attn-kernel-bundle",
  "version": 5,
  "ptx": "kernels.ptx",
  "kernels": [
    {
      "name": "attn_fwd",
      "target": "sm_80",
      "params": [
        {"name": "Q", "type": "f16", "shape": [1, 4, 256, 64],
         "strides": [65536, 16384, 64, 1], "alignment": 16},
        {"name": "O", "type": "f16", "shape": [1, 4, null, 64],
         "strides": [null, null, 64, 1], "alignment": 16},
        {"name": "LSE", "type": "f32", "shape": [1, 4, null],
         "strides": [null, null, 1], "alignment": 4}
      ],
      "grid": [{"param": "O", "dim": 2, "ceil_div": 128},
               {"param": "Q", "dim": 1}, 3],
      "scalars": [{"param": "O", "size": 2}, {"param": "O", "stride": 0},
                  {"param": "LSE", "stride": 1}],
      "block": [128, 1, 1],
      "dynamic_shared_memory": 65536,
      "tiles": {"block_m": 128, "block_n": 64, "warps": 4, "stages": 2},
      "attention": {"scale": 0.125, "causal": true, "window": [64, 0],
                    "softcap": 30.0, "score_region": true,
                    "block_mask": true}
    },
    {
      "name": "attn_split",
      "target": "sm_80",
      "params": [
        {"name": "Q", "type": "bf16", "shape": [null], "strides": [1],
         "alignment": 16},
        {"name": "O", "type": "bf16", "shape": [null], "strides": [1],
         "alignment": 16}
      ],
      "grid": [{"param": "Q", "dim": 0, "ceil_div": 64}, 1, 1],
      "block": [64, 2, 1],
      "dynamic_shared_memory": 8192,
      "tiles": {"block_m": 64, "block_n": 64, "warps": 4, "stages": 1},
      "workspaces": [
        {"name": "partials", "bytes": 4096},
        {"name": "semaphores", "bytes": 256, "zero_init": true}
      ],
      "attention": {"scale": 0.5, "causal": false}
    }
  ]
})";

// The fake driver counts each entry's .param to know how many kernel
// arguments to record.
constexpr const char *kPtx = R"(.version 8.0
.target sm_80
.address_size 64

.visible .entry attn_fwd(
	.param .u64 attn_fwd_param_0,
	.param .u64 attn_fwd_param_1,
	.param .u64 attn_fwd_param_2,
	.param .u64 attn_fwd_param_3,
	.param .u64 attn_fwd_param_4,
	.param .u64 attn_fwd_param_5
)
{
	ret;
}

.visible .entry attn_split(
	.param .u64 attn_split_param_0,
	.param .u64 attn_split_param_1,
	.param .u64 attn_split_param_2,
	.param .u64 attn_split_param_3
)
{
	ret;
}
)";

const attnrtStream kStreamA = reinterpret_cast<attnrtStream>(0x1000);
const attnrtStream kStreamB = reinterpret_cast<attnrtStream>(0x2000);

/// TEXT with every occurrence of FROM, of which there must be one, replaced
/// by TO.
std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no \"" << from << "\" to replace";
  for (; at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// kManifest with the grid of its kernel attn_split replaced by GRID (and
/// whatever follows it in the kernel's object).
std::string withSplitGrid(const std::string &grid) {
  return replaced(kManifest,
                  "[{\"param\": \"Q\", \"dim\": 0, \"ceil_div\": 64}, 1, 1]",
                  grid);
}

testing::AssertionResult lastErrorContains(const std::string &text) {
  std::string message = attnrtLastErrorMessage();
  if (message.find(text) != std::string::npos)
    return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << "the last error, \"" << message << "\", lacks \"" << text << "\"";
}

/// A directory that is removed with its contents.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (fs::temp_directory_path() / "attnrt-test-XXXXXX").string();
    if (mkdtemp(pattern.data()))
      path = pattern;
    EXPECT_FALSE(path.empty()) << "cannot create a temporary directory";
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(path / name) << text;
  }
  std::string str() const { return path.string(); }

private:
  fs::path path;
};

class RuntimeTest : public testing::Test {
protected:
  void SetUp() override {
    // The runtime opens the driver on its first call and keeps it for the
    // process, so this must precede every call.
    setenv("ATTNRT_LIBCUDA", ATTN_FAKE_CUDA_DRIVER, 1);
    fake::reset();
  }

  void TearDown() override {
    // Every test destroys what it created, so anything left is a leak of
    // the runtime.
    EXPECT_EQ(fake::liveAllocations(), 0u);
    EXPECT_EQ(fake::liveModules(), 0);
    EXPECT_EQ(fake::liveEvents(), 0);
    EXPECT_EQ(fake::liveContextReferences(), 0);
  }

  /// A context on device 0 of the fake as configured.
  static attnrt::Context createContext() {
    attnrt::Context context;
    EXPECT_EQ(attnrtContextCreate(0, context.out()), ATTNRT_SUCCESS)
        << attnrtLastErrorMessage();
    return context;
  }

  static attnrt::Bundle loadBundle(attnrtContext context,
                                   const std::string &manifest = kManifest,
                                   const std::string &ptx = kPtx) {
    attnrt::Bundle bundle;
    EXPECT_EQ(attnrtBundleLoadFromMemory(context, manifest.c_str(), ptx.c_str(),
                                         bundle.out()),
              ATTNRT_SUCCESS)
        << attnrtLastErrorMessage();
    return bundle;
  }

  static attnrtKernel findKernel(attnrtBundle bundle, const char *name) {
    attnrtKernel kernel = nullptr;
    EXPECT_EQ(attnrtBundleFindKernel(bundle, name, &kernel), ATTNRT_SUCCESS)
        << attnrtLastErrorMessage();
    return kernel;
  }

  /// The status of loading MANIFEST and PTX on CONTEXT; checks that a
  /// failure leaves no bundle behind.
  static attnrtStatus tryLoad(attnrtContext context,
                              const std::string &manifest,
                              const std::string &ptx = kPtx) {
    attnrtBundle bundle = reinterpret_cast<attnrtBundle>(0x1);
    attnrtStatus status = attnrtBundleLoadFromMemory(context, manifest.c_str(),
                                                     ptx.c_str(), &bundle);
    if (status == ATTNRT_SUCCESS)
      attnrtBundleDestroy(bundle);
    else
      EXPECT_EQ(bundle, nullptr);
    return status;
  }
};

/// Device buffers and tensors for attn_fwd's Q, O and LSE, with SEQ rows in
/// O and LSE.
struct FwdArgs {
  attnrt::DeviceBuffer q, o, lse;
  std::vector<attnrtTensor> tensors;

  FwdArgs(attnrtContext context, int64_t seq) {
    EXPECT_TRUE(q.allocate(context, 4 * 256 * 64 * 2).ok());
    EXPECT_TRUE(o.allocate(context, 4 * seq * 64 * 2).ok());
    EXPECT_TRUE(lse.allocate(context, 4 * seq * 4).ok());
    tensors = {attnrt::contiguousTensor(q.data(), ATTNRT_F16, {1, 4, 256, 64}),
               attnrt::contiguousTensor(o.data(), ATTNRT_F16, {1, 4, seq, 64}),
               attnrt::contiguousTensor(lse.data(), ATTNRT_F32, {1, 4, seq})};
  }
};

/// The same for attn_split: Q and O of N elements.
struct SplitArgs {
  attnrt::DeviceBuffer q, o;
  std::vector<attnrtTensor> tensors;

  SplitArgs(attnrtContext context, int64_t n) {
    EXPECT_TRUE(q.allocate(context, n * 2).ok());
    EXPECT_TRUE(o.allocate(context, n * 2).ok());
    tensors = {attnrt::contiguousTensor(q.data(), ATTNRT_BF16, {n}),
               attnrt::contiguousTensor(o.data(), ATTNRT_BF16, {n})};
  }
};

//===----------------------------------------------------------------------===//
// Names and the C++ layer
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, StatusAndDTypeNames) {
  EXPECT_STREQ(attnrtStatusName(ATTNRT_SUCCESS), "ATTNRT_SUCCESS");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_INVALID_ARGUMENT),
               "ATTNRT_ERROR_INVALID_ARGUMENT");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_INVALID_BUNDLE),
               "ATTNRT_ERROR_INVALID_BUNDLE");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_NO_DRIVER),
               "ATTNRT_ERROR_NO_DRIVER");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_NO_DEVICE),
               "ATTNRT_ERROR_NO_DEVICE");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_JIT), "ATTNRT_ERROR_JIT");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_OUT_OF_MEMORY),
               "ATTNRT_ERROR_OUT_OF_MEMORY");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_NOT_FOUND),
               "ATTNRT_ERROR_NOT_FOUND");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_DRIVER), "ATTNRT_ERROR_DRIVER");
  EXPECT_STREQ(attnrtStatusName(ATTNRT_ERROR_UNSUPPORTED),
               "ATTNRT_ERROR_UNSUPPORTED");
  EXPECT_STREQ(attnrtStatusName(static_cast<attnrtStatus>(42)),
               "ATTNRT_ERROR_UNKNOWN");

  EXPECT_STREQ(attnrtDTypeName(ATTNRT_F16), "f16");
  EXPECT_STREQ(attnrtDTypeName(ATTNRT_BF16), "bf16");
  EXPECT_STREQ(attnrtDTypeName(ATTNRT_F32), "f32");
  EXPECT_STREQ(attnrtDTypeName(ATTNRT_I32), "i32");
  EXPECT_STREQ(attnrtDTypeName(ATTNRT_I1), "i1");
  EXPECT_EQ(attnrtDTypeSize(ATTNRT_F16), 2u);
  EXPECT_EQ(attnrtDTypeSize(ATTNRT_BF16), 2u);
  EXPECT_EQ(attnrtDTypeSize(ATTNRT_F32), 4u);
  EXPECT_EQ(attnrtDTypeSize(ATTNRT_I32), 4u);
  EXPECT_EQ(attnrtDTypeSize(ATTNRT_I1), 1u);
}

TEST_F(RuntimeTest, KeyLengthsAreAnInt32Parameter) {
  // A decode kernel's key_lengths: one i32 per sequence, checked like any
  // tensor (its dtype, and the batch against Q's when the kernel is an
  // attention).
  std::string manifest =
      replaced(replaced(replaced(kManifest, "\"version\": 5", "\"version\": 6"),
                        "{\"name\": \"LSE\", \"type\": \"f32\"",
                        "{\"name\": \"key_lengths\", \"type\": \"i32\""),
               "{\"param\": \"LSE\"", "{\"param\": \"key_lengths\"");
  attnrt::Context context = createContext();
  attnrt::Bundle bundle;
  ASSERT_EQ(attnrtBundleLoadFromMemory(context.get(), manifest.c_str(), kPtx,
                                       bundle.out()),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  attnrtKernel fwd = findKernel(bundle.get(), "attn_fwd");
  attnrtParamInfo param;
  ASSERT_EQ(attnrtKernelGetParam(fwd, 2, &param), ATTNRT_SUCCESS);
  EXPECT_STREQ(param.name, "key_lengths");
  EXPECT_EQ(param.dtype, ATTNRT_I32);
  FwdArgs args(context.get(), 300);
  args.tensors[2].dtype = ATTNRT_F32;
  EXPECT_EQ(attnrtLaunch(fwd, args.tensors.data(), 3, kStreamA),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains(
      "parameter key_lengths: dtype f32 does not match the manifest's i32"));
  args.tensors[2].dtype = ATTNRT_I32;
  EXPECT_EQ(attnrtLaunch(fwd, args.tensors.data(), 3, kStreamA), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
}

/// A bundle of one kernel `name` for run-time lengths: Q, K, V and O of
/// [?, 2, ?, 64] bf16, then the parameter `fifth` (a JSON object), with
/// `attention` extra members of its attention (each with a leading comma);
/// its manifest, and PTX whose entry takes five pointers.
struct FiveParamBundle {
  std::string manifest, ptx;
  FiveParamBundle(const std::string &name, const std::string &fifth,
                  const std::string &attention) {
    const char *tensor = R"({"name": "%s", "type": "bf16",
         "shape": [null, 2, null, 64], "strides": [null, null, 64, 1],
         "alignment": 16},)";
    manifest = R"({"format": "attn-kernel-bundle", "version": 8,
      "ptx": "kernels.ptx", "kernels": [{"name": ")" +
               name + R"(", "target": "sm_80", "params": [)";
    for (const char *param : {"Q", "K", "V", "O"})
      manifest += replaced(tensor, "%s", param);
    manifest += fifth + R"(],
      "grid": [{"param": "Q", "dim": 2, "ceil_div": 64},
               {"param": "Q", "dim": 0}, 2],
      "block": [128, 1, 1], "dynamic_shared_memory": 49152,
      "tiles": {"block_m": 64, "block_n": 64, "warps": 4, "stages": 2},
      "attention": {"scale": 0.125, "causal": false)" +
                attention + "}}]}";
    ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry " +
          name +
          "(.param .u64 q, .param .u64 k, .param .u64 v, .param .u64 o, "
          ".param .u64 fifth)\n{\n\tret;\n}\n";
  }
};

/// The tensors of a FiveParamBundle kernel's launch: Q [B, 2, Sq, 64], K
/// and V [B, 2, Sk, 64], O [B, 2, Sq, 64] in bf16, then the fifth, each in a
/// buffer as large as Q, K, V or O.
struct FiveParamLaunch {
  attnrt::DeviceBuffer buffers[5];
  std::vector<attnrtTensor> tensors;
  attnrtDType fifthType;

  FiveParamLaunch(attnrtContext context, int64_t batch, int64_t sq, int64_t sk,
                  attnrtDType fifthType,
                  std::initializer_list<int64_t> fifthSizes)
      : fifthType(fifthType) {
    int64_t lengths[4] = {sq, sk, sk, sq};
    size_t bytes = batch * 2 * std::max(sq, sk) * 64 * 2;
    for (int i = 0; i < 5; ++i) {
      EXPECT_TRUE(buffers[i].allocate(context, bytes).ok());
      tensors.push_back(
          i < 4 ? attnrt::contiguousTensor(buffers[i].data(), ATTNRT_BF16,
                                           {batch, 2, lengths[i], 64})
                : attnrt::contiguousTensor(buffers[i].data(), fifthType,
                                           fifthSizes));
    }
  }

  /// Launches `kernel` with the fifth tensor of `fifthSizes`.
  attnrtStatus launch(attnrtKernel kernel,
                      std::initializer_list<int64_t> fifthSizes) {
    tensors[4] =
        attnrt::contiguousTensor(buffers[4].data(), fifthType, fifthSizes);
    return attnrtLaunch(kernel, tensors.data(), 5, kStreamA);
  }
};

TEST_F(RuntimeTest, MaskOperandsAgreeWithTheAttentionOrBroadcast) {
  // An attention kernel with a boolean mask operand (i1, a byte each) for
  // run-time lengths whose head dimension broadcasts: its batch, Sq and Sk
  // must be the attention's, its heads the manifest's 1.
  FiveParamBundle bundleText(
      "attn_masked",
      R"({"name": "mask", "type": "i1", "shape": [null, 1, null, null],
          "strides": [null, null, null, 1], "alignment": 1})",
      "");
  attnrt::Context context = createContext();
  attnrt::Bundle bundle;
  ASSERT_EQ(attnrtBundleLoadFromMemory(context.get(),
                                       bundleText.manifest.c_str(),
                                       bundleText.ptx.c_str(), bundle.out()),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  attnrtKernel kernel = findKernel(bundle.get(), "attn_masked");
  attnrtParamInfo param;
  ASSERT_EQ(attnrtKernelGetParam(kernel, 4, &param), ATTNRT_SUCCESS);
  EXPECT_STREQ(param.name, "mask");
  EXPECT_EQ(param.dtype, ATTNRT_I1);
  EXPECT_EQ(param.alignment, 1);

  // Sq = 5, Sk = 7.
  FiveParamLaunch launch(context.get(), 2, 5, 7, ATTNRT_I1, {2, 1, 5, 7});
  // Byte-aligned: a view that starts at an odd element of a mask is fine.
  launch.tensors[4].data += 1;
  EXPECT_EQ(attnrtLaunch(kernel, launch.tensors.data(), 5, kStreamA),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();

  EXPECT_EQ(launch.launch(kernel, {2, 1, 5, 6}), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains("the key length of K (7) and mask (6) differ"));
  EXPECT_EQ(launch.launch(kernel, {2, 1, 4, 7}), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(
      lastErrorContains("the query length of Q (5) and mask (4) differ"));
  // The batch dimension is the attention's (the manifest leaves it open);
  // the head dimension is the manifest's 1.
  EXPECT_EQ(launch.launch(kernel, {1, 1, 5, 7}), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains("the batch size of Q (2) and mask (1) differ"));
  EXPECT_EQ(launch.launch(kernel, {2, 2, 5, 7}), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains(
      "parameter mask: shape [2, 2, 5, 7] does not match the manifest's"));
}

TEST_F(RuntimeTest, BlockMaskParametersCountTheAttentionsBlocks) {
  // A kernel with a block_mask parameter (i8) of 64 x 32 blocks for run-time
  // lengths, batch broadcast: its dimensions 2 and 3 must be ceil(Sq / 64)
  // and ceil(Sk / 32).
  const char *blocks = R"({"name": "block_mask", "type": "i8",
      "shape": [1, 2, null, null], "strides": [null, null, null, 1],
      "alignment": 1})";
  FiveParamBundle sparse("attn_sparse", blocks,
                         R"(, "block_mask_blocks": [64, 32])");
  // The parameter needs the blocks it counts.
  FiveParamBundle blind("attn_sparse", blocks, "");
  attnrt::Context context = createContext();
  attnrt::Bundle bundle;
  EXPECT_EQ(attnrtBundleLoadFromMemory(context.get(), blind.manifest.c_str(),
                                       blind.ptx.c_str(), bundle.out()),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("manifest: kernels[0].attention: has no "
                                "block_mask_blocks, which the block_mask "
                                "parameter needs"));
  ASSERT_EQ(attnrtBundleLoadFromMemory(context.get(), sparse.manifest.c_str(),
                                       sparse.ptx.c_str(), bundle.out()),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  attnrtKernel kernel = findKernel(bundle.get(), "attn_sparse");
  attnrtAttentionInfo attention;
  ASSERT_EQ(attnrtKernelGetAttention(kernel, &attention), ATTNRT_SUCCESS);
  EXPECT_EQ(attention.blockMaskRows, 64);
  EXPECT_EQ(attention.blockMaskKeys, 32);
  EXPECT_EQ(attention.blockMask, 0);
  attnrtParamInfo param;
  ASSERT_EQ(attnrtKernelGetParam(kernel, 4, &param), ATTNRT_SUCCESS);
  EXPECT_EQ(param.dtype, ATTNRT_I8);
  EXPECT_STREQ(attnrtDTypeName(ATTNRT_I8), "i8");
  EXPECT_EQ(attnrtDTypeSize(ATTNRT_I8), 1u);

  // Sq = 100 and Sk = 70: 2 query blocks of 64 and 3 key blocks of 32.
  FiveParamLaunch launch(context.get(), 3, 100, 70, ATTNRT_I8, {1, 2, 2, 3});
  EXPECT_EQ(launch.launch(kernel, {1, 2, 2, 3}), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(launch.launch(kernel, {1, 2, 2, 2}), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains(
      "block_mask has 2 blocks along the key length of K (70), which blocks "
      "of 32 cut into 3"));
  EXPECT_EQ(launch.launch(kernel, {1, 2, 1, 3}), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains(
      "block_mask has 1 blocks along the query length of Q (100), which "
      "blocks of 64 cut into 2"));
}

TEST_F(RuntimeTest, ContiguousTensorIsRowMajor) {
  attnrtTensor tensor = attnrt::contiguousTensor(0x100, ATTNRT_BF16, {2, 3, 5});
  EXPECT_EQ(tensor.data, 0x100u);
  EXPECT_EQ(tensor.dtype, ATTNRT_BF16);
  ASSERT_EQ(tensor.rank, 3);
  EXPECT_EQ(tensor.sizes[0], 2);
  EXPECT_EQ(tensor.sizes[1], 3);
  EXPECT_EQ(tensor.sizes[2], 5);
  EXPECT_EQ(tensor.strides[0], 15);
  EXPECT_EQ(tensor.strides[1], 5);
  EXPECT_EQ(tensor.strides[2], 1);
  // Unused dimensions stay zero, so tensors compare and print predictably.
  EXPECT_EQ(tensor.sizes[3], 0);
  EXPECT_EQ(tensor.strides[3], 0);
}

TEST_F(RuntimeTest, OwnedReleasesItsHandleOnceWhereverItMoves) {
  attnrt::Context first = createContext();
  EXPECT_EQ(fake::liveContextReferences(), 1);
  {
    attnrt::Context second = createContext();
    EXPECT_EQ(fake::liveContextReferences(), 2);
    attnrtContext secondHandle = second.get();
    first = std::move(second);
    EXPECT_EQ(first.get(), secondHandle);
    // The move swapped: SECOND now owns FIRST's old context and destroys it.
    EXPECT_EQ(fake::liveContextReferences(), 2);
  }
  EXPECT_EQ(fake::liveContextReferences(), 1);
  attnrt::Context third(std::move(first));
  EXPECT_EQ(first.get(), nullptr);
  EXPECT_NE(third.get(), nullptr);
  EXPECT_EQ(fake::liveContextReferences(), 1);
}

TEST_F(RuntimeTest, DeviceBufferAllocatesCopiesAndFrees) {
  attnrt::Context context = createContext();
  attnrt::DeviceBuffer buffer;
  ASSERT_TRUE(buffer.allocate(context.get(), 64).ok());
  EXPECT_EQ(buffer.size(), 64u);
  EXPECT_EQ(fake::liveAllocations(), 1u);

  std::vector<char> in(64), out(64, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<char>(i * 3);
  ASSERT_EQ(attnrtCopyToDevice(context.get(), buffer.data(), in.data(), 64),
            ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtCopyToHost(context.get(), out.data(), buffer.data(), 64),
            ATTNRT_SUCCESS);
  EXPECT_EQ(in, out);
  EXPECT_EQ(attnrtSynchronize(context.get(), kStreamA), ATTNRT_SUCCESS);

  attnrtDevicePtr first = buffer.data();
  ASSERT_TRUE(buffer.allocate(context.get(), 128).ok());
  // Allocating again frees the previous memory.
  ASSERT_EQ(fake::records().frees.size(), 1u);
  EXPECT_EQ(fake::records().frees[0], first);
  EXPECT_EQ(fake::liveAllocations(), 1u);

  attnrt::DeviceBuffer moved(std::move(buffer));
  EXPECT_EQ(buffer.data(), 0u);
  EXPECT_EQ(moved.size(), 128u);
  EXPECT_EQ(fake::liveAllocations(), 1u);
}

TEST_F(RuntimeTest, OutOfMemoryOnMalloc) {
  fake::config().memoryBytes = 1 << 20;
  attnrt::Context context = createContext();
  attnrt::DeviceBuffer buffer;
  attnrt::Status status = buffer.allocate(context.get(), 2 << 20);
  EXPECT_EQ(status.code, ATTNRT_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(status.message, "allocating 2097152 bytes on the device: "
                            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(buffer.data(), 0u);
}

TEST_F(RuntimeTest, LastErrorIsPerThread) {
  EXPECT_EQ(attnrtContextCreate(0, nullptr), ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains("attnrtContextCreate: null out"));
  std::string otherThread = "unset";
  std::thread([&] { otherThread = attnrtLastErrorMessage(); }).join();
  EXPECT_EQ(otherThread, "");
}

//===----------------------------------------------------------------------===//
// Driver and devices
//===----------------------------------------------------------------------===//

// The driver is opened once per process, so a driver that cannot be opened
// or initialised is tested in a fresh process: a death test in the
// "threadsafe" style re-executes the test binary.
using RuntimeDeathTest = RuntimeTest;

/// Creates a context and exits, printing the status and message.
[[noreturn]] void createContextAndExit() {
  attnrtContext context = nullptr;
  attnrtStatus status = attnrtContextCreate(0, &context);
  std::fprintf(stderr, "%s: %s\n", attnrtStatusName(status),
               attnrtLastErrorMessage());
  std::exit(context ? 1 : 0);
}

TEST_F(RuntimeDeathTest, NoDriverLibrary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ATTNRT_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
        createContextAndExit();
      },
      testing::ExitedWithCode(0),
      "ATTNRT_ERROR_NO_DRIVER: cannot open the CUDA driver "
      ".*/nonexistent/libcuda.so.1.*is an NVIDIA driver installed");
}

TEST_F(RuntimeDeathTest, DriverWithoutEntryPoint) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // A library that opens but is no CUDA driver.
        setenv("ATTNRT_LIBCUDA", "libc.so.6", 1);
        createContextAndExit();
      },
      testing::ExitedWithCode(0),
      "ATTNRT_ERROR_NO_DRIVER: the CUDA driver has no entry point cuInit");
}

TEST_F(RuntimeDeathTest, InitFailsWithoutDevice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // What libcuda does on a machine with a driver but no GPU.
        fake::config().initResult = 100;
        createContextAndExit();
      },
      testing::ExitedWithCode(0),
      "ATTNRT_ERROR_NO_DEVICE: the CUDA driver .* failed to initialise: "
      "CUDA_ERROR_NO_DEVICE");
}

TEST_F(RuntimeTest, NoDevice) {
  fake::config().deviceCount = 0;
  attnrtContext context = reinterpret_cast<attnrtContext>(0x1);
  EXPECT_EQ(attnrtContextCreate(0, &context), ATTNRT_ERROR_NO_DEVICE);
  EXPECT_EQ(context, nullptr);
  EXPECT_TRUE(lastErrorContains("the CUDA driver sees no device"));
}

TEST_F(RuntimeTest, DeviceIndexOutOfRange) {
  fake::config().deviceCount = 2;
  attnrtContext context = nullptr;
  EXPECT_EQ(attnrtContextCreate(2, &context), ATTNRT_ERROR_NO_DEVICE);
  EXPECT_TRUE(lastErrorContains("no CUDA device 2 (there are 2)"));
  EXPECT_EQ(attnrtContextCreate(-1, &context), ATTNRT_ERROR_NO_DEVICE);
  EXPECT_TRUE(lastErrorContains("no CUDA device -1 (there are 2)"));
  EXPECT_EQ(fake::liveContextReferences(), 0);

  attnrt::Context second;
  ASSERT_EQ(attnrtContextCreate(1, second.out()), ATTNRT_SUCCESS);
  EXPECT_EQ(fake::liveContextReferences(), 1);
}

TEST_F(RuntimeTest, DeviceInfo) {
  fake::Config &config = fake::config();
  config.deviceName = "Fake H100";
  config.computeMajor = 9;
  config.computeMinor = 0;
  config.multiprocessors = 132;
  config.sharedMemoryPerBlockOptin = 232448;
  config.l2CacheBytes = 50 << 20;
  config.memoryBytes = size_t(79) << 30;
  attnrt::Context context = createContext();
  attnrtDeviceInfo info;
  ASSERT_EQ(attnrtContextGetDeviceInfo(context.get(), &info), ATTNRT_SUCCESS);
  EXPECT_STREQ(info.name, "Fake H100");
  EXPECT_EQ(info.computeMajor, 9);
  EXPECT_EQ(info.computeMinor, 0);
  EXPECT_EQ(info.multiprocessors, 132);
  EXPECT_EQ(info.sharedMemoryPerBlockOptin, 232448);
  EXPECT_EQ(info.l2CacheBytes, 50 << 20);
  EXPECT_EQ(info.totalMemoryBytes, int64_t(79) << 30);
}

//===----------------------------------------------------------------------===//
// Bundles
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, LoadsBundleFromDirectory) {
  TempDir dir;
  dir.write("manifest.json", kManifest);
  dir.write("kernels.ptx", kPtx);
  int32_t count = 0;
  ASSERT_EQ(attnrtBundleValidate(dir.str().c_str(), &count), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(count, 2);

  attnrt::Context context = createContext();
  attnrt::Bundle bundle;
  ASSERT_EQ(attnrtBundleLoad(context.get(), dir.str().c_str(), bundle.out()),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(fake::records().moduleLoads, 1);
  ASSERT_EQ(attnrtBundleKernelCount(bundle.get()), 2);

  attnrtKernel fwd = nullptr, split = nullptr;
  ASSERT_EQ(attnrtBundleGetKernel(bundle.get(), 0, &fwd), ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtBundleGetKernel(bundle.get(), 1, &split), ATTNRT_SUCCESS);
  EXPECT_STREQ(attnrtKernelName(fwd), "attn_fwd");
  EXPECT_STREQ(attnrtKernelName(split), "attn_split");
  EXPECT_EQ(findKernel(bundle.get(), "attn_split"), split);
  EXPECT_STREQ(attnrtKernelTarget(fwd), "sm_80");
  EXPECT_NE(attnrtKernelGetFunction(fwd), nullptr);
  EXPECT_NE(attnrtKernelGetFunction(fwd), attnrtKernelGetFunction(split));

  attnrtKernel missing = nullptr;
  EXPECT_EQ(attnrtBundleGetKernel(bundle.get(), 2, &missing),
            ATTNRT_ERROR_NOT_FOUND);
  EXPECT_TRUE(lastErrorContains("no kernel 2 in a bundle of 2"));
  EXPECT_EQ(attnrtBundleFindKernel(bundle.get(), "attn_bwd", &missing),
            ATTNRT_ERROR_NOT_FOUND);
  EXPECT_TRUE(lastErrorContains("(it has attn_fwd, attn_split)"));

  ASSERT_EQ(attnrtKernelParamCount(fwd), 3);
  attnrtParamInfo param;
  ASSERT_EQ(attnrtKernelGetParam(fwd, 1, &param), ATTNRT_SUCCESS);
  EXPECT_STREQ(param.name, "O");
  EXPECT_EQ(param.dtype, ATTNRT_F16);
  EXPECT_EQ(param.rank, 4);
  const int64_t sizes[] = {1, 4, -1, 64}, strides[] = {-1, -1, 64, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(param.sizes[i], sizes[i]) << i;
    EXPECT_EQ(param.strides[i], strides[i]) << i;
  }
  EXPECT_EQ(param.alignment, 16);
  EXPECT_EQ(attnrtKernelGetParam(fwd, 3, &param), ATTNRT_ERROR_NOT_FOUND);

  attnrtAttentionInfo attention;
  ASSERT_EQ(attnrtKernelGetAttention(fwd, &attention), ATTNRT_SUCCESS);
  EXPECT_EQ(attention.scale, 0.125);
  EXPECT_EQ(attention.causal, 1);
  EXPECT_EQ(attention.hasWindow, 1);
  EXPECT_EQ(attention.windowLeft, 64);
  EXPECT_EQ(attention.windowRight, 0);
  EXPECT_EQ(attention.softcap, 30.0);
  EXPECT_EQ(attention.scoreRegion, 1);
  EXPECT_EQ(attention.blockMask, 1);
  ASSERT_EQ(attnrtKernelGetAttention(split, &attention), ATTNRT_SUCCESS);
  EXPECT_EQ(attention.causal, 0);
  EXPECT_EQ(attention.hasWindow, 0);
  EXPECT_EQ(attention.softcap, 0.0);
  EXPECT_EQ(attention.scoreRegion, 0);
  EXPECT_EQ(attention.blockMask, 0);
}

TEST_F(RuntimeTest, ValidateDirectoryWithoutManifest) {
  TempDir dir;
  int32_t count = -1;
  EXPECT_EQ(attnrtBundleValidate(dir.str().c_str(), &count),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("cannot read " + dir.str() +
                                "/manifest.json: No such file or directory "
                                "(is " +
                                dir.str() + " a kernel bundle"));
  EXPECT_EQ(count, -1);

  // A manifest without the PTX it names.
  dir.write("manifest.json", kManifest);
  EXPECT_EQ(attnrtBundleValidate(dir.str().c_str(), &count),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("cannot read " + dir.str() + "/kernels.ptx"));
}

TEST_F(RuntimeTest, MalformedManifestsNameTheField) {
  struct Case {
    const char *from;
    const char *to;
    const char *message;
  } cases[] = {
      {"\"version\": 5", "\"version\": 12",
       "manifest: version: this runtime reads versions 2 to 11, not 12"},
      {"\"block\": [128, 1, 1]",
       "\"block\": [128, 1, 1], \"producer_warps\": 2",
       "manifest: kernels[0].producer_warps: is 2, not a whole number of "
       "warpgroups (a multiple of 4)"},
      {"\"block\": [128, 1, 1]",
       "\"block\": [128, 1, 1], \"producer_warps\": 9223372036854775804",
       "manifest: kernels[0].producer_warps: is 9223372036854775804, more "
       "warps than a block holds (32)"},
      {"\"ceil_div\": 64}", "\"ceil_div\": 64, \"times\": 0}",
       "manifest: kernels[1].grid[0].times: must be at least 1"},
      {"\"ceil_div\": 64}", "\"ceil_div\": 64, \"times\": 4097}",
       "manifest: kernels[1].grid[0]: times and ceil_div must be at most "
       "4096"},
      {"\"bytes\": 4096", "\"bytes\": 4096, \"bytes_per_cta\": 8",
       "manifest: kernels[1].workspaces[0]: has both \"bytes\" and "
       "\"bytes_per_cta\""},
      {"\"bytes\": 4096", "\"bytes_per_cta\": 0",
       "manifest: kernels[1].workspaces[0].bytes_per_cta: must be at least 1"},
      {"\"bytes\": 4096", "\"bytes\": 4096, \"kernel_resets\": true",
       "manifest: kernels[1].workspaces[0]: has kernel_resets without "
       "zero_init"},
      {"{\"param\": \"O\", \"stride\": 0}", "{\"param\": \"Q\", \"stride\": 0}",
       "manifest: kernels[0].scalars[1]: the stride is static in parameter "
       "\"Q\""},
      {"{\"param\": \"O\", \"size\": 2}", "{\"param\": \"O\", \"size\": 4}",
       "manifest: kernels[0].scalars[0].size: parameter \"O\" has rank 4"},
      {"{\"param\": \"O\", \"size\": 2}", "{\"param\": \"K\", \"size\": 2}",
       "manifest: kernels[0].scalars[0].param: no parameter \"K\""},
      {"{\"param\": \"O\", \"size\": 2}",
       "{\"param\": \"O\", \"size\": 2, \"stride\": 0}",
       "manifest: kernels[0].scalars[0]: must have \"param\" and one of "
       "\"size\" or \"stride\""},
      {"\"format\": \"attn-kernel-bundle\"", "\"format\": \"bundle\"",
       "manifest: format: \"bundle\" is not \"attn-kernel-bundle\""},
      {"\"block\": [128, 1, 1],", "",
       "manifest: kernels[0]: missing \"block\""},
      {"\"causal\": true", "\"causal\": 1",
       "manifest: kernels[0].attention.causal: has the wrong type"},
      {"\"dynamic_shared_memory\": 8192", "\"dynamic_shared_memory\": \"8192\"",
       "manifest: kernels[1].dynamic_shared_memory: has the wrong type"},
      {"\"type\": \"f32\"", "\"type\": \"f64\"",
       "manifest: kernels[0].params[2].type: \"f64\" is not one of f16, bf16, "
       "f32"},
      {"{\"param\": \"O\", \"dim\": 2", "{\"param\": \"K\", \"dim\": 2",
       "manifest: kernels[0].grid[0].param: no parameter \"K\""},
      {"{\"param\": \"Q\", \"dim\": 1}", "{\"param\": \"Q\", \"dim\": 4}",
       "manifest: kernels[0].grid[1].dim: parameter \"Q\" has rank 4"},
      {"\"alignment\": 4}", "\"alignment\": 12}",
       "manifest: kernels[0].params[2].alignment: is not a power of two"},
      {"\"strides\": [null, null, 1]", "\"strides\": [null, 1]",
       "manifest: kernels[0].params[2].strides: has 2 entries, expected 3"},
      {"\"shape\": [1, 4, 256, 64]", "\"shape\": [1, 4, 0, 64]",
       "manifest: kernels[0].params[0].shape[2]: must be at least 1"},
      {"\"target\": \"sm_80\"", "\"target\": \"gfx90a\"",
       "manifest: kernels[0].target: \"gfx90a\" is not an sm_XY target"},
      {"\"block\": [64, 2, 1]", "\"block\": [64, 32, 1]",
       "manifest: kernels[1].block: has more than 1024 threads"},
      // 2^32 * 2^32 threads must not wrap around to an accepted count.
      {"\"block\": [64, 2, 1]", "\"block\": [4294967296, 4294967296, 1]",
       "manifest: kernels[1].block: has more than 1024 threads"},
      // 128 x 10^18 overflows int64; its low bits (a release build wrapped
      // it to 2808348672 threads) are no block either (issue 63).
      {"\"block\": [64, 2, 1]", "\"block\": [128, 1, 1000000000000000000]",
       "manifest: kernels[1].block: has more than 1024 threads"},
      // Counts are bounded before the bundle check adds or multiplies them.
      {"\"warps\": 4, \"stages\": 1", "\"warps\": 9223372036854775807, "
       "\"stages\": 1",
       "manifest: kernels[1].tiles.warps: must be at most 32"},
      {"\"block_m\": 128", "\"block_m\": 9223372036854775807",
       "manifest: kernels[0].tiles.block_m: must be at most 2147483647"},
      {"\"grid\": [{\"param\": \"Q\", \"dim\": 0, \"ceil_div\": 64}, 1, 1]",
       "\"grid\": [{\"param\": \"Q\", \"dim\": 0, \"ceil_div\": 64}, 1, "
       "4294967296]",
       "manifest: kernels[1].grid[2]: must be at most 2147483647"},
      {"\"bytes\": 4096", "\"bytes\": 9223372036854775807",
       "manifest: kernels[1].workspaces[0].bytes: must be at most "
       "281474976710656"},
      // A broadcast dimension reaches no bytes but is still iterated over.
      {"[1, 4, 256, 64],\n         \"strides\": [65536, 16384, 64, 1]",
       "[1, 4, 256, 4611686018427387904],\n         \"strides\": [65536, "
       "16384, 64, 0]",
       "manifest: kernels[0].params[0].shape: with its strides spans more "
       "than 2^48 bytes"},
      {"\"bytes\": 256", "\"bytes\": 0",
       "manifest: kernels[1].workspaces[1].bytes: must be at least 1"},
      {"\"window\": [64, 0]", "\"window\": [64]",
       "manifest: kernels[0].attention.window: has 1 entries, expected 2"},
      {"\"softcap\": 30.0", "\"softcap\": -1",
       "manifest: kernels[0].attention.softcap: must be a positive number"},
      {"\"score_region\": true", "\"score_region\": 1",
       "manifest: kernels[0].attention.score_region: has the wrong type"},
  };
  attnrt::Context context = createContext();
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    std::string manifest = replaced(kManifest, c.from, c.to);
    EXPECT_EQ(tryLoad(context.get(), manifest), ATTNRT_ERROR_INVALID_BUNDLE);
    EXPECT_TRUE(lastErrorContains(c.message));

    // attnrtBundleValidate reads the same checks from a directory.
    TempDir dir;
    dir.write("manifest.json", manifest);
    dir.write("kernels.ptx", kPtx);
    EXPECT_EQ(attnrtBundleValidate(dir.str().c_str(), nullptr),
              ATTNRT_ERROR_INVALID_BUNDLE);
    EXPECT_TRUE(lastErrorContains(dir.str() + "/manifest.json: " + c.message));
  }
  // Nothing reached the JIT.
  EXPECT_EQ(fake::records().moduleLoads, 0);
}

TEST_F(RuntimeTest, InvalidJsonNamesTheLineAndColumn) {
  std::string manifest =
      replaced(kManifest, "\"version\": 5,", "\"version\": 5,,");
  size_t at = manifest.find(",,") + 1;
  size_t lineStart = manifest.rfind('\n', at);
  int64_t line = std::count(manifest.begin(), manifest.begin() + at, '\n') + 1;
  int64_t column = at - (lineStart == std::string::npos ? -1 : lineStart);
  attnrt::Context context = createContext();
  EXPECT_EQ(tryLoad(context.get(), manifest), ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_EQ(std::string(attnrtLastErrorMessage()),
            "manifest: invalid JSON: parse error at line " +
                std::to_string(line) + ", column " + std::to_string(column) +
                ": syntax error while parsing object key - unexpected ','; "
                "expected string literal");
}

TEST_F(RuntimeTest, JitFailureCarriesTheLog) {
  fake::config().jitResult = 218;
  fake::config().jitErrorLog =
      "ptxas application ptx input, line 12; error   : Unknown symbol 'x'";
  attnrt::Context context = createContext();
  EXPECT_EQ(tryLoad(context.get(), kManifest), ATTNRT_ERROR_JIT);
  EXPECT_TRUE(lastErrorContains(
      "the CUDA driver cannot load the bundle's PTX for Fake GPU (sm_80): "
      "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)\n"
      "ptxas application ptx input, line 12; error   : Unknown symbol 'x'"));

  // Running out of memory while loading is no JIT problem.
  fake::config().jitResult = 2;
  fake::config().jitErrorLog.clear();
  EXPECT_EQ(tryLoad(context.get(), kManifest), ATTNRT_ERROR_OUT_OF_MEMORY);
}

TEST_F(RuntimeTest, TargetNewerThanTheDevice) {
  attnrt::Context sm80 = createContext();
  EXPECT_EQ(tryLoad(sm80.get(), replaced(kManifest, "\"sm_80\"", "\"sm_90\"")),
            ATTNRT_ERROR_JIT);
  EXPECT_TRUE(lastErrorContains(
      "kernel attn_fwd was compiled for sm_90, which Fake GPU (sm_80) cannot "
      "run; recompile it with attn-compile --chip=sm_80"));

  // Arch-specific PTX runs on its own architecture only, newer ones included.
  fake::config().computeMajor = 10;
  attnrt::Context sm100 = createContext();
  EXPECT_EQ(
      tryLoad(sm100.get(), replaced(kManifest, "\"sm_80\"", "\"sm_90a\"")),
      ATTNRT_ERROR_JIT);
  EXPECT_TRUE(lastErrorContains("compiled for sm_90a, which Fake GPU (sm_100) "
                                "cannot run"));
  // The runtime refused before asking the driver.
  EXPECT_EQ(fake::records().moduleLoads, 0);

  fake::config().computeMajor = 9;
  attnrt::Context sm90 = createContext();
  EXPECT_EQ(tryLoad(sm90.get(), replaced(kManifest, "\"sm_80\"", "\"sm_90a\"")),
            ATTNRT_SUCCESS);
  EXPECT_EQ(tryLoad(sm90.get(), kManifest), ATTNRT_SUCCESS);
}

TEST_F(RuntimeTest, SharedMemoryAboveTheOptIn) {
  fake::config().sharedMemoryPerBlockOptin = 65535;
  attnrt::Context context = createContext();
  EXPECT_EQ(tryLoad(context.get(), kManifest), ATTNRT_ERROR_UNSUPPORTED);
  EXPECT_TRUE(lastErrorContains("kernel attn_fwd needs 65536 bytes of shared "
                                "memory per block, the device offers 65535 on "
                                "Fake GPU"));

  // Static shared memory counts too.
  fake::config().sharedMemoryPerBlockOptin = 66000;
  fake::config().staticSharedBytes = 1024;
  attnrt::Context withStatic = createContext();
  EXPECT_EQ(tryLoad(withStatic.get(), kManifest), ATTNRT_ERROR_UNSUPPORTED);
  EXPECT_TRUE(lastErrorContains("needs 66560 bytes"));
}

TEST_F(RuntimeTest, MoreThreadsThanTheKernelCanRun) {
  fake::config().maxThreadsPerBlock = 64;
  attnrt::Context context = createContext();
  EXPECT_EQ(tryLoad(context.get(), kManifest), ATTNRT_ERROR_UNSUPPORTED);
  EXPECT_TRUE(lastErrorContains("kernel attn_fwd launches 128 threads per "
                                "block, the device can run at most 64"));
}

TEST_F(RuntimeTest, KernelMissingFromThePtx) {
  std::string ptx = replaced(kPtx, ".entry attn_fwd(", ".entry attn_fwd2(");
  attnrt::Context context = createContext();
  EXPECT_EQ(tryLoad(context.get(), kManifest, ptx),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(
      "the bundle's PTX defines no kernel attn_fwd (the manifest's kernel); "
      "was it written with this manifest by attn-compile?"));
  // Refused before the driver saw it.
  EXPECT_EQ(fake::records().moduleLoads, 0);
}

//===----------------------------------------------------------------------===//
// The bundle check: the manifest against its PTX
//===----------------------------------------------------------------------===//

// Two kernels as attn-compile writes them (tiles 64 x 64, 4 warps, 2
// stages; D = 64): attn_split, split-KV over 4 splits of each of Q's 8 heads
// (grid z 32) with K and V of run-time length (6 scalars), and attn_lean,
// Lean attention over 8 persistent CTAs.
constexpr const char *kAttentionManifest = R"({
  "format": "attn-kernel-bundle", "version": 8, "ptx": "kernels.ptx",
  "kernels": [
    {"name": "attn_split", "target": "sm_80", "params": [
      {"name": "Q", "type": "bf16", "shape": [1, 8, 1, 64], "strides": [512, 64, 64, 1], "alignment": 16},
      {"name": "K", "type": "bf16", "shape": [1, 2, null, 64], "strides": [null, null, 64, 1], "alignment": 16},
      {"name": "V", "type": "bf16", "shape": [1, 2, null, 64], "strides": [null, null, 64, 1], "alignment": 16},
      {"name": "O", "type": "bf16", "shape": [1, 8, 1, 64], "strides": [512, 64, 64, 1], "alignment": 16},
      {"name": "LSE", "type": "f32", "shape": [1, 8, 1], "strides": [8, 1, 1], "alignment": 4}],
     "grid": [{"param": "Q", "dim": 2, "ceil_div": 64}, {"param": "Q", "dim": 0}, 32],
     "block": [128, 1, 1], "dynamic_shared_memory": 40960,
     "tiles": {"block_m": 64, "block_n": 64, "warps": 4, "stages": 2, "packed_heads": 1},
     "attention": {"scale": 0.125, "causal": false},
     "scalars": [{"param": "K", "size": 2}, {"param": "K", "stride": 0}, {"param": "K", "stride": 1},
                 {"param": "V", "size": 2}, {"param": "V", "stride": 0}, {"param": "V", "stride": 1}],
     "workspaces": [{"name": "partial_o", "bytes_per_cta": 16384, "zero_init": false},
                    {"name": "partial_lse", "bytes_per_cta": 256, "zero_init": false},
                    {"name": "counters", "bytes_per_cta": 4, "zero_init": true, "kernel_resets": true}]},
    {"name": "attn_lean", "target": "sm_80", "params": [
      {"name": "Q", "type": "bf16", "shape": [1, 8, 1, 64], "strides": [512, 64, 64, 1], "alignment": 16},
      {"name": "K", "type": "bf16", "shape": [1, 2, 512, 64], "strides": [65536, 32768, 64, 1], "alignment": 16},
      {"name": "V", "type": "bf16", "shape": [1, 2, 512, 64], "strides": [65536, 32768, 64, 1], "alignment": 16},
      {"name": "O", "type": "bf16", "shape": [1, 8, 1, 64], "strides": [512, 64, 64, 1], "alignment": 16}],
     "grid": [8, 1, 1], "block": [128, 1, 1], "dynamic_shared_memory": 40960,
     "tiles": {"block_m": 64, "block_n": 64, "warps": 4, "stages": 2},
     "attention": {"scale": 0.125, "causal": false}, "persistent": true,
     "workspaces": [{"name": "partial_o", "bytes": 131072, "zero_init": false},
                    {"name": "partial_lse", "bytes": 2048, "zero_init": false},
                    {"name": "flags", "bytes": 32, "zero_init": true}]}
  ]
})";

/// A PTX entry as LLVM's NVPTX back end writes attn-compile's: `pointers`
/// .u64 .ptr parameters, then `scalars` .u64, .maxntid 128, and a body.
std::string ptxEntry(const std::string &name, int pointers, int scalars) {
  std::string text = "\n.visible .entry " + name + "(\n";
  for (int i = 0; i < pointers + scalars; ++i)
    text += std::string(i ? ",\n" : "") + "\t.param .u64 " +
            (i < pointers ? ".ptr .align 1 " : "") + name + "_param_" +
            std::to_string(i);
  return text + "\n)\n.maxntid 128, 1, 1\n{\n\t.reg .b32 %r<4>;\n"
                "\t// a comment's { does not open a block\n"
                "\tmov.u32 %r1, %tid.x;\n\t{\n\t.reg .pred %p;\n\t}\n"
                "\tret;\n}\n";
}

const std::string kAttentionPtx =
    "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.0\n"
    ".target sm_80\n.address_size 64\n\n\t// .globl\tattn_split\n" +
    ptxEntry("attn_split", 8, 6) + ptxEntry("attn_lean", 7, 0);

/// The status of attnrtBundleValidateFromMemory on MANIFEST and PTX.
attnrtStatus validate(const std::string &manifest,
                      const std::string &ptx = kAttentionPtx) {
  int32_t count = -1;
  attnrtStatus status =
      attnrtBundleValidateFromMemory(manifest.c_str(), ptx.c_str(), &count);
  EXPECT_EQ(count, status == ATTNRT_SUCCESS ? 2 : -1);
  return status;
}

TEST_F(RuntimeTest, ValidateFromMemoryNeedsNoDriver) {
  // No context: the check runs without a driver or device.
  EXPECT_EQ(validate(kAttentionManifest), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(attnrtBundleValidateFromMemory(nullptr, kAttentionPtx.c_str(),
                                           nullptr),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains("attnrtBundleValidateFromMemory: null argument"));
  EXPECT_EQ(attnrtBundleValidateFromMemory(kAttentionManifest, nullptr, nullptr),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  // The manifest's own checks come first.
  EXPECT_EQ(validate(replaced(kAttentionManifest, "\"version\": 8",
                              "\"version\": 12")),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("manifest: version: this runtime reads"));
  // Every kernel has its tiles (attn-compile has always written them).
  EXPECT_EQ(validate(replaced(kAttentionManifest,
                              "\"tiles\": {\"block_m\": 64, \"block_n\": 64, "
                              "\"warps\": 4, \"stages\": 2},",
                              "")),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("manifest: kernels[1]: missing \"tiles\""));
  EXPECT_EQ(validate(replaced(kAttentionManifest, "\"warps\": 4, \"stages\": 2}",
                              "\"warps\": 0, \"stages\": 2}")),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(
      lastErrorContains("manifest: kernels[1].tiles.warps: must be at least 1"));
}

TEST_F(RuntimeTest, ParametersMatchThePtxEntry) {
  struct Case {
    std::string manifest, ptx, message;
  } cases[] = {
      // The LSE parameter dropped from the manifest.
      {replaced(kAttentionManifest,
                R"(,
      {"name": "LSE", "type": "f32", "shape": [1, 8, 1], "strides": [8, 1, 1], "alignment": 4}])",
                "]"),
       kAttentionPtx,
       "manifest: kernel attn_split: the manifest gives it 13 parameters (4 "
       "tensors, 3 workspaces, 6 scalars, 0 tensor maps: 7 x ptr, 6 x u64), "
       "its entry in the bundle's PTX (line 11) takes 14 (8 x ptr, 6 x u64); "
       "the runtime passes the tensors' and workspaces' pointers, then the "
       "scalars, each as 64 bits"},
      // A workspace dropped.
      {replaced(kAttentionManifest,
                R"(,
                    {"name": "flags", "bytes": 32, "zero_init": true})",
                ""),
       kAttentionPtx,
       "kernel attn_lean: the manifest gives it 6 parameters (4 tensors, 2 "
       "workspaces, 0 scalars, 0 tensor maps: 6 x ptr), its entry in the "
       "bundle's PTX"},
      // A scalar dropped.
      {replaced(kAttentionManifest, R"(, {"param": "V", "stride": 1}])", "]"),
       kAttentionPtx, "(8 x ptr, 6 x u64)"},
      // A parameter of the PTX that is no 64-bit value, or a pointer where a
      // scalar belongs.
      {kAttentionManifest,
       replaced(kAttentionPtx, ".param .u64 attn_split_param_13",
                ".param .b32 attn_split_param_13"),
       "takes 14 (8 x ptr, 5 x u64, 1 x b32)"},
      {kAttentionManifest,
       replaced(kAttentionPtx, ".param .u64 attn_split_param_8",
                ".param .u64 .ptr attn_split_param_8"),
       "takes 14 (9 x ptr, 5 x u64)"},
      {kAttentionManifest,
       replaced(kAttentionPtx, ".param .u64 .ptr .align 1 attn_lean_param_0",
                ".param .align 8 .b8 attn_lean_param_0[8]"),
       "takes 7 (1 x .align 8 b8[8], 6 x ptr)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    EXPECT_EQ(validate(c.manifest, c.ptx), ATTNRT_ERROR_INVALID_BUNDLE);
    EXPECT_TRUE(lastErrorContains(c.message));
  }
  // A pointer declared a plain .u64 (no .ptr) is a pointer all the same.
  EXPECT_EQ(validate(kAttentionManifest,
                     replaced(kAttentionPtx, ".u64 .ptr .align 1", ".u64")),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
}

TEST_F(RuntimeTest, BlockMatchesThePtxAndTheWarps) {
  EXPECT_EQ(validate(replaced(kAttentionManifest,
                              "\"grid\": [8, 1, 1], \"block\": [128, 1, 1]",
                              "\"grid\": [8, 1, 1], \"block\": [32, 1, 1]")),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(
      "manifest: kernel attn_lean: block [32, 1, 1] is not the 128, 1, 1 "
      "threads its entry in the bundle's PTX was compiled for (.maxntid)"));
  // The PTX's .reqntid, and a block of the right count in other dimensions.
  std::string reqntid =
      replaced(kAttentionPtx, ".maxntid 128, 1, 1", ".reqntid 64, 2");
  EXPECT_EQ(validate(kAttentionManifest, reqntid), ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("kernel attn_split: block [128, 1, 1] is not "
                                "the 64, 2, 1 threads its entry in the "
                                "bundle's PTX was compiled for (.reqntid)"));
  // Without a directive, the tiles' warps still count.
  std::string bare = replaced(kAttentionPtx, ".maxntid 128, 1, 1\n", "");
  EXPECT_EQ(validate(kAttentionManifest, bare), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(validate(replaced(kAttentionManifest,
                              "\"grid\": [8, 1, 1], \"block\": [128, 1, 1]",
                              "\"grid\": [8, 1, 1], \"block\": [256, 1, 1]"),
                     bare),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("kernel attn_lean: block [256, 1, 1] has 256 "
                                "threads, its tiles' 4 warps 128"));
  // A warp-specialised kernel's producer warps are the block's too.
  std::string producers = replaced(
      kAttentionManifest, "\"grid\": [8, 1, 1], \"block\": [128, 1, 1]",
      "\"grid\": [8, 1, 1], \"producer_warps\": 4, "
      "\"block\": [256, 1, 1]");
  EXPECT_EQ(validate(producers, bare), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(validate(replaced(producers, "\"block\": [256, 1, 1]",
                              "\"block\": [128, 1, 1]"),
                     bare),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains("kernel attn_lean: block [128, 1, 1] has 128 "
                                "threads, its tiles' 4 warps and 4 producer "
                                "warps 256"));
}

TEST_F(RuntimeTest, SharedMemoryCoversTheTiles) {
  // 64 Q rows and 2 stages of 64 K and V rows of 64 bf16: 40960 bytes.
  EXPECT_EQ(validate(replaced(kAttentionManifest,
                              "\"grid\": [8, 1, 1], \"block\": [128, 1, 1], "
                              "\"dynamic_shared_memory\": 40960",
                              "\"grid\": [8, 1, 1], \"block\": [128, 1, 1], "
                              "\"dynamic_shared_memory\": 40959")),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(
      "manifest: kernel attn_lean: dynamic_shared_memory 40959 is less than "
      "the 40960 bytes its tiles stage (a 64-row Q block and 2 x 64-row K and "
      "V tiles, rows of D = 64 and Dv = 64 padded to 64 and 64, 2-byte "
      "elements)"));
  // More is fine; more than any GPU has is not.
  EXPECT_EQ(validate(replaced(kAttentionManifest, "40960", "65536")),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(validate(replaced(kAttentionManifest, "40960", "232449")),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(
      "kernel attn_split: dynamic_shared_memory 232449 exceeds 232448 bytes "
      "(227 KiB), the most any GPU gives a block"));
  // Rows are padded to 64 elements: D = 72 stages rows of 128.
  std::string wide = replaced(
      replaced(replaced(kAttentionManifest, ", 64], \"strides\": [512, 64, 64, 1]",
                        ", 72], \"strides\": [576, 72, 72, 1]"),
               "[65536, 32768, 64, 1]", "[73728, 36864, 72, 1]"),
      "2, 512, 64]", "2, 512, 72]");
  EXPECT_EQ(validate(wide), ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(
      "kernel attn_split: dynamic_shared_memory 40960 is less than the 65536 "
      "bytes its tiles stage (a 64-row Q block and 2 x 64-row K and V tiles, "
      "rows of D = 72 and Dv = 64 padded to 128 and 64, 2-byte elements)"));
}

TEST_F(RuntimeTest, GridsAndWorkspacesFollowTheSchedule) {
  struct Case {
    const char *from, *to, *message;
  } cases[] = {
      // Split-KV: z is Hq / p x splits.
      {"{\"param\": \"Q\", \"dim\": 0}, 32]", "{\"param\": \"Q\", \"dim\": 0}, 1]",
       "kernel attn_split: grid z 1 is not its 8 tiled heads (Hq 8 / "
       "packed_heads 1) times a split count; its grid must be "
       "FlashAttention-2's (ceil(p Sq / block_m), B, Hq / p x splits) with "
       "block_m 64 and p (packed_heads) 1"},
      {"{\"param\": \"Q\", \"dim\": 0}, 32]",
       "{\"param\": \"Q\", \"dim\": 0}, {\"param\": \"K\", \"dim\": 2}]",
       "kernel attn_split: grid z K.size(2) is a run-time size; the kernel's "
       "is its 8 tiled heads times its splits, a constant"},
      {"{\"param\": \"Q\", \"dim\": 0}, 32]", "{\"param\": \"Q\", \"dim\": 0}, 8]",
       "kernel attn_split: grid z 8 gives 8 tiled heads 1 split each, but the "
       "kernel has workspaces"},
      {"{\"param\": \"Q\", \"dim\": 2, \"ceil_div\": 64}",
       "{\"param\": \"Q\", \"dim\": 2, \"ceil_div\": 128}",
       "kernel attn_split: grid [ceil(Q.size(2) / 128), Q.size(0), 32] is not "
       "FlashAttention-2's"},
      {"\"packed_heads\": 1", "\"packed_heads\": 3",
       "kernel attn_split: grid [ceil(Q.size(2) / 64), Q.size(0), 32] is not "
       "FlashAttention-2's (ceil(p Sq / block_m), B, Hq / p x splits) with "
       "block_m 64 and p (packed_heads) 3"},
      {"\"bytes_per_cta\": 16384", "\"bytes_per_cta\": 8192",
       "kernel attn_split: workspace partial_o has 8192 bytes per CTA, fewer "
       "than the 16384 the kernel writes"},
      {"{\"name\": \"counters\", \"bytes_per_cta\": 4, \"zero_init\": true, "
       "\"kernel_resets\": true}",
       "{\"name\": \"counters\", \"bytes_per_cta\": 4, \"zero_init\": false}",
       "kernel attn_split: workspace counters is not zero_init"},
      {"\"name\": \"partial_lse\", \"bytes_per_cta\"",
       "\"name\": \"lse\", \"bytes_per_cta\"",
       "kernel attn_split: a split-KV kernel's workspaces are partial_o, "
       "partial_lse and counters (bytes_per_cta), not partial_o, lse, "
       "counters"},
      // Lean: [G, 1, 1] with workspaces for G CTAs.
      {"\"grid\": [8, 1, 1]", "\"grid\": [16, 1, 1]",
       "kernel attn_lean: a persistent grid of 16 CTAs, but its workspaces "
       "are for 8 (flags: 32 bytes, 4 a CTA): a Lean kernel runs on the CTAs "
       "it was compiled for"},
      {"\"grid\": [8, 1, 1]", "\"grid\": [8, 2, 1]",
       "kernel attn_lean: a persistent (Lean) kernel's grid is [G, 1, 1], a "
       "fixed set of CTAs, not [8, 2, 1]"},
      {"\"bytes\": 2048", "\"bytes\": 1024",
       "kernel attn_lean: workspace partial_lse has 1024 bytes, fewer than "
       "the 2048 the kernel writes"},
      {", \"persistent\": true", "",
       "kernel attn_lean: grid [8, 1, 1] is not FlashAttention-2's"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    EXPECT_EQ(validate(replaced(kAttentionManifest, c.from, c.to)),
              ATTNRT_ERROR_INVALID_BUNDLE);
    EXPECT_TRUE(lastErrorContains(std::string("manifest: ") + c.message));
  }
  // Split-KV with GQA packing: z = Hq / p x splits, the formula Q's size 1
  // where that is Hq (p = 4 heads a tile, 4 splits).
  std::string packed = replaced(
      replaced(replaced(kAttentionManifest, "\"packed_heads\": 1",
                        "\"packed_heads\": 4"),
               "{\"param\": \"Q\", \"dim\": 2, \"ceil_div\": 64}",
               "{\"param\": \"Q\", \"dim\": 2, \"ceil_div\": 64, \"times\": 4}"),
      "{\"param\": \"Q\", \"dim\": 0}, 32]",
      "{\"param\": \"Q\", \"dim\": 0}, {\"param\": \"Q\", \"dim\": 1}]");
  EXPECT_EQ(validate(packed), ATTNRT_SUCCESS) << attnrtLastErrorMessage();
}

TEST_F(RuntimeTest, TruncatedOrMalformedPtxIsRefused) {
  const std::string &ptx = kAttentionPtx;
  size_t leanBody = ptx.rfind("{\n\t.reg");
  struct Case {
    std::string ptx, message;
  } cases[] = {
      {ptx.substr(0, ptx.size() - 8),
       "the bundle's PTX: ends inside the body of kernel attn_lean opened at "
       "line 48: the file is truncated or not whole PTX"},
      {ptx.substr(0, leanBody + 3),
       "ends inside the body of kernel attn_lean"},
      {ptx.substr(0, ptx.find("attn_lean_param_3")),
       "ends inside the parameter list of kernel attn_lean"},
      {ptx.substr(0, ptx.find("{\n", ptx.find(".entry attn_lean"))),
       "ends inside the declaration of kernel attn_lean (line 38), before its "
       "body"},
      {ptx.substr(ptx.find(".target")),
       "the bundle's PTX is not PTX (no .version and .target directives)"},
      {replaced(ptx, ".target sm_80\n", ""),
       "the bundle's PTX is not PTX (no .version and .target directives)"},
      {ptx + "/* a comment that never ends\n}\n",
       "ends inside a comment opened at line 57"},
      {ptx + "}\n", "the bundle's PTX: line 57: a '}' that closes nothing"},
      {replaced(ptx, "\tret;\n}\n\n.visible .entry attn_lean",
                "\tret;\n\n.visible .entry attn_lean"),
       "ends inside the body of kernel attn_split"},
      {replaced(ptx, ".param .u64 .ptr .align 1 attn_lean_param_2,",
                "attn_lean_param_2,"),
       "the bundle's PTX: line 41: kernel attn_lean's parameter list has "
       "\"attn_lean_param_2\" where a .param declaration belongs"},
      {replaced(ptx, ".param .u64 .ptr .align 1 attn_lean_param_2,",
                ".param .ptr attn_lean_param_2,"),
       "kernel attn_lean's parameter 2 has no type"},
      {replaced(ptx, "(\n\t.param .u64 .ptr .align 1 attn_lean_param_0",
                "(\n\t.param .u64 .ptr .align 1"),
       "kernel attn_lean's parameter 0 has no name"},
      {replaced(ptx, ".maxntid 128, 1, 1\n{\n\t.reg .b32 %r<4>;\n"
                     "\t// a comment's { does not open a block\n"
                     "\tmov.u32 %r1, %tid.x;\n\t{\n\t.reg .pred %p;\n\t}\n"
                     "\tret;\n}\n",
                ".maxntid 0, 1, 1\n{\n\tret;\n}\n"),
       "kernel attn_split's .maxntid is not 1 to 3 positive counts"},
      // A declaration is no definition.
      {replaced(ptx, ".visible .entry attn_lean(",
                ".extern .entry attn_lean(.param .u64 x);\n.visible .entry "
                "attn_lean2("),
       "the bundle's PTX declares kernel attn_lean (the manifest's kernel) "
       "without defining it"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    EXPECT_EQ(validate(kAttentionManifest, c.ptx),
              ATTNRT_ERROR_INVALID_BUNDLE);
    EXPECT_TRUE(lastErrorContains(c.message));
  }
  // Comments, strings and pragmas do not count as braces or declarations;
  // a declaration before the definition is fine.
  std::string extras = replaced(
      replaced(ptx, ".maxntid 128, 1, 1\n{\n\t.reg .b32 %r<4>;\n\t// a",
               ".maxntid 128, 1, 1\n.pragma \"nounroll\";\n{\n\t.reg .b32 "
               "%r<4>;\n\t/* } */ .pragma \"}\";\n\t// a"),
      ".address_size 64\n",
      ".address_size 64\n.extern .entry attn_lean(.param .u64 x);\n");
  EXPECT_EQ(validate(kAttentionManifest, extras), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
}

TEST_F(RuntimeTest, EveryLoadPathRunsTheBundleCheck) {
  std::string manifest = replaced(kAttentionManifest, "\"dynamic_shared_memory\": 40960",
                                  "\"dynamic_shared_memory\": 1");
  attnrt::Context context = createContext();
  EXPECT_EQ(tryLoad(context.get(), manifest, kAttentionPtx),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_EQ(std::string(attnrtLastErrorMessage()),
            "manifest: kernel attn_split: dynamic_shared_memory 1 is less than "
            "the 40960 bytes its tiles stage (a 64-row Q block and 2 x 64-row "
            "K and V tiles, rows of D = 64 and Dv = 64 padded to 64 and 64, "
            "2-byte elements)");
  TempDir dir;
  dir.write("manifest.json", manifest);
  dir.write("kernels.ptx", kAttentionPtx);
  EXPECT_EQ(attnrtBundleValidate(dir.str().c_str(), nullptr),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(dir.str() + "/manifest.json: kernel "
                                            "attn_split: dynamic_shared_memory 1"));
  attnrt::Bundle bundle;
  EXPECT_EQ(attnrtBundleLoad(context.get(), dir.str().c_str(), bundle.out()),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(dir.str() + "/manifest.json: kernel "
                                            "attn_split: dynamic_shared_memory 1"));
  dir.write("manifest.json", kAttentionManifest);
  dir.write("kernels.ptx", kAttentionPtx.substr(0, kAttentionPtx.size() / 2));
  EXPECT_EQ(attnrtBundleValidate(dir.str().c_str(), nullptr),
            ATTNRT_ERROR_INVALID_BUNDLE);
  EXPECT_TRUE(lastErrorContains(dir.str() + "/kernels.ptx: ends inside"));
  // Nothing reached the driver; the good bundle loads.
  EXPECT_EQ(fake::records().moduleLoads, 0);
  dir.write("kernels.ptx", kAttentionPtx);
  EXPECT_EQ(attnrtBundleLoad(context.get(), dir.str().c_str(), bundle.out()),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

TEST_F(RuntimeTest, LaunchUsesTheManifest) {
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get());
  attnrtKernel fwd = findKernel(bundle.get(), "attn_fwd");
  FwdArgs args(context.get(), 300);

  uint32_t grid[3];
  ASSERT_EQ(attnrtKernelGetGrid(fwd, args.tensors.data(), 3, grid),
            ATTNRT_SUCCESS);
  // ceil(300 / 128), Q's 4 heads, the constant 3.
  EXPECT_EQ(grid[0], 3u);
  EXPECT_EQ(grid[1], 4u);
  EXPECT_EQ(grid[2], 3u);

  // 64 KiB of dynamic shared memory: the fake, as the driver, rejects the
  // launch unless loading raised the kernel's limit.
  ASSERT_EQ(attnrtLaunch(fwd, args.tensors.data(), 3, kStreamA), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  const fake::Records &records = fake::records();
  ASSERT_EQ(records.launches.size(), 1u);
  const fake::LaunchRecord &launch = records.launches[0];
  EXPECT_EQ(launch.function, "attn_fwd");
  EXPECT_EQ(launch.grid[0], 3u);
  EXPECT_EQ(launch.grid[1], 4u);
  EXPECT_EQ(launch.grid[2], 3u);
  EXPECT_EQ(launch.block[0], 128u);
  EXPECT_EQ(launch.block[1], 1u);
  EXPECT_EQ(launch.block[2], 1u);
  EXPECT_EQ(launch.sharedBytes, 65536u);
  EXPECT_EQ(launch.stream, kStreamA);
  // The pointers, then the scalars: O's Sq and batch stride (4 x 300 x
  // 64), LSE's head stride (300).
  EXPECT_EQ(launch.args,
            (std::vector<fake::DevicePtr>{args.q.data(), args.o.data(),
                                          args.lse.data(), 300, 76800, 300}));
  // No workspaces, so nothing to order across streams.
  EXPECT_TRUE(records.eventRecords.empty());
  EXPECT_TRUE(records.memsets.empty());

  FwdArgs exact(context.get(), 256);
  ASSERT_EQ(attnrtLaunch(fwd, exact.tensors.data(), 3, nullptr),
            ATTNRT_SUCCESS);
  ASSERT_EQ(records.launches.size(), 2u);
  EXPECT_EQ(records.launches[1].grid[0], 2u);
  EXPECT_EQ(records.launches[1].stream, nullptr);
}

TEST_F(RuntimeTest, LaunchChecksTheArguments) {
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get());
  attnrtKernel fwd = findKernel(bundle.get(), "attn_fwd");
  FwdArgs args(context.get(), 300);

  auto launchWith = [&](auto mutate) {
    std::vector<attnrtTensor> tensors = args.tensors;
    mutate(tensors);
    return attnrtLaunch(fwd, tensors.data(), 3, kStreamA);
  };
  struct Case {
    const char *message;
    void (*mutate)(std::vector<attnrtTensor> &);
  } cases[] = {
      {"parameter Q: dtype bf16 does not match the manifest's f16",
       [](std::vector<attnrtTensor> &t) { t[0].dtype = ATTNRT_BF16; }},
      {"parameter LSE: rank 4 does not match the manifest's 3",
       [](std::vector<attnrtTensor> &t) {
         t[2].rank = 4;
         t[2].sizes[3] = 1;
       }},
      {"parameter Q: shape [1, 4, 255, 64] does not match the manifest's "
       "[1, 4, 256, 64]",
       [](std::vector<attnrtTensor> &t) { t[0].sizes[2] = 255; }},
      // A dynamic extent accepts any size but an empty one.
      {"parameter O: shape [1, 4, 0, 64] does not match the manifest's "
       "[1, 4, ?, 64]",
       [](std::vector<attnrtTensor> &t) { t[1].sizes[2] = 0; }},
      {"parameter O: strides [76800, 19200, 128, 1] do not match the "
       "manifest's [?, ?, 64, 1]",
       [](std::vector<attnrtTensor> &t) { t[1].strides[2] = 128; }},
      {"parameter LSE: null data pointer",
       [](std::vector<attnrtTensor> &t) { t[2].data = 0; }},
      {"parameter O: data pointer is not aligned to 16 bytes",
       [](std::vector<attnrtTensor> &t) { t[1].data += 8; }},
      // Run-time strides may not make an output's elements overlap.
      {"parameter O: strides [76800, 64, 64, 1] make elements of shape "
       "[1, 4, 300, 64] overlap; an output needs distinct elements",
       [](std::vector<attnrtTensor> &t) { t[1].strides[1] = 64; }},
      // Run-time sizes and strides are bounded as a manifest's are, before
      // the grid formula multiplies O's length (2^62 x 64 overflows).
      {"parameter O: shape [1, 4, 4611686018427387904, 64] with strides "
       "[76800, 19200, 64, 1] spans more than 2^48 bytes",
       [](std::vector<attnrtTensor> &t) { t[1].sizes[2] = int64_t(1) << 62; }},
      {"parameter LSE: shape [1, 4, 4611686018427387904] with strides [1200, "
       "300, 1] spans more than 2^48 bytes",
       [](std::vector<attnrtTensor> &t) { t[2].sizes[2] = int64_t(1) << 62; }},
      {"parameter LSE: stride -300 of dimension 1 is negative",
       [](std::vector<attnrtTensor> &t) { t[2].strides[1] = -300; }},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.message);
    EXPECT_EQ(launchWith(c.mutate), ATTNRT_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(
        lastErrorContains(std::string("kernel attn_fwd: ") + c.message));
  }

  EXPECT_EQ(attnrtLaunch(fwd, args.tensors.data(), 2, kStreamA),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains("kernel attn_fwd: takes 3 tensors, got 2"));
  EXPECT_EQ(attnrtLaunch(fwd, nullptr, 3, kStreamA),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(attnrtLaunch(nullptr, args.tensors.data(), 3, kStreamA),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  uint32_t grid[3];
  EXPECT_EQ(attnrtKernelGetGrid(fwd, args.tensors.data(), 2, grid),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(fake::records().launches.empty());

  // The stride of a size-1 dimension is never used, so any value passes;
  // a 4-byte-aligned LSE meets its alignment of 4.
  EXPECT_EQ(launchWith([](std::vector<attnrtTensor> &t) {
              t[0].strides[0] = 12345;
              t[2].data += 4;
            }),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(fake::records().launches.size(), 1u);
}

TEST_F(RuntimeTest, GridOutsideTheDeviceLimits) {
  std::string manifest =
      withSplitGrid("[1, {\"param\": \"Q\", \"dim\": 0}, 1]");
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get(), manifest);
  attnrtKernel split = findKernel(bundle.get(), "attn_split");
  SplitArgs args(context.get(), 70000);
  EXPECT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains(
      "kernel attn_split: grid dimension 1 is 70000, outside [1, 65535]"));
  EXPECT_TRUE(fake::records().launches.empty());
}

// GQA packing's query blocks: ceil(size x times / ceil_div).
TEST_F(RuntimeTest, GridFormulaMultipliesBeforeDividing) {
  std::string manifest = withSplitGrid(
      "[{\"param\": \"Q\", \"dim\": 0, \"times\": 4, \"ceil_div\": 64}, "
      "1, 1]");
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get(), manifest);
  attnrtKernel split = findKernel(bundle.get(), "attn_split");
  SplitArgs args(context.get(), 200);
  ASSERT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  ASSERT_EQ(fake::records().launches.size(), 1u);
  EXPECT_EQ(fake::records().launches[0].grid[0], 13u); // ceil(800 / 64)
}

TEST_F(RuntimeTest, PersistentKernelNeedsAllItsCtasResident) {
  // 128 threads of 128 registers: 4 CTAs per multiprocessor, 108 of them on
  // the fake device, so 432 persistent CTAs run and 433 would wait forever.
  auto persistent = [](int ctas) {
    return withSplitGrid("[" + std::to_string(ctas) +
                         ", 1, 1], \"persistent\": true");
  };
  attnrt::Context context = createContext();
  SplitArgs args(context.get(), 200);
  {
    attnrt::Bundle bundle = loadBundle(context.get(), persistent(432));
    attnrtKernel split = findKernel(bundle.get(), "attn_split");
    ASSERT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
              ATTNRT_SUCCESS)
        << attnrtLastErrorMessage();
    ASSERT_EQ(fake::records().launches.size(), 1u);
    EXPECT_EQ(fake::records().launches[0].grid[0], 432u);
  }
  attnrt::Bundle bundle = loadBundle(context.get(), persistent(433));
  attnrtKernel split = findKernel(bundle.get(), "attn_split");
  EXPECT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_ERROR_UNSUPPORTED);
  EXPECT_TRUE(lastErrorContains(
      "persistent kernel attn_split needs its 433 CTAs resident at once; the "
      "device holds 432 (4 per multiprocessor x 108)"));
  EXPECT_EQ(fake::records().launches.size(), 1u);
}

TEST_F(RuntimeTest, WorkspacesAreAllocatedOnceAndZeroFilledWhereAsked) {
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get());
  attnrtKernel split = findKernel(bundle.get(), "attn_split");
  SplitArgs args(context.get(), 200);
  const fake::Records &records = fake::records();
  size_t buffers = records.allocations.size();

  ASSERT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  ASSERT_EQ(records.allocations.size(), buffers + 2);
  fake::DevicePtr partials = records.allocations[buffers].pointer;
  fake::DevicePtr semaphores = records.allocations[buffers + 1].pointer;
  EXPECT_EQ(records.allocations[buffers].bytes, 4096u);
  EXPECT_EQ(records.allocations[buffers + 1].bytes, 256u);

  // What the kernel would leave in its workspaces.
  std::vector<unsigned char> dirty(4096, 0xAB);
  auto dirtyWorkspaces = [&] {
    ASSERT_EQ(attnrtCopyToDevice(context.get(), partials, dirty.data(), 4096),
              ATTNRT_SUCCESS);
    ASSERT_EQ(attnrtCopyToDevice(context.get(), semaphores, dirty.data(), 256),
              ATTNRT_SUCCESS);
  };
  dirtyWorkspaces();
  ASSERT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_SUCCESS);
  dirtyWorkspaces();
  ASSERT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamB),
            ATTNRT_SUCCESS);
  EXPECT_EQ(records.allocations.size(), buffers + 2);

  std::vector<unsigned char> contents(4096);
  ASSERT_EQ(attnrtCopyToHost(context.get(), contents.data(), semaphores, 256),
            ATTNRT_SUCCESS);
  EXPECT_EQ(contents[0], 0);
  EXPECT_EQ(contents[255], 0);
  ASSERT_EQ(attnrtCopyToHost(context.get(), contents.data(), partials, 4096),
            ATTNRT_SUCCESS);
  EXPECT_EQ(contents[0], 0xAB);
  EXPECT_EQ(contents[4095], 0xAB);

  // Parameters first, then workspaces in manifest order; grid from Q.
  ASSERT_EQ(records.launches.size(), 3u);
  attnrtStream streams[] = {kStreamA, kStreamA, kStreamB};
  ASSERT_EQ(records.memsets.size(), 3u);
  ASSERT_EQ(records.eventRecords.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("launch " + std::to_string(i));
    const fake::LaunchRecord &launch = records.launches[i];
    EXPECT_EQ(launch.args,
              (std::vector<fake::DevicePtr>{args.q.data(), args.o.data(),
                                            partials, semaphores}));
    EXPECT_EQ(launch.grid[0], 4u);
    EXPECT_EQ(launch.block[0], 64u);
    EXPECT_EQ(launch.block[1], 2u);
    EXPECT_EQ(launch.sharedBytes, 8192u);
    EXPECT_EQ(launch.stream, streams[i]);
    // The semaphores, and only they, are zeroed on the launch's stream
    // before it; an event marks the launch's end.
    const fake::MemsetRecord &fill = records.memsets[i];
    EXPECT_EQ(fill.pointer, semaphores);
    EXPECT_EQ(fill.bytes, 256u);
    EXPECT_EQ(fill.value, 0u);
    EXPECT_EQ(fill.stream, streams[i]);
    EXPECT_LT(fill.sequence, launch.sequence);
    if (i > 0) {
      EXPECT_GT(fill.sequence, records.launches[i - 1].sequence);
    }
    EXPECT_EQ(records.eventRecords[i].stream, streams[i]);
    EXPECT_GT(records.eventRecords[i].sequence, launch.sequence);
  }
  // Only the switch to stream B waits, for the end of the launch on A,
  // before it touches the workspaces.
  ASSERT_EQ(records.streamWaits.size(), 1u);
  const fake::StreamWaitRecord &wait = records.streamWaits[0];
  EXPECT_EQ(wait.stream, kStreamB);
  EXPECT_EQ(wait.event, records.eventRecords[1].event);
  EXPECT_GT(wait.sequence, records.eventRecords[1].sequence);
  EXPECT_LT(wait.sequence, records.memsets[2].sequence);
}

TEST_F(RuntimeTest,
       PerCtaWorkspacesFollowTheGridAndKernelResetOnesAreZeroedOnce) {
  // attn_split with split-KV's workspaces: a slot per CTA of the grid
  // (ceil(n / 64), 1, 1), and counters the kernel leaves zero.
  std::string manifest = replaced(
      replaced(kManifest, "{\"name\": \"partials\", \"bytes\": 4096}",
               "{\"name\": \"partials\", \"bytes_per_cta\": 1024}"),
      "{\"name\": \"semaphores\", \"bytes\": 256, \"zero_init\": true}",
      "{\"name\": \"semaphores\", \"bytes_per_cta\": 64, \"zero_init\": "
      "true, \"kernel_resets\": true}");
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get(), manifest);
  attnrtKernel split = findKernel(bundle.get(), "attn_split");
  const fake::Records &records = fake::records();
  size_t buffers = records.allocations.size();
  SplitArgs small(context.get(), 200), large(context.get(), 300);
  buffers += 4;

  // 4 CTAs: 4 x 1024 and 4 x 64 bytes, the counters zeroed once.
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(attnrtLaunch(split, small.tensors.data(), 2, kStreamA),
              ATTNRT_SUCCESS)
        << attnrtLastErrorMessage();
  ASSERT_EQ(records.allocations.size(), buffers + 2);
  EXPECT_EQ(records.allocations[buffers].bytes, 4096u);
  EXPECT_EQ(records.allocations[buffers + 1].bytes, 256u);
  fake::DevicePtr partials = records.allocations[buffers].pointer;
  fake::DevicePtr counters = records.allocations[buffers + 1].pointer;
  ASSERT_EQ(records.memsets.size(), 1u);
  EXPECT_EQ(records.memsets[0].pointer, counters);
  EXPECT_EQ(records.memsets[0].bytes, 256u);
  EXPECT_LT(records.memsets[0].sequence, records.launches[0].sequence);

  // 5 CTAs need more: once the last launch is done, both are reallocated,
  // and the new counters zeroed.
  ASSERT_EQ(attnrtLaunch(split, large.tensors.data(), 2, kStreamA),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(records.eventSynchronizations, 1);
  EXPECT_EQ(records.frees, (std::vector<fake::DevicePtr>{partials, counters}));
  ASSERT_EQ(records.allocations.size(), buffers + 4);
  EXPECT_EQ(records.allocations[buffers + 2].bytes, 5120u);
  EXPECT_EQ(records.allocations[buffers + 3].bytes, 320u);
  ASSERT_EQ(records.memsets.size(), 2u);
  EXPECT_EQ(records.memsets[1].pointer,
            records.allocations[buffers + 3].pointer);
  EXPECT_EQ(records.memsets[1].bytes, 320u);
  ASSERT_EQ(records.launches.size(), 3u);
  EXPECT_EQ(records.launches[2].grid[0], 5u);
  EXPECT_EQ(records.launches[2].args[2],
            records.allocations[buffers + 2].pointer);

  // A smaller grid again fits what is there.
  ASSERT_EQ(attnrtLaunch(split, small.tensors.data(), 2, kStreamA),
            ATTNRT_SUCCESS);
  EXPECT_EQ(records.allocations.size(), buffers + 4);
  EXPECT_EQ(records.memsets.size(), 2u);
  EXPECT_EQ(records.launches[3].args[3],
            records.allocations[buffers + 3].pointer);
}

TEST_F(RuntimeTest, OutOfMemoryForWorkspaces) {
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get());
  attnrtKernel split = findKernel(bundle.get(), "attn_split");
  SplitArgs args(context.get(), 128);
  // Room for the buffers (256 bytes each) only, then for the first
  // workspace too.
  fake::config().memoryBytes = 2 * 256 + 128;
  EXPECT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(lastErrorContains("workspace partials of kernel attn_split "
                                "(4096 bytes): CUDA_ERROR_OUT_OF_MEMORY"));
  fake::config().memoryBytes = 2 * 256 + 4096 + 128;
  EXPECT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_ERROR_OUT_OF_MEMORY);
  EXPECT_TRUE(lastErrorContains("workspace semaphores of kernel attn_split "
                                "(256 bytes): CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_TRUE(fake::records().launches.empty());

  // Once memory is available, the next launch gets both workspaces.
  fake::config().memoryBytes = 1 << 20;
  ASSERT_EQ(attnrtLaunch(split, args.tensors.data(), 2, kStreamA),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  ASSERT_EQ(fake::records().launches.size(), 1u);
  std::vector<fake::DevicePtr> launched = fake::records().launches[0].args;
  std::vector<fake::DevicePtr> allocated;
  for (const fake::AllocationRecord &allocation : fake::records().allocations)
    allocated.push_back(allocation.pointer);
  // Q, O, partials, semaphores: each workspace allocated once (and one
  // event created, which TearDown finds destroyed).
  EXPECT_EQ(launched, allocated);
}

TEST_F(RuntimeTest, KernelResources) {
  fake::config().registersPerThread = 96;
  fake::config().staticSharedBytes = 1024;
  fake::config().localBytesPerThread = 16;
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get());
  attnrtKernelResources resources;
  ASSERT_EQ(attnrtKernelGetResources(findKernel(bundle.get(), "attn_fwd"),
                                     &resources),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(resources.registersPerThread, 96);
  EXPECT_EQ(resources.threadsPerBlock, 128);
  EXPECT_EQ(resources.staticSharedBytes, 1024);
  EXPECT_EQ(resources.dynamicSharedBytes, 65536);
  EXPECT_EQ(resources.localBytesPerThread, 16);
  // Shared memory limits the fake's occupancy to (166912 + 1024) / (1024 +
  // 65536) = 2 CTAs (registers allow 5): the query used the manifest's
  // dynamic shared memory and block.
  EXPECT_EQ(resources.ctasPerMultiprocessor, 2);
}

TEST_F(RuntimeTest, TimerMeasuresBetweenItsEvents) {
  fake::config().millisecondsPerLaunch = 1.25f;
  attnrt::Context context = createContext();
  attnrt::Bundle bundle = loadBundle(context.get());
  attnrtKernel fwd = findKernel(bundle.get(), "attn_fwd");
  FwdArgs args(context.get(), 128);

  attnrt::Timer timer;
  ASSERT_EQ(attnrtTimerCreate(context.get(), timer.out()), ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtLaunch(fwd, args.tensors.data(), 3, kStreamA),
            ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtTimerStart(timer.get(), kStreamA), ATTNRT_SUCCESS);
  float milliseconds = -1;
  // No stop recorded yet.
  EXPECT_EQ(attnrtTimerElapsedMs(timer.get(), &milliseconds),
            ATTNRT_ERROR_DRIVER);
  EXPECT_TRUE(lastErrorContains(
      "cuEventElapsedTime: CUDA_ERROR_INVALID_HANDLE (invalid resource "
      "handle)"));

  ASSERT_EQ(attnrtLaunch(fwd, args.tensors.data(), 3, kStreamA),
            ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtLaunch(fwd, args.tensors.data(), 3, kStreamA),
            ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtTimerStop(timer.get(), kStreamA), ATTNRT_SUCCESS);
  ASSERT_EQ(attnrtTimerElapsedMs(timer.get(), &milliseconds), ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_FLOAT_EQ(milliseconds, 2.5f);

  const fake::Records &records = fake::records();
  ASSERT_EQ(records.eventRecords.size(), 2u);
  EXPECT_EQ(records.eventRecords[0].stream, kStreamA);
  EXPECT_EQ(records.eventRecords[1].stream, kStreamA);
  EXPECT_NE(records.eventRecords[0].event, records.eventRecords[1].event);
  EXPECT_EQ(fake::liveEvents(), 2);
}

} // namespace

//===----------------------------------------------------------------------===//
// Tensor maps (manifest version 9)
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kTensorMapManifest = R"({
  "format": "attn-kernel-bundle",
  "version": 9,
  "ptx": "kernels.ptx",
  "kernels": [
    {
      "name": "attn_tma",
      "target": "sm_90a",
      "params": [
        {"name": "K", "type": "bf16", "shape": [1, 2, null, 64],
         "strides": [null, null, 64, 1], "alignment": 16},
        {"name": "O", "type": "bf16", "shape": [null], "strides": [1],
         "alignment": 16}
      ],
      "grid": [{"param": "K", "dim": 2, "ceil_div": 128}, 1, 1],
      "scalars": [{"param": "K", "size": 2}],
      "tensor_maps": [{"name": "K_map", "param": "K", "box": [64, 128, 1, 1],
                       "swizzle": 128}],
      "block": [128, 1, 1],
      "dynamic_shared_memory": 16384,
      "tiles": {"block_m": 64, "block_n": 128, "warps": 4, "stages": 1},
      "attention": {"scale": 0.125, "causal": false}
    }
  ]
})";

constexpr const char *kTensorMapPtx = R"(.version 8.0
.target sm_90a
.address_size 64

.visible .entry attn_tma(
	.param .u64 attn_tma_param_0,
	.param .u64 attn_tma_param_1,
	.param .u64 attn_tma_param_2,
	.param .align 64 .b8 attn_tma_param_3[128]
)
{
	ret;
}
)";

/// K [1, 2, keys, 64] and O of 64 elements, contiguous.
struct TensorMapArgs {
  attnrt::DeviceBuffer k, o;
  std::vector<attnrtTensor> tensors;

  TensorMapArgs(attnrtContext context, int64_t keys) {
    EXPECT_TRUE(k.allocate(context, 2 * keys * 64 * 2).ok());
    EXPECT_TRUE(o.allocate(context, 64 * 2).ok());
    tensors = {
        attnrt::contiguousTensor(k.data(), ATTNRT_BF16, {1, 2, keys, 64}),
        attnrt::contiguousTensor(o.data(), ATTNRT_BF16, {64})};
  }
};

/// An sm_90 device with kTensorMapManifest's bundle loaded: its kernel
/// attn_tma, which takes K's tensor map.
class TensorMapTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    fake::config().computeMajor = 9;
    context = createContext();
    bundle = loadBundle(context.get(), kTensorMapManifest, kTensorMapPtx);
    kernel = findKernel(bundle.get(), "attn_tma");
  }
  void TearDown() override {
    // Destroyed before RuntimeTest counts what is left.
    bundle = attnrt::Bundle();
    context = attnrt::Context();
    RuntimeTest::TearDown();
  }
  attnrt::Context context;
  attnrt::Bundle bundle;
  attnrtKernel kernel = nullptr;
};

} // namespace

TEST_F(TensorMapTest, LaunchEncodesTensorMapsOncePerTensor) {
  TensorMapArgs args(context.get(), 300);
  ASSERT_EQ(attnrtLaunch(kernel, args.tensors.data(), 2, nullptr),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  const fake::Records &records = fake::records();
  // Dimensions innermost first, byte strides of dimensions 1 to 3, the
  // box, BFLOAT16 (9), the 128-byte swizzle (3), L2 promotion 128B (2),
  // zero fill.
  ASSERT_EQ(records.tensorMaps.size(), 1u);
  const fake::TensorMapRecord &map = records.tensorMaps[0];
  EXPECT_EQ(map.dataType, 9);
  EXPECT_EQ(map.rank, 4u);
  EXPECT_EQ(map.address, args.k.data());
  EXPECT_EQ(map.dims, (std::vector<uint64_t>{64, 300, 2, 1}));
  EXPECT_EQ(map.strides, (std::vector<uint64_t>{128, 38400, 76800}));
  EXPECT_EQ(map.box, (std::vector<uint32_t>{64, 128, 1, 1}));
  EXPECT_EQ(map.elementStrides, (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(map.swizzle, 3);
  EXPECT_EQ(map.l2Promotion, 2);
  EXPECT_EQ(map.oobFill, 0);
  EXPECT_EQ(map.interleave, 0);
  // The pointers, the scalar, then the map by value.
  ASSERT_EQ(records.launches.size(), 1u);
  EXPECT_EQ(records.launches[0].args,
            (std::vector<fake::DevicePtr>{args.k.data(), args.o.data(), 300,
                                          fake::kTensorMapMark + 0}));
  // The same tensor again: the map is reused.
  ASSERT_EQ(attnrtLaunch(kernel, args.tensors.data(), 2, nullptr),
            ATTNRT_SUCCESS);
  EXPECT_EQ(records.tensorMaps.size(), 1u);
  EXPECT_EQ(records.launches[1].args.back(), fake::kTensorMapMark + 0);
  // Another length: encoded anew.
  TensorMapArgs shorter(context.get(), 200);
  ASSERT_EQ(attnrtLaunch(kernel, shorter.tensors.data(), 2, nullptr),
            ATTNRT_SUCCESS);
  ASSERT_EQ(records.tensorMaps.size(), 2u);
  EXPECT_EQ(records.tensorMaps[1].dims, (std::vector<uint64_t>{64, 200, 2, 1}));
  EXPECT_EQ(records.launches[2].args.back(), fake::kTensorMapMark + 1);
}

TEST_F(TensorMapTest, StridesOfSizeOneDimensionsAreContiguous) {
  // B = 1: the kernel accepts any batch stride (it never steps along it),
  // and the map gets the contiguous one; a head stride that is no multiple
  // of 16 bytes cannot be a tensor map's: the launch fails, saying so.
  TensorMapArgs args(context.get(), 300);
  args.tensors[0].strides[0] = 3;
  ASSERT_EQ(attnrtLaunch(kernel, args.tensors.data(), 2, nullptr),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  const fake::Records &records = fake::records();
  ASSERT_EQ(records.tensorMaps.size(), 1u);
  EXPECT_EQ(records.tensorMaps[0].strides,
            (std::vector<uint64_t>{128, 38400, 76800}));
  TensorMapArgs odd(context.get(), 300);
  odd.tensors[0].strides[1] = 300 * 64 + 4;
  EXPECT_EQ(attnrtLaunch(kernel, odd.tensors.data(), 2, nullptr),
            ATTNRT_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(lastErrorContains(
      "tensor map K_map of kernel attn_tma (over K): dimension 1 has a "
      "stride of 19204 elements (38408 bytes); a tensor copy needs a "
      "multiple of 16 bytes, below 2^40"))
      << attnrtLastErrorMessage();
  EXPECT_EQ(records.launches.size(), 1u);
}

TEST_F(RuntimeTest, TensorMapManifestsAreChecked) {
  fake::config().computeMajor = 9;
  attnrt::Context context = createContext();
  struct {
    const char *what, *from, *to, *message;
  } cases[] = {
      {"a box of the wrong rank", "\"box\": [64, 128, 1, 1]",
       "\"box\": [64, 128]", "box: has 2 entries, expected 4"},
      {"a box past 256", "\"box\": [64, 128, 1, 1]", "\"box\": [64, 512, 1, 1]",
       "sizes must be 1 to 256"},
      {"an inner box wider than the swizzle", "\"swizzle\": 128",
       "\"swizzle\": 64", "the inner box is 128 bytes"},
      {"a swizzle of 100", "\"swizzle\": 128", "\"swizzle\": 100",
       "must be 0, 32, 64 or 128"},
      {"no such tensor", "\"param\": \"K\", \"box\"",
       "\"param\": \"V\", \"box\"", "no parameter \"V\""},
      {"version 8", "\"version\": 9", "\"version\": 8", ""},
      {"an sm_80 kernel", "\"sm_90a\"", "\"sm_80\"",
       "tensor maps need sm_90 or later, not sm_80"},
  };
  for (const auto &c : cases) {
    std::string manifest = replaced(kTensorMapManifest, c.from, c.to);
    attnrtStatus status = tryLoad(context.get(), manifest, kTensorMapPtx);
    if (!*c.message) {
      // Version 8 reads the manifest (tensor_maps is simply new).
      EXPECT_EQ(status, ATTNRT_SUCCESS)
          << c.what << ": " << attnrtLastErrorMessage();
      continue;
    }
    EXPECT_NE(status, ATTNRT_SUCCESS) << c.what;
    EXPECT_TRUE(lastErrorContains(c.message)) << c.what;
  }
  // The kernel's entry must take the map, 128 bytes aligned to 64.
  std::string unaligned =
      replaced(kTensorMapPtx, ".param .align 64 .b8", ".param .align 8 .b8");
  EXPECT_NE(tryLoad(context.get(), kTensorMapManifest, unaligned),
            ATTNRT_SUCCESS);
  EXPECT_TRUE(lastErrorContains(
      "(2 tensors, 0 workspaces, 1 scalar, 1 tensor map: 2 x ptr, 1 x u64, 1 "
      "x .align 64 b8[128]), its entry in the bundle's PTX (line 5) takes 4 "
      "(3 x u64, 1 x .align 8 b8[128])"));
}

TEST_F(TensorMapTest, EncoderFailuresFailTheLaunch) {
  // The driver refuses a map: the launch fails, names the map, and
  // launches nothing.
  TensorMapArgs args(context.get(), 300);
  fake::config().tensorMapResult = 1; // CUDA_ERROR_INVALID_VALUE
  EXPECT_NE(attnrtLaunch(kernel, args.tensors.data(), 2, nullptr),
            ATTNRT_SUCCESS);
  EXPECT_TRUE(lastErrorContains(
      "encoding tensor map K_map of kernel attn_tma (over K)"));
  EXPECT_TRUE(fake::records().launches.empty());
  // Once the driver accepts it, the launch goes ahead.
  fake::config().tensorMapResult = 0;
  EXPECT_EQ(attnrtLaunch(kernel, args.tensors.data(), 2, nullptr),
            ATTNRT_SUCCESS)
      << attnrtLastErrorMessage();
  EXPECT_EQ(fake::records().launches.size(), 1u);
}
