//===- InstructionTest.cpp - Single PTX instructions on the emulator ------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Each test runs a tiny kernel through the PTX emulator and compares what it
// stored with values worked out by hand from NVIDIA's PTX ISA: the fragment
// layouts of mma.m16n8k16/k8 and ldmatrix (.x1 to .x4) and stmatrix,
// shfl.sync's lane arithmetic, cvt's rounding and .satfinite, the special
// cases of ex2/lg2.approx.ftz, min/max (the canonical NaN) and copysign,
// the 16-bit float reductions (red.add.noftz), the forms that do nothing
// here (fence.proxy.tensormap::generic, griddepcontrol), and the faults a
// launch reports. Nothing here is derived from
// the emulator's own code: the fragments are built on the host from the
// ISA's tables and the kernels only move registers in and out.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestSupport.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace attn::ptxemu;
using namespace attn::ptxemu::testing;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// The IEEE binary16 pattern of a normal (or zero) float that binary16 holds
/// exactly: sign, 5-bit exponent biased by 15, 10-bit fraction.
uint16_t exactHalf(float value) {
  if (value == 0.0f)
    return std::signbit(value) ? 0x8000 : 0;
  uint16_t sign = value < 0 ? 0x8000 : 0;
  float magnitude = std::fabs(value);
  int exponent = std::ilogb(magnitude);
  EXPECT_GE(exponent, -14);
  EXPECT_LE(exponent, 15);
  float fraction = std::ldexp(magnitude, -exponent) - 1.0f; // in [0, 1)
  float scaled = fraction * 1024.0f;
  EXPECT_EQ(scaled, std::floor(scaled)) << value << " is not exact in f16";
  return static_cast<uint16_t>(sign | ((exponent + 15) << 10) |
                               static_cast<uint16_t>(scaled));
}

//===----------------------------------------------------------------------===//
// mma.sync
//===----------------------------------------------------------------------===//

/// Runs mma.sync.aligned.m16n8k{K}.row.col.f32.{TYPE}.{TYPE}.f32 on A (16xK),
/// B (Kx8) and C (16x8) of small integers and quarters, every product and
/// sum exact in f32, and checks each lane's four D elements.
void checkMma(const char *type, unsigned k) {
  bool isBFloat = std::string(type) == "bf16";
  auto halfBits = [&](float value) {
    return isBFloat ? exactBFloat(value) : exactHalf(value);
  };
  // Distinct entries: 37 and 13 are odd, so the maps are bijections mod 256
  // and mod 128. |A| <= 128 and |B| <= 64 are exact in bf16 and f16.
  float a[16][16], b[16][8], c[16][8];
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < k; ++col)
      a[row][col] = static_cast<float>(int((row * 16 + col) * 37 % 256) - 128);
  for (unsigned row = 0; row < k; ++row)
    for (unsigned col = 0; col < 8; ++col)
      b[row][col] = static_cast<float>(int((row * 8 + col) * 13 % 128) - 64);
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 8; ++col)
      c[row][col] = (row * 8 + col) * 0.25f - 8.0f;
  float d[16][8];
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 8; ++col) {
      double sum = c[row][col];
      for (unsigned kk = 0; kk < k; ++kk)
        sum += double(a[row][kk]) * double(b[kk][col]);
      d[row][col] = static_cast<float>(sum);
      ASSERT_EQ(double(d[row][col]), sum) << "not exact in f32";
    }

  Device device;
  // Per lane: 4 A registers, 2 B registers (k16; k8 uses the first 2 and
  // the first 1), 4 C values, 4 D values.
  uint32_t *aFragments = allocateArray<uint32_t>(device, 32 * 4);
  uint32_t *bFragments = allocateArray<uint32_t>(device, 32 * 2);
  float *cFragments = allocateArray<float>(device, 32 * 4);
  float *dFragments = allocateArray<float>(device, 32 * 4);
  // PTX ISA, "Matrix Fragments for mma.m16n8k16 (and m16n8k8) with floating
  // point type": groupID = laneid >> 2, threadID_in_group = laneid % 4; two
  // 16-bit elements per .b32 register, the lower-numbered in the low half.
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned group = lane >> 2, thread = lane % 4;
    unsigned aElements = k == 16 ? 8 : 4, bElements = k == 16 ? 4 : 2;
    for (unsigned i = 0; i < aElements; ++i) {
      unsigned row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
      unsigned col = thread * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      aFragments[lane * 4 + i / 2] |= uint32_t(halfBits(a[row][col]))
                                      << (16 * (i % 2));
    }
    for (unsigned i = 0; i < bElements; ++i) {
      unsigned row = thread * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      bFragments[lane * 2 + i / 2] |= uint32_t(halfBits(b[row][group]))
                                      << (16 * (i % 2));
    }
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = i < 2 ? group : group + 8, col = thread * 2 + (i & 1);
      cFragments[lane * 4 + i] = c[row][col];
    }
  }

  std::string shape = k == 16 ? "m16n8k16" : "m16n8k8";
  std::string aOperand = k == 16 ? "{%r1, %r2, %r3, %r4}" : "{%r1, %r2}";
  std::string bOperand = k == 16 ? "{%r5, %r6}" : "{%r5}";
  std::string body =
      "  .reg .b32 %r<8>;\n"
      "  .reg .f32 %f<8>;\n"
      "  .reg .b64 %rd<8>;\n"
      "  ld.param.u64 %rd1, [out];\n"
      "  ld.param.u64 %rd2, [a];\n"
      "  ld.param.u64 %rd3, [b];\n"
      "  ld.param.u64 %rd4, [c];\n"
      "  cvta.to.global.u64 %rd1, %rd1;\n"
      "  cvta.to.global.u64 %rd2, %rd2;\n"
      "  cvta.to.global.u64 %rd3, %rd3;\n"
      "  cvta.to.global.u64 %rd4, %rd4;\n"
      "  mov.u32 %r0, %laneid;\n"
      "  mul.wide.u32 %rd5, %r0, 16;\n"
      "  mul.wide.u32 %rd6, %r0, 8;\n"
      "  add.s64 %rd1, %rd1, %rd5;\n"
      "  add.s64 %rd2, %rd2, %rd5;\n"
      "  add.s64 %rd3, %rd3, %rd6;\n"
      "  add.s64 %rd4, %rd4, %rd5;\n"
      "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd2];\n"
      "  ld.global.v2.b32 {%r5, %r6}, [%rd3];\n"
      "  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd4];\n"
      "  mma.sync.aligned." +
      shape + ".row.col.f32." + type + "." + type + ".f32 " +
      "{%f4, %f5, %f6, %f7}, " + aOperand + ", " + bOperand +
      ", {%f0, %f1, %f2, %f3};\n"
      "  st.global.v4.f32 [%rd1], {%f4, %f5, %f6, %f7};\n"
      "  ret;\n";
  auto module = parse(kernelPtx(".param .u64 out, .param .u64 a, "
                                ".param .u64 b, .param .u64 c",
                                body));
  ASSERT_TRUE(module);
  LaunchResult result =
      launch(device, *module,
             {addressOf(dFragments), addressOf(aFragments),
              addressOf(bFragments), addressOf(cFragments)},
             32);
  ASSERT_TRUE(result.ok) << result.error;
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned group = lane >> 2, thread = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = i < 2 ? group : group + 8, col = thread * 2 + (i & 1);
      EXPECT_EQ(dFragments[lane * 4 + i], d[row][col])
          << type << " k" << k << " lane " << lane << " d" << i << " = D["
          << row << "][" << col << "]";
    }
  }
}

TEST(PtxEmulatorInstruction, MmaM16n8k16Bf16) { checkMma("bf16", 16); }
TEST(PtxEmulatorInstruction, MmaM16n8k16F16) { checkMma("f16", 16); }
TEST(PtxEmulatorInstruction, MmaM16n8k8Bf16) { checkMma("bf16", 8); }
TEST(PtxEmulatorInstruction, MmaM16n8k8F16) { checkMma("f16", 8); }

