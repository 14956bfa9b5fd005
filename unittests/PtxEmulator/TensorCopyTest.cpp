//===- TensorCopyTest.cpp - Tensor maps and tensor copies on the emulator -===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// cp.async.bulk.tensor with tiled tensor maps on the PTX emulator: a box
// that overhangs the tensor (its outside filled with zeros) lands in shared
// memory row by row with the 128-byte swizzle as the ISA draws it (16-byte
// chunk c of row r at chunk c XOR r mod 8); a Q K^T-shaped product of two
// tiles brought in by tensor copies and multiplied by four chained wgmma
// k-steps, each descriptor advanced 32 bytes along the swizzled rows, as
// FlashAttention-3's kernels do; cuTensorMapEncodeTiled's argument checks;
// tensor stores, which skip what lies outside the tensor and keep their
// shared source until their group is retired; prefetches, which check
// their map and copy nothing; and the faults of misused tensor copies. The map may be given by its parameter's generic address
// and the destination by its shared::cluster address, as LLVM emits them.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestSupport.h"

#include "attn/PtxEmulator/TensorMap.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace attn::ptxemu;
using namespace attn::ptxemu::testing;

namespace {

/// A row-major bf16 matrix's 2-d map with a box of boxRows x boxCols.
TiledTensorMap matrixMap(const void *data, uint64_t rows, uint64_t cols,
                         uint32_t boxRows, uint32_t boxCols,
                         uint32_t swizzle = TiledTensorMap::Swizzle128B) {
  TiledTensorMap t;
  t.dataType = TiledTensorMap::BF16;
  t.rank = 2;
  t.globalAddress = reinterpret_cast<uint64_t>(data);
  t.globalDim[0] = cols;
  t.globalDim[1] = rows;
  t.globalStrides[0] = cols * 2;
  t.boxDim[0] = boxCols;
  t.boxDim[1] = boxRows;
  t.elementStrides[0] = t.elementStrides[1] = 1;
  t.swizzle = swizzle;
  return t;
}

/// The parameter buffer of a kernel whose parameters are 128-byte tensor
/// maps (aligned to 64) and then u64 values.
std::vector<uint8_t> mapParameters(const Kernel &kernel,
                                   const std::vector<TiledTensorMap> &maps,
                                   const std::vector<uint64_t> &values) {
  std::vector<uint8_t> buffer(kernel.parameterBytes + 64, 0);
  // The buffer's data must be 64-byte aligned for the encoder; encode into
  // an aligned scratch map and copy.
  alignas(64) uint8_t map[kTensorMapBytes];
  size_t i = 0;
  for (const TiledTensorMap &t : maps) {
    std::string error;
    EXPECT_TRUE(encodeTensorMap(map, t, error)) << error;
    std::memcpy(buffer.data() + kernel.parameters[i++].offset, map,
                kTensorMapBytes);
  }
  for (uint64_t v : values)
    std::memcpy(buffer.data() + kernel.parameters[i++].offset, &v, 8);
  buffer.resize(kernel.parameterBytes);
  return buffer;
}

LaunchResult launchWith(Device &device, const Module &module,
                        const std::vector<uint8_t> &params, uint32_t threads) {
  LaunchShape shape;
  shape.block = {threads, 1, 1};
  return device.launch(*module.findKernel("k"), shape, params);
}

//===----------------------------------------------------------------------===//
// A box in shared memory
//===----------------------------------------------------------------------===//

/// Thread 0 copies the box at (col0, row0) of `map` into `smem` (8 rows of
/// 64 bf16) and waits; then each of 32 threads copies 32 bytes of the
/// shared box to `out`, so the test sees the shared bytes as they are.
const char *const kBoxPtx = R"(
  .shared .align 1024 .b8 smem[1024];
  .shared .align 8 .b64 bar;
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r8, [col0];
  ld.param.u32 %r9, [row0];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  mbarrier.init.shared.b64 [bar], 1;
  mbarrier.arrive.expect_tx.shared.b64 _, [bar], 1024;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [smem], [map, {%r8, %r9}], [bar];
WAIT:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra SPIN;
  shl.b32 %r2, %r1, 5;
  mov.u32 %r3, smem;
  add.u32 %r3, %r3, %r2;
  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r3];
  cvt.u64.u32 %rd2, %r2;
  add.u64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};
  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r3+16];
  st.global.v4.u32 [%rd3+16], {%r4, %r5, %r6, %r7};
  ret;
)";

