//===- Fa2Resources.h - What a FlashAttention-2 CTA costs an SM -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The resources one CTA of the FlashAttention-2 kernel needs with a tiling
// (threads, shared memory, registers), whether that fits a GPU's limits, how
// many such CTAs one SM holds, the tiling schedule selection picks, and
// FlashAttention-2's choice of the number of key/value splits. Pure functions
// on integers, so that they are unit-tested without IR; attn-select-schedule
// reads the limits from `#attn.target`.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_FA2RESOURCES_H
#define ATTN_ANALYSIS_FA2RESOURCES_H

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/MatrixUnit.h"

#include "mlir/IR/Attributes.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::attn {

class Fa2TilesAttr;
class TargetAttr;

/// Facts of sm_80 and sm_90 (CUDA C Programming Guide, "Technical
/// Specifications per Compute Capability") that `#attn.target` does not carry.
/// sm_86 and sm_89 allow fewer threads (1536) and CTAs (16, 24) per SM; a
/// target for them would need these as fields.
inline constexpr int64_t kMaxThreadsPerSm = 2048;
inline constexpr int64_t kMaxCtasPerSm = 32;
/// Shared memory the hardware reserves for every resident CTA (sm_80 and
/// later): why `smem_per_sm` is `smem_per_block` + 1024 on sm_80 and sm_90.
inline constexpr int64_t kReservedSharedBytesPerCta = 1024;
/// The shared memory a CTA may opt into on sm_80 (163 KiB): what kernels
/// built without an `#attn.target` are limited to, as sm_86, sm_89 and sm_90
/// allow at least as much.
inline constexpr int64_t kSm80SharedBytesPerBlock = 166912;
/// The 32-bit registers of one SM (sm_80 through sm_90).
inline constexpr int64_t kRegistersPerSm = 65536;
/// Registers are allocated to a warp 256 at a time: 8 per thread.
inline constexpr int64_t kRegisterGranularityPerThread = 8;

/// The limits of a GPU, as `#attn.target` states them.
struct GpuLimits {
  int64_t sms;
  int64_t smemPerBlock;
  int64_t smemPerSm;
  int64_t regsPerSm;
  int64_t regsPerThread;
  /// Whether the chip has warpgroup MMA (hasWarpgroupMma): the tilings
  /// tried are then warpgroupCandidates.
  bool warpgroupMma = false;
};

/// The limits `target` states; warpgroupMma where its chip has warpgroup MMA
/// and `unit` does not ask for mma.sync.
GpuLimits gpuLimits(TargetAttr target,
                    MatrixUnitRequest unit = MatrixUnitRequest::Auto);

/// What the kernels of `op` do to each score besides FlashAttention-2's:
/// its softcap or score region, its mask operand.
ScoreWork scoreWorkOf(AttentionOp op);

/// The tiling an `#attn.fa2` states, and the attribute of a tiling.
Fa2Tiling fa2TilingOf(Fa2TilesAttr tiles);
Fa2TilesAttr fa2TilesAttrOf(MLIRContext *context, const Fa2Tiling &tiling);

/// What one CTA of the kernel needs.
struct Fa2Resources {
  /// 32 x warps.
  int64_t threads;
  /// fa2SharedMemoryBytes: the Q block plus `stages` K and V tiles.
  int64_t sharedBytes;
  /// fa2RegistersPerThread: the calibrated estimate (see Fa2Defaults.h).
  int64_t registersPerThread;
};

/// `work`: what the kernel does to each score besides FlashAttention-2's.
/// `kernelSplitsKv`: a split-KV kernel (fa2RegistersPerThread).
Fa2Resources fa2Resources(const Fa2Tiling &tiling, int64_t headDim,
                          int64_t valueDim, int64_t elementBytes,
                          ScoreWork work = {}, bool kernelSplitsKv = false);

/// The registers a thread may have when a CTA of `threads` threads is to fit
/// `limits`: regs_per_thread, and no more than the SM's register file shared
/// by the CTA's threads (rounded down to the allocation granularity).
int64_t allowedRegistersPerThread(int64_t threads, const GpuLimits &limits);

/// CTAs of this kind one SM holds at once: the least of what its threads
/// (kMaxThreadsPerSm), its shared memory (smem_per_sm over sharedBytes plus
/// kReservedSharedBytesPerCta), its registers (regs_per_sm over threads x
/// registers rounded up to kRegisterGranularityPerThread) and kMaxCtasPerSm
/// allow. 0 when not even one fits.
int64_t fa2CtasPerSm(const Fa2Resources &resources, const GpuLimits &limits);

