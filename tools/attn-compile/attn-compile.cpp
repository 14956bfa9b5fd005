//===- attn-compile.cpp - Compile attentions to a kernel bundle -----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-compile runs attn-to-ptx on a module and writes a kernel bundle: the
// PTX text of every kernel (kernels.ptx) and its manifest (manifest.json),
// which libattnrt loads. include/attn/Pipelines/KernelBundle.h and
// docs/runtime.md describe the format.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/MatrixUnit.h"
#include "attn/Analysis/ReferenceDevices.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/KernelBundle.h"
#include "attn/Support/Files.h"
#include "attn/Support/SourceInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<module.mlir>"),
                                   cl::Required);
cl::opt<std::string> outputDir("o", cl::desc("Directory of the bundle"),
                               cl::value_desc("dir"), cl::Required);
cl::list<std::string> functions(
    "function",
    cl::desc("Compile only the attentions of this function (repeatable; "
             "default: all)"),
    cl::value_desc("name"));
cl::opt<bool> lean("lean",
                   cl::desc("Lean attention (persistent CTAs), instead of "
                            "split-KV, for attentions that FlashAttention-2's "
                            "rule would split, with as many CTAs as the "
                            "target holds"));
cl::opt<bool> splitKv("split-kv",
                      cl::desc("Split-KV (partials merged by the last CTA of "
                               "each output tile) for attentions that "
                               "FlashAttention-2's rule would split (default "
                               "on; --split-kv=false keeps FlashAttention-2's "
                               "grid)"),
                      cl::init(true));
cl::opt<std::string> matrixUnit(
    "matrix-unit",
    cl::desc("The kernels' matrix instructions: auto (default: wgmma for "
             "sm_90a where the tiles fit, else mma.sync), mma-sync, or wgmma; "
             "the default tiles are chosen for it"),
    cl::init("auto"));
cl::opt<std::string> chip("chip",
                          cl::desc("GPU to compile for (default: the chip of "
                                   "the module's #attn.target, else sm_80); a "
                                   "module without a target gets the limits "
                                   "of the chip's reference device, one with "
                                   "a target keeps it"));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-compile: compile the attentions of a module to a kernel bundle "
      "(PTX + manifest)\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<AttnDialect>();
  MLIRContext context(registry);

  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> source =
      readSource(inputFilename);
  if (!source)
    return fail(llvm::toString(source.takeError()));
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*source), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  if (!functions.empty()) {
    SmallVector<func::FuncOp> others;
    llvm::StringSet<> wanted;
    for (const std::string &name : functions)
      wanted.insert(name);
    for (auto func : module->getOps<func::FuncOp>()) {
      if (!wanted.erase(func.getSymName()))
        others.push_back(func);
    }
    if (!wanted.empty())
      return fail("no function @" + wanted.begin()->getKey() + " in " +
                  inputFilename);
    for (func::FuncOp func : others)
      func.erase();
  }

  AttnToPTXOptions options;
  options.chip = "sm_80";
  options.lean = lean;
  options.splitKv = splitKv;
  options.matrixUnit = matrixUnit;
  auto target =
      (*module)->getAttrOfType<TargetAttr>(AttnDialect::getTargetAttrName());
  if (target)
    options.chip = target.getChip().str();
  if (chip.getNumOccurrences())
    options.chip = chip;
  if (std::string error = options.validate(); !error.empty())
    return fail(error);
  // Without a target the pipeline schedules for the chip's reference device
  // (attn-attach-target); the summary says which. A target of another chip
  // is kept, and the kernels are scheduled for it: say so.
  std::string limits;
  if (target && target.getChip() != options.chip)
    llvm::WithColor::warning(llvm::errs(), "attn-compile")
        << "the kernels are scheduled for the module's #attn.target ("
        << target.getChip() << "'s limits"
        << (hasWarpgroupMma(options.chip) && !hasWarpgroupMma(target.getChip())
                ? ", and mma.sync: the target has no wgmma"
                : "")
        << "); only their PTX is for " << options.chip << "\n";
  if (!target)
    if (std::optional<ReferenceDevice> device = referenceDeviceOf(options.chip))
      limits = llvm::formatv(" (no #attn.target: the limits of an {0}, {1} "
                             "SMs)",
                             device->name, device->sms);

  auto start = std::chrono::steady_clock::now();
  KernelBundle bundle;
  if (failed(compileKernelBundle(*module, options, bundle)))
    return 1;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create " + outputDir + ": " + ec.message());
  auto write = [&](StringRef name, StringRef text) -> bool {
    SmallString<256> path(outputDir.getValue());
    llvm::sys::path::append(path, name);
    std::string error = mlir::attn::files::writeFile(path.str().str(), {text});
    if (!error.empty())
      fail(error);
    return error.empty();
  };
  if (!write("kernels.ptx", bundle.ptx) ||
      !write("manifest.json", bundle.manifestJson))
    return 1;
  llvm::outs() << llvm::formatv("{0} kernel(s) for {1}{2} in {3:F3} s -> {4}\n",
                                bundle.kernelCount, options.chip, limits,
                                seconds, outputDir);
  return 0;
}