/// Runs mma.sync.aligned.m16n8k16.row.col.{DTYPE}.f16.f16.{CTYPE}, D and C
/// each f32 (four registers) or f16 (two f16x2, the even column in the low
/// half: PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point
/// type", accumulators C and D), on integers whose every sum is exact in
/// f16 (|D| <= 16 * 8 * 4 + 64), and checks each lane's four D elements.
void checkMmaAccumulators(const char *dtype, const char *ctype) {
  bool halfD = std::string(dtype) == "f16", halfC = std::string(ctype) == "f16";
  float a[16][16], b[16][8], c[16][8], d[16][8];
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 16; ++col)
      a[row][col] = static_cast<float>(int((row * 16 + col) * 37 % 17) - 8);
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 8; ++col)
      b[row][col] = static_cast<float>(int((row * 8 + col) * 13 % 9) - 4);
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 8; ++col) {
      c[row][col] = static_cast<float>(int(row * 8 + col) - 64);
      double sum = c[row][col];
      for (unsigned kk = 0; kk < 16; ++kk)
        sum += double(a[row][kk]) * double(b[kk][col]);
      d[row][col] = static_cast<float>(sum);
    }

  Device device;
  // Per lane: 4 A registers, 2 B registers, 4 C and 4 D registers (of
  // which f16 uses the first 2).
  uint32_t *aFragments = allocateArray<uint32_t>(device, 32 * 4);
  uint32_t *bFragments = allocateArray<uint32_t>(device, 32 * 2);
  uint32_t *cFragments = allocateArray<uint32_t>(device, 32 * 4);
  uint32_t *dFragments = allocateArray<uint32_t>(device, 32 * 4);
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned group = lane >> 2, thread = lane % 4;
    for (unsigned i = 0; i < 8; ++i) {
      unsigned row = (i < 2 || (i >= 4 && i < 6)) ? group : group + 8;
      unsigned col = thread * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      aFragments[lane * 4 + i / 2] |= uint32_t(exactHalf(a[row][col]))
                                      << (16 * (i % 2));
    }
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = thread * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      bFragments[lane * 2 + i / 2] |= uint32_t(exactHalf(b[row][group]))
                                      << (16 * (i % 2));
    }
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = i < 2 ? group : group + 8, col = thread * 2 + (i & 1);
      if (halfC)
        cFragments[lane * 4 + i / 2] |= uint32_t(exactHalf(c[row][col]))
                                        << (16 * (i % 2));
      else
        cFragments[lane * 4 + i] = bitsOf(c[row][col]);
    }
  }

  std::string dOperand = halfD ? "{%r9, %r10}" : "{%r9, %r10, %r11, %r12}";
  std::string cOperand = halfC ? "{%r13, %r14}" : "{%r13, %r14, %r15, %r16}";
  std::string body = "  .reg .b32 %r<17>;\n"
                     "  .reg .b64 %rd<8>;\n"
                     "  ld.param.u64 %rd1, [out];\n"
                     "  ld.param.u64 %rd2, [a];\n"
                     "  ld.param.u64 %rd3, [b];\n"
                     "  ld.param.u64 %rd4, [c];\n"
                     "  mov.u32 %r0, %laneid;\n"
                     "  mul.wide.u32 %rd5, %r0, 16;\n"
                     "  mul.wide.u32 %rd6, %r0, 8;\n"
                     "  add.s64 %rd1, %rd1, %rd5;\n"
                     "  add.s64 %rd2, %rd2, %rd5;\n"
                     "  add.s64 %rd3, %rd3, %rd6;\n"
                     "  add.s64 %rd4, %rd4, %rd5;\n"
                     "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd2];\n"
                     "  ld.global.v2.b32 {%r5, %r6}, [%rd3];\n"
                     "  ld.global.v4.b32 {%r13, %r14, %r15, %r16}, [%rd4];\n"
                     "  mma.sync.aligned.m16n8k16.row.col." +
                     std::string(dtype) + ".f16.f16." + ctype + " " + dOperand +
                     ", {%r1, %r2, %r3, %r4}, {%r5, %r6}, " + cOperand +
                     ";\n"
                     "  st.global." +
                     (halfD ? "v2" : "v4") + ".b32 [%rd1], " + dOperand +
                     ";\n"
                     "  ret;\n";
  auto module = parse(kernelPtx(".param .u64 out, .param .u64 a, "
                                ".param .u64 b, .param .u64 c",
                                body));
  ASSERT_TRUE(module);
  LaunchResult result = launch(device, *module,
                               {addressOf(dFragments), addressOf(aFragments),
                                addressOf(bFragments), addressOf(cFragments)},
                               32);
  ASSERT_TRUE(result.ok) << result.error;
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned group = lane >> 2, thread = lane % 4;
    for (unsigned i = 0; i < 4; ++i) {
      unsigned row = i < 2 ? group : group + 8, col = thread * 2 + (i & 1);
      uint32_t expected = halfD ? exactHalf(d[row][col]) : bitsOf(d[row][col]);
      uint32_t got =
          halfD ? (dFragments[lane * 4 + i / 2] >> (16 * (i % 2))) & 0xffffu
                : dFragments[lane * 4 + i];
      EXPECT_EQ(got, expected)
          << dtype << " += " << ctype << ": lane " << lane << " d" << i
          << " = D[" << row << "][" << col << "] = " << d[row][col];
    }
  }
}

TEST(PtxEmulatorInstruction, MmaF16Accumulators) {
  checkMmaAccumulators("f16", "f16");
}
TEST(PtxEmulatorInstruction, MmaF16AccumulatorIntoF32) {
  checkMmaAccumulators("f32", "f16");
}
TEST(PtxEmulatorInstruction, MmaF32AccumulatorIntoF16) {
  checkMmaAccumulators("f16", "f32");
}

TEST(PtxEmulatorInstruction, MmaF16AccumulatorRoundsToNearestEven) {
  // D = C + A B in f16 with C = 1 (0x3c00), A[0][0] = 1 and A[0][1] =
  // 2^-15 (a subnormal): 1 + 2^-11 is halfway between 1 and 1 + 2^-10 and
  // goes to the even 0x3c00; 1 + 3 2^-11 halfway between 0x3c01 and
  // 0x3c02 goes to 0x3c02; 1 + 2^-11 + 2^-30 is just above the half and
  // goes to 0x3c01 (rounded once: through f32 it would be the tie, 0x3c00;
  // the ISA leaves the internal precision open, rounding once is the
  // emulator's model, as for f32); 65504 + 16 (the largest f16 plus half an
  // ulp) overflows to infinity, 0x7c00.
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 32 * 2);
  auto module = parse(kernelPtx(".param .u64 out", R"(
  .reg .pred %p<3>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r0, %laneid;
  mul.wide.u32 %rd2, %r0, 8;
  add.s64 %rd1, %rd1, %rd2;
  // A: lane 0's a0 holds A[0][0] = 1 and A[0][1] = 2^-15 (row 0, k 0
  // and 1).
  setp.eq.u32 %p1, %r0, 0;
  selp.b32 %r1, 0x02003c00, 0, %p1;
  mov.u32 %r2, 0;
  // B: lane 4 g + t holds B[2 t][g] (low) and B[2 t + 1][g] (high) in b0;
  // lane 4 g gives B[0][g], B[1][g]: column 0 (2^-11, 0), column 1
  // (3 2^-11, 0), column 2 (2^-11, 2^-15), column 3 (16, 0).
  setp.eq.u32 %p2, %r0, 0;
  selp.b32 %r3, 0x00001000, 0, %p2;
  setp.eq.u32 %p2, %r0, 4;
  selp.b32 %r4, 0x00001600, 0, %p2;
  or.b32 %r3, %r3, %r4;
  setp.eq.u32 %p2, %r0, 8;
  selp.b32 %r4, 0x02001000, 0, %p2;
  or.b32 %r3, %r3, %r4;
  setp.eq.u32 %p2, %r0, 12;
  selp.b32 %r4, 0x00004c00, 0, %p2;
  or.b32 %r3, %r3, %r4;
  // C: 1 everywhere except row 0, column 3 (lane 1's c1, the high half of
  // its first register), 65504.
  mov.u32 %r5, 0x3c003c00;
  setp.eq.u32 %p2, %r0, 1;
  selp.b32 %r5, 0x7bff3c00, %r5, %p2;
  mov.u32 %r6, 0x3c003c00;
  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r7, %r8}, {%r1, %r2, %r2, %r2}, {%r3, %r2}, {%r5, %r6};
  st.global.v2.b32 [%rd1], {%r7, %r8};
  ret;
)"));
  ASSERT_TRUE(module);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  ASSERT_TRUE(result.ok) << result.error;
  // Row 0 is lanes 0-3's d0, d1 (the low and high halves of their first
  // register): columns 2 t and 2 t + 1.
  EXPECT_EQ(out[0] & 0xffffu, 0x3c00u); // column 0
  EXPECT_EQ(out[0] >> 16, 0x3c02u);     // column 1
  EXPECT_EQ(out[2] & 0xffffu, 0x3c01u); // column 2
  EXPECT_EQ(out[2] >> 16, 0x7c00u);     // column 3
  // Every other element is C's 1.
  EXPECT_EQ(out[4], 0x3c003c00u);
  EXPECT_EQ(out[1], 0x3c003c00u);
}

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

/// The shared row (of 16 bytes) whose address lane L supplies: a bijection
/// on 0..31, so every lane's address matters.
unsigned sharedRowOf(unsigned lane) { return (5 * lane + 3) % 32; }

/// Fills 512 bytes of shared memory (32 rows of 8 b16) from global memory,
/// then runs ldmatrix.sync.aligned.m8n8.{COUNT}{.trans}.shared.b16 with
/// lane L addressing row sharedRowOf(L), and checks every lane's registers.
void checkLdmatrix(unsigned count, bool transposed,
                   bool bareX1Register = false) {
  Device device;
  uint16_t *source = allocateArray<uint16_t>(device, 256);
  uint32_t *out = allocateArray<uint32_t>(device, 32 * 4);
  for (unsigned i = 0; i < 256; ++i)
    source[i] = static_cast<uint16_t>(0x1000 + 7 * i);
  // .x1's register alone or as the ISA writes it, a one-register list.
  std::string destination = count == 4   ? "{%r1, %r2, %r3, %r4}"
                            : count == 2 ? "{%r1, %r2}"
                            : bareX1Register ? "%r1"
                                             : "{%r1}";
  std::string body =
      "  .shared .align 16 .b8 smem[512];\n"
      "  .reg .b32 %r<12>;\n"
      "  .reg .b64 %rd<8>;\n"
      "  ld.param.u64 %rd1, [out];\n"
      "  ld.param.u64 %rd2, [src];\n"
      "  cvta.to.global.u64 %rd1, %rd1;\n"
      "  cvta.to.global.u64 %rd2, %rd2;\n"
      "  mov.u32 %r0, %laneid;\n"
      "  mul.wide.u32 %rd3, %r0, 16;\n"
      "  add.s64 %rd2, %rd2, %rd3;\n"
      "  add.s64 %rd1, %rd1, %rd3;\n"
      "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd2];\n"
      "  mov.u32 %r5, smem;\n"
      "  shl.b32 %r6, %r0, 4;\n"
      "  add.u32 %r6, %r5, %r6;\n"
      "  st.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};\n"
      "  bar.sync 0;\n"
      "  mov.u32 %r1, 0;\n"
      "  mov.u32 %r2, 0;\n"
      "  mov.u32 %r3, 0;\n"
      "  mov.u32 %r4, 0;\n"
      // The row address: smem + 16 * ((5 * lane + 3) % 32).
      "  mad.lo.u32 %r7, %r0, 5, 3;\n"
      "  and.b32 %r7, %r7, 31;\n"
      "  shl.b32 %r7, %r7, 4;\n"
      "  add.u32 %r7, %r5, %r7;\n"
      "  ldmatrix.sync.aligned.m8n8.x" +
      std::to_string(count) + (transposed ? ".trans" : "") +
      ".shared.b16 " + destination +
      ", [%r7];\n"
      "  st.global.v4.b32 [%rd1], {%r1, %r2, %r3, %r4};\n"
      "  ret;\n";
  auto module = parse(kernelPtx(".param .u64 out, .param .u64 src", body));
  ASSERT_TRUE(module);
  LaunchResult result =
      launch(device, *module, {addressOf(out), addressOf(source)}, 32);
  ASSERT_TRUE(result.ok) << result.error;

  // PTX ISA, ldmatrix: threads 8i..8i+7 supply the addresses of rows 0..7
  // of matrix i; each thread receives, in destination register i, row
  // laneid / 4 and elements 2 (laneid % 4) and 2 (laneid % 4) + 1 of matrix
  // i (the first in the low half). With .trans the matrix is read column
  // by column: the thread receives elements [2 (l % 4)][l / 4] and
  // [2 (l % 4) + 1][l / 4] of the matrix as stored.
  auto element = [&](unsigned matrix, unsigned row, unsigned col) {
    return source[8 * sharedRowOf(8 * matrix + row) + col];
  };
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned matrix = 0; matrix < 4; ++matrix) {
      uint32_t expected = 0;
      if (matrix < count) {
        unsigned row = lane / 4, col = 2 * (lane % 4);
        uint16_t lo = transposed ? element(matrix, col, row)
                                 : element(matrix, row, col);
        uint16_t hi = transposed ? element(matrix, col + 1, row)
                                 : element(matrix, row, col + 1);
        expected = (uint32_t(hi) << 16) | lo;
      }
      EXPECT_EQ(out[lane * 4 + matrix], expected)
          << "x" << count << (transposed ? ".trans" : "") << " lane "
          << lane << " register " << matrix;
    }
}