/// kBoxPtx with the tensor map given by its generic address, as LLVM's NVPTX
/// backend takes a by-value (__grid_constant__) parameter's.
std::string boxPtxWithGenericMap() {
  std::string ptx = kBoxPtx;
  std::string copy = "cp.async.bulk.tensor";
  ptx.insert(ptx.find(copy), "mov.b64 %rd4, map;\n  cvta.param.u64 %rd5, "
                             "%rd4;\n  ");
  size_t map = ptx.find("[map, ");
  ptx.replace(map, 6, "[%rd5, ");
  return ptx;
}

/// kBoxPtx with the copy's destination a shared::cluster address made from
/// the generic address of the tile, as LLVM's NVPTX backend addresses it
/// (cvta.shared, then cvta.to.shared::cluster): without clusters, the CTA's
/// own shared memory.
std::string boxPtxWithClusterDestination() {
  std::string ptx = kBoxPtx;
  std::string copy = "cp.async.bulk.tensor";
  ptx.insert(ptx.find(copy), "mov.u64 %rd4, smem;\n  cvta.shared.u64 %rd4, "
                             "%rd4;\n  cvta.to.shared::cluster.u64 %rd5, "
                             "%rd4;\n  ");
  size_t destination = ptx.find("[smem], [map");
  ptx.replace(destination, 6, "[%rd5]");
  return ptx;
}

/// Runs `body` (kBoxPtx or a variant) on a 20 x 100 matrix whose element
/// (r, c) is r * 100 + c (exact in bf16 below 256, so use (r * 100 + c) %
/// 256); the box of 8 rows x 64 columns at column 60, row 16 overhangs both
/// edges: columns 100.. and rows 20.. are outside.
void expectOverhangingBox(const std::string &body) {
  const uint64_t rows = 20, cols = 104; // rows padded to 16-byte strides
  Device device;
  device.setProfileTraffic(true);
  uint16_t *matrix = allocateArray<uint16_t>(device, rows * cols);
  auto value = [](uint64_t r, uint64_t c) {
    return static_cast<float>((r * 100 + c) % 256);
  };
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c)
      matrix[r * cols + c] = exactBFloat(value(r, c));
  TiledTensorMap t = matrixMap(matrix, rows, 100, 8, 64);
  t.globalStrides[0] = cols * 2;
  uint16_t *out = allocateArray<uint16_t>(device, 512);
  std::string ptx = kernelPtx(".param .align 64 .b8 map[128], .param .u64 out, "
                              ".param .u32 col0, .param .u32 row0",
                              body.c_str());
  auto module = parse(ptx);
  ASSERT_TRUE(module);
  std::vector<uint8_t> params =
      mapParameters(*module->findKernel("k"), {t}, {addressOf(out)});
  uint32_t col0 = 60, row0 = 16;
  const Kernel &kernel = *module->findKernel("k");
  std::memcpy(params.data() + kernel.parameters[2].offset, &col0, 4);
  std::memcpy(params.data() + kernel.parameters[3].offset, &row0, 4);
  LaunchResult result = launchWith(device, *module, params, 32);
  ASSERT_TRUE(result.ok) << result.error;
  for (unsigned r = 0; r < 8; ++r)
    for (unsigned c = 0; c < 64; ++c) {
      // Box row r holds 128 bytes; its chunk c / 8 sits at chunk
      // (c / 8) ^ r (rows 0-7 of a 1024-byte-aligned box).
      unsigned at = r * 64 + (((c / 8) ^ r) * 8) + c % 8;
      uint64_t gr = row0 + r, gc = col0 + c;
      float expected = gr < rows && gc < 100 ? value(gr, gc) : 0.0f;
      EXPECT_EQ(out[at], exactBFloat(expected))
          << "box (" << r << ", " << c << ")";
    }
  // The profile counts one box in, and the global bytes it read: the 4
  // rows by 40 columns inside the tensor. The lanes' 16-byte stores of the
  // box are the launch's global requests, the copy is not.
  EXPECT_EQ(result.profile.tensorLoads, 1u);
  EXPECT_EQ(result.profile.tensorLoadBytes, 4u * 40 * 2);
  EXPECT_EQ(result.profile.tensorStores, 0u);
  EXPECT_EQ(result.profile.globalRequests, 2u);
}

