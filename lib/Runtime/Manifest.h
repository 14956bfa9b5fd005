//===- Manifest.h - Kernel bundle manifests ---------------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The manifest.json of a kernel bundle (docs/gpu-kernel.md, "Kernel
// bundles"), read and checked. Every field the runtime relies on is checked
// here, so that a launch never reads a malformed entry.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_MANIFEST_H
#define ATTN_LIB_RUNTIME_MANIFEST_H

#include "attn/Runtime/attnrt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn::runtime {

struct ParamSpec {
  std::string name;
  attnrtDType dtype = ATTNRT_F32;
  int32_t rank = 0;
  /// -1: dynamic.
  int64_t sizes[ATTNRT_MAX_RANK] = {};
  int64_t strides[ATTNRT_MAX_RANK] = {};
  int64_t alignment = 1;
};

/// One grid dimension: CONSTANT, or ceil(size DIM of parameter PARAM x
/// TIMES / CEILDIV).
struct GridTerm {
  int64_t constant = 1;
  int32_t param = -1;
  int32_t dim = 0;
  int64_t times = 1;
  int64_t ceilDiv = 1;
};

/// A scalar parameter: size or stride DIM of tensor parameter PARAM, passed
/// as an int64 after the pointers and workspaces (a kernel compiled for
/// run-time lengths).
struct ScalarSpec {
  int32_t param = 0;
  bool stride = false;
  int32_t dim = 0;
};

struct WorkspaceSpec {
  std::string name;
  /// Bytes, or bytes per CTA of the launch's grid when `perCta`.
  int64_t bytes = 0;
  bool perCta = false;
  /// Zero when the kernel starts (semaphores, counters): zero-filled before
  /// every launch, or, when the kernel leaves it zero (`kernelResets`), when
  /// it is allocated.
  bool zeroInit = false;
  bool kernelResets = false;
};

/// A tensor map (manifest version 9) the runtime encodes for each launch
/// with cuTensorMapEncodeTiled over tensor parameter `param` (every one of
/// its dimensions, innermost first: sizes and byte strides as given at the
/// launch), read in boxes of `box` elements per dimension (innermost
/// first) with the swizzle of `swizzleBytes` (0, 32, 64 or 128), elements
/// outside the tensor read as zero. It is passed by value, a 128-byte
/// `.param .align 64 .b8 NAME[128]`, after the scalars.
struct TensorMapSpec {
  std::string name;
  int32_t param = -1;
  int64_t box[ATTNRT_MAX_RANK] = {};
  int64_t swizzleBytes = 0;
};

/// The kernel's schedule (the manifest's "tiles", which attn-compile writes
/// for every kernel): a CTA of `warps` warps computes `blockM` query rows
/// against key blocks of `blockN`, staging K and V in `stages` buffers;
/// `packedHeads` query heads share a tile (GQA packing).
struct TileSpec {
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t warps = 0;
  int64_t stages = 0;
  int64_t packedHeads = 1;
};

struct KernelSpec {
  std::string name;
  std::string target;
  std::vector<ParamSpec> params;
  GridTerm grid[3];
  unsigned block[3] = {1, 1, 1};
  int64_t dynamicSharedBytes = 0;
  std::vector<WorkspaceSpec> workspaces;
  std::vector<ScalarSpec> scalars;
  std::vector<TensorMapSpec> tensorMaps;
  /// All CTAs must be resident at once (Lean attention's persistent CTAs
  /// wait for each other): the runtime checks occupancy before a launch.
  bool persistent = false;
  /// The backward kernel of an attention (attn.attention_grad): parameters
  /// Q, K, V, O, LSE, dO, dQ, dK, dV; its grid, (CTAs, B, 1), is constant.
  bool gradient = false;
  /// Warps of the block beyond the tiles' (version 11): a warp-specialised
  /// kernel's producer warpgroup, which only issues copies.
  int64_t producerWarps = 0;
  TileSpec tiles;
  attnrtAttentionInfo attention = {};

  /// Whether parameter `name` is one the kernel writes.
  bool isOutput(const std::string &name) const {
    if (gradient)
      return name == "dQ" || name == "dK" || name == "dV";
    return name == "O" || name == "LSE";
  }

  /// The index of the parameter named `name`, or -1.
  int32_t paramIndex(const std::string &name) const {
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].name == name)
        return static_cast<int32_t>(i);
    return -1;
  }
};

struct Manifest {
  /// The PTX file, relative to the bundle directory.
  std::string ptx;
  std::vector<KernelSpec> kernels;
};

/// Reads and checks a manifest; on failure returns false with ERROR set.
bool parseManifest(const std::string &text, Manifest &manifest,
                   std::string &error);

/// The compute capability a target names ("sm_90a" -> 90), or -1.
int targetComputeCapability(const std::string &target);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_MANIFEST_H
