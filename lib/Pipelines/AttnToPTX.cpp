//===- AttnToPTX.cpp - attn ops to PTX through NVGPU and NVVM -------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/MatrixUnit.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Config/Targets.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <optional>

using namespace mlir;
using namespace mlir::attn;

void mlir::attn::buildKernelsToPTXPipeline(OpPassManager &pm,
                                           const AttnToPTXOptions &options) {
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // NVVM operations without an LLVM intrinsic (mbarrier.try_wait.parity's
  // loop) become inline assembly.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createAttnAlignDynamicSharedMemory());
  kernels.addPass(createAttnTensorMapParameters());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

/// LLVM's NVPTX subtarget tables (its processors and features), or null where
/// LLVM was built without the NVPTX back end. Asking LLVM keeps the chips
/// accepted here the ones it can generate code for, in one table.
static const llvm::MCSubtargetInfo *getNVPTXSubtargetInfo() {
  static const std::unique_ptr<llvm::MCSubtargetInfo> info =
      []() -> std::unique_ptr<llvm::MCSubtargetInfo> {
#if LLVM_HAS_NVPTX_TARGET
    // Registering twice is harmless: LLVM keeps the first registration.
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTargetMC();
    llvm::Triple triple("nvptx64-nvidia-cuda");
    std::string error;
    const llvm::Target *target =
        llvm::TargetRegistry::lookupTarget(triple, error);
    if (!target)
      return nullptr;
    return std::unique_ptr<llvm::MCSubtargetInfo>(
        target->createMCSubtargetInfo(triple, /*CPU=*/"", /*Features=*/""));
#else
    return nullptr;
#endif
  }();
  return info.get();
}

/// The chips LLVM's NVPTX back end knows that the kernels run on (sm_80 and
/// newer, as computeCapabilityOf reads them), oldest first: "sm_80, sm_86,
/// ...".
static std::string getSupportedChips(const llvm::MCSubtargetInfo &info) {
  SmallVector<std::pair<int64_t, StringRef>> chips;
  for (const llvm::SubtargetSubTypeKV &processor :
       info.getAllProcessorDescriptions()) {
    int64_t capability = computeCapabilityOf(processor.Key);
    if (capability >= kMinComputeCapability)
      chips.emplace_back(capability, processor.Key);
  }
  llvm::sort(chips);
  return llvm::join(llvm::make_second_range(chips), ", ");
}

/// The PTX versions (times ten) LLVM's NVPTX back end knows, oldest first:
/// its ptxNN features.
static SmallVector<unsigned>
getKnownPTXVersions(const llvm::MCSubtargetInfo &info) {
  SmallVector<unsigned> versions;
  for (const llvm::SubtargetFeatureKV &feature :
       info.getAllProcessorFeatures()) {
    StringRef key = feature.Key;
    unsigned version;
    if (key.consume_front("ptx") && !key.getAsInteger(10, version))
      versions.push_back(version);
  }
  llvm::sort(versions);
  return versions;
}

/// The oldest PTX version (times ten) that can target `chip`, or nullopt for
/// a chip not in the table. LLVM keeps this table out of its interface (a
/// static function in NVPTXSubtarget.cpp, getMinPTXVersionForSM), and its
/// processors imply no PTX feature, so it is written here: the "Supported
/// Targets" column of the PTX ISA's release notes ("PTX Release History"),
/// as LLVM 22 has it. It covers every chip computeCapabilityOf accepts from
/// sm_80 on that LLVM 22 knows.
static std::optional<unsigned> getMinPTXVersion(StringRef chip) {
  return llvm::StringSwitch<std::optional<unsigned>>(chip)
      .Case("sm_80", 70)
      .Case("sm_86", 71)
      .Case("sm_87", 74)
      .Cases({"sm_89", "sm_90"}, 78)
      .Case("sm_90a", 80)
      .Cases({"sm_100", "sm_100a", "sm_101", "sm_101a"}, 86)
      .Cases({"sm_120", "sm_120a"}, 87)
      .Cases({"sm_103", "sm_103a", "sm_121", "sm_121a"}, 88)
      .Cases({"sm_88", "sm_110", "sm_110a"}, 90)
      .Default(std::nullopt);
}

/// The oldest PTX version (times ten) the kernels' instructions need:
/// mma.sync m16n8k16 on bf16 and cp.async came with PTX 7.0.
static constexpr unsigned kMinPTXVersion = 70;

/// "8.0" for 80.
static std::string formatPTXVersion(unsigned version) {
  return std::to_string(version / 10) + "." + std::to_string(version % 10);
}

std::string AttnToPTXOptions::validate() const {
  std::optional<MatrixUnitRequest> unit = parseMatrixUnitRequest(matrixUnit);
  if (!unit)
    return "matrix-unit must be auto, mma-sync or wgmma, got \"" + matrixUnit +
           "\"";
  if (*unit == MatrixUnitRequest::Wgmma && !hasWarpgroupMma(chip))
    return "matrix-unit=wgmma needs chip sm_90a (wgmma is an "
           "architecture-specific feature of sm_90), got " +
           chip;
  int64_t capability = computeCapabilityOf(chip);
  if (capability < 0)
    return "chip must name an NVPTX architecture such as sm_80 or sm_90a, "
           "got \"" +
           chip + "\"";
  if (capability < kMinComputeCapability)
    return "the kernels use sm_80 instructions (mma.sync m16n8k16, "
           "cp.async): " +
           chip + " is too old; use sm_80 or newer";
  const llvm::MCSubtargetInfo *nvptx = getNVPTXSubtargetInfo();
  if (!nvptx)
    return "this LLVM was built without the NVPTX back end: no chip can be "
           "compiled for";
  std::string llvmName = "LLVM " + std::to_string(LLVM_VERSION_MAJOR);
  if (!nvptx->isCPUStringValid(chip))
    return "chip " + chip + " is not an NVPTX architecture that " + llvmName +
           " knows; the kernels can be compiled for " +
           getSupportedChips(*nvptx);

  // The PTX version LLVM generates: the newest of the +ptxNN entries (its
  // subtarget keeps the largest version any feature sets), else the chip's
  // minimum.
  SmallVector<StringRef> entries;
  StringRef(features).split(entries, ',', -1, /*KeepEmpty=*/false);
  if (entries.empty())
    return "";
  SmallVector<unsigned> known = getKnownPTXVersions(*nvptx);
  unsigned requested = 0;
  for (StringRef entry : entries) {
    StringRef number = entry;
    unsigned version;
    if (!number.consume_front("+ptx") || number.getAsInteger(10, version))
      return "features must be PTX versions such as +ptx80 or +ptx83, got \"" +
             features + "\"";
    // LLVM ignores a feature it does not know (+ptx99, +ptx080), with a
    // warning only, and would generate its default version instead.
    if (number != std::to_string(version) ||
        !llvm::is_contained(known, version)) {
      SmallVector<std::string> names;
      for (unsigned each : known)
        if (each >= kMinPTXVersion)
          names.push_back("+ptx" + std::to_string(each));
      return "features: " + entry.str() + " is not a PTX version that " +
             llvmName + " knows; it knows " + llvm::join(names, ", ");
    }
    requested = std::max(requested, version);
  }
  std::optional<unsigned> chipMinimum = getMinPTXVersion(chip);
  if (!chipMinimum)
    return "features: the oldest PTX version for " + chip +
           " is not known here; leave features empty (" + llvmName +
           " then uses the chip's minimum)";
  unsigned minimum = std::max(*chipMinimum, kMinPTXVersion);
  if (requested < minimum)
    return "features: PTX " + formatPTXVersion(requested) + " (+ptx" +
           std::to_string(requested) + ") is too old for " + chip +
           ": it needs PTX " + formatPTXVersion(minimum) + " or newer (+ptx" +
           std::to_string(minimum) +
           "); leave features empty for the chip's minimum";
  return "";
}

void mlir::attn::buildAttnToKernelsPipeline(OpPassManager &pm,
                                            const AttnToPTXOptions &options) {
  // wgmma only where the PTX is for sm_90a, whatever the module's target
  // says; the tiles are chosen for the unit the kernels will use.
  std::string matrixUnit = hasWarpgroupMma(options.chip)
                               ? options.matrixUnit.getValue()
                               : std::string("mma-sync");
  // A module without an #attn.target gets the chip's reference device.
  AttnAttachTargetOptions attach;
  attach.chip = options.chip;
  pm.addPass(createAttnAttachTarget(attach));
  AttnSelectScheduleOptions schedule;
  // Lean attention replaces split-KV.
  schedule.lean = options.lean;
  schedule.splitKv = options.splitKv && !options.lean;
  schedule.matrixUnit = matrixUnit;
  pm.addPass(createAttnSelectSchedule(schedule));
  // With the tiles chosen: the block sparsity the IR proves, which the
  // kernel skips.
  pm.addPass(createAttnDeriveBlockMask());
  AttnToNVGPUOptions kernels;
  kernels.matrixUnit = matrixUnit;
  pm.addPass(createAttnToNVGPU(kernels));
}

void mlir::attn::buildAttnToPTXPipeline(OpPassManager &pm,
                                        const AttnToPTXOptions &options) {
  buildAttnToKernelsPipeline(pm, options);
  buildKernelsToPTXPipeline(pm, options);
}
