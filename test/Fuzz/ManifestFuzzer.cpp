//===- ManifestFuzzer.cpp - Fuzz libattnrt's manifest reader --------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target attn-fuzz-manifest. The input is a kernel bundle's
// manifest.json, read by attn::runtime::parseManifest (lib/Runtime/
// Manifest.h, exported by libattnrt.so), which attnrtBundleLoad and
// attnrtBundleValidate call. A manifest it refuses must come with an error
// message; one it accepts must hold what the launch path relies on without
// checking again (lib/Runtime/Runtime.cpp, BundleCheck.cpp): grid formulas
// that name an existing parameter and dimension, ranks within
// ATTNRT_MAX_RANK, at most 1024 threads, non-negative sizes, tiles of at
// least 1.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace attn::runtime;

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "attn-fuzz-manifest: %s\n", what);
  std::abort();
}

void checkKernel(const KernelSpec &kernel) {
  for (const ParamSpec &param : kernel.params) {
    if (param.rank < 1 || param.rank > ATTNRT_MAX_RANK)
      fail("a parameter's rank is out of range");
    if (param.alignment < 1 || (param.alignment & (param.alignment - 1)))
      fail("a parameter's alignment is not a power of two");
    for (int32_t i = 0; i < param.rank; ++i)
      if (param.sizes[i] < -1 || param.sizes[i] == 0 || param.strides[i] < -1)
        fail("a parameter has a size below 1 or a negative stride");
  }
  for (const GridTerm &term : kernel.grid) {
    if (term.param < 0) {
      if (term.constant < 1)
        fail("a constant grid dimension is below 1");
      continue;
    }
    if (static_cast<size_t>(term.param) >= kernel.params.size() ||
        term.dim < 0 || term.dim >= kernel.params[term.param].rank ||
        term.ceilDiv < 1)
      fail("a grid formula names a parameter or dimension that is not there");
  }
  uint64_t threads = 1;
  for (unsigned size : kernel.block) {
    if (size < 1)
      fail("a block dimension is 0");
    threads *= size;
  }
  if (threads > 1024)
    fail("a block has more than 1024 threads");
  if (kernel.dynamicSharedBytes < 0)
    fail("negative dynamic shared memory");
  for (const WorkspaceSpec &workspace : kernel.workspaces)
    if (workspace.bytes < 1)
      fail("a workspace of fewer than one byte");
  if (targetComputeCapability(kernel.target) < 0)
    fail("a target that is not sm_XY");
  const TileSpec &tiles = kernel.tiles;
  if (tiles.blockM < 1 || tiles.blockN < 1 || tiles.warps < 1 ||
      tiles.stages < 1 || tiles.packedHeads < 1)
    fail("tiles below 1");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Manifest manifest;
  std::string error;
  if (!parseManifest(text, manifest, error)) {
    if (error.empty())
      fail("a manifest was refused without an error message");
    return 0;
  }
  if (!error.empty())
    fail("a manifest was accepted with an error message");
  if (manifest.kernels.empty())
    fail("a manifest without kernels was accepted");
  for (const KernelSpec &kernel : manifest.kernels)
    checkKernel(kernel);
  return 0;
}
