//===- AttnPlugin.cpp - attn as a dialect and pass plugin for mlir-opt -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "attn", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            registry->insert<attn::AttnDialect>();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "attn", LLVM_VERSION_STRING,
          []() { attn::registerAllAttnPassesAndPipelines(); }};
}
