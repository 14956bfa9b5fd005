//===- Fa2Defaults.h - FlashAttention-2's default tiling -----------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The tiling FlashAttention-2 chooses for a head dimension, and the shared
// memory a tiling needs. Schedule selection starts from this table.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_FA2DEFAULTS_H
#define ATTN_ANALYSIS_FA2DEFAULTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace mlir::attn {

struct Fa2Tiling {
  int64_t blockM;
  int64_t blockN;
  int64_t warps;
  int64_t stages;
  /// GQA packing (#attn.fa2's packed_heads); no resource depends on it.
  int64_t packedHeads = 1;
  bool operator==(const Fa2Tiling &other) const {
    return blockM == other.blockM && blockN == other.blockN &&
           warps == other.warps && stages == other.stages &&
           packedHeads == other.packedHeads;
  }
};

/// Elements of a shared-memory row holding `dim` values: whole swizzle
/// periods (8 chunks of 16 bytes, 64 16-bit elements), so that every head
/// dimension that is a multiple of 8 is stored with the swizzle of D = 64;
/// the padding is never read past the next multiple of 16 (one mma k step),
/// and that part is zero-filled.
int64_t fa2SharedRowElements(int64_t dim);

/// Shared memory of one CTA: the Q block (which also stages the O block,
/// so as wide as the wider of the two), plus `stages` buffers of a K and a
/// V tile, rows padded by fa2SharedRowElements, in the input element size.
int64_t fa2SharedMemoryBytes(const Fa2Tiling &tiling, int64_t headDim,
                             int64_t valueDim, int64_t elementBytes);

/// What a kernel does to each score besides FlashAttention-2's scale and
/// masks by position, which costs registers (fa2RegistersPerThread).
struct ScoreWork {
  /// A softcap or an inlined score region: scores formed in natural units.
  bool modifies = false;
  /// A mask operand: an element read from global memory for every score.
  bool readsMask = false;
  /// An inlined score region (modifies): its operations on the row and key
  /// of every element (tables read by both, an ALiBi slope per head) cost
  /// the overlapped loop more than a softcap (softmaxOverlapUnfit).
  bool region = false;

  bool any() const { return modifies || readsMask; }
};

/// The 32-bit registers a thread of the FlashAttention-2 kernel needs with
/// `tiling`: its share of the f32 accumulators of O (block_m x Dv) and of S
/// (block_m x block_n) and of P (block_m x block_n, two 16-bit values a
/// register), plus 64 for K fragments, addresses and indices and 8 for each
/// m16 row tile of a warp (its row state, Q fragments, row indices).
/// Calibrated on attn-to-nvgpu's kernels with ptxas 13.0 (sm_80, sm_90a)
/// over D in {64, 80, 96, 112, 128, 256} and FlashAttention-2's tilings:
/// every tiling estimated above 255 spilled, none estimated at or below it
/// did (docs/performance.md, register model). Dv counts in whole multiples
/// of 16: D = Dv = 72 with 128 x 64 tiles and 4 warps, estimated 248 with
/// Dv itself, took 255 registers in all four prefill kernels (static and
/// run-time lengths, sm_80 and sm_90a) and spilled 4 bytes in one. A kernel
/// that modifies scores (softcap, score region) needs
/// kScoreModificationRegisters more, and a split-KV kernel that modifies scores
/// one more per score of its S tile (kernelSplitsKv; its loop starts at a
/// run-time block): calibrated on ptxas 13.0 (sm_90a, causal with ALiBi), 64 x
/// 128 spilled at D = 40 (204 without the term), 64 x 64 did not at D = 160
/// (212) and did at D = 192 (228), 64 x 32 did not at D = 256 (236). A
/// kernel that reads a mask operand needs one more per score of its S tile
/// (the elements in flight): calibrated on ptxas 13.0 (sm_90a with i1, bf16
/// and f32 masks, sm_80 with i1; causal, run-time lengths) over D in {32,
/// 64, 80, 96, 128, 160, 192, 256} and six tilings each: every tiling that
/// spilled was estimated above 255 with the term, and every choice of
/// defaultFa2Tiling with it was spill-free (docs/performance.md).
int64_t fa2RegistersPerThread(const Fa2Tiling &tiling, int64_t valueDim,
                              ScoreWork work = {}, bool kernelSplitsKv = false);

/// Bytes of an mbarrier object. Tensor copies complete on one per stage,
/// after the tiles in shared memory.
constexpr int64_t kMbarrierBytes = 8;

