//===- Fa2Resources.cpp - What a FlashAttention-2 schedule costs an SM ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/MatrixUnit.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir::attn;

GpuLimits mlir::attn::gpuLimits(TargetAttr target, MatrixUnitRequest unit) {
  return {target.getSms(),
          target.getSmemPerBlock(),
          target.getSmemPerSm(),
          target.getRegsPerSm(),
          target.getRegsPerThread(),
          hasWarpgroupMma(target.getChip()) &&
              unit != MatrixUnitRequest::MmaSync};
}

Fa2Tiling mlir::attn::fa2TilingOf(Fa2TilesAttr tiles) {
  return {tiles.getBlockM(), tiles.getBlockN(), tiles.getWarps(),
          tiles.getStages(), tiles.getPackedHeads()};
}

ScoreWork mlir::attn::scoreWorkOf(AttentionOp op) {
  return {static_cast<bool>(op.getSoftcap()) || op.hasScoreModifier(),
          static_cast<bool>(op.getMask()), op.hasScoreModifier()};
}

Fa2TilesAttr mlir::attn::fa2TilesAttrOf(MLIRContext *context,
                                        const Fa2Tiling &tiling) {
  return Fa2TilesAttr::get(context, tiling.blockM, tiling.blockN, tiling.warps,
                           tiling.stages, tiling.packedHeads);
}

Fa2Resources mlir::attn::fa2Resources(const Fa2Tiling &tiling, int64_t headDim,
                                      int64_t valueDim, int64_t elementBytes,
                                      ScoreWork work, bool kernelSplitsKv) {
  return {32 * tiling.warps,
          fa2SharedMemoryBytes(tiling, headDim, valueDim, elementBytes),
          fa2RegistersPerThread(tiling, valueDim, work, kernelSplitsKv)};
}

int64_t mlir::attn::allowedRegistersPerThread(int64_t threads,
                                              const GpuLimits &limits) {
  int64_t perThreadOfSm = limits.regsPerSm / std::max<int64_t>(threads, 1);
  perThreadOfSm -= perThreadOfSm % kRegisterGranularityPerThread;
  return std::min(limits.regsPerThread, perThreadOfSm);
}

WgmmaKernel mlir::attn::wgmmaKernelOf(AttentionOp op, const Fa2Tiling &tiling,
                                      bool splitsKv, const GpuLimits &limits) {
  int64_t headDim = op.getQuery().getType().getDimSize(3),
          valueDim = op.getValue().getType().getDimSize(3);
  WgmmaKernel kernel{tiling,
                     headDim,
                     valueDim,
                     scoreWorkOf(op),
                     fa2SharedMemoryBytes(tiling, headDim, valueDim,
                                          /*elementBytes=*/2),
                     op.hasKeyLengths(),
                     static_cast<bool>(op.getBlockMask()),
                     splitsKv};
  if (auto lean = dyn_cast_or_null<LeanAttr>(op.getPartitionAttr()))
    kernel.persistentCtasPerSm = llvm::divideCeil(lean.getCtas(), limits.sms);
  return kernel;
}

WgmmaBodyPlan mlir::attn::planWgmmaBody(const WgmmaKernel &kernel,
                                        const GpuLimits &limits) {
  const Fa2Tiling &tiling = kernel.tiling;
  WgmmaBodyPlan plan;
  plan.noTensorCopies = kvTensorCopiesUnfit(
      tiling, kernel.tileBytes, limits.smemPerBlock, kernel.keyLengths);
  plan.noWarpRoles =
      warpRolesUnfit(tiling, plan.tensorCopies(), kernel.tileBytes,
                     limits.smemPerBlock, kernel.keyLengths);
  plan.noOutputTensorStore = rowTileTensorMapUnfit(tiling);
  plan.noQueryTensorCopy = !plan.tensorCopies()
                               ? "no mbarriers (K and V by cp.async)"
                               : plan.noOutputTensorStore;
  // Without warp roles a persistent kernel's CTAs share the registers.
  int64_t resident = std::max<int64_t>(1, kernel.persistentCtasPerSm);
  plan.consumerRegisters =
      allowedRegistersPerThread(resident * 32 * tiling.warps, limits);
  // A persistent kernel that must share an SM: the register estimate does
  // not cover Lean's walk there (ptxas 13.0: the run-time Lean decode of the
  // emulator check spilled 72 bytes at 216 registers a consumer, two CTAs
  // an SM).
  if (plan.warpRoles() && resident > 1)
    plan.noWarpRoles =
        "a persistent kernel with " + std::to_string(resident) + " CTAs an SM";
  if (plan.warpRoles()) {
    bool overlapFits = softmaxOverlapUnfit(tiling, kernel.valueDim, kernel.work,
                                           kernel.blockMask, kernel.splitsKv,
                                           true, true, limits.regsPerThread)
                           .empty();
    int64_t need =
        overlapFits
            ? softmaxOverlapRegisters(tiling, kernel.valueDim, kernel.work,
                                      kernel.splitsKv, true, true)
            : fa2RegistersPerThread(tiling, kernel.valueDim, kernel.work,
                                    kernel.splitsKv);
    int64_t threads = 32 * (tiling.warps + kProducerWarps);
    int64_t bytes = wgmmaSharedBytes(kernel.tileBytes, tiling.stages,
                                     /*tensorCopies=*/true,
                                     /*warpRoles=*/true, kernel.keyLengths) +
                    kReservedSharedBytesPerCta;
    int64_t most = std::min(
        {limits.smemPerSm / bytes, kMaxThreadsPerSm / threads, kMaxCtasPerSm});
    if (kernel.persistentCtasPerSm)
      most = 1;
    plan.noWarpRoles = "the producer warpgroup's threads leave a consumer "
                       "fewer than the " +
                       std::to_string(need) +
                       " registers it needs at 1 CTA an SM";
    for (int64_t ctas = most; ctas >= 1; --ctas) {
      WarpRoleRegisters registers = warpRoleRegisters(
          tiling.warps, ctas, limits.regsPerSm, limits.regsPerThread,
          kernel.persistentCtasPerSm || (kernel.keyLengths && !overlapFits));
      int64_t consumer =
          registers.reallocates() ? registers.consumer : limits.regsPerThread;
      if (consumer < need ||
          (registers.reallocates() &&
           registers.entry < wgmmaEntryRegisters(tiling, kernel.valueDim)))
        continue;
      plan.noWarpRoles.clear();
      plan.ctasPerSm = ctas;
      plan.roleRegisters = registers;
      plan.consumerRegisters = consumer;
      break;
    }
  }
  plan.noOverlap = softmaxOverlapUnfit(
      tiling, kernel.valueDim, kernel.work, kernel.blockMask, kernel.splitsKv,
      plan.tensorCopies(), plan.warpRoles(), plan.consumerRegisters);
  plan.noPingPong =
      pingPongUnfit(tiling, kernel.headDim, plan.warpRoles(), plan.overlap());
  return plan;
}

