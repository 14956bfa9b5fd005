//===- DeriveBlockMask.cpp - Attach the block mask the IR proves ----------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Analysis/BlockMaskDerivation.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDERIVEBLOCKMASK
#include "attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct AttnDeriveBlockMaskPass
    : public attn::impl::AttnDeriveBlockMaskBase<AttnDeriveBlockMaskPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](AttentionOp op) {
      // Tiles the decomposition rejects are its to report.
      std::string why;
      FailureOr<TileChoice> tiles = chooseTiles(
          op, {TileTarget::Cpu, blockM, blockN, getEnclosingTarget(op)}, why);
      if (failed(tiles))
        return;
      // A pinned kernel plan whose loop overlaps the softmax takes no block
      // mask (attn-select-schedule plans the sequential loop where one is
      // to come): its skipping is left out, the plan is kept.
      if (KernelAttr kernel = op.getKernelAttr(); kernel && kernel.overlapped())
        return;
      std::optional<DerivedBlockMask> derived =
          deriveBlockMask(op, tiles->tiling.blockM, tiles->tiling.blockN);
      if (!derived)
        return;
      OpBuilder b(op);
      auto type = RankedTensorType::get(derived->shape, b.getI8Type());
      Value blocks = arith::ConstantOp::create(
          b, op.getLoc(), type,
          DenseElementsAttr::get(type, ArrayRef<int8_t>(derived->values)));
      op.getBlockMaskMutable().assign(blocks);
      op.setBlockMaskSize(
          ArrayRef<int64_t>{derived->blockRows, derived->blockKeys});
    });
  }
};

} // namespace