/// stmatrix.sync.aligned.m8n8.x{COUNT}{.trans}.shared.b16: each lane's
/// registers hold the fragments ldmatrix would give it (PTX ISA, stmatrix:
/// "the inverse of ldmatrix"); lane 8 i + r addresses row r of matrix i.
/// The shared rows are then copied out and compared element by element.
void checkStmatrix(unsigned count, bool transposed) {
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 32 * 4);
  // Element (matrix, row, col) of the matrices as they must land.
  auto element = [](unsigned matrix, unsigned row, unsigned col) {
    return static_cast<uint16_t>(0x2000 + 64 * matrix + 8 * row + col);
  };
  std::string sources = count == 4   ? "{%r1, %r2, %r3, %r4}"
                        : count == 2 ? "{%r1, %r2}"
                                     : "%r1";
  std::string body = "  .shared .align 16 .b8 smem[512];\n"
                     "  .reg .b32 %r<12>;\n"
                     "  .reg .b64 %rd<8>;\n"
                     "  ld.param.u64 %rd1, [out];\n"
                     "  ld.param.u64 %rd2, [fragments];\n"
                     "  cvta.to.global.u64 %rd1, %rd1;\n"
                     "  cvta.to.global.u64 %rd2, %rd2;\n"
                     "  mov.u32 %r0, %laneid;\n"
                     "  mul.wide.u32 %rd3, %r0, 16;\n"
                     "  add.s64 %rd2, %rd2, %rd3;\n"
                     "  add.s64 %rd1, %rd1, %rd3;\n"
                     "  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd2];\n"
                     "  mov.u32 %r5, smem;\n"
                     // The row address: smem + 16 * ((5 * lane + 3) % 32).
                     "  mad.lo.u32 %r7, %r0, 5, 3;\n"
                     "  and.b32 %r7, %r7, 31;\n"
                     "  shl.b32 %r7, %r7, 4;\n"
                     "  add.u32 %r7, %r5, %r7;\n"
                     "  stmatrix.sync.aligned.m8n8.x" +
                     std::to_string(count) + (transposed ? ".trans" : "") +
                     ".shared.b16 [%r7], " + sources +
                     ";\n"
                     "  bar.warp.sync -1;\n"
                     "  shl.b32 %r6, %r0, 4;\n"
                     "  add.u32 %r6, %r5, %r6;\n"
                     "  ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r6];\n"
                     "  st.global.v4.b32 [%rd1], {%r1, %r2, %r3, %r4};\n"
                     "  ret;\n";
  // Lane l's register i: row l / 4, columns 2 (l % 4) and + 1 of matrix i,
  // or of its transpose with .trans (low half first). Rows no matrix
  // writes are left zero; lanes past the matrices hold zeros too.
  uint32_t *fragments = allocateArray<uint32_t>(device, 32 * 4);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned matrix = 0; matrix < count; ++matrix) {
      unsigned row = lane / 4, col = 2 * (lane % 4);
      uint16_t lo =
          transposed ? element(matrix, col, row) : element(matrix, row, col);
      uint16_t hi = transposed ? element(matrix, col + 1, row)
                               : element(matrix, row, col + 1);
      fragments[lane * 4 + matrix] = (uint32_t(hi) << 16) | lo;
    }
  auto module =
      parse(kernelPtx(".param .u64 out, .param .u64 fragments", body));
  ASSERT_TRUE(module);
  LaunchResult result =
      launch(device, *module, {addressOf(out), addressOf(fragments)}, 32);
  if (count < 4) {
    // Rows of matrices past COUNT are read back without having been
    // written: the emulator says so.
    EXPECT_FALSE(result.ok);
    EXPECT_NE(result.error.find("which nothing wrote"), std::string::npos)
        << result.error;
    return;
  }
  ASSERT_TRUE(result.ok) << result.error;
  const uint16_t *shared = reinterpret_cast<const uint16_t *>(out);
  for (unsigned matrix = 0; matrix < 4; ++matrix)
    for (unsigned row = 0; row < 8; ++row)
      for (unsigned col = 0; col < 8; ++col)
        EXPECT_EQ(shared[8 * sharedRowOf(8 * matrix + row) + col],
                  element(matrix, row, col))
            << "x4" << (transposed ? ".trans" : "") << " matrix " << matrix
            << " row " << row << " col " << col;
}

TEST(PtxEmulatorInstruction, LdmatrixX4) { checkLdmatrix(4, false); }
TEST(PtxEmulatorInstruction, LdmatrixX4Trans) { checkLdmatrix(4, true); }
TEST(PtxEmulatorInstruction, LdmatrixX2) { checkLdmatrix(2, false); }
TEST(PtxEmulatorInstruction, LdmatrixX2Trans) { checkLdmatrix(2, true); }
TEST(PtxEmulatorInstruction, LdmatrixX1) { checkLdmatrix(1, false); }
TEST(PtxEmulatorInstruction, LdmatrixX1Trans) { checkLdmatrix(1, true); }
TEST(PtxEmulatorInstruction, LdmatrixX1BareRegister) {
  checkLdmatrix(1, false, /*bareX1Register=*/true);
}
TEST(PtxEmulatorInstruction, StmatrixX4) { checkStmatrix(4, false); }
TEST(PtxEmulatorInstruction, StmatrixX4Trans) { checkStmatrix(4, true); }
TEST(PtxEmulatorInstruction, StmatrixX2LeavesTheOtherRows) {
  checkStmatrix(2, false);
}

TEST(PtxEmulatorInstruction, StmatrixX1) {
  // stmatrix.sync.aligned.m8n8.x1.shared.b16 [p], {r}: lane l holds row
  // l / 4, columns 2 (l % 4) and + 1 of the one matrix (low half first);
  // lanes 0-7 address its rows 0-7 (lane r at shared row 8 - r, counting
  // in 16-byte rows). Lanes 0-7 then read back the row they addressed.
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 32 * 4);
  auto module = parse(kernelPtx(".param .u64 out", R"(
  .shared .align 16 .b8 smem[256];
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %laneid;
  shr.u32 %r1, %r0, 2;
  and.b32 %r2, %r0, 3;
  shl.b32 %r2, %r2, 1;
  mad.lo.u32 %r3, %r1, 8, %r2;
  add.u32 %r3, %r3, 0x2000;
  add.u32 %r4, %r3, 1;
  shl.b32 %r4, %r4, 16;
  or.b32 %r5, %r3, %r4;
  mov.u32 %r6, smem;
  and.b32 %r7, %r0, 7;
  sub.u32 %r7, 8, %r7;
  shl.b32 %r7, %r7, 4;
  add.u32 %r7, %r6, %r7;
  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r7], {%r5};
  bar.warp.sync -1;
  setp.lt.u32 %p1, %r0, 8;
  @!%p1 bra DONE;
  ld.shared.v4.b32 {%r8, %r9, %r10, %r11}, [%r7];
  mul.wide.u32 %rd2, %r0, 16;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v4.b32 [%rd3], {%r8, %r9, %r10, %r11};
DONE:
  ret;
)"));
  ASSERT_TRUE(module);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  ASSERT_TRUE(result.ok) << result.error;
  // Lane l's pair is (0x2000 + 8 (l / 4) + 2 (l % 4)) and + 1: element
  // (row, col) of the matrix is 0x2000 + 8 row + col, so row r read back
  // is 0x2000 + 8 r + c for c = 0..7.
  const uint16_t *rows = reinterpret_cast<const uint16_t *>(out);
  for (unsigned r = 0; r < 8; ++r)
    for (unsigned c = 0; c < 8; ++c)
      EXPECT_EQ(rows[8 * r + c], 0x2000 + 8 * r + c)
          << "row " << r << " col " << c;
}

