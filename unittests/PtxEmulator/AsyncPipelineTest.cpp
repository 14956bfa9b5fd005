//===- AsyncPipelineTest.cpp - mbarriers and bulk copies on the emulator --===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The Hopper synchronisation the warp-specialised kernels are built on, run
// on the PTX emulator: mbarrier phases, arrival, pending and transaction
// counts worked out by hand from the PTX ISA's definition (9.7.13.15); a
// producer/consumer ring of bulk copies (cp.async.bulk) guarded by full and
// empty mbarriers, which must compute the right sums with no race reported,
// and edits of it that a generator bug would make, each caught (a read
// before the full wait, a refill the consumers have not released, a phase
// that never completes); independent thread scheduling of a diverged warp
// (a lane's arrival in a block after the loop its warp-mates spin in, as
// nvcc lays it out, and a real deadlock of such a warp reported path by
// path); the faults of misused mbarriers; elect.sync; the
// scoped labels and registers of the inline-assembly blocks MLIR emits.
//
//===----------------------------------------------------------------------===//

#include "EmulatorTestSupport.h"

#include <cstdint>
#include <string>

using namespace attn::ptxemu;
using namespace attn::ptxemu::testing;

namespace {

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

//===----------------------------------------------------------------------===//
// Phases, arrivals and transaction bytes
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorMbarrier, PhasesArrivalsAndTransactions) {
  // One thread. An mbarrier expecting 2 arrivals: phase 0 completes at the
  // second arrival; phase 1 also waits for 64 transaction bytes. Each
  // predicate is stored as a word: out[i] = 1 when the wait saw the phase
  // complete.
  auto module = parse(kernelPtx(
      ".param .u64 out",
      "  .shared .align 8 .b64 bar;\n"
      "  .reg .pred %p<2>;\n"
      "  .reg .b32 %r<2>;\n"
      "  .reg .b64 %rd<4>;\n"
      "  ld.param.u64 %rd1, [out];\n"
      "  cvta.to.global.u64 %rd1, %rd1;\n"
      "  mbarrier.init.shared.b64 [bar], 2;\n"
      "  mbarrier.arrive.shared.b64 %rd2, [bar];\n" // phase 0: 1 left
      "  mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1], %r1;\n"              // 0
      "  mbarrier.arrive.shared.b64 %rd3, [bar];\n" // completes phase 0
      "  mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1+4], %r1;\n" // 1
      "  mbarrier.try_wait.parity.shared.b64 %p1, [bar], 0;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1+8], %r1;\n" // 1: phase 0 done
      "  mbarrier.try_wait.parity.shared.b64 %p1, [bar], 1;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1+12], %r1;\n" // 0: phase 1 current
      "  mbarrier.arrive.expect_tx.shared.b64 %rd2, [bar], 64;\n"
      "  mbarrier.arrive.shared.b64 _, [bar];\n" // arrivals done
      "  mbarrier.test_wait.parity.shared.b64 %p1, [bar], 1;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1+16], %r1;\n" // 0: 64 bytes due
      "  mbarrier.complete_tx.shared.b64 [bar], 48;\n"
      "  mbarrier.test_wait.parity.shared.b64 %p1, [bar], 1;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1+20], %r1;\n" // 0: 16 bytes due
      "  mbarrier.complete_tx.shared.b64 [bar], 16;\n"
      "  mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;\n"
      "  selp.u32 %r1, 1, 0, %p1;\n"
      "  st.global.u32 [%rd1+24], %r1;\n" // 1: phase 1 done
      "  mbarrier.inval.shared.b64 [bar];\n"
      "  st.shared.u64 [bar], %rd2;\n" // plain again
      "  ret;\n"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 7);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 1);
  ASSERT_TRUE(result.ok) << result.error;
  uint32_t expected[7] = {0, 1, 1, 0, 0, 0, 1};
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(out[i], expected[i]) << "wait " << i;
}

