//===- Fa2Defaults.cpp - FlashAttention-2's default tiling -----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/Fa2Defaults.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir::attn;

int64_t mlir::attn::fa2SharedRowElements(int64_t dim) {
  return llvm::alignTo(dim, 64);
}

int64_t mlir::attn::fa2SharedMemoryBytes(const Fa2Tiling &tiling,
                                         int64_t headDim, int64_t valueDim,
                                         int64_t elementBytes) {
  int64_t keyRow = fa2SharedRowElements(headDim);
  int64_t valueRow = fa2SharedRowElements(valueDim);
  int64_t queryTile = tiling.blockM * std::max(keyRow, valueRow);
  int64_t kvTiles = tiling.stages * tiling.blockN * (keyRow + valueRow);
  return (queryTile + kvTiles) * elementBytes;
}

int64_t mlir::attn::fa2RegistersPerThread(const Fa2Tiling &tiling,
                                          int64_t valueDim, ScoreWork work,
                                          bool kernelSplitsKv) {
  int64_t threads = 32 * tiling.warps;
  // Dv in whole multiples of 16 (calibration, Fa2Defaults.h).
  int64_t accumulators = tiling.blockM * llvm::alignTo(valueDim, 16) +
                         tiling.blockM * tiling.blockN;
  // P: two 16-bit probabilities a register.
  int64_t probabilities = tiling.blockM * tiling.blockN / 2;
  // The m16 row tiles of a warp: each has its own row state, Q fragments
  // and row indices.
  int64_t rowTiles = std::max<int64_t>(1, tiling.blockM / (16 * tiling.warps));
  int64_t scoresPerThread =
      llvm::divideCeil(tiling.blockM * tiling.blockN, threads);
  return llvm::divideCeil(accumulators, threads) +
         llvm::divideCeil(probabilities, threads) + 64 + 8 * rowTiles +
         (work.modifies ? kScoreModificationRegisters : 0) +
         (work.modifies && kernelSplitsKv ? scoresPerThread : 0) +
         (work.readsMask ? scoresPerThread : 0);
}

int64_t mlir::attn::softmaxOverlapRegisters(const Fa2Tiling &tiling,
                                            int64_t valueDim, ScoreWork work,
                                            bool kernelSplitsKv,
                                            bool tensorCopies, bool warpRoles) {
  int64_t held =
      llvm::divideCeil(tiling.blockM * tiling.blockN / 2, 32 * tiling.warps);
  return fa2RegistersPerThread(tiling, valueDim, work, kernelSplitsKv) + held -
         (tensorCopies ? kTensorCopyRegisters : 0) -
         (warpRoles ? kWarpRoleRegisters : 0) +
         (work.region ? kScoreRegionOverlapRegisters : 0);
}

std::string mlir::attn::softmaxOverlapUnfit(const Fa2Tiling &tiling,
                                            int64_t valueDim, ScoreWork work,
                                            bool blockMask, bool kernelSplitsKv,
                                            bool tensorCopies, bool warpRoles,
                                            int64_t registersPerThread) {
  if (blockMask)
    return "a block mask's branches around and inside a step would make "
           "ptxas serialise the products";
  int64_t need = softmaxOverlapRegisters(tiling, valueDim, work, kernelSplitsKv,
                                         tensorCopies, warpRoles);
  if (need <= registersPerThread)
    return "";
  return "holding the previous block's P needs about " + std::to_string(need) +
         " registers a thread, more than " + std::to_string(registersPerThread);
}

std::string mlir::attn::pingPongUnfit(const Fa2Tiling &tiling, int64_t headDim,
                                      bool warpRoles, bool overlap) {
  if (!warpRoles)
    return "no warp roles";
  if (!overlap)
    return "the sequential loop";
  if (tiling.warps != 8)
    return tiling.warps == 4 ? "one consumer warpgroup"
                             : std::to_string(tiling.warps / 4) +
                                   " consumer warpgroups (turns are for two)";
  if (headDim > 128)
    return "D = " + std::to_string(headDim) +
           " (beyond 128 the products hide the softmax)";
  return "";
}