//===----------------------------------------------------------------------===//
// shfl.sync
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorInstruction, ShflSync) {
  // Lane l's source value is l * l + 7. Each shuffle's result goes to
  // out[32 * i + l]; its predicate (where asked) to out[32 * kShuffles + l].
  struct Shuffle {
    const char *instruction;
    // The lane read by lane l, from the ISA's definition (a lane out of
    // range reads itself).
    unsigned (*sourceLane)(unsigned);
  };
  static const Shuffle shuffles[] = {
      {"shfl.sync.bfly.b32 %r2, %r1, 1, 0x1f, 0xffffffff;",
       [](unsigned l) { return l ^ 1; }},
      {"shfl.sync.bfly.b32 %r2, %r1, 2, 0x1f, 0xffffffff;",
       [](unsigned l) { return l ^ 2; }},
      {"shfl.sync.bfly.b32 %r2, %r1, 4, 0x1f, 0xffffffff;",
       [](unsigned l) { return l ^ 4; }},
      {"shfl.sync.bfly.b32 %r2, %r1, 8, 0x1f, 0xffffffff;",
       [](unsigned l) { return l ^ 8; }},
      {"shfl.sync.bfly.b32 %r2, %r1, 16, 0x1f, 0xffffffff;",
       [](unsigned l) { return l ^ 16; }},
      {"shfl.sync.bfly.b32 %r2, %r1, 31, 0x1f, 0xffffffff;",
       [](unsigned l) { return 31 - l; }},
      // up: j = l - b, in range when j >= maxLane = c = 0.
      {"shfl.sync.up.b32 %r2, %r1, 3, 0, 0xffffffff;",
       [](unsigned l) { return l >= 3 ? l - 3 : l; }},
      // down: j = l + b, in range when j <= maxLane = 31.
      {"shfl.sync.down.b32 %r2, %r1, 5, 0x1f, 0xffffffff;",
       [](unsigned l) { return l + 5 <= 31 ? l + 5 : l; }},
      // idx: j = b (the lane number 31 - l from a register).
      {"shfl.sync.idx.b32 %r2, %r1, %r3, 0x1f, 0xffffffff;",
       [](unsigned l) { return 31 - l; }},
      // idx over segments of 8 (c = (32 - 8) << 8 | 0x1f): segmask = 0x18,
      // j = (l & 0x18) | (3 & 7).
      {"shfl.sync.idx.b32 %r2, %r1, 3, 0x181f, 0xffffffff;",
       [](unsigned l) { return (l & 0x18) | 3; }},
      // up over segments of 8 (c = 0x1800): maxLane = l & 0x18.
      {"shfl.sync.up.b32 %r2, %r1, 1, 0x1800, 0xffffffff;",
       [](unsigned l) { return l % 8 >= 1 ? l - 1 : l; }},
      // down over segments of 8 (c = 0x181f): maxLane = (l & 0x18) | 7.
      {"shfl.sync.down.b32 %r2, %r1, 2, 0x181f, 0xffffffff;",
       [](unsigned l) { return l % 8 + 2 <= 7 ? l + 2 : l; }},
  };
  constexpr unsigned kShuffles = sizeof(shuffles) / sizeof(shuffles[0]);
  std::string body = "  .reg .pred %p<2>;\n"
                     "  .reg .b32 %r<8>;\n"
                     "  .reg .b64 %rd<4>;\n"
                     "  ld.param.u64 %rd1, [out];\n"
                     "  cvta.to.global.u64 %rd1, %rd1;\n"
                     "  mov.u32 %r0, %laneid;\n"
                     "  mul.wide.u32 %rd2, %r0, 4;\n"
                     "  add.s64 %rd1, %rd1, %rd2;\n"
                     "  mul.lo.u32 %r1, %r0, %r0;\n"
                     "  add.u32 %r1, %r1, 7;\n"
                     "  sub.u32 %r3, 31, %r0;\n";
  for (unsigned i = 0; i < kShuffles; ++i)
    body += std::string("  ") + shuffles[i].instruction + "\n" +
            "  st.global.b32 [%rd1+" + std::to_string(128 * i) + "], %r2;\n";
  // The predicate of down 5 (c = 0x1f): true where l + 5 <= 31.
  body += "  shfl.sync.down.b32 %r2|%p1, %r1, 5, 0x1f, 0xffffffff;\n"
          "  selp.u32 %r4, 1, 0, %p1;\n"
          "  st.global.b32 [%rd1+" +
          std::to_string(128 * kShuffles) +
          "], %r4;\n"
          "  ret;\n";
  auto module = parse(kernelPtx(".param .u64 out", body));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 32 * (kShuffles + 1));
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  ASSERT_TRUE(result.ok) << result.error;
  for (unsigned i = 0; i < kShuffles; ++i)
    for (unsigned lane = 0; lane < 32; ++lane) {
      unsigned from = shuffles[i].sourceLane(lane);
      EXPECT_EQ(out[32 * i + lane], from * from + 7)
          << shuffles[i].instruction << " lane " << lane << " should read "
          << from;
    }
  for (unsigned lane = 0; lane < 32; ++lane)
    EXPECT_EQ(out[32 * kShuffles + lane], lane + 5 <= 31 ? 1u : 0u)
        << "predicate of shfl.sync.down 5, lane " << lane;
}

//===----------------------------------------------------------------------===//
// Scalar instructions, one case per lane
//===----------------------------------------------------------------------===//

/// Runs BODY with lane l holding a[l] in %r1/%f1 (and its low half in %h1)
/// and b[l] in %r2/%f2; BODY leaves the result in %r3, which is returned
/// per lane.
std::vector<uint32_t> runLanes(const std::string &body,
                               const std::vector<uint32_t> &a,
                               const std::vector<uint32_t> &b = {}) {
  size_t lanes = a.size();
  EXPECT_LE(lanes, 32u);
  EXPECT_TRUE(b.empty() || b.size() == lanes);
  Device device;
  uint32_t *aMemory = allocateArray<uint32_t>(device, lanes);
  uint32_t *bMemory = allocateArray<uint32_t>(device, lanes);
  uint32_t *out = allocateArray<uint32_t>(device, lanes);
  for (size_t i = 0; i < lanes; ++i) {
    aMemory[i] = a[i];
    bMemory[i] = b.empty() ? 0 : b[i];
  }
  std::string text = "  .reg .pred %p<4>;\n"
                     "  .reg .b16 %h<4>;\n"
                     "  .reg .b32 %r<8>;\n"
                     "  .reg .f32 %f<8>;\n"
                     "  .reg .b64 %rd<8>;\n"
                     "  ld.param.u64 %rd1, [out];\n"
                     "  ld.param.u64 %rd2, [a];\n"
                     "  ld.param.u64 %rd3, [b];\n"
                     "  cvta.to.global.u64 %rd1, %rd1;\n"
                     "  cvta.to.global.u64 %rd2, %rd2;\n"
                     "  cvta.to.global.u64 %rd3, %rd3;\n"
                     "  mov.u32 %r0, %tid.x;\n"
                     "  mul.wide.u32 %rd4, %r0, 4;\n"
                     "  add.s64 %rd1, %rd1, %rd4;\n"
                     "  add.s64 %rd2, %rd2, %rd4;\n"
                     "  add.s64 %rd3, %rd3, %rd4;\n"
                     "  ld.global.b32 %r1, [%rd2];\n"
                     "  ld.global.b32 %r2, [%rd3];\n"
                     "  ld.global.f32 %f1, [%rd2];\n"
                     "  ld.global.f32 %f2, [%rd3];\n"
                     "  ld.global.b16 %h1, [%rd2];\n" +
                     body +
                     "  st.global.b32 [%rd1], %r3;\n"
                     "  ret;\n";
  auto module =
      parse(kernelPtx(".param .u64 out, .param .u64 a, .param .u64 b", text));
  if (!module)
    return {};
  LaunchResult result =
      launch(device, *module,
             {addressOf(out), addressOf(aMemory), addressOf(bMemory)},
             static_cast<uint32_t>(lanes));
  EXPECT_TRUE(result.ok) << result.error;
  return std::vector<uint32_t>(out, out + lanes);
}

constexpr uint32_t kPlusInf = 0x7f800000, kMinusInf = 0xff800000,
                   kQuietNaN = 0x7fc00000, kFloatMax = 0x7f7fffff;

/// An f32 input (bits) and the 16-bit pattern cvt.rn should make of it.
struct HalfCase {
  uint32_t input;
  uint16_t expected;
  const char *what;
};

// bf16 keeps 8 significant bits: its ulp at 1 is 2^-7, so 1 + 2^-8 is a
// tie (to 1, even), 1 + 3 2^-8 a tie (to 1 + 2^-6, even).
const HalfCase kBFloatCases[] = {
    {0x3f800000, 0x3f80, "1"},
    {0x3f808000, 0x3f80, "1 + 2^-8 (tie, down to even)"},
    {0x3f818000, 0x3f82, "1 + 3 2^-8 (tie, up to even)"},
    {0x3f808001, 0x3f81, "just above 1 + 2^-8"},
    {0xbf818000, 0xbf82, "-(1 + 3 2^-8)"},
    {0x7f7f7fff, 0x7f7f, "just below the tie under FLT_MAX"},
    {kFloatMax, 0x7f80, "FLT_MAX (overflows to +inf)"},
    {0xff7fffff, 0xff80, "-FLT_MAX (overflows to -inf)"},
    {kPlusInf, 0x7f80, "+inf"},
    {kMinusInf, 0xff80, "-inf"},
    {kQuietNaN, 0x7fff, "NaN (canonical)"},
    {0xffc00001, 0x7fff, "negative NaN with payload (canonical)"},
    {0x80000000, 0x8000, "-0"},
    {0x00018000, 0x0002, "f32 subnormal, tie to even bf16 subnormal"},
};

