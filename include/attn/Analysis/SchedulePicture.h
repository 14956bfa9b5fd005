//===- SchedulePicture.h - Who computes what, as an SVG picture -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Draws an attention's schedule from the same integer models the compiler
// uses (MaskGeometry through AttentionProblem, WorkAssignment,
// DistributedLayout), so the picture shows what the lowering does:
//
// - FlashAttention-2 (no partition): one row per CTA (query block of one
//   batch and head), one column per key/value block; visited blocks, blocks
//   that need the element mask, blocks skipped by the masks, and blocks
//   skipped because a block mask (one the IR proves) says they are empty.
// - split-KV: the same grid, blocks coloured by the split that computes them.
// - Lean attention: output tiles in Lean's order across heads, blocks
//   coloured by the CTA that computes them, each tile's host piece outlined.
// - ATTENTION2D and ring attention: the Sq x Sk score matrix, each region
//   coloured by the rank that computes it (zig-zag shards included), the
//   scores the masks hide shaded.
// - The backward pass: the transposed grid, key/value blocks by query
//   blocks, coloured by the piece whose program owns the key/value block.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ANALYSIS_SCHEDULEPICTURE_H
#define ATTN_ANALYSIS_SCHEDULEPICTURE_H

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/BlockMaskDerivation.h"

#include "mlir/IR/Attributes.h"

#include <string>

namespace mlir::attn {

/// An SVG document drawing the schedule of `problem` with tiles of
/// `blockM` x `blockN` and `partition` (null: FlashAttention-2's grid).
/// `title` heads the picture. `blockMask` (blocks of the tiles' size): its
/// empty blocks are drawn as skipped by it.
std::string drawSchedule(const AttentionProblem &problem, int64_t blockM,
                         int64_t blockN, Attribute partition, StringRef title,
                         const DerivedBlockMask *blockMask = nullptr);

/// An SVG document drawing the schedule of the backward pass of `problem`
/// (attn-decompose-grad's): one row per key/value block of one (batch,
/// key/value head), coloured by the piece (of `pieces`) whose program owns
/// its dK and dV; columns are the query blocks of `blockM` rows it visits
/// (MaskGeometry's transposed range) for each query head of its group.
std::string drawGradSchedule(const AttentionProblem &problem, int64_t blockM,
                             int64_t blockN, int64_t pieces, StringRef title);

} // namespace mlir::attn

#endif // ATTN_ANALYSIS_SCHEDULEPICTURE_H