/// CTAs of a Lean kernel (a kernel that splits the key/value range,
/// fa2Resources with kernelSplitsKv, and kMaskedLeanRegisters more with a
/// causal or window mask) over `tiling` one SM holds: what
/// attn-select-schedule counts G with and attn-to-nvgpu checks a pinned G
/// against.
int64_t leanCtasPerSm(const AttentionProblem &problem, const Fa2Tiling &tiling,
                      int64_t elementBytes, ScoreWork work,
                      const GpuLimits &limits);

/// What the warpgroup-MMA CTA body of a kernel is planned from: its tiling,
/// head dimensions and score work, the bytes of its tiles
/// (fa2SharedMemoryBytes), whether it has per-sequence key lengths or a
/// block mask or splits the key/value range, and the CTAs an SM a
/// persistent kernel must hold (ceil(CTAs / SMs); 0 for a grid).
struct WgmmaKernel {
  Fa2Tiling tiling;
  int64_t headDim, valueDim;
  ScoreWork work;
  int64_t tileBytes;
  bool keyLengths = false, blockMask = false, splitsKv = false;
  int64_t persistentCtasPerSm = 0;
};

/// The warpgroup-MMA CTA body's choices for one kernel, made in this order
/// (each the reason it is not taken, "" where it is): tensor copies
/// (kvTensorCopiesUnfit), warp roles (warpRolesUnfit, then the CTAs an SM
/// and their registers), the overlap (softmaxOverlapUnfit) within the
/// registers a consumer has, and the ping-pong (pingPongUnfit); O's
/// tensor stores (rowTileTensorMapUnfit), and with tensor copies Q's tensor
/// copy (the same reason).
/// attn-to-nvgpu builds the kernel with them; the plan report prints them.
struct WgmmaBodyPlan {
  std::string noTensorCopies, noWarpRoles, noOverlap, noPingPong,
      noOutputTensorStore, noQueryTensorCopy;
  /// With warp roles: the CTAs an SM the registers are shared by, and what
  /// setmaxnreg gives each role (none where every thread has all it may).
  int64_t ctasPerSm = 1;
  WarpRoleRegisters roleRegisters;
  /// The registers a computing thread has.
  int64_t consumerRegisters = 0;
  bool tensorCopies() const { return noTensorCopies.empty(); }
  bool warpRoles() const { return noWarpRoles.empty(); }
  bool overlap() const { return noOverlap.empty(); }
  bool pingPong() const { return noPingPong.empty(); }
  bool outputTensorStore() const { return noOutputTensorStore.empty(); }
  bool queryTensorCopy() const { return noQueryTensorCopy.empty(); }
};

/// The kernel of `op` with `tiling` (its stages those the kernel keeps) on
/// `limits`, as planWgmmaBody plans it: `splitsKv` for a split-KV or Lean
/// kernel, persistent under #attn.lean. What attn-to-nvgpu builds and the
/// plan report describes.
WgmmaKernel wgmmaKernelOf(AttentionOp op, const Fa2Tiling &tiling,
                          bool splitsKv, const GpuLimits &limits);

/// The plan for `kernel` on `limits`. With warp roles the kernel is planned
/// for as many CTAs an SM as shared memory and threads allow and still leave
/// each consumer the registers it needs (the overlapped loop's where the
/// overlap would fit a thread's registers, else the sequential loop's; a
/// persistent kernel only alone on an SM) and, where setmaxnreg
/// moves registers, the registers at entry its widest product needs
/// (wgmmaEntryRegisters); where none does, thread 0 issues the copies. That
/// can be fewer CTAs an SM than the kernel would have without warp roles
/// (docs/gpu-kernel.md, "Warp roles").
WgmmaBodyPlan planWgmmaBody(const WgmmaKernel &kernel, const GpuLimits &limits);

/// The limit a CTA exceeds first, with what it needs and what is allowed.
struct Fa2Misfit {
  enum class Limit {
    /// `needed` bytes of shared memory per block; `allowed` smem_per_block.
    SharedMemoryPerBlock,
    /// `needed` registers per thread; `allowed` allowedRegistersPerThread.
    RegistersPerThread,
    /// `needed` bytes of shared memory on the SM, the CTA's and the 1 KiB the
    /// hardware reserves for it; `allowed` smem_per_sm.
    SharedMemoryPerSm,
  };
  Limit limit;
  int64_t needed;
  int64_t allowed;
};