// f16 keeps 11 significant bits (ulp 2^-10 at 1), its largest finite is
// 65504 and values from 65520 (the tie with 2^16) up round to inf; its
// subnormals are multiples of 2^-24.
const HalfCase kHalfCases[] = {
    {0x3f800000, 0x3c00, "1"},
    {0x3f801000, 0x3c00, "1 + 2^-11 (tie, down to even)"},
    {0x3f803000, 0x3c02, "1 + 3 2^-11 (tie, up to even)"},
    {0x3f801001, 0x3c01, "just above 1 + 2^-11"},
    {0x477fe000, 0x7bff, "65504"},
    {0x477fefff, 0x7bff, "just below 65520"},
    {0x477ff000, 0x7c00, "65520 (tie, up to inf)"},
    {0xc9742400, 0xfc00, "-1e6 (overflows to -inf)"},
    {kQuietNaN, 0x7fff, "NaN (canonical)"},
    {0x33800000, 0x0001, "2^-24"},
    {0x33c00000, 0x0002, "1.5 2^-24 (tie, up to even)"},
    {0x34200000, 0x0002, "2.5 2^-24 (tie, down to even)"},
    {0x33000000, 0x0000, "2^-25 (tie, down to zero)"},
    {0x33000001, 0x0001, "just above 2^-25"},
    {0x33400000, 0x0001, "0.75 2^-24"},
    {0xb4200000, 0x8002, "-2.5 2^-24"},
    {0x387fe000, 0x0400, "1023.5 2^-24 (tie, up to the least normal)"},
    {0x38800000, 0x0400, "2^-14"},
};

TEST(PtxEmulatorInstruction, CvtRnBf16x2F32) {
  // cvt.rn.bf16x2.f32 d, a, b: a converted into the upper half, b into the
  // lower. Lane l pairs case l (as a) with case n - 1 - l (as b).
  std::vector<uint32_t> a, b;
  size_t n = std::size(kBFloatCases);
  for (size_t i = 0; i < n; ++i) {
    a.push_back(kBFloatCases[i].input);
    b.push_back(kBFloatCases[n - 1 - i].input);
  }
  std::vector<uint32_t> out =
      runLanes("  cvt.rn.bf16x2.f32 %r3, %f1, %f2;\n", a, b);
  ASSERT_EQ(out.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[i] >> 16, kBFloatCases[i].expected)
        << "upper half: " << kBFloatCases[i].what;
    EXPECT_EQ(out[i] & 0xffff, kBFloatCases[n - 1 - i].expected)
        << "lower half: " << kBFloatCases[n - 1 - i].what;
  }
}

TEST(PtxEmulatorInstruction, CvtRnF16x2F32) {
  std::vector<uint32_t> a, b;
  size_t n = std::size(kHalfCases);
  for (size_t i = 0; i < n; ++i) {
    a.push_back(kHalfCases[i].input);
    b.push_back(kHalfCases[n - 1 - i].input);
  }
  std::vector<uint32_t> out =
      runLanes("  cvt.rn.f16x2.f32 %r3, %f1, %f2;\n", a, b);
  ASSERT_EQ(out.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(out[i] >> 16, kHalfCases[i].expected)
        << "upper half: " << kHalfCases[i].what;
    EXPECT_EQ(out[i] & 0xffff, kHalfCases[n - 1 - i].expected)
        << "lower half: " << kHalfCases[n - 1 - i].what;
  }
}