TEST(PtxEmulatorMbarrier, PendingCount) {
  // mbarrier.pending_count gives the pending arrival count of the phase
  // before the arrive-on operation that returned the state (PTX ISA,
  // mbarrier.pending_count). Expected count 5: arrivals of 2, 1 and a drop
  // of 1 see 5, 3 and 2 pending; the next arrival completes phase 0, and
  // phase 1 expects 4 (the drop lowered the count), which the next
  // arrival sees. The first state still names phase 0, complete by then.
  auto module = parse(kernelPtx(".param .u64 out", R"(
  .shared .align 8 .b64 bar;
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mbarrier.init.shared.b64 [bar], 5;
  mbarrier.arrive.noComplete.shared.b64 %rd2, [bar], 2;
  mbarrier.arrive.noComplete.shared.b64 %rd3, [bar], 1;
  mbarrier.arrive_drop.noComplete.shared.b64 %rd4, [bar], 1;
  mbarrier.arrive.shared.b64 %rd5, [bar];
  mbarrier.arrive.noComplete.shared.b64 %rd6, [bar], 1;
  mbarrier.pending_count.b64 %r1, %rd2;
  mbarrier.pending_count.b64 %r2, %rd3;
  mbarrier.pending_count.b64 %r3, %rd4;
  mbarrier.pending_count.b64 %r4, %rd6;
  mbarrier.test_wait.shared.b64 %p1, [bar], %rd2;
  selp.u32 %r5, 1, 0, %p1;
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.u32 [%rd1+16], %r5;
  ret;
)"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 5);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 1);
  ASSERT_TRUE(result.ok) << result.error;
  const uint32_t expected[5] = {5, 3, 2, 4, 1};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(out[i], expected[i]) << i;
}

//===----------------------------------------------------------------------===//
// A producer/consumer ring of bulk copies
//===----------------------------------------------------------------------===//

/// Warp 0 (its elected lane) produces: for each of 6 chunks of 32 floats it
/// waits until the consumers released the chunk's stage (the empty
/// mbarrier, from the third chunk on), announces 128 bytes on the stage's
/// full mbarrier and copies the chunk in with cp.async.bulk. Warps 1 and 2
/// consume: each waits for the stage's full phase, adds lane l's float to
/// its sum, and lane 0 releases the stage. out[32 (w - 1) + l] is warp w's
/// lane l's sum. The waits are MLIR's try_wait loop (a block with its own
/// predicate and labels, as nvgpu.mbarrier.try_wait.parity emits it).
const char *const kRingPtx = R"(
  .shared .align 16 .b8 stage[256];
  .shared .align 8 .b64 full[2];
  .shared .align 8 .b64 empty[2];
  .reg .pred %p<8>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<3>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  shr.u32 %r2, %r1, 5;
  and.b32 %r3, %r1, 31;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INIT_DONE;
  mbarrier.init.shared.b64 [full], 1;
  mbarrier.init.shared.b64 [full+8], 1;
  mbarrier.init.shared.b64 [empty], 2;
  mbarrier.init.shared.b64 [empty+8], 2;
INIT_DONE:
  bar.sync 0;
  mov.u32 %r4, 0;
  setp.ne.u32 %p2, %r2, 0;
  @%p2 bra CONSUME;
  elect.sync %r5|%p3, 0xffffffff;
  @!%p3 bra EXIT;
PRODUCE:
  and.b32 %r6, %r4, 1;
  shl.b32 %r7, %r6, 3;
  mov.u32 %r8, full;
  add.u32 %r8, %r8, %r7;
  mov.u32 %r9, empty;
  add.u32 %r9, %r9, %r7;
  shl.b32 %r10, %r6, 7;
  mov.u32 %r11, stage;
  add.u32 %r11, %r11, %r10;
  setp.lt.u32 %p4, %r4, 2;
  @%p4 bra FILL;
  shr.u32 %r12, %r4, 1;
  add.u32 %r12, %r12, 1;
  and.b32 %r12, %r12, 1;
  {
  .reg .pred P1;
  LAB_WAIT:
  mbarrier.try_wait.parity.shared.b64 P1, [%r9], %r12, 10000000;
  @P1 bra.uni DONE;
  bra.uni LAB_WAIT;
  DONE:
  }
FILL:
  mbarrier.arrive.expect_tx.shared.b64 _, [%r8], 128;
  mul.wide.u32 %rd3, %r4, 128;
  add.u64 %rd4, %rd1, %rd3;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r11], [%rd4], 128, [%r8];
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p6, %r4, 6;
  @%p6 bra PRODUCE;
  bra.uni EXIT;
CONSUME:
  mov.f32 %f1, 0f00000000;
NEXT:
  and.b32 %r6, %r4, 1;
  shl.b32 %r7, %r6, 3;
  mov.u32 %r8, full;
  add.u32 %r8, %r8, %r7;
  mov.u32 %r9, empty;
  add.u32 %r9, %r9, %r7;
  shl.b32 %r10, %r6, 7;
  mov.u32 %r11, stage;
  add.u32 %r11, %r11, %r10;
  shr.u32 %r12, %r4, 1;
  and.b32 %r12, %r12, 1;
  {
  .reg .pred P1;
  LAB_WAIT:
  mbarrier.try_wait.parity.shared.b64 P1, [%r8], %r12, 10000000;
  @P1 bra.uni DONE;
  bra.uni LAB_WAIT;
  DONE:
  }
  shl.b32 %r13, %r3, 2;
  add.u32 %r13, %r11, %r13;
  ld.shared.f32 %f2, [%r13];
  add.f32 %f1, %f1, %f2;
  setp.eq.u32 %p7, %r3, 0;
  @%p7 mbarrier.arrive.shared.b64 %rd5, [%r9];
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p6, %r4, 6;
  @%p6 bra NEXT;
  sub.u32 %r14, %r1, 32;
  mul.wide.u32 %rd6, %r14, 4;
  add.u64 %rd7, %rd2, %rd6;
  st.global.f32 [%rd7], %f1;
