//===- TensorMapParameters.cpp - Tensor maps passed by value --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNTENSORMAPPARAMETERS
#include "attn/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

/// Bytes and alignment of a CUtensorMap.
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlignment = 64;

struct AttnTensorMapParametersPass
    : public attn::impl::AttnTensorMapParametersBase<
          AttnTensorMapParametersPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Builder b(ctx);
    Type map =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), kTensorMapBytes);
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto launch = func->getAttrOfType<DictionaryAttr>(
          attn::AttnDialect::getLaunchAttrName());
      auto maps = launch ? launch.getAs<ArrayAttr>("tensor_maps") : nullptr;
      if (!maps)
        continue;
      unsigned arguments = func.getNumArguments();
      if (maps.size() > arguments) {
        func.emitError("attn-tensor-map-parameters: ")
            << maps.size() << " tensor maps, " << arguments << " arguments";
        return signalPassFailure();
      }
      for (unsigned i = arguments - maps.size(); i < arguments; ++i) {
        if (!isa<LLVM::LLVMPointerType>(func.getArgument(i).getType())) {
          func.emitError("attn-tensor-map-parameters: argument ")
              << i << " holds a tensor map and is not a pointer but "
              << func.getArgument(i).getType();
          return signalPassFailure();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(map));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlignment));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
    }
  }
};

} // namespace
