//===- AttnAttrs.cpp - Target and schedule attributes
//----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "attn/Support/SizeLimits.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "attn/Dialect/Attn/IR/AttnAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

/// Parses "sm_<digits>[a]" into the compute capability; -1 if malformed.
/// Architecture-specific variants ("a") exist from sm_90 on.
static int64_t parseComputeCapability(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return -1;
  bool specific = chip.consume_back("a");
  int64_t cc;
  if (chip.empty() || chip.getAsInteger(10, cc) || cc <= 0 ||
      (specific && cc < 90))
    return -1;
  return cc;
}

int64_t mlir::attn::computeCapabilityOf(StringRef chip) {
  return parseComputeCapability(chip);
}

int64_t TargetAttr::getComputeCapability() const {
  return parseComputeCapability(getChip());
}

bool TargetAttr::isArchSpecific() const { return getChip().ends_with("a"); }

/// Checks that `value` is at most kMaxCount.
static LogicalResult
verifyCountBound(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                 int64_t value) {
  if (value <= kMaxCount)
    return success();
  return emitError() << name << " must be at most " << kMaxCount << ", got "
                     << value;
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef chip, int64_t sms,
                                 int64_t smemPerBlock, int64_t smemPerSm,
                                 int64_t regsPerSm, int64_t regsPerThread) {
  if (parseComputeCapability(chip) < 0)
    return emitError() << "chip must name an NVPTX architecture such as "
                          "\"sm_80\" or \"sm_90a\", got \""
                       << chip << "\"";
  if (sms <= 0)
    return emitError() << "sms must be positive, got " << sms;
  if (smemPerBlock <= 0 || smemPerSm <= 0)
    return emitError() << "shared memory sizes must be positive, got "
                          "smem_per_block = "
                       << smemPerBlock << ", smem_per_sm = " << smemPerSm;
  if (smemPerBlock > smemPerSm)
    return emitError() << "smem_per_block (" << smemPerBlock
                       << ") cannot exceed smem_per_sm (" << smemPerSm << ")";
  if (regsPerSm <= 0 || regsPerThread <= 0)
    return emitError() << "register counts must be positive, got "
                          "regs_per_sm = "
                       << regsPerSm << ", regs_per_thread = " << regsPerThread;
  if (failed(verifyCountBound(emitError, "sms", sms)) ||
      failed(verifyCountBound(emitError, "smem_per_sm", smemPerSm)) ||
      failed(verifyCountBound(emitError, "regs_per_sm", regsPerSm)))
    return failure();
  if (regsPerThread > regsPerSm)
    return emitError() << "regs_per_thread (" << regsPerThread
                       << ") cannot exceed regs_per_sm (" << regsPerSm << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

LogicalResult Fa2TilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t blockM, int64_t blockN,
                                   int64_t warps, int64_t stages,
                                   int64_t packedHeads) {
  if (warps < 1 || warps > 16 || !llvm::isPowerOf2_64(warps))
    return emitError() << "warps must be a power of two from 1 to 16, got "
                       << warps;
  if (blockM <= 0 || blockM % (16 * warps) != 0)
    return emitError() << "block_m must be a positive multiple of 16 * warps = "
                       << 16 * warps
                       << " (each warp owns a multiple of 16 "
                          "query rows), got "
                       << blockM;
  if (blockN <= 0 || blockN % 16 != 0)
    return emitError() << "block_n must be a positive multiple of 16, got "
                       << blockN;
  if (blockM > kMaxBlock || blockN > kMaxBlock)
    return emitError() << "block_m and block_n must be at most " << kMaxBlock
                       << ", got " << blockM << " and " << blockN;
  if (stages < 1 || stages > kMaxStages)
    return emitError() << "stages must be from 1 to " << kMaxStages << ", got "
                       << stages;
  if (packedHeads < 1 || packedHeads > kMaxBlock)
    return emitError() << "packed_heads must be from 1 to " << kMaxBlock
                       << ", got " << packedHeads;
  return success();
}