TEST(PtxEmulatorInstruction, CvtRnF16F32) {
  std::vector<uint32_t> a;
  for (const HalfCase &c : kHalfCases)
    a.push_back(c.input);
  std::vector<uint32_t> out = runLanes("  cvt.rn.f16.f32 %h2, %f1;\n"
                                       "  cvt.u32.u16 %r3, %h2;\n",
                                       a);
  ASSERT_EQ(out.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(out[i], kHalfCases[i].expected) << kHalfCases[i].what;
}

TEST(PtxEmulatorInstruction, CvtRnBf16F32) {
  std::vector<uint32_t> a;
  for (const HalfCase &c : kBFloatCases)
    a.push_back(c.input);
  std::vector<uint32_t> out = runLanes("  cvt.rn.bf16.f32 %h2, %f1;\n"
                                       "  cvt.u32.u16 %r3, %h2;\n",
                                       a);
  ASSERT_EQ(out.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(out[i], kBFloatCases[i].expected) << kBFloatCases[i].what;
}

TEST(PtxEmulatorInstruction, CvtRnSatfiniteBf16x2F32) {
  // cvt.rn.satfinite.bf16x2.f32 d, a, b: a into the upper half, b into the
  // lower, rounded to nearest even; a result past bf16's largest finite
  // value 0x7f7f (3.3895e38) is that value with the input's sign, NaN
  // stays the canonical NaN (PTX ISA, cvt: .satfinite).
  std::vector<uint32_t> a = {kPlusInf,  kQuietNaN,  kFloatMax,
                             0x7f7f8000, 0x3fc00000, 0x3f808000};
  std::vector<uint32_t> b = {kMinusInf,  0x3f800000, 0xff7fffff,
                             0x7f7f7fff, 0xc0000000, 0x3f818000};
  std::vector<uint32_t> satfinite =
      runLanes("  cvt.rn.satfinite.bf16x2.f32 %r3, %f1, %f2;\n", a, b);
  std::vector<uint32_t> plain =
      runLanes("  cvt.rn.bf16x2.f32 %r3, %f1, %f2;\n", a, b);
  ASSERT_EQ(satfinite.size(), 6u);
  ASSERT_EQ(plain.size(), 6u);
  EXPECT_EQ(satfinite[0], 0x7f7fff7fu) << "+inf, -inf";
  EXPECT_EQ(satfinite[1], 0x7fff3f80u) << "NaN, 1";
  EXPECT_EQ(satfinite[2], 0x7f7fff7fu)
      << "+-FLT_MAX (round to +-inf, saturated)";
  EXPECT_EQ(satfinite[3], 0x7f7f7f7fu)
      << "the tie between 0x7f7f and inf (up to inf, saturated); just below "
         "it (down to 0x7f7f)";
  EXPECT_EQ(satfinite[4], 0x3fc0c000u) << "1.5, -2";
  EXPECT_EQ(satfinite[5], 0x3f803f82u) << "ties to even";
  EXPECT_EQ(plain[0], 0x7f80ff80u) << "without .satfinite: +inf, -inf";
  EXPECT_EQ(plain[2], 0x7f80ff80u) << "without .satfinite: +-FLT_MAX";
  EXPECT_EQ(plain[3], 0x7f807f7fu) << "without .satfinite: the tie";
}

TEST(PtxEmulatorInstruction, CvtRnSatfiniteF16) {
  // f16's largest finite value is 0x7bff (65504): 65520 rounds (a tie) to
  // inf and saturates to it, -1e6 to -65504; the scalar forms the same.
  std::vector<uint32_t> a = {0x477ff000, kPlusInf, kQuietNaN};
  std::vector<uint32_t> b = {0xc9742400, 0x3f800000, kMinusInf};
  std::vector<uint32_t> pair =
      runLanes("  cvt.rn.satfinite.f16x2.f32 %r3, %f1, %f2;\n", a, b);
  std::vector<uint32_t> half = runLanes("  cvt.rn.satfinite.f16.f32 %h2, %f1;\n"
                                        "  cvt.u32.u16 %r3, %h2;\n",
                                        a);
  std::vector<uint32_t> bfloat =
      runLanes("  cvt.rn.satfinite.bf16.f32 %h2, %f1;\n"
               "  cvt.u32.u16 %r3, %h2;\n",
               a);
  ASSERT_EQ(pair.size(), 3u);
  ASSERT_EQ(half.size(), 3u);
  ASSERT_EQ(bfloat.size(), 3u);
  EXPECT_EQ(pair[0], 0x7bfffbffu) << "65520, -1e6";
  EXPECT_EQ(pair[1], 0x7bff3c00u) << "+inf, 1";
  EXPECT_EQ(pair[2], 0x7ffffbffu) << "NaN, -inf";
  EXPECT_EQ(half[0], 0x7bffu) << "65520";
  EXPECT_EQ(half[1], 0x7bffu) << "+inf";
  EXPECT_EQ(half[2], 0x7fffu) << "NaN";
  EXPECT_EQ(bfloat[0], 0x4780u) << "65520 rounds to 65536 in bf16";
  EXPECT_EQ(bfloat[1], 0x7f7fu) << "+inf";
  EXPECT_EQ(bfloat[2], 0x7fffu) << "NaN";
}

TEST(PtxEmulatorInstruction, CvtF32F16) {
  // Widening is exact, subnormals included (they are normal in f32).
  struct {
    uint16_t input;
    uint32_t expected;
    const char *what;
  } cases[] = {
      {0x0001, 0x33800000, "least subnormal, 2^-24"},
      {0x03ff, 0x387fc000, "greatest subnormal, 1023 2^-24"},
      {0x8200, 0xb8000000, "-512 2^-24 = -2^-15"},
      {0x0400, 0x38800000, "least normal, 2^-14"},
      {0x3c00, 0x3f800000, "1"},
      {0x7bff, 0x477fe000, "65504"},
      {0x7c00, kPlusInf, "+inf"},
      {0xfc00, kMinusInf, "-inf"},
      {0x8000, 0x80000000, "-0"},
  };
  std::vector<uint32_t> a;
  for (auto &c : cases)
    a.push_back(c.input);
  std::vector<uint32_t> out = runLanes("  cvt.f32.f16 %f3, %h1;\n"
                                       "  mov.b32 %r3, %f3;\n",
                                       a);
  ASSERT_EQ(out.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(out[i], cases[i].expected) << cases[i].what;
  // A NaN stays a NaN.
  std::vector<uint32_t> nan = runLanes("  cvt.f32.f16 %f3, %h1;\n"
                                       "  mov.b32 %r3, %f3;\n",
                                       {0x7e00});
  ASSERT_EQ(nan.size(), 1u);
  EXPECT_TRUE(std::isnan(floatOf(nan[0])));
}

TEST(PtxEmulatorInstruction, Ex2ApproxFtz) {
  // PTX ISA, ex2.approx.ftz.f32: -inf -> +0, +-subnormal -> +1 (flushed to
  // zero first), +-0 -> +1, +inf -> +inf, NaN -> NaN; a subnormal result
  // is flushed to zero. Maximum relative error 2^-22 otherwise.
  std::vector<uint32_t> a = {kMinusInf,  kPlusInf,   kQuietNaN,
                             0x00000000, 0x80000000, 0x00000001,
                             0x80400000, bitsOf(-130.0f), bitsOf(-127.0f),
                             bitsOf(3.0f), bitsOf(-1.5f), bitsOf(0.5f)};
  std::vector<uint32_t> out = runLanes("  ex2.approx.ftz.f32 %f3, %f1;\n"
                                       "  mov.b32 %r3, %f3;\n",
                                       a);
  ASSERT_EQ(out.size(), a.size());
  EXPECT_EQ(out[0], 0u) << "ex2(-inf) = +0";
  EXPECT_EQ(out[1], kPlusInf) << "ex2(+inf) = +inf";
  EXPECT_TRUE(std::isnan(floatOf(out[2]))) << "ex2(NaN) = NaN";
  EXPECT_EQ(out[3], bitsOf(1.0f)) << "ex2(+0) = 1";
  EXPECT_EQ(out[4], bitsOf(1.0f)) << "ex2(-0) = 1";
  EXPECT_EQ(out[5], bitsOf(1.0f)) << "ex2(+subnormal) = 1 (flushed input)";
  EXPECT_EQ(out[6], bitsOf(1.0f)) << "ex2(-subnormal) = 1 (flushed input)";
  EXPECT_EQ(out[7], 0u) << "ex2(-130) = 2^-130 is subnormal: flushed to +0";
  EXPECT_EQ(out[8], 0u) << "ex2(-127) = 2^-127 is subnormal: flushed to +0";
  auto near = [](float got, double want) {
    return std::fabs(got - want) <= std::ldexp(std::fabs(want), -22);
  };
  EXPECT_TRUE(near(floatOf(out[9]), 8.0)) << floatOf(out[9]);
  EXPECT_TRUE(near(floatOf(out[10]), std::exp2(-1.5))) << floatOf(out[10]);
  EXPECT_TRUE(near(floatOf(out[11]), std::sqrt(2.0))) << floatOf(out[11]);
}

TEST(PtxEmulatorInstruction, Lg2ApproxFtz) {
  // PTX ISA, lg2.approx.ftz.f32: -inf -> NaN, negative -> NaN,
  // +-subnormal -> -inf (flushed), +-0 -> -inf, +inf -> +inf, NaN -> NaN.
  // Absolute error 2^-22 near 1 (relative 2^-22 elsewhere).
  std::vector<uint32_t> a = {0x00000000, 0x80000000,    0x00000001,
                             kPlusInf,   kMinusInf,     bitsOf(-1.0f),
                             kQuietNaN,  bitsOf(8.0f), bitsOf(1.0f),
                             bitsOf(0.75f)};
  std::vector<uint32_t> out = runLanes("  lg2.approx.ftz.f32 %f3, %f1;\n"
                                       "  mov.b32 %r3, %f3;\n",
                                       a);
  ASSERT_EQ(out.size(), a.size());
  EXPECT_EQ(out[0], kMinusInf) << "lg2(+0) = -inf";
  EXPECT_EQ(out[1], kMinusInf) << "lg2(-0) = -inf";
  EXPECT_EQ(out[2], kMinusInf) << "lg2(subnormal) = -inf (flushed input)";
  EXPECT_EQ(out[3], kPlusInf) << "lg2(+inf) = +inf";
  EXPECT_TRUE(std::isnan(floatOf(out[4]))) << "lg2(-inf) = NaN";
  EXPECT_TRUE(std::isnan(floatOf(out[5]))) << "lg2(-1) = NaN";
  EXPECT_TRUE(std::isnan(floatOf(out[6]))) << "lg2(NaN) = NaN";
  EXPECT_NEAR(floatOf(out[7]), 3.0, std::ldexp(3.0, -22));
  EXPECT_NEAR(floatOf(out[8]), 0.0, std::ldexp(1.0, -22));
  EXPECT_NEAR(floatOf(out[9]), std::log2(0.75), std::ldexp(1.0, -22));
}

TEST(PtxEmulatorInstruction, MaxMinNaN) {
  // max.f32/min.f32: a NaN operand yields the other operand (NaN only if
  // both are). With .NaN, a NaN operand yields the canonical NaN 0x7fffffff
  // whatever the NaN's sign and payload (PTX ISA, max: "the result is
  // canonical NaN if any of the inputs is NaN").
  std::vector<uint32_t> a = {kQuietNaN,    bitsOf(2.0f), kQuietNaN,
                             bitsOf(-1.0f), 0xffc00001,   bitsOf(5.0f)};
  std::vector<uint32_t> b = {bitsOf(2.0f), kQuietNaN,    kQuietNaN,
                             bitsOf(3.0f), bitsOf(1.0f), 0x7f800001};
  std::vector<uint32_t> max =
      runLanes("  max.f32 %f3, %f1, %f2;\n  mov.b32 %r3, %f3;\n", a, b);
  std::vector<uint32_t> maxNaN =
      runLanes("  max.NaN.f32 %f3, %f1, %f2;\n  mov.b32 %r3, %f3;\n", a, b);
  std::vector<uint32_t> min =
      runLanes("  min.f32 %f3, %f1, %f2;\n  mov.b32 %r3, %f3;\n", a, b);
  std::vector<uint32_t> minNaN =
      runLanes("  min.NaN.f32 %f3, %f1, %f2;\n  mov.b32 %r3, %f3;\n", a, b);
  std::vector<uint32_t> maxNaNFtz = runLanes(
      "  max.ftz.NaN.f32 %f3, %f1, %f2;\n  mov.b32 %r3, %f3;\n", a, b);
  ASSERT_EQ(max.size(), 6u);
  ASSERT_EQ(maxNaN.size(), 6u);
  ASSERT_EQ(min.size(), 6u);
  ASSERT_EQ(minNaN.size(), 6u);
  ASSERT_EQ(maxNaNFtz.size(), 6u);
  EXPECT_EQ(max[0], bitsOf(2.0f)) << "max(NaN, 2)";
  EXPECT_EQ(max[1], bitsOf(2.0f)) << "max(2, NaN)";
  EXPECT_TRUE(std::isnan(floatOf(max[2]))) << "max(NaN, NaN)";
  EXPECT_EQ(max[3], bitsOf(3.0f)) << "max(-1, 3)";
  EXPECT_EQ(max[4], bitsOf(1.0f)) << "max(-NaN, 1)";
  EXPECT_EQ(max[5], bitsOf(5.0f)) << "max(5, signalling NaN)";
  const uint32_t canonical = 0x7fffffff;
  for (unsigned lane : {0, 1, 2, 4, 5}) {
    EXPECT_EQ(maxNaN[lane], canonical) << "max.NaN, lane " << lane;
    EXPECT_EQ(minNaN[lane], canonical) << "min.NaN, lane " << lane;
    EXPECT_EQ(maxNaNFtz[lane], canonical) << "max.ftz.NaN, lane " << lane;
  }
  EXPECT_EQ(maxNaN[3], bitsOf(3.0f)) << "max.NaN(-1, 3)";
  EXPECT_EQ(min[0], bitsOf(2.0f)) << "min(NaN, 2)";
  EXPECT_EQ(min[1], bitsOf(2.0f)) << "min(2, NaN)";
  EXPECT_EQ(min[3], bitsOf(-1.0f)) << "min(-1, 3)";
  EXPECT_EQ(min[4], bitsOf(1.0f)) << "min(-NaN, 1)";
  EXPECT_EQ(minNaN[3], bitsOf(-1.0f)) << "min.NaN(-1, 3)";
}

TEST(PtxEmulatorInstruction, MaxMinNaNHalves) {
  // The 16-bit forms, per half (high half from the high 16 bits): with
  // .NaN a NaN in either operand gives the canonical NaN 0x7fff of f16 and
  // bf16; without it the other operand. Lane 0: bf16 (NaN, 1) and (2, -3);
  // lane 1: bf16 (0.5, -NaN) and (0.25, 7); lane 2: f16 (NaN, 1) and
  // (2, -3).
  std::vector<uint32_t> a = {0x7fc13f80, 0x3f00ffc0, 0x7e013c00};
  std::vector<uint32_t> b = {0x4000c040, 0x3e8040e0, 0x4000c200};
  auto run = [&](const std::string &op) {
    return runLanes("  " + op + " %r3, %r1, %r2;\n", a, b);
  };
  std::vector<uint32_t> maxNaN = run("max.NaN.bf16x2");
  std::vector<uint32_t> max = run("max.bf16x2");
  std::vector<uint32_t> minNaN = run("min.NaN.f16x2");
  ASSERT_EQ(maxNaN.size(), 3u);
  ASSERT_EQ(max.size(), 3u);
  ASSERT_EQ(minNaN.size(), 3u);
  EXPECT_EQ(maxNaN[0], 0x7fff3f80u) << "max.NaN(NaN, 2), max.NaN(1, -3)";
  EXPECT_EQ(maxNaN[1], 0x3f007fffu) << "max.NaN(0.5, 0.25), max.NaN(-NaN, 7)";
  EXPECT_EQ(max[0], 0x40003f80u) << "max(NaN, 2), max(1, -3)";
  EXPECT_EQ(max[1], 0x3f0040e0u) << "max(0.5, 0.25), max(-NaN, 7)";
  EXPECT_EQ(minNaN[2], 0x7fffc200u) << "f16 min.NaN(NaN, 2), min.NaN(1, -3)";
}

TEST(PtxEmulatorInstruction, CopysignF32) {
  // copysign.f32 d, a, b: the magnitude of b with the sign of a.
  std::vector<uint32_t> a = {bitsOf(-1.0f), bitsOf(2.0f), 0x80000000,
                             0x00000000,    bitsOf(-2.0f)};
  std::vector<uint32_t> b = {bitsOf(3.5f), bitsOf(-0.25f), kPlusInf,
                             0x80000000,   kQuietNaN};
  std::vector<uint32_t> out =
      runLanes("  copysign.f32 %f3, %f1, %f2;\n  mov.b32 %r3, %f3;\n", a, b);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], bitsOf(-3.5f));
  EXPECT_EQ(out[1], bitsOf(0.25f));
  EXPECT_EQ(out[2], kMinusInf);
  EXPECT_EQ(out[3], 0x00000000u);
  EXPECT_TRUE(std::isnan(floatOf(out[4])));
  EXPECT_TRUE(out[4] & 0x80000000u) << "the NaN takes a's sign";
}

//===----------------------------------------------------------------------===//
// 16-bit float reductions
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorInstruction, RedAddNoftzHalves) {
  // red.global.add.noftz.{bf16x2,f16x2,bf16}: each 16-bit half of the word
  // at [a] plus b's, rounded to nearest even, subnormals kept (PTX ISA,
  // red: the 16-bit adds require .noftz and do not flush). One thread;
  // word[i] starts as init[i]. atom returns the old word.
  auto module = parse(kernelPtx(".param .u64 word", R"(
  .reg .b16 %h<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [word];
  cvta.to.global.u64 %rd1, %rd1;
  mov.b32 %r1, 0x3f003e80;
  red.global.add.noftz.bf16x2 [%rd1], %r1;
  red.global.add.noftz.bf16x2 [%rd1], %r1;
  mov.b32 %r2, 0x3f803b80;
  red.global.add.noftz.bf16x2 [%rd1+4], %r2;
  mov.b32 %r3, 0x3fc03bc0;
  red.global.add.noftz.bf16x2 [%rd1+4], %r3;
  mov.b32 %r4, 0x00010003;
  red.add.noftz.bf16x2 [%rd1+8], %r4;
  mov.b32 %r5, 0x38003c00;
  red.global.add.noftz.f16x2 [%rd1+12], %r5;
  mov.b16 %h1, 0x4040;
  red.global.add.noftz.bf16 [%rd1+16], %h1;
  mov.b32 %r6, 0;
  atom.global.add.noftz.bf16x2 %r7, [%rd1], %r6;
  st.global.u32 [%rd1+20], %r7;
  ret;
)"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *word = allocateArray<uint32_t>(device, 6);
  const uint32_t init[6] = {
      0x3f80c000, // bf16 (1, -2)
      0x43803f80, // bf16 (256, 1)
      0x00018001, // bf16 (2^-133, -2^-133): subnormals
      0x3c006800, // f16 (1, 2048)
      0xabcd3f80, // bf16 1 in the low half, 0xabcd above it
      0};
  for (int i = 0; i < 6; ++i)
    word[i] = init[i];
  LaunchResult result = launch(device, *module, {addressOf(word)}, 1);
  ASSERT_TRUE(result.ok) << result.error;
  // (1, -2) + 2 (0.5, 0.25) = (2, -1.5).
  EXPECT_EQ(word[0], 0x4000bfc0u);
  // (256, 1) + (1, 2^-8) = (257, 1 + 2^-8): both ties, to the even
  // neighbours 256 and 1; + (1.5, 1.5 2^-8) = (257.5, 1 + 1.5 2^-8),
  // rounded up to 258 and 1 + 2^-7.
  EXPECT_EQ(word[1], 0x43813f81u);
  // (2^-133, -2^-133) + (2^-133, 3 2^-133) = (2 2^-133, 2 2^-133), not
  // flushed to zero.
  EXPECT_EQ(word[2], 0x00020002u);
  // f16 (1, 2048) + (0.5, 1) = (1.5, 2049): 2049 is a tie between 2048 and
  // 2050, to even: 2048.
  EXPECT_EQ(word[3], 0x3e006800u);
  // bf16 1 + 3 = 4 in the low half; the high half untouched.
  EXPECT_EQ(word[4], 0xabcd4080u);
  // atom's old value: word[0] before it added (0, 0).
  EXPECT_EQ(word[5], 0x4000bfc0u);
}

//===----------------------------------------------------------------------===//
// Forms with nothing to do here: the tensormap proxy fence, grid dependency
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorInstruction, TensormapFenceAndGridDependencyControl) {
  // fence.proxy.tensormap::generic (release; acquire of a 128-byte map in
  // global memory) and griddepcontrol.wait/.launch_dependents run and do
  // nothing: the emulator reads a tensor map from memory when a copy
  // issues, and launches a grid after the one before it completed.
  auto kernel = [](const std::string &acquired) {
    return kernelPtx(".param .u64 map, .param .u64 out",
                     "  .shared .align 16 .b8 smem[128];\n"
                     "  .reg .b32 %r<2>;\n"
                     "  .reg .b64 %rd<4>;\n"
                     "  griddepcontrol.wait;\n"
                     "  ld.param.u64 %rd1, [map];\n"
                     "  ld.param.u64 %rd2, [out];\n"
                     "  mov.u64 %rd3, smem;\n"
                     "  cvta.shared.u64 %rd3, %rd3;\n"
                     "  fence.proxy.tensormap::generic.release.gpu;\n"
                     "  fence.proxy.tensormap::generic.acquire.gpu [" +
                         acquired +
                         "], 128;\n"
                         "  fence.proxy.tensormap::generic.acquire.cta [" +
                         acquired +
                         "+0], 128;\n"
                         "  mov.u32 %r1, 9;\n"
                         "  st.global.u32 [%rd2], %r1;\n"
                         "  griddepcontrol.launch_dependents;\n"
                         "  ret;\n");
  };
  Device device;
  uint8_t *map = allocateArray<uint8_t>(device, 128);
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  auto inGlobal = parse(kernel("%rd1"));
  ASSERT_TRUE(inGlobal);
  LaunchResult result =
      launch(device, *inGlobal, {addressOf(map), addressOf(out)}, 32);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(out[0], 9u);
  // The acquire's address must be 128 bytes of global memory.
  auto inShared = parse(kernel("%rd3"));
  ASSERT_TRUE(inShared);
  result = launch(device, *inShared, {addressOf(map), addressOf(out)}, 32);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("fence.proxy.tensormap::generic.acquire of an "
                              "address that is not 128 bytes of global "
                              "memory"),
            std::string::npos)
      << result.error;
  uint8_t *shortMap = allocateArray<uint8_t>(device, 64);
  result = launch(device, *inGlobal, {addressOf(shortMap), addressOf(out)}, 32);
  EXPECT_FALSE(result.ok) << "a 64-byte allocation";
  // The acquire needs its size, 128; the fence needs .acquire or .release.
  for (const char *form :
       {"fence.proxy.tensormap::generic.acquire.gpu [%rd1], 64;",
        "fence.proxy.tensormap::generic.gpu;"}) {
    std::string error;
    auto module = parseModule(
        kernelPtx(".param .u64 map", std::string("  .reg .b64 %rd<2>;\n"
                                                 "  ld.param.u64 %rd1, [map];\n"
                                                 "  ") +
                                         form + "\n  ret;\n"),
        error);
    EXPECT_FALSE(module) << form;
  }
}

