//===- WgmmaTest.cpp - Warpgroup MMA on the emulator ----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// wgmma.mma_async.m64nNk16.f32.bf16.bf16 run by one warpgroup on the PTX
// emulator, each operand laid out in shared memory by the test in one of the
// PTX ISA's canonical layouts (K-major and MN-major; no swizzle, 32B, 64B and
// 128B swizzle) or, for A, held in registers. The layouts are written here
// row by row, as the ISA's figures draw them (the swizzles as "16-byte chunk
// c of row r moves to chunk c XOR f(r)"), not as the emulator computes
// addresses (bit operations on the address), and the products of distinct
// small integers are exact, so every accumulator element is checked against
// the plain product A B (+ C). Also the faults: an accumulator read, A's
// registers or a shared operand overwritten, before the wgmma.wait_group
// that retires it.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestSupport.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

using namespace attn::ptxemu;
using namespace attn::ptxemu::testing;

namespace {

enum class Swizzle { None, B32, B64, B128 };

unsigned swizzleBytes(Swizzle s) {
  return s == Swizzle::B32 ? 32 : s == Swizzle::B64 ? 64 : 128;
}

/// The descriptor's layout-type field (bits 62-63).
uint64_t layoutField(Swizzle s) {
  return s == Swizzle::None   ? 0
         : s == Swizzle::B128 ? 1
         : s == Swizzle::B64  ? 2
                              : 3;
}

uint64_t descriptor(uint32_t start, uint32_t leading, uint32_t stride,
                    Swizzle s) {
  return (uint64_t(start >> 4) & 0x3fff) |
         ((uint64_t(leading >> 4) & 0x3fff) << 16) |
         ((uint64_t(stride >> 4) & 0x3fff) << 32) | (layoutField(s) << 62);
}

/// A swizzled layout's rows: row r of `pitch` bytes (the swizzle's width)
/// keeps its 16-byte chunk c at chunk c ^ ((r / rowsPerPhase) % chunks),
/// where a 128-byte line holds 128 / pitch rows: the ISA's figures of the
/// 32B, 64B and 128B swizzle modes, each repeating after 8 lines.
uint32_t swizzledByte(uint32_t row, uint32_t byte, unsigned pitch) {
  unsigned chunks = pitch / 16, rowsPerLine = 128 / pitch;
  uint32_t chunk = (byte / 16) ^ ((row / rowsPerLine) % chunks);
  return row * pitch + chunk * 16 + byte % 16;
}

/// An operand of R rows (M or N) by 16 columns of K stored K-major at
/// `base`: the shared bytes of each element, and the descriptor.
struct Placement {
  std::map<std::pair<unsigned, unsigned>, uint32_t> at; // (row, k) -> byte
  uint64_t desc = 0;
};

Placement placeKMajor(unsigned rows, Swizzle s, uint32_t base) {
  Placement p;
  if (s == Swizzle::None) {
    // Core matrices of 8 rows x 16 bytes, each contiguous; the two k
    // halves 128 bytes apart (LBO), groups of 8 rows 256 apart (SBO).
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned k = 0; k < 16; ++k)
        p.at[{r, k}] =
            base + (r / 8) * 256 + (k / 8) * 128 + (r % 8) * 16 + (k % 8) * 2;
    p.desc = descriptor(base, 128, 256, s);
    return p;
  }
  // Rows of the swizzle's width (K continues past 16 in a real tile); 8-row
  // groups one 8-row block apart (SBO); LBO unused.
  unsigned pitch = swizzleBytes(s);
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned k = 0; k < 16; ++k)
      p.at[{r, k}] = base + swizzledByte(r, 2 * k, pitch);
  p.desc = descriptor(base, 16, 8 * pitch, s);
  return p;
}