/// kBoxPtx with the box prefetched to L2 first, as a kernel issues
/// cp.async.bulk.prefetch.tensor ahead of the copy: a hint that leaves every
/// byte (and the profile's tensor loads) as they were.
std::string boxPtxWithPrefetch() {
  std::string ptx = kBoxPtx;
  std::string copy = "cp.async.bulk.tensor";
  ptx.insert(ptx.find(copy),
             "cp.async.bulk.prefetch.tensor.2d.L2.global.tile [map, {%r8, "
             "%r9}];\n"
             "  cp.async.bulk.prefetch.tensor.2d.L2.global.L2::cache_hint "
             "[map, {%r9, %r8}], %rd4;\n  ");
  return ptx;
}

TEST(PtxEmulatorTensorCopy, OverhangingBoxIsSwizzledAndZeroFilled) {
  expectOverhangingBox(kBoxPtx);
}

TEST(PtxEmulatorTensorCopy, PrefetchChangesNothing) {
  expectOverhangingBox(boxPtxWithPrefetch());
}

TEST(PtxEmulatorTensorCopy, TensorMapByItsGenericParameterAddress) {
  expectOverhangingBox(boxPtxWithGenericMap());
}

TEST(PtxEmulatorTensorCopy, DestinationByItsSharedClusterAddress) {
  expectOverhangingBox(boxPtxWithClusterDestination());
}

TEST(PtxEmulatorTensorCopy, ParametersAreReadOnlyThroughGenericAddresses) {
  // A store through a parameter's generic address faults, and cvta.to.param
  // (a generic address back to the parameter space) is refused.
  Device device;
  auto module = parse(kernelPtx(".param .u64 out", R"(
  .reg .b64 %rd<4>;
  mov.b64 %rd1, out;
  cvta.param.u64 %rd2, %rd1;
  st.u64 [%rd2], %rd1;
  ret;
)"));
  ASSERT_TRUE(module);
  std::vector<uint8_t> params(module->findKernel("k")->parameterBytes, 0);
  LaunchResult result = launchWith(device, *module, params, 32);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("a store to read-only memory"), std::string::npos)
      << result.error;
  std::string error;
  EXPECT_FALSE(parseModule(kernelPtx(".param .u64 out", R"(
  .reg .b64 %rd<3>;
  cvta.to.param.u64 %rd2, %rd1;
  ret;
)"),
                           error));
  EXPECT_NE(error.find("state space"), std::string::npos) << error;
}