EXIT:
  ret;
)";

constexpr const char *kConsumerWait =
    "  mbarrier.try_wait.parity.shared.b64 P1, [%r8], %r12, 10000000;\n"
    "  @P1 bra.uni DONE;\n";
constexpr const char *kProducerWait =
    "  mbarrier.try_wait.parity.shared.b64 P1, [%r9], %r12, 10000000;\n"
    "  @P1 bra.uni DONE;\n";

struct RingRun {
  LaunchResult result;
  bool sumsRight = true;
};

RingRun runRing(const std::string &body) {
  RingRun run;
  auto module = parse(kernelPtx(".param .u64 src, .param .u64 out", body));
  EXPECT_TRUE(module);
  if (!module)
    return run;
  Device device;
  float *src = allocateArray<float>(device, 6 * 32);
  float *out = allocateArray<float>(device, 64);
  for (int i = 0; i < 6 * 32; ++i)
    src[i] = static_cast<float>(i % 32) + 0.25f * static_cast<float>(i / 32);
  run.result = launch(device, *module, {addressOf(src), addressOf(out)}, 96);
  // Lane l of each consumer: sum over chunks c of l + c / 4 = 6 l + 3.75.
  for (int w = 0; w < 2; ++w)
    for (int l = 0; l < 32; ++l)
      run.sumsRight = run.sumsRight &&
                      out[32 * w + l] == 6.0f * static_cast<float>(l) + 3.75f;
  return run;
}

TEST(PtxEmulatorMbarrier, ProducerConsumerRing) {
  RingRun run = runRing(kRingPtx);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(run.sumsRight);
}

TEST(PtxEmulatorMbarrier, ReadBeforeTheFullWaitIsCaught) {
  // The consumers read the stage without waiting for its full phase: before
  // the bulk copy (nothing wrote it yet) or after it (nothing orders the
  // copy before the read), whichever the schedule gives.
  RingRun run = runRing(replaced(kRingPtx, kConsumerWait, "  bra.uni DONE;\n"));
  ASSERT_FALSE(run.result.ok);
  EXPECT_TRUE(contains(run.result.error, "which nothing wrote") ||
              contains(run.result.error,
                       "written by the async proxy (a bulk copy) (line 62) "
                       "with no barrier or mbarrier wait ordering them"))
      << run.result.error;
  EXPECT_TRUE(contains(run.result.error, "ld.shared.f32")) << run.result.error;
}

TEST(PtxEmulatorMbarrier, RefillBeforeTheEmptyWaitIsCaught) {
  // The producer refills a stage without waiting until the consumers
  // released it: it overwrites chunks before they are read, and the
  // consumers see a phase of the full mbarrier that is not theirs.
  RingRun run = runRing(replaced(kRingPtx, kProducerWait, "  bra.uni DONE;\n"));
  EXPECT_FALSE(run.result.ok && run.sumsRight) << run.result.error;
}

TEST(PtxEmulatorMbarrier, ExpectingTooManyBytesDeadlocks) {
  // The full mbarrier expects 256 bytes where 128 come: its phase never
  // completes. The launch reports the deadlock and where each warp waits.
  RingRun run = runRing(
      replaced(kRingPtx, "mbarrier.arrive.expect_tx.shared.b64 _, [%r8], 128;",
               "mbarrier.arrive.expect_tx.shared.b64 _, [%r8], 256;"));
  ASSERT_FALSE(run.result.ok);
  EXPECT_TRUE(contains(run.result.error, "deadlock")) << run.result.error;
  EXPECT_TRUE(contains(run.result.error,
                       "(phase 0, parity 0: 0 of 1 arrivals and 128 "
                       "transaction bytes pending)"))
      << run.result.error;
}