/// B (16 x N) stored MN-major (N contiguous) at `base`.
Placement placeMnMajor(unsigned n, Swizzle s, uint32_t base) {
  Placement p;
  if (s == Swizzle::None) {
    // Core matrices of 8 k rows x 8 columns (16 bytes a row), each
    // contiguous; the two k halves 128 bytes apart (LBO), 8-column groups
    // 256 apart (SBO).
    for (unsigned c = 0; c < n; ++c)
      for (unsigned k = 0; k < 16; ++k)
        p.at[{c, k}] =
            base + (c / 8) * 256 + (k / 8) * 128 + (k % 8) * 16 + (c % 8) * 2;
    p.desc = descriptor(base, 128, 256, s);
    return p;
  }
  // Atoms of 8 k rows x (pitch / 2) columns, rows swizzled; the two k
  // halves one atom apart (SBO), column blocks two atoms apart (LBO).
  unsigned pitch = swizzleBytes(s), columns = pitch / 2, atom = 8 * pitch;
  for (unsigned c = 0; c < n; ++c)
    for (unsigned k = 0; k < 16; ++k)
      p.at[{c, k}] = base + (c / columns) * 2 * atom + (k / 8) * atom +
                     swizzledByte(k % 8, 2 * (c % columns), pitch);
  p.desc = descriptor(base, 2 * atom, atom, s);
  return p;
}

struct WgmmaCase {
  unsigned n = 16;
  Swizzle swizzleA = Swizzle::B128, swizzleB = Swizzle::B128;
  bool registerA = false, mnMajorB = false;
  bool accumulate = false, negateA = false;
  /// Where the threads' fence.proxy.async goes relative to the barrier
  /// after their stores of the operands: before it (right), after it (too
  /// late for the other warps' reads), or nowhere.
  enum class ProxyFence { BeforeBarrier, AfterBarrier, None };
  ProxyFence fence = ProxyFence::BeforeBarrier;
};

/// The PTX of one warpgroup copying `imageBytes` of shared memory in from
/// `image`, optionally loading C (and A's fragments) from global memory,
/// running one wgmma and storing each thread's accumulators to `out`.
std::string wgmmaPtx(const WgmmaCase &c, unsigned imageBytes,
                     const std::string &afterMma = "") {
  unsigned regs = c.n / 2;
  std::string d;
  for (unsigned i = 0; i < regs; ++i)
    d += (i ? ", %d" : "%d") + std::to_string(i);
  std::string body = "  .shared .align 1024 .b8 smem[" +
                     std::to_string(imageBytes) +
                     "];\n"
                     "  .reg .pred %p<3>;\n"
                     "  .reg .b32 %r<12>;\n"
                     "  .reg .b32 %d<" +
                     std::to_string(regs) +
                     ">;\n"
                     "  .reg .b32 %a<4>;\n"
                     "  .reg .b64 %rd<12>;\n"
                     "  ld.param.u64 %rd1, [image];\n"
                     "  ld.param.u64 %rd2, [out];\n"
                     "  ld.param.u64 %rd3, [descA];\n"
                     "  ld.param.u64 %rd4, [descB];\n"
                     "  ld.param.u64 %rd5, [c];\n"
                     "  ld.param.u64 %rd6, [aFragments];\n"
                     "  cvta.to.global.u64 %rd1, %rd1;\n"
                     "  cvta.to.global.u64 %rd2, %rd2;\n"
                     "  cvta.to.global.u64 %rd5, %rd5;\n"
                     "  cvta.to.global.u64 %rd6, %rd6;\n"
                     "  mov.u32 %r1, %tid.x;\n"
                     "  mul.lo.u32 %r2, %r1, 16;\n"
                     "COPY:\n"
                     "  setp.ge.u32 %p1, %r2, " +
                     std::to_string(imageBytes) +
                     ";\n"
                     "  @%p1 bra COPIED;\n"
                     "  cvt.u64.u32 %rd7, %r2;\n"
                     "  add.u64 %rd8, %rd1, %rd7;\n"
                     "  ld.global.v4.u32 {%r3, %r4, %r5, %r6}, [%rd8];\n"
                     "  mov.u32 %r7, smem;\n"
                     "  add.u32 %r7, %r7, %r2;\n"
                     "  st.shared.v4.u32 [%r7], {%r3, %r4, %r5, %r6};\n"
                     "  add.u32 %r2, %r2, 2048;\n"
                     "  bra.uni COPY;\n"
                     "COPIED:\n" +
                     // Each thread's stores are made visible to the async
                     // proxy before the barrier that orders them before
                     // every warp's wgmma.
                     (c.fence == WgmmaCase::ProxyFence::BeforeBarrier
                          ? "  fence.proxy.async.shared::cta;\n"
                          : "") +
                     "  bar.sync 0;\n" +
                     (c.fence == WgmmaCase::ProxyFence::AfterBarrier
                          ? "  fence.proxy.async.shared::cta;\n"
                          : "") +
                     "  mul.wide.u32 %rd9, %r1, " + std::to_string(4 * regs) +
                     ";\n"
                     "  add.u64 %rd10, %rd5, %rd9;\n"
                     "  add.u64 %rd11, %rd2, %rd9;\n";
  for (unsigned i = 0; i < regs; ++i)
    body += "  ld.global.u32 %d" + std::to_string(i) + ", [%rd10+" +
            std::to_string(4 * i) + "];\n";
  body += "  mul.wide.u32 %rd9, %r1, 16;\n"
          "  add.u64 %rd9, %rd6, %rd9;\n"
          "  ld.global.v4.u32 {%a0, %a1, %a2, %a3}, [%rd9];\n"
          "  setp.ne.u32 %p2, " +
          std::to_string(c.accumulate) +
          ", 0;\n"
          "  wgmma.fence.sync.aligned;\n"
          "  wgmma.mma_async.sync.aligned.m64n" +
          std::to_string(c.n) + "k16.f32.bf16.bf16 {" + d + "}, " +
          (c.registerA ? "{%a0, %a1, %a2, %a3}" : "%rd3") + ", %rd4, %p2, " +
          (c.negateA ? "-1" : "1") + ", 1, " + (c.registerA ? "" : "0, ") +
          (c.mnMajorB ? "1" : "0") +
          ";\n"
          "  wgmma.commit_group.sync.aligned;\n" +
          afterMma + "  wgmma.wait_group.sync.aligned 0;\n";
  for (unsigned i = 0; i < regs; ++i)
    body += "  st.global.u32 [%rd11+" + std::to_string(4 * i) + "], %d" +
            std::to_string(i) + ";\n";
  body += "  ret;\n";
  return kernelPtx(".param .u64 image, .param .u64 out, .param .u64 descA, "
                   ".param .u64 descB, .param .u64 c, .param .u64 aFragments",
                   body);
}

