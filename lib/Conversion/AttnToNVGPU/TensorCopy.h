//===- TensorCopy.h - Tensor copies and mbarriers as IR ---------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Hopper's tensor copies (cp.async.bulk.tensor, "TMA": a box of a tensor
// described by a CUtensorMap, copied by the asynchronous proxy into shared
// memory in the map's swizzle) and the mbarrier objects they complete on
// (PTX ISA 9.7.9.27 and 9.7.13.15), as NVVM operations. An mbarrier's phase
// completes when its arrivals and the bytes it expects have all come; a
// thread waits for a phase by its parity.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_TENSORCOPY_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_TENSORCOPY_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// The shared-memory pointer (LLVM address space 3) of shared-window byte
/// address `address` (index).
Value sharedPointer(ImplicitLocOpBuilder &b, Value address);

/// mbarrier.init of `barrier` for `arrivals` arrivals a phase; its phase 0
/// begins.
void mbarrierInit(ImplicitLocOpBuilder &b, Value barrier, int64_t arrivals);

/// The thread's mbarrier.inits (generic writes) made visible to the
/// asynchronous proxy, whose copies complete on them: CUTLASS's
/// fence_barrier_init (fence.mbarrier_init.release.cluster), then the CUDA
/// programming guide's fence.proxy.async after an init.
void fenceMbarrierInit(ImplicitLocOpBuilder &b);

/// mbarrier.inval: `barrier` is no mbarrier any more (it may be initialised
/// again); no thread may still wait on it.
void mbarrierInval(ImplicitLocOpBuilder &b, Value barrier);

/// mbarrier.arrive.expect_tx: the current phase of `barrier` also waits for
/// `bytes` (i32) of asynchronous copies, and the thread arrives on it.
void mbarrierArriveExpectTx(ImplicitLocOpBuilder &b, Value barrier,
                            Value bytes);

/// mbarrier.arrive (release, CTA scope): the thread arrives on the current
/// phase of `barrier`, after its reads and writes before it.
void mbarrierArrive(ImplicitLocOpBuilder &b, Value barrier);

/// Waits (a loop of mbarrier.try_wait.parity) until the phase of `barrier`
/// whose parity is `parity` (i32, 0 or 1) has completed; acquires what the
/// phase's arrivals and copies released.
void mbarrierWait(ImplicitLocOpBuilder &b, Value barrier, Value parity);

/// cp.async.bulk.tensor.Nd (tile mode): the box of the tensor map at
/// generic address `tensorMap` whose first element is at `coordinates`
/// (index values, innermost dimension first) into shared memory at
/// `destination` (an address-space-3 pointer, aligned as the map's swizzle
/// requires: 1024 bytes for 128), completing its bytes on `barrier`.
void tensorCopy(ImplicitLocOpBuilder &b, Value destination, Value tensorMap,
                ValueRange coordinates, Value barrier);

/// cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group (tile mode): the
/// box of shared memory at `source` (an address-space-3 pointer in the
/// map's swizzle) into the tensor of the map at generic address `tensorMap`
/// from `coordinates` (innermost dimension first); the box's elements
/// outside the tensor are not written. The store is one of the thread's
/// bulk groups (bulkCommitGroup).
void tensorStore(ImplicitLocOpBuilder &b, Value tensorMap, Value source,
                 ValueRange coordinates);

/// cp.async.bulk.commit_group: the thread's bulk stores since the last
/// commit are one group.
void bulkCommitGroup(ImplicitLocOpBuilder &b);

/// cp.async.bulk.wait_group.read 0: every bulk group of the thread has read
/// its shared memory, which may then be written again.
void bulkWaitGroupRead(ImplicitLocOpBuilder &b);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_TENSORCOPY_H