int64_t mlir::attn::fa2CtasPerSm(const Fa2Resources &resources,
                                 const GpuLimits &limits) {
  if (resources.threads < 1 ||
      resources.registersPerThread > limits.regsPerThread ||
      resources.sharedBytes > limits.smemPerBlock)
    return 0;
  int64_t byThreads = kMaxThreadsPerSm / resources.threads;
  int64_t byShared =
      limits.smemPerSm / (resources.sharedBytes + kReservedSharedBytesPerCta);
  int64_t registers =
      llvm::alignTo(std::max<int64_t>(resources.registersPerThread, 1),
                    kRegisterGranularityPerThread);
  int64_t byRegisters = limits.regsPerSm / (registers * resources.threads);
  return std::min({byThreads, byShared, byRegisters, kMaxCtasPerSm});
}

int64_t mlir::attn::leanCtasPerSm(const AttentionProblem &problem,
                                  const Fa2Tiling &tiling, int64_t elementBytes,
                                  ScoreWork work, const GpuLimits &limits) {
  Fa2Resources resources =
      fa2Resources(tiling, problem.headDim, problem.valueDim, elementBytes,
                   work, /*kernelSplitsKv=*/true);
  if (problem.masksByPosition())
    resources.registersPerThread += kMaskedLeanRegisters;
  return fa2CtasPerSm(resources, limits);
}

std::optional<Fa2Misfit>
mlir::attn::findFa2Misfit(const Fa2Resources &resources,
                          const GpuLimits &limits) {
  using Limit = Fa2Misfit::Limit;
  if (resources.sharedBytes > limits.smemPerBlock)
    return Fa2Misfit{Limit::SharedMemoryPerBlock, resources.sharedBytes,
                     limits.smemPerBlock};
  int64_t allowed = allowedRegistersPerThread(resources.threads, limits);
  if (resources.registersPerThread > allowed)
    return Fa2Misfit{Limit::RegistersPerThread, resources.registersPerThread,
                     allowed};
  int64_t sharedOnSm = resources.sharedBytes + kReservedSharedBytesPerCta;
  if (sharedOnSm > limits.smemPerSm)
    return Fa2Misfit{Limit::SharedMemoryPerSm, sharedOnSm, limits.smemPerSm};
  // Threads cannot be the reason: a CTA has at most 16 warps (the verifier of
  // #attn.fa2), 512 threads.
  return std::nullopt;
}

std::optional<Fa2Tiling>
mlir::attn::selectFa2Tiling(int64_t headDim, int64_t valueDim,
                            int64_t elementBytes, const GpuLimits &limits,
                            std::optional<Fa2Misfit> *lastMisfit,
                            ScoreWork work, bool splitKv, MaskBlocks blocks) {
  if (lastMisfit)
    *lastMisfit = std::nullopt;
  int64_t widest = std::max(headDim, valueDim);
  for (const Fa2Tiling &candidate :
       fa2Tilings(widest, splitKv, blocks, limits.warpgroupMma)) {
    for (int64_t stages = candidate.stages; stages >= 1; --stages) {
      Fa2Tiling tiling = candidate;
      tiling.stages = stages;
      std::optional<Fa2Misfit> misfit = findFa2Misfit(
          fa2Resources(tiling, headDim, valueDim, elementBytes, work, splitKv),
          limits);
      if (!misfit)
        return tiling;
      if (lastMisfit)
        *lastMisfit = misfit;
    }
  }
  return std::nullopt;
}