float aValue(unsigned m, unsigned k) {
  return static_cast<float>(int((m * 16 + k) * 37 % 256) - 128);
}
float bValue(unsigned k, unsigned n) {
  return static_cast<float>(int((k * 256 + n) * 13 % 128) - 64);
}
float cValue(unsigned m, unsigned n) { return (m * 256 + n) * 0.25f - 100; }

/// Runs one case; "" when every accumulator is right, else the first
/// difference or the launch's error.
std::string runWgmma(const WgmmaCase &c, const std::string &afterMma = "") {
  const uint32_t bBase = 8192, imageBytes = 8192 + 32768;
  std::vector<uint8_t> image(imageBytes, 0);
  auto put = [&](uint32_t at, float value) {
    uint16_t bits = exactBFloat(value);
    std::memcpy(image.data() + at, &bits, 2);
  };
  Placement a = placeKMajor(64, c.swizzleA, 0);
  for (unsigned m = 0; m < 64; ++m)
    for (unsigned k = 0; k < 16; ++k)
      put(a.at[{m, k}], aValue(m, k));
  Placement b = c.mnMajorB ? placeMnMajor(c.n, c.swizzleB, bBase)
                           : placeKMajor(c.n, c.swizzleB, bBase);
  for (unsigned n = 0; n < c.n; ++n)
    for (unsigned k = 0; k < 16; ++k)
      put(b.at[{n, k}], bValue(k, n));

  // Thread (warp w, lane l = 4 g + t): register d[4 j + 2 i + e] is D(16 w +
  // g + 8 i, 8 j + 2 t + e); A register a[2 h + i] holds A(16 w + g + 8 i,
  // 2 t + 8 h + e) in half e (the ISA's .m64nNk16 fragment figures).
  unsigned regs = c.n / 2;
  auto rowOf = [](unsigned thread, unsigned r) {
    return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((r / 2) % 2);
  };
  auto colOf = [](unsigned thread, unsigned r) {
    return 8 * (r / 4) + 2 * (thread % 4) + r % 2;
  };
  Device device;
  uint8_t *imageOnDevice = allocateArray<uint8_t>(device, imageBytes);
  std::memcpy(imageOnDevice, image.data(), imageBytes);
  float *out = allocateArray<float>(device, 128 * regs);
  float *cOnDevice = allocateArray<float>(device, 128 * regs);
  uint32_t *fragments = allocateArray<uint32_t>(device, 128 * 4);
  for (unsigned thread = 0; thread < 128; ++thread) {
    for (unsigned r = 0; r < regs; ++r)
      cOnDevice[thread * regs + r] = cValue(rowOf(thread, r), colOf(thread, r));
    for (unsigned r = 0; r < 4; ++r) {
      unsigned row = 16 * (thread / 32) + (thread % 32) / 4 + 8 * (r % 2);
      unsigned k = 2 * (thread % 4) + 8 * (r / 2);
      fragments[thread * 4 + r] =
          exactBFloat(aValue(row, k)) |
          (uint32_t(exactBFloat(aValue(row, k + 1))) << 16);
    }
  }
  auto module = parse(wgmmaPtx(c, imageBytes, afterMma));
  if (!module)
    return "does not load";
  LaunchResult result =
      launch(device, *module,
             {addressOf(imageOnDevice), addressOf(out), a.desc, b.desc,
              addressOf(cOnDevice), addressOf(fragments)},
             128);
  if (!result.ok)
    return result.error;
  for (unsigned thread = 0; thread < 128; ++thread)
    for (unsigned r = 0; r < regs; ++r) {
      unsigned m = rowOf(thread, r), n = colOf(thread, r);
      double expected = 0;
      for (unsigned k = 0; k < 16; ++k)
        expected += double(aValue(m, k)) * bValue(k, n);
      if (c.negateA)
        expected = -expected;
      if (c.accumulate)
        expected += cValue(m, n);
      if (out[thread * regs + r] != static_cast<float>(expected))
        return "D(" + std::to_string(m) + ", " + std::to_string(n) +
               ") = " + std::to_string(out[thread * regs + r]) + ", expected " +
               std::to_string(expected);
    }
  return "";
}