//===----------------------------------------------------------------------===//
// Tensor copies feeding wgmma
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorTensorCopy, TensorCopiesFeedChainedWgmma) {
  // S = Q K^T for a 64 x 64 Q and K (head dimension 64): both tiles come
  // in by tensor copies with the 128-byte swizzle (rows of 128 bytes), and
  // four wgmma.m64n64k16 k-steps advance both descriptors by 32 bytes.
  Device device;
  device.setProfileTraffic(true);
  uint16_t *q = allocateArray<uint16_t>(device, 64 * 64);
  uint16_t *k = allocateArray<uint16_t>(device, 64 * 64);
  auto qValue = [](unsigned m, unsigned d) {
    return static_cast<float>(int((m * 64 + d) * 37 % 16) - 8);
  };
  auto kValue = [](unsigned n, unsigned d) {
    return static_cast<float>(int((n * 64 + d) * 13 % 16) - 8);
  };
  for (unsigned i = 0; i < 64; ++i)
    for (unsigned d = 0; d < 64; ++d) {
      q[i * 64 + d] = exactBFloat(qValue(i, d));
      k[i * 64 + d] = exactBFloat(kValue(i, d));
    }
  float *out = allocateArray<float>(device, 128 * 32);
  std::string d;
  for (unsigned i = 0; i < 32; ++i)
    d += (i ? ", %d" : "%d") + std::to_string(i);
  // Descriptors: start >> 4 in bits 0-13, SBO = 1024 (8 rows of 128
  // bytes) in bits 32-45, LBO = 16 (unused), 128B swizzle (1 << 62).
  std::string body = R"(
  .shared .align 1024 .b8 qs[8192];
  .shared .align 1024 .b8 ks[8192];
  .shared .align 8 .b64 bar;
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b32 %d<32>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  mbarrier.init.shared.b64 [bar], 1;
  mbarrier.arrive.expect_tx.shared.b64 _, [bar], 16384;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [qs], [qmap, {0, 0}], [bar];
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [ks], [kmap, {0, 0}], [bar];
WAIT:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra SPIN;
  mov.u32 %r2, qs;
  mov.u32 %r3, ks;
  cvt.u64.u32 %rd2, %r2;
  cvt.u64.u32 %rd3, %r3;
  shr.u64 %rd2, %rd2, 4;
  shr.u64 %rd3, %rd3, 4;
  or.b64 %rd4, %rd2, 0x4000004000010000;
  or.b64 %rd5, %rd3, 0x4000004000010000;
  wgmma.fence.sync.aligned;
  setp.ne.u32 %p3, 0, 0;
  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {)" +
                     d + R"(}, %rd4, %rd5, %p3, 1, 1, 0, 0;
  setp.ne.u32 %p3, 1, 0;
  add.s64 %rd4, %rd4, 2;
  add.s64 %rd5, %rd5, 2;
  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {)" +
                     d + R"(}, %rd4, %rd5, %p3, 1, 1, 0, 0;
  add.s64 %rd4, %rd4, 2;
  add.s64 %rd5, %rd5, 2;
  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {)" +
                     d + R"(}, %rd4, %rd5, %p3, 1, 1, 0, 0;
  add.s64 %rd4, %rd4, 2;
  add.s64 %rd5, %rd5, 2;
  wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {)" +
                     d + R"(}, %rd4, %rd5, %p3, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  mul.wide.u32 %rd6, %r1, 128;
  add.u64 %rd7, %rd1, %rd6;
)";
  for (unsigned i = 0; i < 32; ++i)
    body += "  st.global.f32 [%rd7+" + std::to_string(4 * i) + "], %d" +
            std::to_string(i) + ";\n";
  body += "  ret;\n";
  auto module = parse(kernelPtx(".param .align 64 .b8 qmap[128], .param "
                                ".align 64 .b8 kmap[128], .param .u64 out",
                                body));
  ASSERT_TRUE(module);
  std::vector<uint8_t> params = mapParameters(
      *module->findKernel("k"),
      {matrixMap(q, 64, 64, 64, 64), matrixMap(k, 64, 64, 64, 64)},
      {addressOf(out)});
  LaunchResult result = launchWith(device, *module, params, 128);
  ASSERT_TRUE(result.ok) << result.error;
  for (unsigned thread = 0; thread < 128; ++thread)
    for (unsigned r = 0; r < 32; ++r) {
      unsigned m = 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((r / 2) % 2);
      unsigned n = 8 * (r / 4) + 2 * (thread % 4) + r % 2;
      double expected = 0;
      for (unsigned dd = 0; dd < 64; ++dd)
        expected += double(qValue(m, dd)) * kValue(n, dd);
      ASSERT_EQ(out[thread * 32 + r], static_cast<float>(expected))
          << "S(" << m << ", " << n << ")";
    }
  // Two boxes of 64 x 64 bf16 in; each k-step reads A's 64 x 16 and B's
  // 64 x 16 from shared memory once for the warpgroup.
  EXPECT_EQ(result.profile.tensorLoads, 2u);
  EXPECT_EQ(result.profile.tensorLoadBytes, 2u * 64 * 64 * 2);
  EXPECT_EQ(result.profile.wgmmaSharedBytes, 4u * (64 * 16 + 64 * 16) * 2);
}

//===----------------------------------------------------------------------===//
// Stores: shared memory to the tensor
//===----------------------------------------------------------------------===//

