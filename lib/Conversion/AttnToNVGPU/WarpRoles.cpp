//===- WarpRoles.cpp - Producer and consumer warps of a CTA ---------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "WarpRoles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The named barrier the consumer warps synchronise among themselves on
/// (0 is the CTA's), and the first of the ping-pong's turns (one a consumer
/// warpgroup).
constexpr int32_t kConsumerBarrier = 1;
constexpr int32_t kFirstTurnBarrier = 2;

Value i32Constant(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIntOp::create(b, b.getI32Type(), value);
}

/// The turn barrier of consumer warpgroup `warpgroup` (index), and the
/// threads it counts: both warpgroups'.
Value turnBarrier(ImplicitLocOpBuilder &b, Value warpgroup) {
  return arith::AddIOp::create(
      b, i32Constant(b, kFirstTurnBarrier),
      arith::IndexCastUIOp::create(b, b.getI32Type(), warpgroup));
}

Value turnThreads(ImplicitLocOpBuilder &b, const KernelShape &s) {
  return i32Constant(b, s.consumerThreads());
}

/// `build` in warpgroup 0 alone.
void inFirstWarpgroup(ImplicitLocOpBuilder &b, Value warpgroup,
                      function_ref<void()> build) {
  auto first = scf::IfOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warpgroup,
                            arith::ConstantIndexOp::create(b, 0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  build();
}

} // namespace

void mlir::attn::buildForEachWarpRole(ImplicitLocOpBuilder &b,
                                      const KernelShape &s,
                                      function_ref<void(CtaBody &)> skeleton) {
  if (!s.warpSpecialised()) {
    std::unique_ptr<CtaBody> body = createCtaBody(b, s, WarpRole::All);
    skeleton(*body);
    return;
  }
  Value tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value isProducer = arith::CmpIOp::create(
      b, arith::CmpIPredicate::uge, tid,
      arith::ConstantIndexOp::create(b, s.consumerThreads()));
  auto roles = scf::IfOp::create(b, isProducer, /*withElseRegion=*/true);
  const WarpRoleRegisters &registers = s.roleRegisters();
  for (auto [block, role, action, count] :
       {std::tuple{roles.thenBlock(), WarpRole::Producer,
                   NVVM::SetMaxRegisterAction::decrease, registers.producer},
        std::tuple{roles.elseBlock(), WarpRole::Consumer,
                   NVVM::SetMaxRegisterAction::increase, registers.consumer}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    if (registers.reallocates())
      NVVM::SetMaxRegisterOp::create(b, static_cast<int32_t>(count), action);
    std::unique_ptr<CtaBody> body = createCtaBody(b, s, role);
    skeleton(*body);
  }
}

void mlir::attn::ctaBarrier(ImplicitLocOpBuilder &b, const KernelShape &s) {
  if (!s.warpSpecialised()) {
    gpu::BarrierOp::create(b);
    return;
  }
  LLVM::CallIntrinsicOp::create(
      b, b.getStringAttr("llvm.nvvm.barrier.cta.sync.all"),
      ValueRange{i32Constant(b, 0)});
}

Value mlir::attn::ctaBarrierAny(ImplicitLocOpBuilder &b, const KernelShape &s,
                                Value predicate) {
  if (s.warpSpecialised())
    return LLVM::CallIntrinsicOp::create(
               b, b.getI1Type(),
               b.getStringAttr("llvm.nvvm.barrier.cta.red.or.all"),
               ValueRange{i32Constant(b, 0), predicate})
        .getResult(0);
  Type i32 = b.getI32Type();
  Value any =
      NVVM::BarrierOp::create(b, i32, /*barrierId=*/Value(),
                              /*numberOfThreads=*/Value(),
                              NVVM::BarrierReductionAttr::get(
                                  b.getContext(), NVVM::BarrierReduction::OR),
                              arith::ExtUIOp::create(b, i32, predicate))
          .getRes();
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ne, any,
                               i32Constant(b, 0));
}

void mlir::attn::consumerBarrier(ImplicitLocOpBuilder &b, const KernelShape &s,
                                 WarpRole role) {
  assert(role != WarpRole::Producer && "the producer is no consumer");
  if (role != WarpRole::Consumer) {
    ctaBarrier(b, s);
    return;
  }
  NVVM::BarrierOp::create(b, Type(), i32Constant(b, kConsumerBarrier),
                          i32Constant(b, s.consumerThreads()),
                          /*reductionOp=*/NVVM::BarrierReductionAttr(),
                          /*reductionPredicate=*/Value());
}

void mlir::attn::openTurns(ImplicitLocOpBuilder &b, const KernelShape &s,
                           Value warpgroup) {
  inFirstWarpgroup(b, warpgroup, [&] {
    NVVM::BarrierArriveOp::create(b, turnBarrier(b, warpgroup),
                                  turnThreads(b, s));
  });
}

void mlir::attn::awaitTurn(ImplicitLocOpBuilder &b, const KernelShape &s,
                           Value warpgroup) {
  NVVM::BarrierOp::create(b, Type(), turnBarrier(b, warpgroup),
                          turnThreads(b, s),
                          /*reductionOp=*/NVVM::BarrierReductionAttr(),
                          /*reductionPredicate=*/Value());
}

void mlir::attn::passTurn(ImplicitLocOpBuilder &b, const KernelShape &s,
                          Value warpgroup) {
  Value other =
      arith::SubIOp::create(b, arith::ConstantIndexOp::create(b, 1), warpgroup);
  NVVM::BarrierArriveOp::create(b, turnBarrier(b, other), turnThreads(b, s));
}

void mlir::attn::closeTurns(ImplicitLocOpBuilder &b, const KernelShape &s,
                            Value warpgroup) {
  inFirstWarpgroup(b, warpgroup, [&] { awaitTurn(b, s, warpgroup); });
}