TEST(PtxEmulatorWgmma, KMajorOperandsEverySwizzle) {
  for (Swizzle s : {Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128})
    for (unsigned n : {8u, 64u, 256u}) {
      WgmmaCase c;
      c.n = n;
      c.swizzleA = c.swizzleB = s;
      EXPECT_EQ(runWgmma(c), "") << "swizzle " << int(s) << ", N " << n;
    }
}

TEST(PtxEmulatorWgmma, MnMajorBEverySwizzle) {
  // B stored N-contiguous, as a row-major V tile is for O += P V.
  for (Swizzle s : {Swizzle::None, Swizzle::B32, Swizzle::B64, Swizzle::B128})
    for (unsigned n : {16u, 128u}) {
      WgmmaCase c;
      c.n = n;
      c.swizzleB = s;
      c.mnMajorB = true;
      EXPECT_EQ(runWgmma(c), "") << "swizzle " << int(s) << ", N " << n;
    }
}

TEST(PtxEmulatorWgmma, RegisterAAccumulateAndNegate) {
  WgmmaCase c;
  c.n = 64;
  c.registerA = true;
  c.mnMajorB = true;
  c.accumulate = true;
  EXPECT_EQ(runWgmma(c), "");
  WgmmaCase negated;
  negated.negateA = true;
  negated.accumulate = true;
  EXPECT_EQ(runWgmma(negated), "");
}