TEST(PtxEmulatorMbarrier, WriteAfterReadWithoutReleaseIsARace) {
  // Warp 1 reads the stage a bulk copy filled (after waiting for it), then
  // raises a global flag; warp 0 spins on the flag and refills the stage.
  // A flag is not an mbarrier: nothing orders warp 1's read before the
  // async proxy's write.
  auto module = parse(kernelPtx(".param .u64 src, .param .u64 flag", R"(
  .shared .align 16 .b8 stage[16];
  .shared .align 8 .b64 full;
  .reg .pred %p<4>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [flag];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra READY;
  mbarrier.init.shared.b64 [full], 1;
  mbarrier.arrive.expect_tx.shared.b64 _, [full], 16;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [stage], [%rd1], 16, [full];
READY:
  bar.sync 0;
  setp.eq.u32 %p2, %r1, 32;
  @!%p2 bra PRODUCER;
  mbarrier.try_wait.parity.shared.b64 %p3, [full], 0;
  ld.shared.u32 %r2, [stage];
  st.volatile.global.u32 [%rd2], 1;
  bra.uni EXIT;
PRODUCER:
  @%p1 bra EXIT;
SPIN:
  ld.volatile.global.u32 %r3, [%rd2];
  setp.eq.u32 %p3, %r3, 0;
  @%p3 bra SPIN;
  mbarrier.arrive.expect_tx.shared.b64 _, [full], 16;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [stage], [%rd1], 16, [full];
EXIT:
  ret;
)"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *src = allocateArray<uint32_t>(device, 4);
  uint32_t *flag = allocateArray<uint32_t>(device, 1);
  LaunchResult result =
      launch(device, *module, {addressOf(src), addressOf(flag)}, 64);
  ASSERT_FALSE(result.ok);
  EXPECT_TRUE(contains(result.error, "shared-memory race: a bulk copy writes "
                                     "offset") &&
              contains(result.error, "read by warp 1 (line 28)"))
      << result.error;
}

//===----------------------------------------------------------------------===//
// Independent thread scheduling
//===----------------------------------------------------------------------===//

/// One warp; lane 0 initialises the mbarrier `bar` (one arrival), then the
/// layout nvcc gives `if (tid == 0) { arrive.expect_tx; copy } wait(bar)`:
/// the lanes other than 0 enter the wait loop (WAIT_LOOP) at once, lane 0
/// branches to a block placed after it (ISSUE) that announces 128 bytes,
/// copies src[0..31] into `stage` with a bulk copy and branches back to the
/// wait. Then lane l stores stage[l] + l to out[l].
std::string arriveAfterTheLoopPtx(const std::string &waitLoop) {
  return kernelPtx(".param .u64 src, .param .u64 out", R"(
  .shared .align 8 .b64 bar;
  .shared .align 16 .b8 stage[128];
  .reg .pred %p<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared.b64 [bar], 1;
  bar.sync 0;
  @%p1 bra ISSUE;
WAIT:
)" + waitLoop + R"(
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, stage;
  add.u32 %r3, %r3, %r2;
  ld.shared.u32 %r4, [%r3];
  add.u32 %r4, %r4, %r1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd2, %rd3;
  st.global.u32 [%rd3], %r4;
  ret;
ISSUE:
  mbarrier.arrive.expect_tx.shared.b64 _, [bar], 128;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [stage], [%rd1], 128, [bar];
  bra.uni WAIT;
)");
}

/// The wait loop as nvcc compiles `while (!try_wait(bar, 0));` and as
/// CUTLASS's ClusterBarrier::wait writes it in inline assembly.
const char *const kPlainWaitLoop = R"(
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
)";
const char *const kCutlassWaitLoop = R"(
  {
  .reg .pred P1;
  .reg .b32 %addr;
  mov.u32 %addr, bar;
  LAB_WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 P1, [%addr], 0, 10000000;
  @P1 bra DONE;
  bra LAB_WAIT;
  DONE:
  }
)";

TEST(PtxEmulatorScheduling, ArrivalAfterTheWaitLoopItsWarpMatesSpinIn) {
  // Lanes 1-31 fail their try_wait (lane 0 has not arrived); on sm_70 and
  // later they are scheduled independently of lane 0, which arrives, so
  // the phase completes and every lane reads the copied words:
  // out[l] = src[l] + l = 0x1000 + 7 l + l = 0x1000 + 8 l.
  for (const char *loop : {kPlainWaitLoop, kCutlassWaitLoop}) {
    auto module = parse(arriveAfterTheLoopPtx(loop));
    ASSERT_TRUE(module);
    Device device;
    uint32_t *src = allocateArray<uint32_t>(device, 32);
    uint32_t *out = allocateArray<uint32_t>(device, 32);
    for (uint32_t i = 0; i < 32; ++i)
      src[i] = 0x1000 + 7 * i;
    LaunchResult result =
        launch(device, *module, {addressOf(src), addressOf(out)}, 32);
    ASSERT_TRUE(result.ok) << result.error;
    for (uint32_t l = 0; l < 32; ++l)
      EXPECT_EQ(out[l], 0x1000 + 8 * l) << "lane " << l;
  }
}

