//===- AttnToCPU.cpp - The attn-to-cpu pipeline ---------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Pipelines/Pipelines.h"

#include "attn/Distribution/Passes.h"
#include "attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/ShardToMPI/ShardToMPI.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

std::string AttnToCPUOptions::validate() const {
  int64_t limit = Fa2TilesAttr::kMaxBlock;
  if (blockM < 0 || blockN < 0 || blockM > limit || blockN > limit)
    return llvm::formatv("block-m and block-n must be from 0 (the default) to "
                         "{0}, got {1} and {2}",
                         limit, static_cast<int64_t>(blockM),
                         static_cast<int64_t>(blockN))
        .str();
  return "";
}

void mlir::attn::buildAttnToCPUPipeline(OpPassManager &pm,
                                        const AttnToCPUOptions &options) {
  // Target-independent decomposition, on tensors: distributed attentions
  // become one rank's program, the target's schedule is chosen, the block
  // sparsity the IR proves is attached,
  // partitions are made explicit, then the loops of every attention and
  // partial attention.
  pm.addPass(createAttnDistribute());
  // The target's schedule, as attn-to-ptx chooses it (a rank's framed
  // attentions too); block sizes pinned by the options pin the kernel, as
  // pinned tiles do: no split.
  bool sidesPinned = options.blockM != 0 || options.blockN != 0;
  AttnSelectScheduleOptions schedule;
  schedule.lean = options.lean && !sidesPinned;
  schedule.splitKv = options.splitKv && !options.lean && !sidesPinned;
  pm.addPass(createAttnSelectSchedule(schedule));
  AttnDeriveBlockMaskOptions derive;
  derive.blockM = options.blockM;
  derive.blockN = options.blockN;
  pm.addPass(createAttnDeriveBlockMask(derive));
  // Several attentions of one function: each into a function of its own
  // over buffers, so that compile time stays linear in their number.
  pm.addPass(createAttnOutline());
  AttnPartitionKVOptions partition;
  partition.blockM = options.blockM;
  partition.blockN = options.blockN;
  pm.addPass(createAttnPartitionKV(partition));
  AttnDecomposeOptions decompose;
  decompose.blockM = options.blockM;
  decompose.blockN = options.blockN;
  pm.addPass(createAttnDecompose(decompose));
  AttnDecomposeGradOptions decomposeGrad;
  decomposeGrad.blockM = options.blockM;
  decomposeGrad.blockN = options.blockN;
  pm.addPass(createAttnDecomposeGrad(decomposeGrad));
  pm.addPass(createAttnLowerMerge());
  // Collectives: ours to libattnmpi calls, the process indices through MLIR's
  // own shard-to-mpi; then the grid declarations go.
  pm.addPass(createAttnLowerCollectives());
  pm.addPass(createConvertShardToMPIPass());
  pm.addPass(createSymbolDCEPass());
  // An outlined attention writes its destination buffer directly, not a
  // temporary copied there.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  // Each tensor.empty becomes its own bufferization.alloc_tensor before CSE:
  // otherwise CSE merges every empty tensor of one type into one value, every
  // attention's destination aliases all the others, and CSE and One-Shot
  // Bufferize go quadratic in the number of attentions (2,000 attentions took
  // 88 s).
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Buffers: tiles are allocated per iteration and freed after their last use.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Ring attention's step loop carries the key/value shard it received,
  // a new buffer every step.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // In-place results leave copies of a slice onto itself: CSE makes both
  // sides one value and canonicalisation drops the copy.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // At module level, so that deallocations of several buffers can call a
  // helper function the lowering adds to the module.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops, then LLVM.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createForallToForLoopPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Plain LLVM dialect for stock tools: the target and cluster are spent.
  pm.addPass(createAttnStripModuleAttributes());
}