/// One thread loads the 8 x 64 box at (0, 0) of `in` into shared memory and
/// stores it with a tensor store to the box at (col0, row0) of `out`, then
/// waits for the store's group (`WAIT`, by default cp.async.bulk's
/// wait_group.read 0); `AFTER` runs between the store and the wait.
std::string
storePtx(const std::string &after = "",
         const std::string &wait = "  cp.async.bulk.wait_group.read 0;\n") {
  return kernelPtx(".param .align 64 .b8 in[128], .param .align 64 .b8 "
                   "out[128], .param .u32 col0, .param .u32 row0",
                   "  .shared .align 1024 .b8 smem[1024];\n"
                   "  .shared .align 8 .b64 bar;\n"
                   "  .reg .pred %p<3>;\n"
                   "  .reg .b32 %r<4>;\n"
                   "  ld.param.u32 %r1, [col0];\n"
                   "  ld.param.u32 %r2, [row0];\n"
                   "  mbarrier.init.shared.b64 [bar], 1;\n"
                   "  mbarrier.arrive.expect_tx.shared.b64 _, [bar], 1024;\n"
                   "  cp.async.bulk.tensor.2d.shared::cluster.global.tile."
                   "mbarrier::complete_tx::bytes [smem], [in, {0, 0}], "
                   "[bar];\n"
                   "SPIN:\n"
                   "  mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;\n"
                   "  @!%p1 bra SPIN;\n"
                   "  cp.async.bulk.tensor.2d.global.shared::cta.tile."
                   "bulk_group [out, {%r1, %r2}], [smem];\n"
                   "  cp.async.bulk.commit_group;\n" +
                       after + wait + "  ret;\n");
}

TEST(PtxEmulatorTensorCopy, TensorStoresSkipWhatLiesOutside) {
  // `in` is 8 x 64; `out` is 12 x 100, filled with a sentinel. The box is
  // stored at column 60, row 8: rows 8-11 and columns 60-99 are written,
  // the rest of the box lies outside and is skipped, and nothing else of
  // `out` changes. Both maps use the 128-byte swizzle, so the box comes
  // back unswizzled.
  Device device;
  device.setProfileTraffic(true);
  uint16_t *in = allocateArray<uint16_t>(device, 8 * 64);
  const uint64_t outCols = 104; // 208-byte rows: a multiple of 16
  uint16_t *out = allocateArray<uint16_t>(device, 12 * outCols);
  for (unsigned i = 0; i < 8 * 64; ++i)
    in[i] = exactBFloat(static_cast<float>(i % 200));
  const uint16_t sentinel = exactBFloat(-1.0f);
  for (unsigned i = 0; i < 12 * outCols; ++i)
    out[i] = sentinel;
  TiledTensorMap outMap = matrixMap(out, 12, 100, 8, 64);
  outMap.globalStrides[0] = outCols * 2;
  auto module = parse(storePtx());
  ASSERT_TRUE(module);
  const Kernel &kernel = *module->findKernel("k");
  std::vector<uint8_t> params =
      mapParameters(kernel, {matrixMap(in, 8, 64, 8, 64), outMap}, {});
  uint32_t col0 = 60, row0 = 8;
  std::memcpy(params.data() + kernel.parameters[2].offset, &col0, 4);
  std::memcpy(params.data() + kernel.parameters[3].offset, &row0, 4);
  LaunchResult result = launchWith(device, *module, params, 1);
  ASSERT_TRUE(result.ok) << result.error;
  // One box out: the 4 rows by 40 columns inside `out` written.
  EXPECT_EQ(result.profile.tensorStores, 1u);
  EXPECT_EQ(result.profile.tensorStoreBytes, 4u * 40 * 2);
  for (unsigned r = 0; r < 12; ++r)
    for (unsigned c = 0; c < outCols; ++c) {
      bool written = r >= 8 && c >= 60 && c < 100;
      uint16_t expected = written ? in[(r - 8) * 64 + (c - 60)] : sentinel;
      ASSERT_EQ(out[r * outCols + c], expected)
          << "out (" << r << ", " << c << ")";
    }

  // Writing the box in shared memory before the store's group is retired
  // is caught.
  auto early = parse(storePtx("  st.shared.u32 [smem], %r1;\n"));
  ASSERT_TRUE(early);
  result = launchWith(device, *early, params, 1);
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.error.find("which a bulk copy to global memory of warp 0 "
                              "(line"),
            std::string::npos)
      << result.error;
  // After the wait it is fine.
  auto late = parse(storePtx("", "  cp.async.bulk.wait_group.read 0;\n"
                                 "  st.shared.u32 [smem], %r1;\n"));
  ASSERT_TRUE(late);
  result = launchWith(device, *late, params, 1);
  EXPECT_TRUE(result.ok) << result.error;
  // Exiting without the wait leaves the store reading shared memory the
  // CTA no longer owns; so does a store never committed.
  std::string uncommitted = storePtx("", "");
  uncommitted.erase(uncommitted.find("  cp.async.bulk.commit_group;\n"),
                    std::strlen("  cp.async.bulk.commit_group;\n"));
  for (const std::string &unwaited : {storePtx("", ""), uncommitted}) {
    auto module = parse(unwaited);
    ASSERT_TRUE(module);
    result = launchWith(device, *module, params, 1);
    ASSERT_FALSE(result.ok);
    EXPECT_NE(result.error.find("the CTA exits before its bulk copy to "
                                "global memory (warp 0, line"),
              std::string::npos)
        << result.error;
  }
}