/// Bytes of a warpgroup-MMA kernel's dynamic shared memory: its tiles
/// (`tileBytes`), then with tensor copies an mbarrier a stage ("full"),
/// with warp roles a second a stage ("empty") after them, one for Q (used
/// where Q comes by a tensor copy too), and with `keyLengths` one last: the
/// issuing thread's, which in the sequential loop the copies of a block
/// past a sequence's end land on before it zeroes their keys past it
/// (copyZeroingTails; the overlapped loop's consumers zero V's themselves
/// and leave it unused).
inline int64_t wgmmaSharedBytes(int64_t tileBytes, int64_t stages,
                                bool tensorCopies, bool warpRoles,
                                bool keyLengths) {
  if (!tensorCopies)
    return tileBytes;
  return tileBytes + ((warpRoles ? 2 : 1) * stages + 1 + (keyLengths ? 1 : 0)) *
                         kMbarrierBytes;
}

/// Why a warpgroup-MMA kernel copies its K and V tiles with cp.async from
/// every thread rather than with tensor copies (one thread issues each
/// tile's cp.async.bulk.tensor, which complete on an mbarrier per stage),
/// or "" when it uses tensor copies: the tiles take `tileBytes` of the
/// `sharedLimit` bytes a block may have, and the mbarriers must fit after
/// them (with `keyLengths` one more: a tensor map describes the whole K or
/// V tensor, so the keys of a block past a sequence's key length land as
/// they are, padding that may hold anything, NaN included, and they are
/// zeroed before the products read them, as cp.async's zero-fill would
/// have: docs/gpu-kernel.md).
std::string kvTensorCopiesUnfit(const Fa2Tiling &tiling, int64_t tileBytes,
                                int64_t sharedLimit, bool keyLengths);

/// FlashAttention-3's warp roles (its section 3.1): with tensor copies, a
/// producer warpgroup of kProducerWarps warps, after the consumers' warps,
/// issues every copy group, waiting for the consumers to release a stage on
/// its "empty" mbarrier; the consumer warpgroups only wait for "full"
/// stages and compute. setmaxnreg works on whole warpgroups.
constexpr int64_t kProducerWarps = 4;

/// The registers setmaxnreg leaves each producer thread, which only walks
/// the schedule's tiles, issues copies and waits on mbarriers:
/// FlashAttention-3's 24 (the PTX ISA's least) for FlashAttention-2's grid
/// and split-KV's; 40 for a `busy` producer: a persistent kernel's, which
/// walks Lean's LeanTiles (ptxas 13.0: the run-time decode and the causal
/// speculative decode of test/Target/NVPTX/ptxas-lean.mlir spilled 44-68
/// bytes with 24, none with 40), or one that zeroes the keys past a
/// sequence's end (key lengths in the sequential loop; in the overlapped
/// one the consumers zero V's: the decode and the speculative decode of
/// test/Target/NVPTX/ptxas-key-lengths.mlir spilled 24-52 bytes with 24
/// when the producer zeroed K and V, 0-8 when it zeroed V alone).
constexpr int64_t producerRegisters(bool busy) { return busy ? 40 : 24; }

/// A warp-specialised kernel's registers a thread: at entry (the kernel's
/// .maxnreg, what the block's threads share of the register file), then the
/// producer's and each consumer's after setmaxnreg. All 0 where every
/// thread has at entry the most registers a thread may have: nothing is
/// worth moving.
struct WarpRoleRegisters {
  int64_t entry = 0, producer = 0, consumer = 0;
  bool reallocates() const { return entry != 0; }
};

/// The registers of a kernel with `consumerWarps` consumer warps and the
/// producer warpgroup, `ctasPerSm` CTAs an SM, its producer `busy` or not:
/// the producer gives up all but producerRegisters, the consumers share what it
/// gave (in the units of 8 setmaxnreg counts in). Two consumer warpgroups,
/// one CTA: 168 at entry, 24 and 240 (FlashAttention-3's numbers, from a
/// register file of 65536); one consumer warpgroup, two CTAs: 128, 24 and
/// 232.
WarpRoleRegisters warpRoleRegisters(int64_t consumerWarps, int64_t ctasPerSm,
                                    int64_t registersPerSm,
                                    int64_t registersPerThread, bool busy);

/// What ptxas needs a thread to have at the kernel's entry (its .maxnreg)
/// to compile a warpgroup product of N columns, whatever setmaxnreg gives
/// the warps that issue it: the product's f32 accumulators (N / 2) and
/// kWgmmaOperandRegisters more. Calibrated on ptxas 13.0 (sm_90a) with 128
/// registers at entry: m64n192k16 compiled; m64n224k16 and m64n256k16 did
/// not (C7602, "register target of 142" and "158 or higher").
constexpr int64_t kWgmmaOperandRegisters = 32;
inline int64_t wgmmaEntryRegisters(const Fa2Tiling &tiling, int64_t valueDim) {
  return std::max(tiling.blockN, valueDim) / 2 + kWgmmaOperandRegisters;
}

