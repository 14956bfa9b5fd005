//===- attn-compile.cpp - Compile attentions to a kernel bundle -----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-compile runs attn-to-ptx on a module and writes a kernel bundle: the
// PTX text of every kernel (kernels.ptx) and a manifest (manifest.json) with,
// for each kernel, its name, the order, element types and shapes of its
// parameters, its grid and block, its dynamic shared memory, its tiles, its
// target and what it computes. docs/kernel-bundle.md describes the format.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
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
cl::opt<std::string> chip("chip",
                          cl::desc("GPU to compile for (default: the chip of "
                                   "the module's #attn.target, else sm_80)"));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-compile") << message << "\n";
  return 1;
}

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream(text) << type;
  return text;
}

/// The manifest entry of one kernel, read off its gpu.func before PTX.
llvm::json::Object describeKernel(gpu::GPUFuncOp func, StringRef target) {
  auto launch = func->getAttrOfType<DictionaryAttr>(
      AttnDialect::getLaunchAttrName());
  auto sizes = [&](StringRef key) {
    llvm::json::Array array;
    for (int64_t size : launch.getAs<DenseI64ArrayAttr>(key).asArrayRef())
      array.push_back(size);
    return array;
  };
  static const char *names[] = {"Q", "K", "V", "O", "LSE"};
  llvm::json::Array params;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto memref = cast<MemRefType>(type);
    llvm::json::Array shape;
    for (int64_t size : memref.getShape())
      shape.push_back(size);
    params.push_back(llvm::json::Object{
        {"name", names[index]},
        {"type", typeName(memref.getElementType())},
        {"shape", std::move(shape)},
    });
  }
  auto tiles = launch.getAs<Fa2TilesAttr>("tiles");
  auto attention = launch.getAs<DictionaryAttr>("attention");
  llvm::json::Object semantics{
      {"scale",
       attention.getAs<FloatAttr>("scale").getValue().convertToDouble()},
      {"causal", attention.getAs<BoolAttr>("causal").getValue()},
  };
  if (auto window = attention.getAs<DenseI64ArrayAttr>("window"))
    semantics["window"] = llvm::json::Array{window[0], window[1]};
  return llvm::json::Object{
      {"name", func.getName()},
      {"target", target},
      {"params", std::move(params)},
      {"grid", sizes("grid")},
      {"block", sizes("block")},
      {"dynamic_shared_memory",
       launch.getAs<IntegerAttr>("dynamic_shared_memory").getInt()},
      {"tiles", llvm::json::Object{{"block_m", tiles.getBlockM()},
                                   {"block_n", tiles.getBlockN()},
                                   {"warps", tiles.getWarps()},
                                   {"stages", tiles.getStages()}}},
      {"attention", std::move(semantics)},
  };
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

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFilename, sourceMgr, &context);
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
  if (auto target = (*module)->getAttrOfType<TargetAttr>(
          AttnDialect::getTargetAttrName()))
    options.chip = target.getChip().str();
  if (chip.getNumOccurrences())
    options.chip = chip;

  auto start = std::chrono::steady_clock::now();
  PassManager toKernels(&context);
  toKernels.addPass(createAttnSelectSchedule());
  toKernels.addPass(createAttnToNVGPU());
  if (failed(toKernels.run(*module)))
    return 1;
  llvm::json::Array kernels;
  module->walk([&](gpu::GPUFuncOp func) {
    if (func->hasAttr(AttnDialect::getLaunchAttrName()))
      kernels.push_back(describeKernel(func, options.chip));
  });
  if (kernels.empty())
    return fail("no attn.attention in " + inputFilename);

  PassManager toPTX(&context);
  buildKernelsToPTXPipeline(toPTX, options);
  if (failed(toPTX.run(*module)))
    return 1;
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  std::string ptx;
  module->walk([&](gpu::BinaryOp binaryOp) {
    for (Attribute object : binaryOp.getObjects())
      ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  });

  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return fail("cannot create " + outputDir + ": " + ec.message());
  auto write = [&](StringRef name, StringRef text) -> bool {
    SmallString<256> path(outputDir.getValue());
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      fail("cannot write " + path + ": " + ec.message());
      return false;
    }
    os << text;
    return true;
  };
  size_t count = kernels.size();
  llvm::json::Object manifest{{"format", "attn-kernel-bundle"},
                              {"version", 1},
                              {"ptx", "kernels.ptx"},
                              {"kernels", std::move(kernels)}};
  std::string json;
  llvm::raw_string_ostream(json)
      << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)));
  if (!write("kernels.ptx", ptx) || !write("manifest.json", json + "\n"))
    return 1;
  llvm::outs() << llvm::formatv("{0} kernel(s) for {1} in {2:F3} s -> {3}\n",
                                count, options.chip, seconds, outputDir);
  return 0;
}
