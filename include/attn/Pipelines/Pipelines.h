//===- Pipelines.h - Named attn-mlir pass pipelines ----------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
namespace attn {

struct AttnToCPUOptions : public PassPipelineOptions<AttnToCPUOptions> {
  PassOptions::Option<int64_t> blockM{
      *this, "block-m",
      llvm::cl::desc("Query rows per tile (0: the op's tiles, else "
                     "FlashAttention-2's default)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{
      *this, "block-n",
      llvm::cl::desc("Keys per tile (0: the op's tiles, else "
                     "FlashAttention-2's default)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> lean{
      *this, "lean",
      llvm::cl::desc("Lean attention, instead of split-KV, where "
                     "FlashAttention-2's rule would split the key/value range "
                     "for the module's target (as attn-to-ptx's lean)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> splitKv{
      *this, "split-kv",
      llvm::cl::desc("Split-KV where FlashAttention-2's rule splits the "
                     "key/value range for the module's target (as "
                     "attn-to-ptx's split-kv; default on)"),
      llvm::cl::init(true)};
  /// Why the options cannot be used (a negative or oversized block), or an
  /// empty string.
  std::string validate() const;
};

/// attn-to-cpu: attn.attention / attn.merge on tensors down to the LLVM
/// dialect: the schedule attn-to-ptx would choose for the module's target
/// (attn-select-schedule: tiles, and split-KV or Lean where FlashAttention-2's
/// rule splits; nothing without a target), so that the CPU executes the GPU's
/// plan; each attention of a function with several into a function of
/// its own (attn-outline), decomposition into tiled online-softmax loops, the
/// merge lowering, bufferisation with deallocation, loops, conversion to
/// LLVM, and the module's attn.target and attn.cluster removed (plain LLVM
/// dialect, for mlir-translate and mlir-runner).
/// Functions marked `llvm.emit_c_interface` keep a C-callable wrapper.
void buildAttnToCPUPipeline(OpPassManager &pm, const AttnToCPUOptions &options);

struct AttnToPTXOptions : public PassPipelineOptions<AttnToPTXOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("The GPU to generate PTX for"),
      llvm::cl::init("sm_80")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX versions, e.g. +ptx80: the newest counts, at "
                     "least the chip's minimum (default: that minimum)"),
      llvm::cl::init("")};
  PassOptions::Option<bool> lean{
      *this, "lean",
      llvm::cl::desc("Lean attention, instead of split-KV, where "
                     "FlashAttention-2's rule would split the key/value range "
                     "(attn-select-schedule lean=true)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> splitKv{
      *this, "split-kv",
      llvm::cl::desc("Split-KV where FlashAttention-2's rule splits the "
                     "key/value range (attn-select-schedule split-kv=true; "
                     "default on, false keeps FlashAttention-2's grid)"),
      llvm::cl::init(true)};

  PassOptions::Option<std::string> matrixUnit{
      *this, "matrix-unit",
      llvm::cl::desc("The kernels' matrix instructions: auto (wgmma for "
                     "sm_90a where the tiles fit, else mma.sync), mma-sync, "
                     "or wgmma (sm_90a only); the default tiles are chosen "
                     "for it"),
      llvm::cl::init("auto")};

  /// Why the options cannot be used, or an empty string: `chip` must name
  /// an NVPTX architecture the kernels run on (sm_80 or newer: they use
  /// mma.sync m16n8k16 and cp.async, which older chips fail to select) that
  /// LLVM's NVPTX back end knows, and `features` must be PTX versions LLVM
  /// knows (+ptx80,+ptx83), the newest of them at least the chip's minimum
  /// (sm_80: 7.0, sm_90a: 8.0, sm_100a: 8.6). Every path to LLVM checks
  /// this first: LLVM aborts, or ignores what it does not know.
  std::string validate() const;
};

/// attn-to-ptx: a module without an #attn.target gets the one of `chip`'s
/// reference device (attn-attach-target); then tiles and split-KV (or, with
/// `lean`, Lean attention) where
/// FlashAttention-2's rule splits the key/value range (decode-shaped
/// attentions), for the module's target
/// (attn-select-schedule), one kernel
/// per attn.attention (attn-to-nvgpu), lowered through NVGPU and NVVM to LLVM
/// and then to PTX text in a gpu.binary (gpu-module-to-binary format=isa).
/// Kernel parameters are bare pointers.
void buildAttnToPTXPipeline(OpPassManager &pm, const AttnToPTXOptions &options);

/// The passes of attn-to-ptx up to the kernels: attn-attach-target,
/// attn-select-schedule, then
/// attn-derive-block-mask over the chosen tiles, then attn-to-nvgpu.
void buildAttnToKernelsPipeline(OpPassManager &pm,
                                const AttnToPTXOptions &options);

/// The passes of attn-to-ptx after attn-to-nvgpu: from the generated
/// gpu.module to PTX. A tool that reads the kernels' launch attributes runs
/// buildAttnToKernelsPipeline, reads them, then runs this.
void buildKernelsToPTXPipeline(OpPassManager &pm,
                               const AttnToPTXOptions &options);

/// Registers the named pipelines with the global pass registry.
void registerAttnPipelines();

/// Registers every pass of the project (transforms, conversions,
/// distribution) and the named pipelines: what a tool or plugin exposes.
void registerAllAttnPassesAndPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
