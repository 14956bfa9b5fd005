//===- MlirFuzzer.cpp - Fuzz the parser, verifiers and pipelines ----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target attn-fuzz-mlir. The input's first byte picks a pipeline
// (below), the rest is MLIR text: it is parsed and verified, and a module
// that verifies goes through the pipeline, as `attn-opt --<pipeline>` would
// run it. Parse, verification and pass errors are expected and silent; the
// target fails on a crash, a sanitizer report, or a pass that succeeds but
// leaves IR that does not verify. Nothing is executed: attn-to-cpu stops at
// the LLVM dialect, attn-to-ptx at PTX text.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Support/SourceInput.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// What the first byte selects (modulo the count). make_mlir_seeds.py maps a
/// lit test's RUN line to an index here: keep the two in step.
const char *const kPipelines[] = {
    "",                     // 0: parse and verify only
    "attn-select-schedule", // 1
    "attn-print-plan",      // 2
    "attn-to-cpu",          // 3
    "attn-to-ptx",          // 4
    "attn-decompose",       // 5
    "attn-partition-kv",    // 6
    "attn-lower-merge",     // 7
    "attn-raise-attention", // 8
    "attn-distribute",      // 9
    "attn-lower-collectives", // 10
    "attn-to-nvgpu",        // 11
    "attn-select-schedule{split-kv=true}", // 12
    "attn-select-schedule{lean=true}",     // 13
    "attn-to-ptx{chip=sm_90a lean=true}",  // 14
    "attn-raise-attention,attn-to-cpu",    // 15
    // 16: a TOSA front end's attention, raised and lowered.
    ("func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,"
     "tosa-to-tensor),attn-raise-attention,attn-to-cpu"),
};
constexpr size_t kNumPipelines = std::size(kPipelines);

/// The diagnostics of the current input, printed only when the target
/// aborts (bounded: a remark per attention can add up).
std::string &diagnostics() {
  static std::string text;
  return text;
}

/// Verifies the IR after every pass that succeeded: a pass that reports
/// success must leave valid IR (mlir-opt's own check would only fail the
/// run, which this target accepts for passes that refuse an input).
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (succeeded(verify(op)))
      return;
    llvm::errs() << "attn-fuzz-mlir: pass '" << pass->getArgument()
                 << "' succeeded but left IR that does not verify\n"
                 << diagnostics();
    std::abort();
  }
};

const DialectRegistry &registry() {
  static const DialectRegistry *registry = [] {
    auto *registry = new DialectRegistry;
    registerAllDialects(*registry);
    registerAllExtensions(*registry);
    // gpu-module-to-binary (attn-to-ptx) translates kernels to LLVM IR.
    registerAllToLLVMIRTranslations(*registry);
    registry->insert<attn::AttnDialect>();
    return registry;
  }();
  return *registry;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Upstream passes by name: the TOSA pipeline (16).
  registerAllPasses();
  attn::registerAllAttnPassesAndPipelines();
  (void)registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const char *pipeline = kPipelines[data[0] % kNumPipelines];
  // A std::string keeps a NUL after the text, which MLIR's lexer reads as
  // the end of the buffer.
  std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);

  // What the tools refuse before MLIR's parser sees it (SourceInput.h).
  if (!attn::checkSourceText(text).empty())
    return 0;

  diagnostics().clear();
  // A fresh context per input: attributes and types are uniqued in it for
  // its lifetime, so a shared one would grow across runs. No thread pool:
  // libFuzzer runs one input at a time.
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, [](Diagnostic &diagnostic) {
    std::string &text = diagnostics();
    if (text.size() < 4096)
      text += diagnostic.str() + "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      text, ParserConfig(&context), "fuzz-input.mlir");
  if (!module || !*pipeline)
    return 0;

  PassManager pm = PassManager::on<ModuleOp>(&context);
  // VerifyAfterEachPass replaces the pass manager's verifier, which cannot
  // tell a pass that refuses an input from one that breaks the IR.
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
  if (failed(parsePassPipeline(pipeline, pm))) {
    llvm::errs() << "attn-fuzz-mlir: unknown pipeline '" << pipeline << "'\n";
    std::abort();
  }
  (void)pm.run(*module);
  return 0;
}