int64_t mlir::attn::fa2SplitKvSplits(int64_t parallelCtas, int64_t waveSlots,
                                     std::optional<int64_t> kvBlocks,
                                     int64_t maxSplits) {
  if (parallelCtas < 1 || waveSlots < 1 || (kvBlocks && *kvBlocks < 1))
    return 1;
  // parallelCtas >= 0.8 * waveSlots, exactly.
  if (5 * parallelCtas >= 4 * waveSlots)
    return 1;
  int64_t most = std::min({maxSplits, waveSlots, kvBlocks.value_or(maxSplits)});
  auto eligible = [&](int64_t splits) {
    return splits == 1 || !kvBlocks ||
           llvm::divideCeil(*kvBlocks, splits) !=
               llvm::divideCeil(*kvBlocks, splits - 1);
  };
  // Wave efficiency as the fraction work / (waveSlots * waves).
  struct Fraction {
    __int128 num, den;
  };
  auto efficiency = [&](int64_t splits) -> Fraction {
    int64_t work = parallelCtas * splits;
    int64_t waves = llvm::divideCeil(work, waveSlots);
    return {work, static_cast<__int128>(waveSlots) * waves};
  };
  Fraction best{0, 1};
  for (int64_t splits = 1; splits <= most; ++splits) {
    if (!eligible(splits))
      continue;
    Fraction e = efficiency(splits);
    if (e.num * best.den > best.num * e.den)
      best = e;
  }
  for (int64_t splits = 1; splits <= most; ++splits) {
    if (!eligible(splits))
      continue;
    Fraction e = efficiency(splits);
    // e >= 0.85 * best
    if (100 * e.num * best.den >= 85 * best.num * e.den)
      return splits;
  }
  return 1;
}

int64_t mlir::attn::leanCtaCount(int64_t leanTiles, int64_t residentCtas,
                                 int64_t sms) {
  int64_t ctas = std::min(residentCtas, leanTiles);
  if (leanTiles <= 4 * sms)
    ctas = std::min(ctas, (leanTiles + 1) / 2);
  return std::max<int64_t>(ctas, 1);
}

std::optional<KvPartitionChoice> mlir::attn::chooseKvPartition(
    MLIRContext *context, const AttentionProblem &problem,
    const Fa2Tiling &tiling, const GpuLimits &limits, int64_t elementBytes,
    ScoreWork work, bool lean, MaskBlocks blocks) {
  if (ShapedType::isDynamic(problem.queryLen))
    return std::nullopt;
  int64_t waveSlots = 2 * limits.sms;
  int64_t batch = ShapedType::isDynamic(problem.batch) ? 1 : problem.batch;
  bool staticKeys = ShapedType::isStatic(problem.keyLen);
  auto ruleSplits = [&](const Fa2Tiling &tiles) -> int64_t {
    int64_t parallelCtas =
        batch * problem.tiledHeads() * problem.queryBlocks(tiles.blockM);
    // Only needed when the rule may split, that is with few query blocks.
    if (5 * parallelCtas >= 4 * waveSlots)
      return 1;
    std::optional<int64_t> mostBlocks;
    if (staticKeys)
      mostBlocks =
          *llvm::max_element(problem.kvBlockCounts(tiles.blockM, tiles.blockN));
    return fa2SplitKvSplits(parallelCtas, waveSlots, mostBlocks);
  };
  if (ruleSplits(tiling) <= 1)
    return std::nullopt;
  // Split-KV and Lean kernels both start their loops at run-time blocks and
  // merge partials: split-KV's tiles.
  std::optional<Fa2Tiling> splitTiling =
      selectFa2Tiling(problem.headDim, problem.valueDim, elementBytes, limits,
                      nullptr, work, /*splitKv=*/true, blocks);
  if (!splitTiling)
    return std::nullopt;
  splitTiling->packedHeads = tiling.packedHeads;
  if (!lean) {
    int64_t splits = ruleSplits(*splitTiling);
    if (splits <= 1)
      return std::nullopt;
    return KvPartitionChoice{*splitTiling, SplitKVAttr::get(context, splits)};
  }
  int64_t residentCtas = limits.sms * leanCtasPerSm(problem, *splitTiling,
                                                    elementBytes, work, limits);
  int64_t ctas = residentCtas;
  if (problem.hasStaticLengths()) {
    SmallVector<int64_t> counts =
        problem.kvBlockCounts(splitTiling->blockM, splitTiling->blockN);
    ctas = leanCtaCount(problem.batch * problem.tiledHeads() *
                            llvm::sum_of(counts),
                        residentCtas, limits.sms);
  }
  return KvPartitionChoice{*splitTiling, LeanAttr::get(context, ctas)};
}