/// Why a warpgroup-MMA kernel keeps every warp a consumer (each copy group
/// issued by thread 0 between the step's CTA barrier and its wait) rather
/// than FlashAttention-3's warp roles, or "" when nothing in its tiling
/// stands against them: they need tensor copies and a second (empty)
/// mbarrier a stage after the tiles' `tileBytes` within `sharedLimit` (and
/// with `keyLengths` the issuing thread's, wgmmaSharedBytes). The
/// registers are the plan's (planWgmmaBody, Fa2Resources.h).
std::string warpRolesUnfit(const Fa2Tiling &tiling, bool tensorCopies,
                           int64_t tileBytes, int64_t sharedLimit,
                           bool keyLengths);

/// Why a warpgroup-MMA kernel's Q and O tiles cannot move by boxes of a
/// tensor map (Q's tensor copy in, FlashAttention-3's tensor stores of O
/// out), or "": with GQA packing (tiling.packedHeads > 1) the tile's rows
/// belong to several heads, which no box covers.
std::string rowTileTensorMapUnfit(const Fa2Tiling &tiling);

/// The registers warp roles leave a consumer thread that issuing the copies
/// from thread 0 needs: the tensor maps' addresses, the boxes' coordinates
/// and the group's predicates. Calibrated on ptxas 13.0 (sm_90a) with the
/// consumers at 240 registers (two consumer warpgroups): every
/// emulator-check kernel estimated at 248 without it (128 x 128 at D = 128
/// and D = 256, decode, GQA packing) overlapped without spilling.
constexpr int64_t kWarpRoleRegisters = 8;

/// What an inlined score region costs the overlapped loop beyond a softcap
/// (ScoreWork::region). Calibrated on ptxas 13.0 (sm_90a): a document mask
/// read from a table by row and by key (128 x 128, D = 64, estimated 220
/// without it) spilled 8 bytes overlapped at 240 registers, where softcaps
/// estimated 220 did not spill.
constexpr int64_t kScoreRegionOverlapRegisters = 24;

/// The registers tensor copies leave a thread that cp.async's copies need:
/// each thread's source and shared addresses, row bounds and predicates.
/// Calibrated on ptxas 13.0 (sm_90a): the overlapped loop at 128 x 128,
/// D = 128 (estimate with the held P 264) took 233 registers with tensor
/// copies and spilled 36 bytes at 255 with cp.async; D = 256 on 64 x 64
/// (264) took 255 without spilling; the ALiBi region on 128 x 128 at
/// D = 128 (276) spilled 60 bytes, so the term stops short of it.
constexpr int64_t kTensorCopyRegisters = 16;

/// Why the warpgroup-MMA CTA body does not overlap each key/value block's
/// softmax with the previous block's P V (FlashAttention-3's
/// intra-warpgroup overlap, docs/gpu-kernel.md) for a kernel with `tiling`,
/// or "" when it does. The overlap holds the previous block's P (block_m x
/// block_n 16-bit values, two a register) while the next softmax runs: it
/// needs fa2RegistersPerThread plus that share, less kTensorCopyRegisters
/// with `tensorCopies` and kWarpRoleRegisters with `warpRoles`, plus
/// kScoreRegionOverlapRegisters with a score region, at most
/// `registersPerThread`. Calibrated on ptxas
/// 13.0 (sm_90a): with cp.async every emulator-check kernel estimated
/// above 255 with the term spilled with the overlap or sat at 255 (128 x
/// 128 at D = 128: 264, 36 to 168 bytes; D = 256 with 64 x 64 causal: 264,
/// 128 bytes), and none at or below it did; with tensor copies, above. A
/// block mask keeps the loop sequential: its branches (an empty block
/// skipped, a full one read without the mask operand) around and inside a
/// step, crossed by the running P V, made ptxas serialise every wgmma of
/// the kernel. softmaxOverlapRegisters is the estimate.
int64_t softmaxOverlapRegisters(const Fa2Tiling &tiling, int64_t valueDim,
                                ScoreWork work, bool kernelSplitsKv,
                                bool tensorCopies, bool warpRoles);
std::string softmaxOverlapUnfit(const Fa2Tiling &tiling, int64_t valueDim,
                                ScoreWork work, bool blockMask,
                                bool kernelSplitsKv, bool tensorCopies,
                                bool warpRoles, int64_t registersPerThread);

