//===- StripModuleAttributes.cpp - attn.target/cluster removed at the end -===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSTRIPMODULEATTRIBUTES
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnStripModuleAttributesPass
    : public attn::impl::AttnStripModuleAttributesBase<
          AttnStripModuleAttributesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult left = module.walk([](Operation *op) {
      if (!isa_and_nonnull<AttnDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError() << "attn-strip-module-attributes: '" << op->getName()
                      << "' is not lowered yet, and its schedule still needs "
                         "the module's attn.target and attn.cluster";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      return signalPassFailure();
    module.walk([](ModuleOp nested) {
      nested->removeAttr(AttnDialect::getTargetAttrName());
      nested->removeAttr(AttnDialect::getClusterAttrName());
    });
  }
};

} // namespace
