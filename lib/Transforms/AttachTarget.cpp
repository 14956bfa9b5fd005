//===- AttachTarget.cpp - A chip's reference device as the module's target ===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/ReferenceDevices.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNATTACHTARGET
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnAttachTargetPass
    : public attn::impl::AttnAttachTargetBase<AttnAttachTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module->hasAttr(AttnDialect::getTargetAttrName()))
      return;
    bool hasAttention =
        module
            .walk([](Operation *op) {
              return isa_and_nonnull<AttnDialect>(op->getDialect())
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted();
    if (!hasAttention)
      return;
    TargetAttr target = referenceTargetOf(&getContext(), chip);
    if (!target) {
      // At the module's location, without the module printed after it.
      mlir::emitError(module.getLoc())
          << "attn-attach-target: the module has no #attn.target, and chip "
          << chip << " has no reference device to stand for it (the table "
          << "has " << referenceDeviceList()
          << "): give the module an #attn.target";
      return signalPassFailure();
    }
    module->setAttr(AttnDialect::getTargetAttrName(), target);
  }
};

} // namespace