TEST(PtxEmulatorWgmma, F16Accumulators) {
  // wgmma.mma_async.m64n8k16.f16.f16.f16: D and C are N / 4 = 2 f16x2
  // registers a thread, accumulator q = 4 j + 2 i + e of the f32 layout
  // (D(16 w + g + 8 i, 8 j + 2 t + e)) in half q % 2 of register q / 2.
  // Integers whose every sum is exact in f16 (|D| <= 16 * 16 + 32), A and
  // B K-major without swizzle.
  auto aInt = [](unsigned m, unsigned k) {
    return int((m * 16 + k) * 37 % 9) - 4;
  };
  auto bInt = [](unsigned k, unsigned n) {
    return int((k * 8 + n) * 13 % 9) - 4;
  };
  auto cInt = [](unsigned m, unsigned n) { return int((m * 8 + n) % 64) - 32; };
  // The f16 bits of an integer of magnitude below 2048.
  auto half = [](int v) {
    if (v == 0)
      return uint16_t(0);
    unsigned magnitude = v < 0 ? -v : v, exponent = 0;
    while ((magnitude >> exponent) > 1)
      ++exponent;
    unsigned fraction = (magnitude << (10 - exponent)) & 0x3ff;
    return static_cast<uint16_t>((v < 0 ? 0x8000 : 0) |
                                 ((exponent + 15) << 10) | fraction);
  };
  const uint32_t bBase = 2048, imageBytes = 4096;
  std::vector<uint8_t> image(imageBytes, 0);
  auto put = [&](uint32_t at, int value) {
    uint16_t bits = half(value);
    std::memcpy(image.data() + at, &bits, 2);
  };
  Placement a = placeKMajor(64, Swizzle::None, 0);
  Placement b = placeKMajor(8, Swizzle::None, bBase);
  for (unsigned k = 0; k < 16; ++k) {
    for (unsigned m = 0; m < 64; ++m)
      put(a.at[{m, k}], aInt(m, k));
    for (unsigned n = 0; n < 8; ++n)
      put(b.at[{n, k}], bInt(k, n));
  }
  Device device;
  uint8_t *imageOnDevice = allocateArray<uint8_t>(device, imageBytes);
  std::memcpy(imageOnDevice, image.data(), imageBytes);
  uint32_t *cOnDevice = allocateArray<uint32_t>(device, 128 * 2);
  uint32_t *out = allocateArray<uint32_t>(device, 128 * 2);
  auto rowOf = [](unsigned thread, unsigned q) {
    return 16 * (thread / 32) + (thread % 32) / 4 + 8 * ((q / 2) % 2);
  };
  auto colOf = [](unsigned thread, unsigned q) {
    return 8 * (q / 4) + 2 * (thread % 4) + q % 2;
  };
  for (unsigned thread = 0; thread < 128; ++thread)
    for (unsigned q = 0; q < 4; ++q)
      cOnDevice[thread * 2 + q / 2] |=
          uint32_t(half(cInt(rowOf(thread, q), colOf(thread, q))))
          << (16 * (q % 2));
  auto module = parse(kernelPtx(
      ".param .u64 image, .param .u64 out, .param .u64 descA, .param .u64 "
      "descB, .param .u64 c",
      "  .shared .align 1024 .b8 smem[4096];\n"
      "  .reg .b32 %r<8>;\n"
      "  .reg .b64 %rd<12>;\n"
      "  ld.param.u64 %rd1, [image];\n"
      "  ld.param.u64 %rd2, [out];\n"
      "  ld.param.u64 %rd3, [descA];\n"
      "  ld.param.u64 %rd4, [descB];\n"
      "  ld.param.u64 %rd5, [c];\n"
      // Each of the 128 threads copies 32 bytes of the image.
      "  mov.u32 %r1, %tid.x;\n"
      "  mul.wide.u32 %rd6, %r1, 32;\n"
      "  add.u64 %rd7, %rd1, %rd6;\n"
      "  mov.u32 %r2, smem;\n"
      "  mul.lo.u32 %r3, %r1, 32;\n"
      "  add.u32 %r2, %r2, %r3;\n"
      "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd7];\n"
      "  st.shared.v4.u32 [%r2], {%r4, %r5, %r6, %r7};\n"
      "  ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd7+16];\n"
      "  st.shared.v4.u32 [%r2+16], {%r4, %r5, %r6, %r7};\n"
      "  fence.proxy.async.shared::cta;\n"
      "  bar.sync 0;\n"
      "  mul.wide.u32 %rd8, %r1, 8;\n"
      "  add.u64 %rd9, %rd5, %rd8;\n"
      "  add.u64 %rd10, %rd2, %rd8;\n"
      "  ld.global.v2.u32 {%r4, %r5}, [%rd9];\n"
      "  wgmma.fence.sync.aligned;\n"
      "  wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r4, %r5}, %rd3, "
      "%rd4, 1, 1, 1, 0, 0;\n"
      "  wgmma.commit_group.sync.aligned;\n"
      "  wgmma.wait_group.sync.aligned 0;\n"
      "  st.global.v2.u32 [%rd10], {%r4, %r5};\n"
      "  ret;\n"));
  ASSERT_TRUE(module);
  LaunchResult result = launch(device, *module,
                               {addressOf(imageOnDevice), addressOf(out),
                                a.desc, b.desc, addressOf(cOnDevice)},
                               128);
  ASSERT_TRUE(result.ok) << result.error;
  for (unsigned thread = 0; thread < 128; ++thread)
    for (unsigned q = 0; q < 4; ++q) {
      unsigned m = rowOf(thread, q), n = colOf(thread, q);
      int expected = cInt(m, n);
      for (unsigned k = 0; k < 16; ++k)
        expected += aInt(m, k) * bInt(k, n);
      EXPECT_EQ((out[thread * 2 + q / 2] >> (16 * (q % 2))) & 0xffffu,
                half(expected))
          << "D(" << m << ", " << n << ") = " << expected;
    }
}