TEST(PtxEmulatorScheduling, FlagSetAfterTheSpinLoopItsWarpMatesSpinIn) {
  // The same layout with a global flag instead of an mbarrier: lanes 1-31
  // spin on it (a whole slice that changes nothing), lane 0 sets it to 40
  // in the block after the loop. Lane l stores flag + l.
  auto module = parse(kernelPtx(".param .u64 flag, .param .u64 out", R"(
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra SET;
SPIN:
  ld.volatile.global.u32 %r2, [%rd1];
  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra SPIN;
  add.u32 %r2, %r2, %r1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd3, %rd2, %rd3;
  st.global.u32 [%rd3], %r2;
  ret;
SET:
  mov.u32 %r3, 40;
  st.volatile.global.u32 [%rd1], %r3;
  bra.uni SPIN;
)"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *flag = allocateArray<uint32_t>(device, 1);
  uint32_t *out = allocateArray<uint32_t>(device, 32);
  LaunchResult result =
      launch(device, *module, {addressOf(flag), addressOf(out)}, 32);
  ASSERT_TRUE(result.ok) << result.error;
  for (uint32_t l = 0; l < 32; ++l)
    EXPECT_EQ(out[l], 40 + l) << "lane " << l;
}

TEST(PtxEmulatorScheduling, DeadlockOfDivergedLanesNamesEachPath) {
  // Lane 0 waits on the second mbarrier (offset 8), which nothing arrives
  // on, before its arrival on the first (offset 0), where lanes 1-31 wait:
  // a real deadlock, reported with where each path of the warp waits.
  auto module = parse(kernelPtx(".param .u64 out", R"(
  .shared .align 8 .b64 bars[2];
  .reg .pred %p<4>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared.b64 [bars], 1;
  @%p1 mbarrier.init.shared.b64 [bars+8], 1;
  bar.sync 0;
  @%p1 bra ISSUE;
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [bars], 0;
  @!%p2 bra WAIT;
  ret;
ISSUE:
  mbarrier.try_wait.parity.shared.b64 %p3, [bars+8], 0;
  @!%p3 bra ISSUE;
  mbarrier.arrive.shared.b64 _, [bars];
  bra.uni WAIT;
)"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  ASSERT_FALSE(result.ok);
  EXPECT_TRUE(contains(result.error, "deadlock")) << result.error;
  // The warp's lowest path first, then the others.
  EXPECT_TRUE(contains(result.error,
                       "CTA (0,0,0) warp 0 waits on the mbarrier at shared "
                       "offset 0 (phase 0, parity 0: 1 of 1 arrivals and 0 "
                       "transaction bytes pending) at line 19 (@!%p2 bra "
                       "WAIT;) in lanes 1-31; lane 0 waits on the mbarrier "
                       "at shared offset 8 (phase 0, parity 0: 1 of 1 "
                       "arrivals and 0 transaction bytes pending) at line 23 "
                       "(@!%p3 bra ISSUE;)"))
      << result.error;
}

TEST(PtxEmulatorScheduling, CollectivesStillNeedTheWholeWarp) {
  // After lane 0 arrives it executes a bar.sync (barrier.sync.aligned) of
  // its own while its warp-mates, once their wait passes, execute another:
  // the aligned barrier needs the warp converged at one instruction.
  auto module = parse(kernelPtx(".param .u64 out", R"(
  .shared .align 8 .b64 bar;
  .reg .pred %p<3>;
  .reg .b32 %r<2>;
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared.b64 [bar], 1;
  bar.sync 0;
  @%p1 bra ISSUE;
WAIT:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra WAIT;
  bar.sync 0;
  ret;
ISSUE:
  mbarrier.arrive.shared.b64 _, [bar];
  bar.sync 0;
  bra.uni WAIT;
)"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  ASSERT_FALSE(result.ok);
  EXPECT_TRUE(contains(result.error,
                       "lanes of one warp wait at different collectives "
                       "(lines 23 and 19): divergent warp-synchronous code"))
      << result.error;
}

//===----------------------------------------------------------------------===//
// PTX as MLIR emits it
//===----------------------------------------------------------------------===//

/// What MLIR 22 (Debian's llvm-22) emits for nvgpu's mbarrier operations:
/// `mlir-opt --gpu-lower-to-nvvm-pipeline="cubin-chip=sm_90a
/// cubin-features=+ptx80 cubin-format=isa"` on this module, with TX = 0,
/// the PTX taken verbatim from the gpu.binary's assembly:
///
//   // Thread 0 initialises two mbarriers (1 arrival each) and arrives on the
//   // first expecting TX bytes; every thread waits for its phase 0 with
//   // nvgpu's try_wait loop, then arrives on the second and tests its phase.
//   !barrierType = !nvgpu.mbarrier.group<memorySpace =
//   #gpu.address_space<workgroup>, num_barriers = 2> !tokenType =
//   !nvgpu.mbarrier.token module attributes {gpu.container_module} { gpu.module
//   @k {
//     gpu.func @pipe(%out: memref<32xi32, 1>) kernel {
//       %c0 = arith.constant 0 : index
//       %c1 = arith.constant 1 : index
//       %c32 = arith.constant 32 : index
//       %tx = arith.constant TX : index
//       %t = gpu.thread_id x
//       %bar = nvgpu.mbarrier.create -> !barrierType
//       %is0 = arith.cmpi eq, %t, %c0 : index
//       scf.if %is0 {
//         nvgpu.mbarrier.init %bar[%c0], %c1 : !barrierType
//         nvgpu.mbarrier.init %bar[%c1], %c32 : !barrierType
//       }
//       gpu.barrier
//       scf.if %is0 {
//         nvgpu.mbarrier.arrive.expect_tx %bar[%c0], %tx : !barrierType
//       }
//       %phase = arith.constant false
//       %ticks = arith.constant 10000000 : index
//       nvgpu.mbarrier.try_wait.parity %bar[%c0], %phase, %ticks : !barrierType
//       %tok = nvgpu.mbarrier.arrive %bar[%c1] : !barrierType -> !tokenType
//       %done = nvgpu.mbarrier.test.wait %bar[%c1], %tok : !barrierType,
//       !tokenType %v = arith.extui %done : i1 to i32 memref.store %v, %out[%t]
//       : memref<32xi32, 1> gpu.return
//     }
//   }
//   }
const char *const kMlirMbarrierPtx = R"(//
// Generated by LLVM NVPTX Back-End
//

.version 8.0
.target sm_90a
.address_size 64

	// .globl	pipe
// __mbarrier has been demoted

.visible .entry pipe(
	.param .u64 .ptr .global .align 1 pipe_param_0,
	.param .u64 .ptr .global .align 1 pipe_param_1,
	.param .u64 pipe_param_2,
	.param .u64 pipe_param_3,
	.param .u64 pipe_param_4
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<7>;
	// demoted variable
	.shared .align 8 .b8 __mbarrier[16];
	mov.u32 	%r1, %tid.x;
	setp.ne.b32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB0_2;
	mov.b32 	%r2, 1;
	mbarrier.init.shared.b64 	[__mbarrier], %r2;
	mov.b32 	%r3, 32;
	mbarrier.init.shared.b64 	[__mbarrier+8], %r3;
$L__BB0_2:
	ld.param.b64 	%rd1, [pipe_param_1];
	bar.sync 	0;
	@%p1 bra 	$L__BB0_4;
	mov.b32 	%r4, 0;
	mbarrier.arrive.expect_tx.shared.b64 %rd2, [__mbarrier], %r4;
$L__BB0_4:
	mov.b64 	%rd3, __mbarrier;
	cvt.u32.u64 	%r5, %rd3;
	mov.b32 	%r6, 10000000;
	// begin inline asm
	{
	.reg .pred       P1; 
	LAB_WAIT: 
	mbarrier.try_wait.parity.shared.b64 P1, [%r5], 0, %r6; 
	@P1 bra.uni DONE; 
	bra.uni     LAB_WAIT; 
	DONE: 
	}
	// end inline asm
	mbarrier.arrive.shared.b64 	%rd4, [__mbarrier+8];
	mbarrier.test_wait.shared.b64 %p2, [__mbarrier+8], %rd4;
	selp.b32 	%r7, 1, 0, %p2;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd1, %rd5;
	st.global.b32 	[%rd6], %r7;
	ret;

}
)";

TEST(PtxEmulatorMbarrier, MlirEmittedWaits) {
  // TX = 0: phase 0 of the first mbarrier completes at thread 0's arrival;
  // the 32 threads' arrivals complete the second's phase 0, so each
  // test_wait on its arrival's state succeeds.
  std::string error;
  auto module = parseModule(kMlirMbarrierPtx, error);
  ASSERT_TRUE(module) << error;
  const Kernel *kernel = module->findKernel("pipe");
  ASSERT_TRUE(kernel);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 32);
  // The memref descriptor: allocated and aligned pointers, offset, size,
  // stride.
  std::vector<uint64_t> arguments = {addressOf(out), addressOf(out), 0, 32, 1};
  LaunchShape shape;
  shape.grid = {1, 1, 1};
  shape.block = {32, 1, 1};
  shape.residentCtas = 1;
  LaunchResult result =
      device.launch(*kernel, shape, packParameters(*kernel, arguments));
  ASSERT_TRUE(result.ok) << result.error;
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out[i], 1u) << i;

  // TX = 512 (mlir-opt emits `mov.b32 %r4, 512;`): no copy delivers the
  // bytes, so every thread spins in the try_wait loop; the launch reports
  // the deadlock and the phase it waits for instead of hanging.
  auto waiting = parseModule(
      replaced(kMlirMbarrierPtx, "mov.b32 \t%r4, 0;", "mov.b32 \t%r4, 512;"),
      error);
  ASSERT_TRUE(waiting) << error;
  result = device.launch(*waiting->findKernel("pipe"), shape,
                         packParameters(*kernel, arguments));
  ASSERT_FALSE(result.ok);
  EXPECT_TRUE(contains(result.error,
                       "waits on the mbarrier at shared offset 0 (phase 0, "
                       "parity 0: 0 of 1 arrivals and 512 transaction bytes "
                       "pending)"))
      << result.error;
}

