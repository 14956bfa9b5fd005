//===- attn-opt.cpp - mlir-opt with the attn dialect and passes ------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The upstream dialects, extensions and passes that the attn pipelines lower
// through are all registered, so any intermediate stage can be replayed here.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Support/SourceInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/WithColor.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::attn::registerAllAttnPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::attn::AttnDialect>();
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "attn-mlir optimizer driver\n", registry);
  // Checked first (a device or a FIFO such as /dev/zero would be read until
  // memory runs out, deep nesting overflows the parser's stack); MlirOptMain
  // reads the file again, a small cost beside parsing it.
  if (inputFilename != "-")
    if (auto checked = mlir::attn::readSource(inputFilename); !checked) {
      llvm::WithColor::error(llvm::errs(), "attn-opt")
          << llvm::toString(checked.takeError()) << "\n";
      return 1;
    }
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, inputFilename, outputFilename, registry));
}