TEST(PtxEmulatorWgmma, UnretiredResultsAndOperands) {
  WgmmaCase c;
  // Reading an accumulator before the wait.
  std::string error = runWgmma(c, "  st.global.u32 [%rd11], %d0;\n");
  EXPECT_NE(error.find("touches %d0, an accumulator or A register of a "
                       "wgmma.mma_async"),
            std::string::npos)
      << error;
  // Overwriting A's registers before the wait (the next product's P written
  // over the running one's).
  WgmmaCase registers;
  registers.n = 64;
  registers.registerA = true;
  registers.mnMajorB = true;
  error = runWgmma(registers, "  mov.b32 %a1, 0;\n");
  EXPECT_NE(error.find("touches %a1, an accumulator or A register of a "
                       "wgmma.mma_async"),
            std::string::npos)
      << error;
  // Writing between the operands (A, unswizzled, in [0, 2048); B from
  // 8192; each thread a word of [6144, 6656)) before the wait is not a
  // conflict: each operand's bytes are its own range (a pipeline stage
  // between them may be refilled).
  WgmmaCase gap;
  gap.swizzleA = Swizzle::None;
  EXPECT_EQ(runWgmma(gap, "  mul.lo.u32 %r10, %r1, 4;\n"
                          "  mov.u32 %r11, smem;\n"
                          "  add.u32 %r11, %r11, %r10;\n"
                          "  st.shared.u32 [%r11+6144], %r3;\n"),
            "");
  // Overwriting B's bytes before the wait.
  error = runWgmma(c, "  st.shared.u32 [smem+8192], %r3;\n");
  EXPECT_NE(error.find("writes shared offset 8192, which a wgmma.mma_async of "
                       "warp"),
            std::string::npos)
      << error;
}

TEST(PtxEmulatorWgmma, GenericWritesNeedAProxyFence) {
  // The operands are stored with st.shared (the generic proxy) and read by
  // wgmma (the async proxy): each writing thread must fence.proxy.async
  // before the barrier that orders its stores before the other warps'
  // products.
  for (auto fence :
       {WgmmaCase::ProxyFence::None, WgmmaCase::ProxyFence::AfterBarrier}) {
    WgmmaCase c;
    c.fence = fence;
    std::string error = runWgmma(c);
    EXPECT_NE(error.find("through the async proxy, which warp "),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("through the generic proxy with no fence.proxy.async "
                         "of that warp after the write and ordered before "
                         "this read"),
              std::string::npos)
        << error;
  }
}

} // namespace
