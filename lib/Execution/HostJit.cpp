//===- HostJit.cpp - Shared steps of compiling IR for this machine --------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "HostJit.h"

#include "mlir/Conversion/MPIToLLVM/MPIToLLVM.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;
using namespace mlir::attn;

DiagnosticCapture::DiagnosticCapture(MLIRContext *context)
    : handler(context, [this](Diagnostic &diag) {
        llvm::raw_string_ostream os(text);
        if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
          os << file.getFilename().getValue() << ":" << file.getLine() << ":"
             << file.getColumn() << ": ";
        else if (!isa<UnknownLoc>(diag.getLocation()))
          os << diag.getLocation() << ": ";
        os << diag.str() << "\n";
        return success();
      }) {}

llvm::Error DiagnosticCapture::error(llvm::StringRef what) const {
  return llvm::createStringError(what + ":\n" + text);
}

llvm::Error mlir::attn::cloneCapturedConstants(Region &region, OpBuilder &b,
                                               IRMapping &mapping,
                                               llvm::StringRef why) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(region, captured);
  for (Value value : captured) {
    Operation *def = value.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << why
         << ", so the score region may use only its arguments, the values it "
            "defines and "
            "constants; it uses a "
         << value.getType() << " defined outside it";
      if (auto file = dyn_cast<FileLineColLoc>(value.getLoc()))
        os << ", at " << file.getFilename().getValue() << ":" << file.getLine()
           << ":" << file.getColumn();
      return llvm::createStringError(text);
    }
    mapping.map(value, b.clone(*def)->getResult(0));
  }
  return llvm::Error::success();
}

void mlir::attn::prepareHostJit(MLIRContext *context) {
  context->loadDialect<bufferization::BufferizationDialect, func::FuncDialect,
                       LLVM::LLVMDialect>();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);
  DialectRegistry registry;
  mpi::registerConvertMPIToLLVMInterface(registry);
  context->appendDialectRegistry(registry);
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
mlir::attn::createHostEngine(ModuleOp module) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // Optimise for this machine, so that the vectoriser knows its vectors.
  auto machineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder)
    return machineBuilder.takeError();
  machineBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto targetMachine = machineBuilder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();
  // ExecutionEngineOptions holds a function_ref: the transformer must live
  // until create() has run it.
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0,
                                targetMachine->get());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return engine.takeError();
  // memref.copy between views that are not contiguous lowers to a call of
  // MLIR's runtime function (an outlined attention's output copied into a
  // slice of a larger tensor, say).
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("memrefCopy")] = {
        llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  return engine;
}