LogicalResult KernelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 MatrixUnit unit, TileCopy kv, TileCopy q,
                                 WarpRoles roles, KernelLoop loop,
                                 OutputStore o, int64_t producerRegisters,
                                 int64_t consumerRegisters,
                                 int64_t entryRegisters, int64_t minCtasPerSm) {
  if (unit == MatrixUnit::MmaSync &&
      (kv != TileCopy::CpAsync || q != TileCopy::CpAsync ||
       roles != WarpRoles::NoRoles || loop != KernelLoop::Sequential ||
       o != OutputStore::Lanes))
    return emitError() << "unit = mma_sync takes kv = cp_async, q = cp_async, "
                          "roles = none, loop = sequential and o = lanes (the "
                          "tensor copies, warp roles, overlapped loops and "
                          "tensor stores are wgmma's)";
  if (q == TileCopy::Tensor && kv != TileCopy::Tensor)
    return emitError() << "q = tensor needs kv = tensor (Q's copy completes "
                          "on an mbarrier after the stages')";
  if (roles == WarpRoles::Producer && kv != TileCopy::Tensor)
    return emitError() << "roles = producer needs kv = tensor (the producer "
                          "warpgroup issues tensor copies)";
  if (loop == KernelLoop::PingPong && roles != WarpRoles::Producer)
    return emitError() << "loop = ping_pong needs roles = producer (the "
                          "consumer warpgroups take turns at the products "
                          "while the producer copies)";
  bool anyRegisters = producerRegisters || consumerRegisters || entryRegisters;
  if (anyRegisters && roles != WarpRoles::Producer)
    return emitError() << "producer_registers, consumer_registers and "
                          "entry_registers need roles = producer";
  if (anyRegisters) {
    for (int64_t registers :
         {producerRegisters, consumerRegisters, entryRegisters})
      if (registers < 24 || registers > 256 || registers % 8 != 0)
        return emitError()
               << "producer_registers, consumer_registers and "
                  "entry_registers are set together, each a multiple of 8 "
                  "from 24 to 256 (setmaxnreg's range), got "
               << producerRegisters << ", " << consumerRegisters << " and "
               << entryRegisters;
  }
  if (minCtasPerSm < 0 || minCtasPerSm > 32)
    return emitError() << "min_ctas_per_sm must be from 0 to 32, got "
                       << minCtasPerSm;
  return success();
}

LogicalResult SplitKVAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t splits) {
  if (splits < 1)
    return emitError() << "splits must be at least 1, got " << splits;
  return verifyCountBound(emitError, "splits", splits);
}

LogicalResult LeanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t ctas) {
  if (ctas < 1)
    return emitError() << "ctas must be at least 1, got " << ctas;
  return verifyCountBound(emitError, "ctas", ctas);
}

LogicalResult
Attention2DAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t qParts, int64_t kvParts, bool zigzag) {
  if (qParts < 1 || kvParts < 1)
    return emitError() << "q_parts and kv_parts must be at least 1, got "
                       << qParts << " x " << kvParts;
  if (qParts > kMaxCount / kvParts)
    return emitError() << "q_parts x kv_parts must be at most " << kMaxCount
                       << " ranks, got " << qParts << " x " << kvParts;
  return success();
}

LogicalResult RingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t devices, bool zigzag) {
  if (devices < 1)
    return emitError() << "devices must be at least 1, got " << devices;
  return verifyCountBound(emitError, "devices", devices);
}

LogicalResult ClusterAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t ranks, int64_t ranksPerNode,
                                  int64_t nodeGbps, int64_t nodeLatencyNs,
                                  int64_t networkGbps,
                                  int64_t networkLatencyNs) {
  if (ranks < 1 || ranksPerNode < 1)
    return emitError() << "ranks and ranks_per_node must be at least 1, got "
                       << ranks << " and " << ranksPerNode;
  if (failed(verifyCountBound(emitError, "ranks", ranks)) ||
      failed(verifyCountBound(emitError, "ranks_per_node", ranksPerNode)))
    return failure();
  if (nodeGbps < 1 || networkGbps < 1)
    return emitError() << "link bandwidths must be at least 1 GB/s, got "
                       << nodeGbps << " and " << networkGbps;
  if (nodeLatencyNs < 0 || networkLatencyNs < 0)
    return emitError() << "link latencies must not be negative, got "
                       << nodeLatencyNs << " and " << networkLatencyNs;
  return success();
}