TEST(PtxEmulatorTensorCopy, GenericWritesBeforeABulkStoreNeedAProxyFence) {
  // 64 threads each store 4 bytes of a 256-byte block with st.shared (the
  // generic proxy); thread 0 then copies the block to global memory with a
  // bulk store (the async proxy). Each writer fences before the barrier, or
  // the store's reads are unordered with the writes.
  auto ptx = [](const std::string &beforeBarrier) {
    return kernelPtx(".param .u64 out",
                     "  .shared .align 128 .b8 smem[256];\n"
                     "  .reg .pred %p<2>;\n"
                     "  .reg .b32 %r<4>;\n"
                     "  .reg .b64 %rd<2>;\n"
                     "  mov.u32 %r1, %tid.x;\n"
                     "  shl.b32 %r2, %r1, 2;\n"
                     "  mov.u32 %r3, smem;\n"
                     "  add.u32 %r3, %r3, %r2;\n"
                     "  st.shared.u32 [%r3], %r1;\n" +
                         beforeBarrier +
                         "  bar.sync 0;\n"
                         "  setp.ne.u32 %p1, %r1, 0;\n"
                         "  @%p1 bra DONE;\n"
                         "  ld.param.u64 %rd1, [out];\n"
                         "  cp.async.bulk.global.shared::cta.bulk_group "
                         "[%rd1], [smem], 256;\n"
                         "  cp.async.bulk.commit_group;\n"
                         "  cp.async.bulk.wait_group.read 0;\n"
                         "DONE:\n"
                         "  ret;\n");
  };
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 64);
  auto fenced = parse(ptx("  fence.proxy.async.shared::cta;\n"));
  ASSERT_TRUE(fenced);
  LaunchResult result = launch(device, *fenced, {addressOf(out)}, 64);
  ASSERT_TRUE(result.ok) << result.error;
  for (uint32_t i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], i);
  auto unfenced = parse(ptx(""));
  ASSERT_TRUE(unfenced);
  result = launch(device, *unfenced, {addressOf(out)}, 64);
  ASSERT_FALSE(result.ok);
  EXPECT_NE(result.error.find("through the async proxy, which warp "),
            std::string::npos)
      << result.error;
}

//===----------------------------------------------------------------------===//
// The encoder's checks and the copies' faults
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorTensorCopy, EncoderChecksItsArguments) {
  alignas(64) uint8_t map[kTensorMapBytes];
  alignas(16) static uint16_t data[64 * 64];
  struct {
    const char *what;
    void (*edit)(TiledTensorMap &);
    const char *message;
  } cases[] = {
      {"rank 6", [](TiledTensorMap &t) { t.rank = 6; }, "rank 6"},
      {"a box of 512", [](TiledTensorMap &t) { t.boxDim[1] = 512; },
       "box size 512 of dimension 1"},
      {"a 200-byte stride", [](TiledTensorMap &t) { t.globalStrides[0] = 200; },
       "byte stride 200 of dimension 1"},
      {"an inner box wider than the swizzle",
       [](TiledTensorMap &t) { t.boxDim[0] = 128; },
       "wider than the swizzle's 128"},
      {"an unaligned address", [](TiledTensorMap &t) { t.globalAddress += 2; },
       "not 16-byte aligned"},
  };
  std::string error;
  EXPECT_TRUE(encodeTensorMap(map, matrixMap(data, 64, 64, 64, 64), error))
      << error;
  TiledTensorMap decoded;
  ASSERT_TRUE(decodeTensorMap(map, decoded));
  EXPECT_EQ(decoded.boxDim[0], 64u);
  EXPECT_EQ(decoded.globalStrides[0], 128u);
  for (const auto &c : cases) {
    TiledTensorMap t = matrixMap(data, 64, 64, 64, 64);
    c.edit(t);
    error.clear();
    EXPECT_FALSE(encodeTensorMap(map, t, error)) << c.what;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << c.what << ": " << error;
  }
}