std::string mlir::attn::kvTensorCopiesUnfit(const Fa2Tiling &tiling,
                                            int64_t tileBytes,
                                            int64_t sharedLimit,
                                            bool keyLengths) {
  if (wgmmaSharedBytes(tileBytes, tiling.stages, /*tensorCopies=*/true,
                       /*warpRoles=*/false, keyLengths) > sharedLimit)
    return "the stages' mbarriers do not fit the shared memory the tiles "
           "leave";
  return "";
}

WarpRoleRegisters mlir::attn::warpRoleRegisters(int64_t consumerWarps,
                                                int64_t ctasPerSm,
                                                int64_t registersPerSm,
                                                int64_t registersPerThread,
                                                bool busy) {
  auto down8 = [](int64_t n) { return n - n % 8; };
  int64_t consumerThreads = 32 * consumerWarps;
  int64_t threads = consumerThreads + 32 * kProducerWarps;
  int64_t entry = down8(
      std::min(registersPerThread, registersPerSm / (threads * ctasPerSm)));
  if (entry >= down8(registersPerThread))
    return {};
  int64_t producer = producerRegisters(busy);
  int64_t consumer = down8((entry * threads - producer * 32 * kProducerWarps) /
                           consumerThreads);
  return {entry, producer, std::min(consumer, down8(registersPerThread))};
}

std::string mlir::attn::warpRolesUnfit(const Fa2Tiling &tiling,
                                       bool tensorCopies, int64_t tileBytes,
                                       int64_t sharedLimit, bool keyLengths) {
  if (!tensorCopies)
    return "K and V come by cp.async from every thread";
  if (wgmmaSharedBytes(tileBytes, tiling.stages, /*tensorCopies=*/true,
                       /*warpRoles=*/true, keyLengths) > sharedLimit)
    return "the stages' empty mbarriers do not fit the shared memory the "
           "tiles leave";
  return "";
}

std::string mlir::attn::rowTileTensorMapUnfit(const Fa2Tiling &tiling) {
  if (tiling.packedHeads > 1)
    return "GQA packing interleaves " + std::to_string(tiling.packedHeads) +
           " heads in the tile's rows";
  return "";
}

llvm::ArrayRef<Fa2Tiling> mlir::attn::fa2Candidates(int64_t headDim) {
  static const Fa2Tiling upTo64[] = {
      {128, 128, 4, 2}, {128, 64, 4, 2}, {64, 64, 4, 2}};
  // When 128 x 64 with 4 warps needs more registers than a thread has:
  // 128 x 128 with 8 warps (fewer accumulators a thread), then 128 x 32
  // (FlashAttention-2's own choice on sm_86 and sm_89).
  static const Fa2Tiling upTo128[] = {
      {128, 64, 4, 2}, {128, 128, 8, 2}, {128, 32, 4, 2}, {64, 64, 4, 2}};
  // One stage: with two, the prefetch of the next K and V tiles inside the
  // loop costs the D = 256 kernel the one register it lacks (ptxas 13.0 on
  // sm_90a spilled 4 bytes with causal masking and Sk = 1000).
  // 64 x 32 last: the one that leaves room for modifying scores.
  static const Fa2Tiling upTo256[] = {
      {128, 64, 8, 1}, {64, 64, 4, 1}, {64, 32, 4, 1}};
  if (headDim <= 64)
    return upTo64;
  if (headDim <= 128)
    return upTo128;
  if (headDim <= kFa2MaxHeadDim)
    return upTo256;
  return {};
}

