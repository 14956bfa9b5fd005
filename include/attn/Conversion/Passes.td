//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnToNVGPU : Pass<"attn-to-nvgpu", "ModuleOp"> {
  let summary = "Generate a FlashAttention-2 tensor-core kernel for each "
                "attn.attention and attn.attention_grad";
  let description = [{
    For every `attn.attention` with static sizes and f16 or bf16 operands,
    adds to `gpu.module @attn_kernels` a kernel `@<function>_attention<i>`
    that computes it with FlashAttention-2's forward algorithm on NVIDIA
    tensor cores:

    - grid `(ceil(Sq / block_m), B, Hq)`, `32 * warps` threads; each CTA owns
      one query block of one (batch, head) and visits the key/value blocks
      that causal or window masking leaves visible (loop bounds, not
      branches);
    - the Q block and each K and V tile go to dynamic shared memory with
      `cp.async` (`nvgpu.device_async_copy`), rows of 16-byte chunks
      XOR-swizzled so that `ldmatrix` reads them without bank conflicts;
      with two stages (the tiles' `stages`, limited by the target's shared
      memory) the next block's K and V load while the current one is used;
    - warps split the query rows (split-Q): warp `w` owns rows
      `[w * block_m / warps, (w + 1) * block_m / warps)` and reads all of K and
      V, so no partial result crosses warps;
    - `S = Q K^T` and `O += P V` are `nvgpu.mma.sync` m16n8k16 with operands
      from `nvgpu.ldmatrix` (transposed for V); P is the f32 accumulator of
      `S` rounded to the input type and reused as the A operand of `P V`
      without going through shared memory;
    - on an sm_90a `#attn.target`, where the tiles are whole warpgroups of
      warps owning 16 rows each (`matrix-unit=auto`), the two products are
      warpgroup MMAs instead (`wgmma.mma_async` m64nNk16: Q, K and V read
      from shared memory by matrix descriptor in the 128-byte swizzle's
      layout, P from registers), with the same fragments in every lane;
      `matrix-unit=mma-sync` or `wgmma` forces one (docs/gpu-kernel.md);
      such a kernel brings K and V by tensor copies into mbarrier-guarded
      stages (with key lengths, the block that holds a sequence's end zeroed
      past it in shared memory) and Q by one tensor copy (not with GQA
      packing or in Lean's persistent CTAs), and writes O by tensor stores
      of its shared-memory tile through a tensor map of O (not with GQA
      packing);
    - row max and row sum are reduced over the 4 lanes that share a row with
      warp shuffles; exp2 with `scale * log2(e)` folded in; O is divided by l
      once at the end; fully masked rows give O = 0 and LSE = -inf.

    Every kernel runs the same CTA body (the loop above over a range of
    key/value blocks); the kernel skeleton decides which CTA computes which
    range. With `partition = #attn.lean<ctas = G>` the kernel is Lean
    attention's persistent grid of G CTAs over WorkAssignment's even split
    of the LeanTiles, counted from the lengths it runs with (G is fixed;
    the batch, Sq and Sk may be run-time values): each CTA walks its range
    piece by piece; a contributor
    writes its normalised f32 partial and LSE to its workspace slot, fences
    (`membar.gl`) and raises its flag (an atomic add); a host whose tile has
    contributors waits for their flags and merges their partials in CTA
    order, so the result is the same bits on every run. The CTAs must all
    be resident at once: with an `#attn.target`, G above what its SMs hold
    is an error that gives the numbers. With `partition =
    #attn.split_kv<splits = S>` (S > 1) the grid is (ceil(Sq / block_m), B,
    Hq x S): CTA (m, b, h S + s) computes piece s of the tile's key/value
    blocks (the CPU's pieces) into its own slot, fences and increments the
    tile's counter; the CTA whose increment completes the tile (a barrier
    with an OR reduction tells its threads) merges the S slots in slot
    order, writes O and LSE and sets the counter back to zero: one launch,
    no CTA waiting for another, the same bits on every run. S = 1 is
    FlashAttention-2's grid.

    Every `attn.attention_grad` with static sizes, f16 or bf16 tensors and
    head dimensions up to 256 gets a backward kernel
    `@<function>_attention_grad<i>` (`attn.launch` marked `gradient`;
    parameters Q, K, V, O, LSE, dO, dQ, dK, dV, then the mask, the block
    mask and the key lengths when it has them) of two kinds of CTA, 4 warps
    each, on warpgroup MMA where the #attn.target is sm_90a and max(D, Dv)
    is at most 192 (one m64 product per CTA; `matrix-unit` applies), else on
    `mma.sync`; on warpgroup MMA up to max(D, Dv) = 128 without key
    lengths its tiles come by tensor copies (tensor maps of Q, K, V and dO
    after its parameters, the streamed tiles in two stages, each guarded by
    an mbarrier): the first ceil(Sk / 64) Hkv own a key/value block each (K
    and V stay; for each query head of the group and each query block that
    sees the block, S^T = K Q^T and dP^T = V dO^T, then dV += P^T dO and
    dK += dS^T Q), the others a query block each (Q and dO stay; for each
    key/value block it sees, S = Q K^T, dP = dO V^T, dQ += dS K). P is
    recomputed from the LSE, Dsum = rowsum(dO O) where it is needed; no CTA
    reads what another writes, so results are the same bits on every run.
    Masks, block masks (empty blocks skipped, blocks of multiples of 64),
    key lengths and score regions (inlined with their derivative) apply in
    both walks; dMask, run-time lengths, a partition, or a region without a
    derivative rule are refused (docs/backward.md).

    Kernel parameters are bare pointers, in operand order: Q, K, V, O, then
    LSE, the mask operand and the key lengths when the op has them; a Lean
    kernel then takes its workspaces
    (partial O `[G, block_m, Dv]` and LSE `[G, block_m]` in f32, flags
    `[G]` in i32, zeroed before every launch), a split-KV kernel its own,
    with a slot per CTA of the grid (pointers bound with as many slots as
    the grid has CTAs: partial O `[block_m, Dv]` and LSE `[block_m]` in
    f32, an i32 counter, zeroed when allocated and left zero). When the batch, Sq or Sk is
    dynamic (head counts and head dimensions must be static), a tensor is
    a pointer (rank-0 memref) and i64 parameters follow the others: its
    dynamic sizes, then its batch and head strides, bound at the entry by
    `memref.reinterpret_cast`; one kernel serves every length. The kernel's
    launch configuration is attached as `attn.launch = {grid, block,
    dynamic_shared_memory, tiles, attention, params, scalars}` (`params`:
    the tensors' memref views; `scalars`: which size or stride each i64
    parameter is; plus `persistent` for Lean and `workspaces` for Lean and
    split-KV, `per_cta` marking a slot per CTA and `kernel_resets` a
    buffer the kernel leaves zero) for the bundle writer.

    A mask operand is a parameter after LSE (i1: a byte per element, or
    the float of an additive mask), read by each thread for its own scores
    after the softcap and the score region, except in a block mask's full
    blocks (docs/gpu-kernel.md). A constant block mask is a table in the
    kernel; any other is the i8 `block_mask` parameter after the mask
    (its counts of blocks run-time sizes with run-time lengths), and the
    launch attribute's `attention` names its blocks (`block_mask_blocks`).

    Not supported yet (each is a diagnostic naming it): the ATTENTION2D
    partition, f32 operands, split-KV with more splits than key/value
    blocks (static Sk) or more than 65535 CTAs in z, head dimensions that
    are not multiples of 8 up to 256, a constant block mask with dynamic
    lengths (pass it as an argument).

    The tiles come from the op's `tiles` attribute, else FlashAttention-2's
    default for the head dimension (split-KV's for split-KV and Lean
    kernels). The kernel is the op's `kernel` plan (`#attn.kernel`, which
    attn-select-schedule writes), built as it says or refused with the
    field that cannot be built and why; an op without one is planned by the
    same function (lib/Analysis/KernelPlan.cpp) with `matrix-unit`. A
    `matrix-unit` other than auto that contradicts an op's plan is an
    error, never a silent change.
  }];
  let options = [
    Option<"matrixUnit", "matrix-unit", "std::string", /*default=*/"\"auto\"",
           "The matrix instructions of S = Q K^T and O += P V of an op "
           "without a kernel plan (and of the "
           "backward kernel's products): auto (wgmma "
           "where the op's #attn.target is sm_90a and the tiles fit, else "
           "mma.sync), mma-sync, or wgmma (an error where it does not fit "
           "or contradicts an op's plan)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AttnTensorMapParameters
    : Pass<"attn-tensor-map-parameters", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass the kernels' tensor maps by value, as grid constants";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. A kernel of attn-to-nvgpu with tensor
    copies or tensor stores takes a tensor map (a 128-byte CUtensorMap the runtime encodes)
    per entry of its `attn.launch` attribute's `tensor_maps`, as its last
    parameters, in order; in the kernel each is an `!llvm.ptr`, the map's
    generic address, which its tensor copies read. The conversion keeps no
    by-value attributes on a kernel's arguments, so this pass gives each of
    those arguments `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64`
    and `nvvm.grid_constant`: NVPTX then declares the parameter
    `.param .align 64 .b8 NAME[128]`, as the runtime passes it, and takes
    its address with `cvta.param` rather than copying it to local memory
    (a tensor copy needs the map in the param, const or global space).
    A kernel whose trailing arguments are not pointers is an error.
  }];
}

def AttnAlignDynamicSharedMemory
    : Pass<"attn-align-dynamic-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Align the kernels' dynamic shared memory to 1024 bytes";
  let description = [{
    Runs after `convert-gpu-to-nvvm`, which declares a kernel module's
    dynamic shared memory (`gpu.dynamic_shared_memory`) as a zero-sized
    LLVM global in address space 3 aligned to 16 bytes. The kernels of attn-to-nvgpu
    keep their tiles in the 128-byte swizzle's layout, whose 8-row atoms
    wgmma (and a tensor copy) place by the address bits of shared memory:
    each atom must start 1024-byte aligned, so the memory they are carved
    from must. This raises the alignment of every such global to 1024 bytes
    (the PTX's `.align 1024`); any larger alignment is kept.
  }];
}

#endif // ATTN_CONVERSION_PASSES_TD