TEST(PtxEmulatorTensorCopy, Faults) {
  Device device;
  uint16_t *matrix = allocateArray<uint16_t>(device, 64 * 64);
  uint16_t *out = allocateArray<uint16_t>(device, 512);
  auto run = [&](const std::string &ptx, bool encode) {
    auto module = parse(ptx);
    if (!module)
      return std::string("does not load");
    const Kernel &kernel = *module->findKernel("k");
    std::vector<uint8_t> params = mapParameters(
        kernel, {matrixMap(matrix, 64, 64, 8, 64)}, {addressOf(out)});
    if (!encode)
      std::memset(params.data() + kernel.parameters[0].offset, 0,
                  kTensorMapBytes);
    LaunchResult result = launchWith(device, *module, params, 32);
    return result.ok ? std::string() : result.error;
  };
  const std::string parameters =
      ".param .align 64 .b8 map[128], .param .u64 out, .param .u32 col0, "
      ".param .u32 row0";
  std::string box = kBoxPtx;
  // A map the encoder did not write.
  EXPECT_NE(run(kernelPtx(parameters, box), false)
                .find("the tensor map was not encoded by "
                      "cuTensorMapEncodeTiled"),
            std::string::npos);
  // A 3-d copy of a 2-d map.
  std::string threeD = box;
  threeD.replace(threeD.find("tensor.2d"), 9, "tensor.3d");
  threeD.replace(threeD.find("{%r8, %r9}"), 10, "{%r8, %r9, %r9}");
  EXPECT_NE(run(kernelPtx(parameters, threeD), true)
                .find("a 3-d copy of a rank-2 tensor map"),
            std::string::npos);
  // A prefetch of a map the encoder did not write, or of another rank.
  std::string prefetch = boxPtxWithPrefetch();
  EXPECT_NE(run(kernelPtx(parameters, prefetch), false)
                .find("the tensor map was not encoded by "
                      "cuTensorMapEncodeTiled"),
            std::string::npos);
  std::string prefetch3d = prefetch;
  prefetch3d.replace(prefetch3d.find("tensor.2d"), 9, "tensor.3d");
  prefetch3d.replace(prefetch3d.find("{%r8, %r9}"), 10, "{%r8, %r9, %r9}");
  std::string error3d = run(kernelPtx(parameters, prefetch3d), true);
  EXPECT_NE(error3d.find("a 3-d copy of a rank-2 tensor map"),
            std::string::npos)
      << error3d;
  EXPECT_NE(error3d.find("cp.async.bulk.prefetch.tensor.3d"),
            std::string::npos)
      << error3d;
  // A destination off the 128-byte grid.
  std::string shifted = box;
  shifted.replace(shifted.find("[smem], [map"), 12, "[smem+64], [map");
  EXPECT_NE(run(kernelPtx(parameters, shifted), true)
                .find("must be 128-byte aligned"),
            std::string::npos);
  // Reading the box before waiting for it.
  std::string early = box;
  const std::string wait = "SPIN:\n"
                           "  mbarrier.try_wait.parity.shared.b64 %p2, [bar], "
                           "0;\n"
                           "  @!%p2 bra SPIN;\n";
  early.replace(early.find(wait), wait.size(), "");
  std::string error = run(kernelPtx(parameters, early), true);
  EXPECT_NE(error.find("written by the async proxy (a bulk copy)"),
            std::string::npos)
      << error;
}

} // namespace
