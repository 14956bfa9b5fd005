//===- Attn.h - The attn dialect, its attributes and ops ----------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTN_H
#define ATTN_DIALECT_ATTN_IR_ATTN_H

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h.inc"

#include "attn/Dialect/Attn/IR/AttnEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "attn/Dialect/Attn/IR/AttnAttrs.h.inc"

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.h.inc"

namespace mlir::attn {

/// The `attn.target` of the nearest enclosing op that carries one, or null:
/// the one rule every pass uses to find the target of an attention.
TargetAttr getEnclosingTarget(Operation *op);

/// The compute capability an NVPTX chip name ("sm_90a") encodes, or -1 when
/// it is not one.
int64_t computeCapabilityOf(StringRef chip);

/// The oldest compute capability the GPU kernels run on: they use sm_80's
/// mma.sync m16n8k16 on f16/bf16 and cp.async.
constexpr int64_t kMinComputeCapability = 80;

/// Clones the operations of an attention's score region at `b`'s insertion
/// point, its arguments bound to `args` (score, b, h, q, k), and returns the
/// value it yields. `mapping` may give values for what the region uses from
/// outside it; any other outside value is used as it is.
Value inlineScoreRegion(OpBuilder &b, Region &score, ValueRange args,
                        IRMapping &mapping);

/// The values of an attention's block mask (see attn.attention): what one
/// (query block, key block) of scores is.
namespace BlockMaskValue {
/// Every score of the block is hidden.
constexpr int8_t kEmpty = 0;
/// The element masks apply (so does any value but kEmpty and kFull).
constexpr int8_t kPartial = 1;
/// The mask operand does not apply in the block.
constexpr int8_t kFull = 2;
} // namespace BlockMaskValue

/// The `attn.cluster` of the nearest enclosing op that carries one, or null.
ClusterAttr getEnclosingCluster(Operation *op);

/// A dimension as a tensor type spells it: "?" when dynamic.
std::string formatDim(int64_t size);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTN_H