/// Why the consumer warpgroups of a kernel with `tiling` and head dimension
/// `headDim` do not take turns at issuing their products (FlashAttention-3's
/// ping-pong, its section 3.1: one warpgroup's softmax runs while the
/// other's products do), or "" when they do: it needs `warpRoles` and the
/// `overlap`ped loop (FlashAttention-3's pairing), two consumer warpgroups,
/// and D at most 128 (FlashAttention-3's rule for 16-bit inputs: with wider
/// heads the products are long enough to hide the softmax).
std::string pingPongUnfit(const Fa2Tiling &tiling, int64_t headDim,
                          bool warpRoles, bool overlap);

/// What modifying the scores in natural units (softcap, an inlined score
/// region with the row and key of every element) costs a thread: calibrated
/// like fa2RegistersPerThread on ptxas 13.0 (sm_80) with a softcap and
/// ALiBi, where tilings estimated above 255 with it spilled and those at or
/// below did not (test/Target/NVPTX/ptxas-score-mods.mlir).
constexpr int64_t kScoreModificationRegisters = 12;

/// What a Lean kernel whose mask cuts the rows' key ranges (causal or a
/// window) needs beyond fa2RegistersPerThread: its rows' own key limits
/// and the walk's query block. Calibrated on ptxas 13.0 (sm_90a, sm_80) with
/// run-time lengths: held to three CTAs per SM (168 registers), causal
/// decode at D = 64 (64 x 64, estimated 152) spilled 8-28 bytes where it
/// took 213-221 unbounded, the same without a mask (201-205) did not, and
/// neither did causal D = 32 (136); this term gives the first two CTAs per
/// SM and leaves D = 32 at three (docs/performance.md).
constexpr int64_t kMaskedLeanRegisters = 24;

/// The most registers a thread can have (the PTX ISA's limit).
constexpr int64_t kMaxRegistersPerThread = 255;

/// The widest head dimension FlashAttention-2's table has tilings for.
constexpr int64_t kFa2MaxHeadDim = 256;

/// The tiling of attn-to-nvgpu's backward kernel (Fa2GradKernel): a CTA's
/// own rows (block_m: 64, four warps of 16 rows, one warpgroup) and the rows
/// of each block streamed past them (block_n: 64, or 32 where max(D, Dv) is
/// above 64: a warp's dK and dV accumulators then take 128 registers, and
/// S and dP of 64 columns another 64; ptxas spilled at D = 128); one stage
/// of streamed tiles, or with `tensorCopies` kGradTensorCopyStages.
Fa2Tiling fa2GradKernelTiling(int64_t headDim, int64_t valueDim,
                              bool tensorCopies = false);

/// The widest rows (max(D, Dv)) whose dK and dV a key/value CTA of the
/// backward kernel accumulates in one walk over the query blocks; wider, it
/// takes dV, then dK, in a walk each (the fragments of both take 256
/// registers at D = 256).
constexpr int64_t kGradBothAtOnce = 128;

/// Stages of the backward kernel's streamed tiles with tensor copies: the
/// next block's tiles land while the current block is computed.
constexpr int64_t kGradTensorCopyStages = 2;

/// Bytes of the backward kernel's dynamic shared memory: the own rows' two
/// tiles (block_m rows of D and of Dv, padded by fa2SharedRowElements), the
/// streamed block's two in each of the tiling's stages, the LSE and Dsum
/// arrays (max(block_m, block_n) floats each), then with `tensorCopies` an
/// mbarrier a stage, one for the own rows and with `keyLengths` thread 0's
/// (wgmmaSharedBytes).
int64_t fa2GradSharedBytes(const Fa2Tiling &tiling, int64_t headDim,
                           int64_t valueDim, bool tensorCopies,
                           bool keyLengths);

/// Why the backward kernel on wgmma copies its tiles by cp.async from every
/// thread rather than by tensor copies (thread 0 issues each tile's
/// cp.async.bulk.tensor: the own rows once, the streamed blocks into
/// kGradTensorCopyStages stages that an mbarrier each guards), or "" when it
/// uses them: with rows
/// wider than kGradBothAtOnce (two walks: with the ring's addresses ptxas
/// 13.0 serialised the wgmma of D = 160 and of D = 192, Dv = 128), or when
/// the stages do not fit the `sharedLimit` bytes a block may have.
std::string gradTensorCopiesUnfit(int64_t headDim, int64_t valueDim,
                                  bool keyLengths, int64_t sharedLimit);

/// FlashAttention-2's tilings for a head dimension, preferred first (the
/// later ones are smaller fallbacks); empty beyond kFa2MaxHeadDim.
llvm::ArrayRef<Fa2Tiling> fa2Candidates(int64_t headDim);

