//===- AlignDynamicSharedMemory.cpp - 1024-byte aligned shared memory -----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "WarpgroupMma.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNALIGNDYNAMICSHAREDMEMORY
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct AttnAlignDynamicSharedMemoryPass
    : public attn::impl::AttnAlignDynamicSharedMemoryBase<
          AttnAlignDynamicSharedMemoryPass> {
  void runOnOperation() override {
    // convert-gpu-to-nvvm's global for gpu.dynamic_shared_memory: a
    // zero-sized array in shared memory.
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          !array || array.getNumElements() != 0)
        continue;
      if (global.getAlignment().value_or(0) <
          static_cast<uint64_t>(attn::kSwizzleAtomBytes))
        global.setAlignment(attn::kSwizzleAtomBytes);
    }
  }
};

} // namespace