//===----------------------------------------------------------------------===//
// Misuse
//===----------------------------------------------------------------------===//

/// Runs BODY as a 64-thread kernel with a shared mbarrier `bar` and returns
/// the launch's error ("" when it succeeded).
std::string errorOf(const std::string &body) {
  auto module =
      parse(kernelPtx(".param .u64 src", "  .shared .align 8 .b64 bar;\n"
                                         "  .shared .align 16 .b8 stage[64];\n"
                                         "  .reg .pred %p<4>;\n"
                                         "  .reg .b32 %r<6>;\n"
                                         "  .reg .b64 %rd<4>;\n"
                                         "  ld.param.u64 %rd1, [src];\n"
                                         "  cvta.to.global.u64 %rd1, %rd1;\n"
                                         "  mov.u32 %r1, %tid.x;\n"
                                         "  setp.eq.u32 %p1, %r1, 0;\n" +
                                             body + "  ret;\n"));
  if (!module)
    return "does not load";
  Device device;
  uint8_t *src = allocateArray<uint8_t>(device, 64);
  LaunchResult result = launch(device, *module, {addressOf(src)}, 64);
  return result.ok ? "" : result.error;
}

TEST(PtxEmulatorMbarrier, Faults) {
  const std::string init = "  @%p1 mbarrier.init.shared.b64 [bar], 1;\n";
  const std::string sync = "  bar.sync 0;\n";
  // The init, ordered before every use by a barrier: fine.
  EXPECT_EQ(
      errorOf(init + sync + "  @%p1 mbarrier.arrive.shared.b64 _, [bar];\n"),
      "");
  struct {
    const char *what;
    std::string body;
    const char *message;
  } cases[] = {
      {"a use the init is not ordered before",
       init + "  setp.eq.u32 %p2, %r1, 32;\n"
              "  @%p2 mbarrier.arrive.shared.b64 _, [bar];\n",
       "before its mbarrier.init (line"},
      {"a plain store to the object",
       init + sync + "  @%p1 st.shared.u64 [bar], %rd1;\n",
       "part of an mbarrier object (only mbarrier instructions may access "
       "it until mbarrier.inval)"},
      {"an arrival past the expected count",
       init + sync + "  @%p1 mbarrier.arrive.shared.b64 _, [bar], 2;\n",
       "mbarrier.arrive of 2 arrivals at the mbarrier at shared offset"},
      {"an arrive of no mbarrier",
       "  @%p1 mbarrier.arrive.shared.b64 _, [bar];\n",
       "which holds no initialised mbarrier"},
      {"a second init", init + init, "mbarrier.init of a live mbarrier"},
      {".noComplete completing the phase",
       init + sync +
           "  @%p1 mbarrier.arrive.noComplete.shared.b64 _, [bar], 1;\n",
       ".noComplete completes the phase"},
      {"a bulk copy of 8 bytes",
       init + sync +
           "  @%p1 cp.async.bulk.shared::cluster.global.mbarrier::"
           "complete_tx::bytes [stage], [%rd1], 8, [bar];\n",
       "the size and both addresses must be multiples of 16"},
      {"a bulk copy past the end of its source",
       init + sync +
           "  @%p1 cp.async.bulk.shared::cluster.global.mbarrier::"
           "complete_tx::bytes [stage], [%rd1+16], 64, [bar];\n",
       "out-of-bounds"},
  };
  for (const auto &c : cases) {
    std::string error = errorOf(c.body);
    EXPECT_TRUE(contains(error, c.message))
        << c.what << ": " << (error.empty() ? "no fault" : error);
  }
}

