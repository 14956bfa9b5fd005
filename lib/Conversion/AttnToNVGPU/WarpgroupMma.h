//===- WarpgroupMma.h - wgmma.mma_async as IR -------------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The warpgroup matrix product of sm_90a (PTX ISA 9.7.15) as the CTA bodies
// use it: D (64 x N, f32) = A (64 x 16) B (16 x N) (+ D) with bf16 or f16
// inputs, B (and A, or A from registers) in shared memory in the 128-byte
// swizzle's canonical layouts, read through matrix descriptors.
//
// The products are inline assembly: MLIR 22's nvvm.wgmma.mma_async takes A
// from a descriptor only (P of O += P V is in registers), and
// nvgpu.warpgroup.mma waits for one group fewer than it commits
// (docs/emulator.md). A body orders them itself: wgmmaFence before the first
// product after its accumulators or operands were written, wgmmaCommit and
// wgmmaWait before it reads the results or overwrites the shared operands.
//
// Lane l of warp w % 4 of the warpgroup holds D element (16 (w % 4) + g + 8 i,
// 8 j + 2 t + c) (g = l / 4, t = l % 4) as d[4 j + 2 i + c]: element (i, c)
// of mma.sync's C fragment of n tile j; register A is mma.sync's A fragment
// of the warp's 16 rows. So a warp's share of a wgmma is the mma.sync
// fragments of one m16 tile (docs/gpu-fragments.md).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPGROUPMMA_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPGROUPMMA_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// Bytes of a row of the 128-byte swizzle: 64 16-bit elements.
constexpr int64_t kSwizzleRowBytes = 128;
/// Bytes of its 8-row atom, which must start 1024-byte aligned.
constexpr int64_t kSwizzleAtomBytes = 8 * kSwizzleRowBytes;

/// The i64 matrix descriptor of an operand in the 128-byte swizzle's
/// canonical layout at shared-window byte address `address` (index), with
/// leading and stride byte offsets (PTX ISA, matrix descriptor format). A
/// descriptor plus (bytes >> 4) addresses `bytes` further.
Value wgmmaDescriptor(ImplicitLocOpBuilder &b, Value address,
                      int64_t leadingBytes, int64_t strideBytes);

/// `descriptor` advanced by `bytes` (a multiple of 16).
Value advanceDescriptor(ImplicitLocOpBuilder &b, Value descriptor,
                        int64_t bytes);

/// One wgmma.mma_async.m64nNk16.f32.<element>.<element>, N = 2 x the lane's
/// accumulators: returns D = A B + `accumulators`, or A B when
/// `accumulators` is empty (then `n` gives N). A is `aDescriptor` (K-major)
/// or, when that is null, the lane's four 32-bit registers `aRegisters`; B
/// is `bDescriptor`, K-major, or MN-major with `transposeB`.
SmallVector<Value> wgmma(ImplicitLocOpBuilder &b, Type element, int64_t n,
                         ArrayRef<Value> accumulators, Value aDescriptor,
                         ArrayRef<Value> aRegisters, Value bDescriptor,
                         bool transposeB);

/// `registers` (f32 or i32 values), passed through an empty assembly block
/// that may change them: every instruction that defines them (a move, a
/// constant) comes before it. A product's register inputs (accumulators and
/// A) fenced so before its wgmma.fence are defined by nothing between the
/// fence and the product; otherwise LLVM may materialise them there (zero
/// accumulators from a shared zero register, say), and ptxas then inserts a
/// warpgroup.arrive and serialises every wgmma of the kernel (CUTLASS's
/// warpgroup_fence_operand).
SmallVector<Value> fenceOperands(ImplicitLocOpBuilder &b,
                                 ArrayRef<Value> registers);

/// wgmma.fence: orders the warpgroup's earlier register and shared-memory
/// accesses before the next wgmma.mma_async.
void wgmmaFence(ImplicitLocOpBuilder &b);

/// wgmma.commit_group: the products issued since the last commit are one
/// group.
void wgmmaCommit(ImplicitLocOpBuilder &b);

/// wgmma.wait_group `pending`: every group but the newest `pending` is
/// done, its registers and shared operands free. `aRegisters`, the register
/// A operands of the products it retires, are used once more after it (an
/// empty assembly block): their values live until the wait, so nothing is
/// allocated over them while the products read them (accessing them before
/// is undefined; ptxas serialises every wgmma of a kernel that does).
void wgmmaWait(ImplicitLocOpBuilder &b, int64_t pending,
               ValueRange aRegisters = {});

/// fence.proxy.async.shared::cta: the thread's generic-proxy writes to
/// shared memory (st.shared, cp.async) become visible to the async proxy
/// that wgmma reads its shared operands through.
void fenceProxyAsyncShared(ImplicitLocOpBuilder &b);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_WARPGROUPMMA_H