llvm::ArrayRef<Fa2Tiling> mlir::attn::warpgroupCandidates(int64_t headDim) {
  static const Fa2Tiling upTo128[] = {
      {128, 128, 8, 2}, {128, 64, 8, 2}, {64, 64, 4, 2}};
  static const Fa2Tiling upTo256[] = {{64, 64, 4, 1}, {64, 32, 4, 1}};
  if (headDim <= 128)
    return upTo128;
  if (headDim <= kFa2MaxHeadDim)
    return upTo256;
  return {};
}

llvm::ArrayRef<Fa2Tiling> mlir::attn::fa2SplitKvCandidates(int64_t headDim) {
  static const Fa2Tiling upTo128[] = {{64, 64, 4, 2}, {64, 32, 4, 1}};
  static const Fa2Tiling upTo256[] = {{64, 32, 4, 1}};
  if (headDim <= 128)
    return upTo128;
  if (headDim <= kFa2MaxHeadDim)
    return upTo256;
  return {};
}

std::optional<int64_t> mlir::attn::fa2NestedSide(int64_t side, int64_t limit) {
  for (int64_t size = std::min(side, limit) / 16 * 16; size > 0; size -= 16)
    if (side % size == 0)
      return size;
  return std::nullopt;
}

/// `table`'s tilings nested in `blocks` (fa2Tilings).
static llvm::SmallVector<Fa2Tiling>
nestedTilings(llvm::ArrayRef<Fa2Tiling> table, MaskBlocks blocks) {
  if (!blocks)
    return llvm::SmallVector<Fa2Tiling>(table);
  llvm::SmallVector<Fa2Tiling> nested;
  // `from` cut down to rows x keys, unless a warp would own more rows than
  // in `from` (beyond what the register model was calibrated on: 48 x 16
  // with one warp spilled on sm_80 with a mask, estimated at 244).
  auto add = [&](const Fa2Tiling &from, int64_t rows, int64_t keys) {
    Fa2Tiling tiling = from;
    tiling.blockM = rows;
    tiling.blockN = keys;
    while (tiling.blockM % (16 * tiling.warps))
      tiling.warps /= 2;
    if (tiling.blockM * from.warps <= from.blockM * tiling.warps &&
        !llvm::is_contained(nested, tiling))
      nested.push_back(tiling);
  };
  // The table's tilings cut down to the blocks, then smaller nested sides of
  // each (blocks of 48 rows: 16 rows a tile, one warp), largest first, in
  // the table's order: ordered by area instead, 48 x 80 blocks at D = 128
  // took 16 x 80 with one warp (from 128 x 128) before 16 x 16 (from
  // 128 x 64), which ptxas 13.0 spilled on sm_80 and sm_90a.
  for (const Fa2Tiling &tiling : table) {
    std::optional<int64_t> rows = fa2NestedSide(blocks->first, tiling.blockM);
    std::optional<int64_t> keys = fa2NestedSide(blocks->second, tiling.blockN);
    if (!rows || !keys)
      return {};
    add(tiling, *rows, *keys);
  }
  for (const Fa2Tiling &tiling : table)
    for (std::optional<int64_t> rows =
             fa2NestedSide(blocks->first, tiling.blockM);
         rows; rows = fa2NestedSide(blocks->first, *rows - 16))
      for (std::optional<int64_t> keys =
               fa2NestedSide(blocks->second, tiling.blockN);
           keys; keys = fa2NestedSide(blocks->second, *keys - 16))
        add(tiling, *rows, *keys);
  return nested;
}

