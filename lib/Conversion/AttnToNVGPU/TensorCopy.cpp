//===- TensorCopy.cpp - Tensor copies and mbarriers as IR -----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "TensorCopy.h"
#include "WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

Value i32Constant(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIntOp::create(b, b.getI32Type(), value);
}

} // namespace

Value mlir::attn::sharedPointer(ImplicitLocOpBuilder &b, Value address) {
  auto shared = LLVM::LLVMPointerType::get(
      b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared));
  Value integer = arith::IndexCastUIOp::create(b, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(b, shared, integer,
                                  LLVM::DereferenceableAttr());
}

void mlir::attn::mbarrierInit(ImplicitLocOpBuilder &b, Value barrier,
                              int64_t arrivals) {
  NVVM::MBarrierInitOp::create(b, barrier, i32Constant(b, arrivals),
                               /*predicate=*/Value());
}

void mlir::attn::fenceMbarrierInit(ImplicitLocOpBuilder &b) {
  NVVM::FenceMbarrierInitOp::create(b);
  fenceProxyAsyncShared(b);
}

void mlir::attn::mbarrierInval(ImplicitLocOpBuilder &b, Value barrier) {
  NVVM::MBarrierInvalOp::create(b, barrier);
}

void mlir::attn::mbarrierArriveExpectTx(ImplicitLocOpBuilder &b, Value barrier,
                                        Value bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(b, /*res=*/Type(), barrier, bytes,
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false,
                                         /*predicate=*/Value());
}

void mlir::attn::mbarrierArrive(ImplicitLocOpBuilder &b, Value barrier) {
  NVVM::MBarrierArriveOp::create(b, b.getI64Type(), barrier, /*count=*/Value());
}

void mlir::attn::mbarrierWait(ImplicitLocOpBuilder &b, Value barrier,
                              Value parity) {
  // The suspend-time hint NVGPU's lowering gives (10 ms); the op loops
  // until the phase completes.
  NVVM::MBarrierTryWaitParityOp::create(b, barrier, parity,
                                        i32Constant(b, 10000000));
}

void mlir::attn::tensorStore(ImplicitLocOpBuilder &b, Value tensorMap,
                             Value source, ValueRange coordinates) {
  SmallVector<Value> box;
  for (Value coordinate : coordinates)
    box.push_back(arith::IndexCastUIOp::create(b, b.getI32Type(), coordinate));
  NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
      b, tensorMap, source, box, /*l2CacheHint=*/Value(),
      NVVM::TMAStoreMode::TILE, /*predicate=*/Value());
}

void mlir::attn::bulkCommitGroup(ImplicitLocOpBuilder &b) {
  NVVM::CpAsyncBulkCommitGroupOp::create(b);
}

void mlir::attn::bulkWaitGroupRead(ImplicitLocOpBuilder &b) {
  NVVM::CpAsyncBulkWaitGroupOp::create(b, /*group=*/0u, b.getUnitAttr());
}

void mlir::attn::tensorCopy(ImplicitLocOpBuilder &b, Value destination,
                            Value tensorMap, ValueRange coordinates,
                            Value barrier) {
  // The copy's destination is a shared::cluster address: the CTA's own
  // shared memory (no clusters are launched).
  auto cluster = LLVM::LLVMPointerType::get(
      b.getContext(),
      static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  Value clusterDestination =
      LLVM::AddrSpaceCastOp::create(b, cluster, destination);
  SmallVector<Value> box;
  for (Value coordinate : coordinates)
    box.push_back(arith::IndexCastUIOp::create(b, b.getI32Type(), coordinate));
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, clusterDestination, tensorMap, box, barrier,
      /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
      /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/false,
      /*group=*/NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
}
