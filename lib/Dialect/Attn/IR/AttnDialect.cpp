//===- AttnDialect.cpp - The attn dialect ----------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/Dialect/Attn/IR/AttnDialect.cpp.inc"

void AttnDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
}

LogicalResult AttnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() != getTargetAttrName())
    return op->emitError() << "unknown attn dialect attribute '"
                           << attr.getName().getValue()
                           << "'; the only one is '" << getTargetAttrName()
                           << "'";
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << getTargetAttrName()
                           << "' may only be placed on a builtin.module";
  if (!isa<TargetAttr>(attr.getValue()))
    return op->emitError() << "'" << getTargetAttrName()
                           << "' must be an #attn.target, got "
                           << attr.getValue();
  return success();
}