TEST(PtxEmulatorMbarrier, UnsupportedFormsFailToLoad) {
  for (const char *instruction :
       {"setmaxnreg.inc.sync.aligned.u32 250;",
        "cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::"
        "complete_tx::bytes [%rd1], [%rd2, {%r1, %r1}], [%rd1];"}) {
    std::string error;
    auto module =
        parseModule(kernelPtx("", std::string("  .reg .b32 %r<2>;\n"
                                              "  .reg .b64 %rd<3>;\n  ") +
                                      instruction + "\n  ret;\n"),
                    error);
    EXPECT_FALSE(module) << instruction;
    EXPECT_TRUE(contains(error, "the emulator does not implement"))
        << instruction << ": " << error;
  }
}

//===----------------------------------------------------------------------===//
// elect.sync, setmaxnreg, and scopes
//===----------------------------------------------------------------------===//

TEST(PtxEmulatorInstruction, ElectSyncAndSetmaxnreg) {
  // Each lane stores the elected lane and whether it is the leader; the
  // warp gives up registers first, as a producer warp does.
  auto module = parse(kernelPtx(".param .u64 out",
                                "  .reg .pred %p<2>;\n"
                                "  .reg .b32 %r<4>;\n"
                                "  .reg .b64 %rd<4>;\n"
                                "  setmaxnreg.dec.sync.aligned.u32 40;\n"
                                "  ld.param.u64 %rd1, [out];\n"
                                "  cvta.to.global.u64 %rd1, %rd1;\n"
                                "  mov.u32 %r1, %laneid;\n"
                                "  elect.sync %r2|%p1, 0xffffffff;\n"
                                "  selp.u32 %r3, 1, 0, %p1;\n"
                                "  mul.wide.u32 %rd2, %r1, 8;\n"
                                "  add.u64 %rd3, %rd1, %rd2;\n"
                                "  st.global.v2.u32 [%rd3], {%r2, %r3};\n"
                                "  ret;\n"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 64);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 32);
  ASSERT_TRUE(result.ok) << result.error;
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(out[2 * lane], 0u) << lane;
    EXPECT_EQ(out[2 * lane + 1], lane == 0 ? 1u : 0u) << lane;
  }
}