//===----------------------------------------------------------------------===//
// Faults
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorFault, OutOfBoundsGlobalStore) {
  auto body = [](unsigned offset) {
    return "  .reg .b32 %r<2>;\n"
           "  .reg .b64 %rd<2>;\n"
           "  ld.param.u64 %rd1, [out];\n"
           "  cvta.to.global.u64 %rd1, %rd1;\n"
           "  mov.u32 %r1, 7;\n"
           "  st.global.u32 [%rd1+" +
           std::to_string(offset) +
           "], %r1;\n"
           "  ret;\n";
  };
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 4); // 16 bytes
  // The last word in bounds is fine.
  auto inBounds = parse(kernelPtx(".param .u64 out", body(12)));
  ASSERT_TRUE(inBounds);
  LaunchResult ok = launch(device, *inBounds, {addressOf(out)}, 1);
  EXPECT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(out[3], 7u);
  // One past is not.
  auto outOfBounds = parse(kernelPtx(".param .u64 out", body(16)));
  ASSERT_TRUE(outOfBounds);
  LaunchResult fault = launch(device, *outOfBounds, {addressOf(out)}, 1);
  EXPECT_FALSE(fault.ok);
  EXPECT_NE(fault.error.find("out-of-bounds"), std::string::npos)
      << fault.error;
}

/// Lane 0 of each of two warps stores to the same shared word, with or
/// without a bar.sync between warp 0's store and warp 1's.
std::string sharedWritesPtx(bool barrier) {
  std::string body = "  .shared .align 4 .b32 word;\n"
                     "  .reg .pred %p<3>;\n"
                     "  .reg .b32 %r<4>;\n"
                     "  mov.u32 %r0, %tid.x;\n"
                     "  and.b32 %r1, %r0, 31;\n"
                     "  setp.eq.u32 %p1, %r1, 0;\n"
                     "  setp.lt.u32 %p2, %r0, 32;\n"
                     "  and.pred %p2, %p2, %p1;\n"
                     "  @%p2 st.shared.u32 [word], %r0;\n";
  if (barrier)
    body += "  bar.sync 0;\n";
  body += "  setp.ge.u32 %p2, %r0, 32;\n"
          "  and.pred %p2, %p2, %p1;\n"
          "  @%p2 st.shared.u32 [word], %r0;\n"
          "  ret;\n";
  return kernelPtx(".param .u64 out", body);
}

TEST(PtxEmulatorFault, SharedMemoryRace) {
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  auto ordered = parse(sharedWritesPtx(true));
  ASSERT_TRUE(ordered);
  LaunchResult ok = launch(device, *ordered, {addressOf(out)}, 64);
  EXPECT_TRUE(ok.ok) << ok.error;
  auto racing = parse(sharedWritesPtx(false));
  ASSERT_TRUE(racing);
  LaunchResult fault = launch(device, *racing, {addressOf(out)}, 64);
  EXPECT_FALSE(fault.ok);
  EXPECT_NE(fault.error.find("race"), std::string::npos) << fault.error;
}