llvm::SmallVector<Fa2Tiling> mlir::attn::fa2Tilings(int64_t headDim,
                                                    bool splitKv,
                                                    MaskBlocks blocks,
                                                    bool warpgroups) {
  if (splitKv)
    return nestedTilings(fa2SplitKvCandidates(headDim), blocks);
  llvm::SmallVector<Fa2Tiling> tilings =
      nestedTilings(fa2Candidates(headDim), blocks);
  if (!warpgroups || tilings.empty())
    return tilings;
  // The warpgroup tilings first, each nested in the blocks where it stays
  // whole warpgroups of 16-row warps; then FlashAttention-2's (what a
  // warpgroup kernel cannot use runs on mma.sync).
  llvm::SmallVector<Fa2Tiling> ordered;
  for (Fa2Tiling tiling : warpgroupCandidates(headDim)) {
    if (blocks) {
      std::optional<int64_t> rows = fa2NestedSide(blocks->first, tiling.blockM);
      std::optional<int64_t> keys =
          fa2NestedSide(blocks->second, tiling.blockN);
      if (!rows || !keys || *rows % 64 != 0)
        continue;
      tiling.blockM = *rows;
      tiling.blockN = *keys;
      tiling.warps = *rows / 16;
    }
    if (!llvm::is_contained(ordered, tiling))
      ordered.push_back(tiling);
  }
  for (const Fa2Tiling &tiling : tilings)
    if (!llvm::is_contained(ordered, tiling))
      ordered.push_back(tiling);
  return ordered;
}

std::optional<Fa2Tiling>
mlir::attn::defaultFa2Tiling(int64_t headDim, int64_t valueDim,
                             int64_t elementBytes,
                             std::optional<int64_t> sharedMemoryPerBlock,
                             ScoreWork work, bool splitKv, MaskBlocks blocks) {
  int64_t widest = std::max(headDim, valueDim);
  if (widest < 1)
    return std::nullopt;
  for (const Fa2Tiling &tiling : fa2Tilings(widest, splitKv, blocks)) {
    if (sharedMemoryPerBlock &&
        fa2SharedMemoryBytes(tiling, headDim, valueDim, elementBytes) >
            *sharedMemoryPerBlock)
      continue;
    if (fa2RegistersPerThread(tiling, valueDim, work, splitKv) >
        kMaxRegistersPerThread)
      continue;
    return tiling;
  }
  return std::nullopt;
}

Fa2Tiling mlir::attn::fa2GradKernelTiling(int64_t headDim, int64_t valueDim,
                                          bool tensorCopies) {
  return {/*blockM=*/64, std::max(headDim, valueDim) <= 64 ? 64 : 32,
          /*warps=*/4, tensorCopies ? kGradTensorCopyStages : 1};
}

int64_t mlir::attn::fa2GradSharedBytes(const Fa2Tiling &tiling, int64_t headDim,
                                       int64_t valueDim, bool tensorCopies,
                                       bool keyLengths) {
  int64_t rowBytes =
      2 * (fa2SharedRowElements(headDim) + fa2SharedRowElements(valueDim));
  int64_t statistics = 2 * 4 * std::max(tiling.blockM, tiling.blockN);
  int64_t barriers =
      tensorCopies ? (tiling.stages + 1 + (keyLengths ? 1 : 0)) * kMbarrierBytes
                   : 0;
  return (tiling.blockM + tiling.stages * tiling.blockN) * rowBytes +
         statistics + barriers;
}

std::string mlir::attn::gradTensorCopiesUnfit(int64_t headDim, int64_t valueDim,
                                              bool keyLengths,
                                              int64_t sharedLimit) {
  if (std::max(headDim, valueDim) > kGradBothAtOnce)
    return "dV and dK in a walk each (max(D, Dv) = " +
           std::to_string(std::max(headDim, valueDim)) +
           "): with the stages' addresses ptxas serialised their wgmma";
  int64_t bytes = fa2GradSharedBytes(
      fa2GradKernelTiling(headDim, valueDim, /*tensorCopies=*/true), headDim,
      valueDim, /*tensorCopies=*/true, keyLengths);
  if (bytes > sharedLimit)
    return "the streamed tiles' " + std::to_string(kGradTensorCopyStages) +
           " stages need " + std::to_string(bytes) +
           " bytes of shared memory, more than a block's " +
           std::to_string(sharedLimit);
  return "";
}