/// The tilings of kernels whose products are warpgroup MMAs (sm_90a;
/// MatrixUnit.h), preferred first: whole warpgroups of 4 warps, each warp
/// owning 16 rows, so that a warpgroup's 64 rows are one wgmma m64 product.
/// FlashAttention-3's tiles (hopper/tile_size.h in its repository: 128 rows,
/// block_n 128 up to D = 128, 80 at D = 256) for FlashAttention-2's loop:
/// 128 x 128 with two warpgroups up to D = 128, then 64-row fallbacks of one
/// warpgroup. Beyond D = 128, 64 x 64 with one warpgroup and one stage, then
/// 64 x 32: measured on an H100 (2026-11-27, bf16, D = 256, S = 4k and 16k),
/// 64 x 64 ran at 517-531 TFLOP/s (399-410 causal) where 128 x 64 with two
/// warpgroups ran at 417-422 (362-402) and spilled 28-36 bytes when causal,
/// and 128 x 32 at 305-307 (274-315). Empty beyond kFa2MaxHeadDim.
llvm::ArrayRef<Fa2Tiling> warpgroupCandidates(int64_t headDim);

/// The tilings of split-KV kernels, preferred first, then smaller
/// fallbacks; empty beyond kFa2MaxHeadDim: FlashAttention-2's split kernels'
/// block_m = 64 with 4 warps, and block_n 64 up to D = 128, 32 beyond (half
/// of FlashAttention-2's 128 and 64). A split kernel's loop starts at a
/// run-time block, and ptxas 13.0 spilled where FlashAttention-2's grid did
/// not: with 128-row tiles (D = 96 with ALiBi, D = 128 with Dv = 64), with
/// 64 x 128 in causal kernels (D = 40, D = 64 with Dv = 128) and with
/// 64 x 64 in a causal D = 256 one.
llvm::ArrayRef<Fa2Tiling> fa2SplitKvCandidates(int64_t headDim);

/// The rows and keys of a block mask's blocks (attn.attention's
/// block_mask), in which a tiling's tiles must nest; std::nullopt without a
/// block mask.
using MaskBlocks = std::optional<std::pair<int64_t, int64_t>>;

/// The largest multiple of 16 (the unit of #attn.fa2's sides) that divides
/// `side` and is at most `limit`; std::nullopt when there is none (`side` is
/// not a multiple of 16).
std::optional<int64_t> fa2NestedSide(int64_t side, int64_t limit);

/// fa2Candidates(headDim) (fa2SplitKvCandidates for a kernel that splits
/// the keys and values), preferred first, each nested in `blocks` when
/// given: block_m and block_n lowered to fa2NestedSide of the blocks' rows
/// and keys, warps halved until each owns a multiple of 16 rows, skipped
/// where a warp would own more rows than in the table's tiling; then, in the
/// table's order, each one's smaller nested sides, largest first; without
/// repeats. Empty when a block's side is not a multiple of 16 (no #attn.fa2
/// tiling nests in it) or the head dimension is above kFa2MaxHeadDim. With
/// `warpgroups` (a chip with warpgroup MMA) and without a split, preceded
/// by warpgroupCandidates, each nested in the blocks where it keeps whole
/// 64-row warpgroups (block_m lowered to a multiple of 64, 16 rows a warp;
/// skipped otherwise); split-KV's tilings are whole warpgroups already.
llvm::SmallVector<Fa2Tiling> fa2Tilings(int64_t headDim, bool splitKv,
                                        MaskBlocks blocks,
                                        bool warpgroups = false);

/// FlashAttention-2's tiling for `headDim`, the largest of its table
/// (fa2SplitKvCandidates' for a kernel that splits the keys and values:
/// split-KV of several splits, Lean; nested in `blocks`: fa2Tilings) that
/// fits `sharedMemoryPerBlock` bytes
/// when that is given and kMaxRegistersPerThread (fa2RegistersPerThread
/// with `work`), as attn-select-schedule's choice for a target does: without
/// the register test, D = 128 took 128 x 64 tiles with 4 warps, which ptxas
/// 13.0 spilled (124 bytes on sm_90a, causal). std::nullopt when the head
/// dimension is beyond the table (> 256) or nothing fits.
std::optional<Fa2Tiling>
defaultFa2Tiling(int64_t headDim, int64_t valueDim, int64_t elementBytes,
                 std::optional<int64_t> sharedMemoryPerBlock,
                 ScoreWork work = {}, bool splitKv = false,
                 MaskBlocks blocks = std::nullopt);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_FA2DEFAULTS_H