/// Why a CTA with `resources` cannot run on `limits` (checked in the order of
/// Fa2Misfit::Limit), or std::nullopt when at least one fits an SM.
std::optional<Fa2Misfit> findFa2Misfit(const Fa2Resources &resources,
                                       const GpuLimits &limits);

/// The tiling schedule selection attaches: the first of
/// fa2Tilings(max(headDim, valueDim), splitKv, blocks, limits.warpgroupMma)
/// (FlashAttention-2's table, nested in the block mask's blocks), each tried
/// with its own stages and then with one fewer at a time, that fits
/// `limits`. std::nullopt when none does (or the
/// head dimension is beyond the table, or nothing nests in the blocks);
/// `lastMisfit` then says why the last candidate tried did not fit, when
/// there was one.
std::optional<Fa2Tiling>
selectFa2Tiling(int64_t headDim, int64_t valueDim, int64_t elementBytes,
                const GpuLimits &limits,
                std::optional<Fa2Misfit> *lastMisfit = nullptr,
                ScoreWork work = {}, bool splitKv = false,
                MaskBlocks blocks = std::nullopt);

/// FlashAttention-2's number of key/value splits (flash-decoding),
/// `num_splits_heuristic` of its flash_api.cpp, in exact integer arithmetic:
///   - 1 when `parallelCtas` (B x Hq x query blocks) >= 0.8 x `waveSlots`
///     (FlashAttention-2 passes 2 x SMs: two CTAs per SM);
///   - otherwise S in [1, min(maxSplits, waveSlots, kvBlocks)], skipping an S
///     that gives each split as many blocks as S - 1 (ceil(kvBlocks / S) ==
///     ceil(kvBlocks / (S - 1)): its last split would be empty), whose wave
///     efficiency w / ceil(w), w = parallelCtas x S / waveSlots, is at least
///     85% of the best such efficiency; the smallest such S.
/// `kvBlocks` is the most key/value blocks one query block visits;
/// std::nullopt for a run-time Sk, which bounds S by maxSplits and the slots
/// only (a split past the blocks a call has is an empty piece).
int64_t fa2SplitKvSplits(int64_t parallelCtas, int64_t waveSlots,
                         std::optional<int64_t> kvBlocks,
                         int64_t maxSplits = 128);

/// Lean attention's number of persistent CTAs for `leanTiles` LeanTiles on
/// a device of `sms` SMs that holds `residentCtas` of them at once (all must
/// be resident): every resident slot, as ONNX Runtime's Lean attention uses
/// two per SM; with few LeanTiles (at most 4 per SM), about two LeanTiles a
/// CTA (ceil(T / 2)), so that contributors are not mostly idle; never more
/// CTAs than LeanTiles. At least 1. Not yet calibrated on our kernels.
int64_t leanCtaCount(int64_t leanTiles, int64_t residentCtas, int64_t sms);

/// A key/value partition of a kernel and the tiles it runs with.
struct KvPartitionChoice {
  Fa2Tiling tiling;
  /// #attn.split_kv or #attn.lean.
  Attribute partition;
};

/// What attn-select-schedule adds with split-kv (or `lean`) to an
/// attention `problem` (its packedHeads those of `tiling`) whose
/// FlashAttention-2 tiles `tiling` it chose: nothing when
/// FlashAttention-2's rule keeps one split over the CTAs `tiling` gives
/// (fa2SplitKvSplits, 2 x SMs slots); else split-KV over split-KV's tiles
/// (selectFa2Tiling with splitKv, nested in the block mask's `blocks`, same
/// packing), its splits counted over
/// them, or with `lean` Lean attention over leanCtaCount's CTAs with
/// `tiling`. The one rule the pass and the plan report share.
///
/// A kernel for run-time lengths must choose for every length it will run
/// with. A run-time Sq leaves the grid over query blocks unknown (decode or
/// prefill): nothing. A run-time batch counts as 1, the batch that needs the
/// split most (a larger one is over-split by split-KV's fixed S; Lean's
/// ranges are counted at launch). A run-time Sk bounds neither S nor the
/// LeanTiles: S by the slots and 128 only, G every resident CTA.
std::optional<KvPartitionChoice>
chooseKvPartition(MLIRContext *context, const AttentionProblem &problem,
                  const Fa2Tiling &tiling, const GpuLimits &limits,
                  int64_t elementBytes, ScoreWork work, bool lean,
                  MaskBlocks blocks);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_FA2RESOURCES_H