TEST(PtxEmulatorParser, BlocksScopeRegistersAndLabels) {
  // Two blocks declare the same predicate and labels (as repeated inline
  // assembly does), and an inner %r1 shadows the outer one: each branch
  // goes to its own block's label, and the outer %r1 keeps its value.
  auto module =
      parse(kernelPtx(".param .u64 out", "  .reg .b32 %r<3>;\n"
                                         "  .reg .b64 %rd<2>;\n"
                                         "  ld.param.u64 %rd1, [out];\n"
                                         "  cvta.to.global.u64 %rd1, %rd1;\n"
                                         "  mov.u32 %r1, 5;\n"
                                         "  mov.u32 %r2, 0;\n"
                                         "  {\n"
                                         "  .reg .pred P1;\n"
                                         "  .reg .b32 %r1;\n"
                                         "  mov.u32 %r1, 100;\n"
                                         "  setp.eq.u32 P1, %r1, 100;\n"
                                         "  @P1 bra.uni DONE;\n"
                                         "  add.u32 %r2, %r2, 1000;\n"
                                         "  DONE:\n"
                                         "  }\n"
                                         "  add.u32 %r2, %r2, 1;\n"
                                         "  {\n"
                                         "  .reg .pred P1;\n"
                                         "  setp.eq.u32 P1, %r1, 7;\n"
                                         "  @P1 bra.uni DONE;\n"
                                         "  add.u32 %r2, %r2, 10;\n"
                                         "  DONE:\n"
                                         "  }\n"
                                         "  add.u32 %r2, %r2, %r1;\n"
                                         "  st.global.u32 [%rd1], %r2;\n"
                                         "  ret;\n"));
  ASSERT_TRUE(module);
  Device device;
  uint32_t *out = allocateArray<uint32_t>(device, 1);
  LaunchResult result = launch(device, *module, {addressOf(out)}, 1);
  ASSERT_TRUE(result.ok) << result.error;
  // First block: branch taken (skips 1000); +1; second block: %r1 is the
  // outer 5, not 7, so +10; then +5.
  EXPECT_EQ(out[0], 16u);
}

} // namespace
