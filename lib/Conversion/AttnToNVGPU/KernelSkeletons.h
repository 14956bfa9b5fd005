//===- KernelSkeletons.h - Schedules mapped onto CTAs -----------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The kernel skeletons: each maps one schedule's work onto the CTAs of a
// launch (FlashAttention-2's grid, split-KV's grid of pieces, Lean's
// persistent CTAs) and calls the CTA body for each CTA's key/value blocks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELSKELETONS_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELSKELETONS_H

#include "KernelAbi.h"

namespace mlir::attn {

/// Keeps LLVM's loop-invariant code motion out of `loop` (loops nested in
/// it are still optimised). A persistent kernel's loop over its pieces must
/// not have the per-lane addresses of a piece's query load, output store and
/// merge hoisted above it: they would stay live through the CTA body's loop
/// over key/value blocks (LICM does not weigh register pressure). Measured
/// on the Lean kernel with run-time lengths, D = 128, 64 x 64 tiles, sm_90a:
/// 96 bytes spilled with LICM, none without. scf-to-cf forwards the
/// attribute (an LLVM dialect attribute named as llvm.br's) to the loop's
/// back edge, and the translation emits llvm.licm.disable.
void disableLoopInvariantCodeMotion(Operation *loop);

/// FlashAttention-2's kernel: CTA (m, b, h) of the grid (ceil(Sq / block_m),
/// B, Hq) computes query block m of (b, h) over every key/value block its
/// rows can see; with GQA packing, (ceil(p Sq / block_m), B, Hq / p) over
/// tiled heads.
void buildFa2Kernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                    const KernelArguments &args);

/// Split-KV (flash-decoding) in one launch: CTA (m, b, h S + s) of the grid
/// (ceil(Sq / block_m), B, Hq S) computes piece s of the key/value blocks
/// query block m of (b, h) can see (splitKVPiece: the CPU's pieces) and
/// writes its normalised partial into its slot; the CTA that completes an
/// output tile's S pieces (a per-tile counter, raised after a fence) merges
/// its S slots in slot order, writes O and LSE, and resets the counter for
/// the next launch. Whoever merges, the order is the same, so results are
/// bitwise deterministic, and no CTA waits for another: any grid size runs.
/// Workspace parameters after the attention's, a slot per CTA: partial O
/// [block_m, Dv] and LSE [block_m] in f32, and an i32 counter (zero when
/// allocated, left zero).
void buildSplitKvKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                        const KernelArguments &args);

/// Lean attention's persistent kernel over WorkAssignment's even split:
/// CTA c of the grid (G) walks LeanTiles [ctaBegin(c), ctaBegin(c + 1)) of
/// the output tiles in (batch, head, query block) order, counted from the
/// lengths the kernel runs with (static or run-time: G stays fixed). Each
/// piece finds its query block with LeanTileOrder::locate, resumed from the
/// previous piece's. Each run inside one
/// tile is a piece, computed by the CTA body over its key/value blocks: a
/// host piece that covers its tile writes O; a contributor piece (never the
/// first of its tile, always the first of its CTA) writes its normalised
/// partial to the CTA's workspace slot, fences and raises the CTA's flag; a
/// host piece that does not cover its tile (always the last of its CTA)
/// waits for the flags of the tile's contributors, the next CTAs, and merges
/// their partials in CTA order (the order of the CPU's slots). Output
/// tiles with no visible key are shared out after the walk. Workspace
/// parameters after the attention's: partial O [G, block_m, Dv] and LSE
/// [G, block_m] in f32, flags [G] in i32, zeroed before every launch.
void buildLeanKernel(ImplicitLocOpBuilder &b, const KernelShape &s,
                     const KernelArguments &args);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_KERNELSKELETONS_H