TEST(PtxEmulatorFault, SharedReadNothingWrote) {
  auto module = parse(kernelPtx(".param .u64 out",
                                "  .shared .align 4 .b32 word;\n"
                                "  .reg .b32 %r<2>;\n"
                                "  .reg .b64 %rd<2>;\n"
                                "  ld.param.u64 %rd1, [out];\n"
                                "  cvta.to.global.u64 %rd1, %rd1;\n"
                                "  ld.shared.u32 %r1, [word];\n"
                                "  st.global.u32 [%rd1], %r1;\n"
                                "  ret;\n"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("nothing wrote"), std::string::npos)
      << result.error;
}

TEST(PtxEmulatorFault, DeadlockAtDifferentBarriers) {
  // Warp 0 waits at barrier 0, warp 1 at barrier 1; each barrier expects
  // all 64 threads of the CTA, so neither completes.
  auto module = parse(kernelPtx(".param .u64 out",
                                "  .reg .pred %p<2>;\n"
                                "  .reg .b32 %r<2>;\n"
                                "  mov.u32 %r0, %tid.x;\n"
                                "  setp.lt.u32 %p1, %r0, 32;\n"
                                "  @%p1 bra FIRST;\n"
                                "  bar.sync 1;\n"
                                "  bra.uni DONE;\n"
                                "FIRST:\n"
                                "  bar.sync 0;\n"
                                "DONE:\n"
                                "  ret;\n"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 64);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("deadlock"), std::string::npos) << result.error;
}

TEST(PtxEmulatorFault, DeadlockSpinningOnFlag) {
  // Both warps spin on a global flag that nothing sets.
  auto module = parse(kernelPtx(".param .u64 flag",
                                "  .reg .pred %p<2>;\n"
                                "  .reg .b32 %r<2>;\n"
                                "  .reg .b64 %rd<2>;\n"
                                "  ld.param.u64 %rd1, [flag];\n"
                                "  cvta.to.global.u64 %rd1, %rd1;\n"
                                "SPIN:\n"
                                "  ld.volatile.global.u32 %r1, [%rd1];\n"
                                "  setp.eq.u32 %p1, %r1, 0;\n"
                                "  @%p1 bra SPIN;\n"
                                "  ret;\n"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *flag = allocateArray<uint32_t>(device, 1);
  LaunchResult result = launch(device, *module, {addressOf(flag)}, 64);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.error.find("deadlock"), std::string::npos) << result.error;
}

TEST(PtxEmulatorFault, UnimplementedFormFailsToLoad) {
  struct {
    const char *form;
    const char *instruction;
  } cases[] = {
      {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
       "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, "
       "{%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r1, %r2, %r3, %r4};"},
      {"cvt.rn.satfinite.e4m3x2.f32",
       "cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;"},
  };
  for (auto &c : cases) {
    std::string ptx = kernelPtx(".param .u64 out",
                                std::string("  .reg .b16 %h<2>;\n"
                                            "  .reg .b32 %r<12>;\n"
                                            "  .reg .f32 %f<4>;\n"
                                            "  ") +
                                    c.instruction + "\n  ret;\n");
    std::string error;
    std::unique_ptr<Module> module = parseModule(ptx, error);
    EXPECT_FALSE(module) << c.form << " loaded";
    EXPECT_NE(error.find(c.form), std::string::npos) << error;
  }
}


//===----------------------------------------------------------------------===//
// The profile and the ordering of global memory between CTAs
//===----------------------------------------------------------------------===//

/// One warp: each lane stores a word to shared memory at lane * STRIDE
/// bytes and to global memory at lane * STRIDE bytes.
LaunchResult stridedStores(unsigned stride) {
  std::string body = "  .shared .align 16 .b8 buffer[4096];\n"
                     "  .reg .b32 %r<4>;\n"
                     "  .reg .b64 %rd<4>;\n"
                     "  ld.param.u64 %rd1, [out];\n"
                     "  cvta.to.global.u64 %rd1, %rd1;\n"
                     "  mov.u32 %r1, %tid.x;\n"
                     "  mul.lo.u32 %r2, %r1, " +
                     std::to_string(stride) +
                     ";\n"
                     "  st.shared.u32 [%r2], %r1;\n"
                     "  cvt.u64.u32 %rd2, %r2;\n"
                     "  add.s64 %rd3, %rd1, %rd2;\n"
                     "  st.global.u32 [%rd3], %r1;\n"
                     "  ret;\n";
  Device device;
  device.setProfileTraffic(true);
  uint32_t *out = allocateArray<uint32_t>(device, 1024);
  auto module = parse(kernelPtx(".param .u64 out", body));
  EXPECT_TRUE(module);
  return launch(device, *module, {addressOf(out)}, 32);
}

// Shared memory has 32 banks of 4 bytes: 32 lanes storing consecutive words
// take one wavefront, a stride of 128 bytes puts them all in bank 0 (32
// wavefronts), a stride of 8 bytes two lanes per bank (2). Global memory
// is read in 32-byte sectors: consecutive words fill 4, a 32-byte stride
// touches 32.
TEST(PtxEmulatorProfile, BankConflictsAndSectors) {
  struct Case {
    unsigned stride, wavefronts, sectors;
  } cases[] = {{4, 1, 4}, {8, 2, 8}, {128, 32, 32}, {32, 8, 32}};
  for (const Case &c : cases) {
    LaunchResult result = stridedStores(c.stride);
    ASSERT_TRUE(result.ok) << result.error;
    EXPECT_EQ(result.profile.sharedRequests, 1u) << "stride " << c.stride;
    EXPECT_EQ(result.profile.sharedIdealWavefronts, 1u) << "stride " << c.stride;
    EXPECT_EQ(result.profile.sharedWavefronts, c.wavefronts)
        << "stride " << c.stride;
    EXPECT_EQ(result.profile.globalRequests, 1u) << "stride " << c.stride;
    EXPECT_EQ(result.profile.globalSectors, c.sectors) << "stride " << c.stride;
  }
}

/// Two CTAs of one thread: CTA 1 writes data then raises a flag; CTA 0
/// spins on the flag (an atomic), then reads the data. WRITERFENCE puts
/// membar.gl (or FENCE) between CTA 1's data and its flag.
std::string flagHandoffPtx(bool writerFence,
                           const std::string &fence = "membar.gl") {
  std::string body = "  .reg .pred %p<3>;\n"
                     "  .reg .b32 %r<4>;\n"
                     "  .reg .b64 %rd<4>;\n"
                     "  ld.param.u64 %rd1, [data];\n"
                     "  cvta.to.global.u64 %rd1, %rd1;\n"
                     "  ld.param.u64 %rd2, [flag];\n"
                     "  cvta.to.global.u64 %rd2, %rd2;\n"
                     "  mov.u32 %r1, %ctaid.x;\n"
                     "  setp.eq.u32 %p1, %r1, 0;\n"
                     "  @%p1 bra READER;\n"
                     "  mov.u32 %r2, 42;\n"
                     "  st.global.u32 [%rd1], %r2;\n";
  if (writerFence)
    body += "  " + fence + ";\n";
  body += "  atom.global.add.u32 %r3, [%rd2], 1;\n"
          "  ret;\n"
          "READER:\n"
          "SPIN:\n"
          "  atom.global.or.b32 %r3, [%rd2], 0;\n"
          "  setp.eq.u32 %p2, %r3, 0;\n"
          "  @%p2 bra SPIN;\n"
          "  ld.global.u32 %r2, [%rd1];\n"
          "  st.global.u32 [%rd1+4], %r2;\n"
          "  ret;\n";
  return kernelPtx(".param .u64 data, .param .u64 flag", body);
}

// The PTX memory model orders CTA 1's data before CTA 0's read only through
// a fence before the flag's atomic (and the reader's atomic read of the flag
// after it): without the fence the read is flagged, though the value is
// there in the emulator's sequentially consistent memory.
TEST(PtxEmulatorFault, UnorderedReadOfAnotherCtasWrite) {
  for (bool writerFence : {true, false}) {
    Device device;
    uint32_t *data = allocateArray<uint32_t>(device, 2);
    uint32_t *flag = allocateArray<uint32_t>(device, 1);
    auto module = parse(flagHandoffPtx(writerFence));
    ASSERT_TRUE(module);
    const Kernel *kernel = module->findKernel("k");
    LaunchShape shape;
    shape.grid = {2, 1, 1};
    shape.block = {1, 1, 1};
    shape.residentCtas = 2;
    LaunchResult result = device.launch(
        *kernel, shape,
        packParameters(*kernel, {addressOf(data), addressOf(flag)}));
    if (writerFence) {
      EXPECT_TRUE(result.ok) << result.error;
      EXPECT_EQ(data[1], 42u);
    } else {
      EXPECT_FALSE(result.ok);
      EXPECT_NE(result.error.find("reads global memory that CTA 1 wrote"),
                std::string::npos)
          << result.error;
    }
  }
  // Neither a tensormap proxy fence nor griddepcontrol is a memory fence.
  for (const char *notAFence : {"fence.proxy.tensormap::generic.release.gpu",
                                "griddepcontrol.wait"}) {
    Device device;
    uint32_t *data = allocateArray<uint32_t>(device, 2);
    uint32_t *flag = allocateArray<uint32_t>(device, 1);
    auto module = parse(flagHandoffPtx(true, notAFence));
    ASSERT_TRUE(module);
    const Kernel *kernel = module->findKernel("k");
    LaunchShape shape;
    shape.grid = {2, 1, 1};
    shape.block = {1, 1, 1};
    shape.residentCtas = 2;
    LaunchResult result = device.launch(
        *kernel, shape,
        packParameters(*kernel, {addressOf(data), addressOf(flag)}));
    EXPECT_FALSE(result.ok) << notAFence;
    EXPECT_NE(result.error.find("reads global memory that CTA 1 wrote"),
              std::string::npos)
        << notAFence << ": " << result.error;
  }
}

} // namespace
