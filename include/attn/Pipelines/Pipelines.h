//===- Pipelines.h - Named attn-mlir pass pipelines ----------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

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
};

/// attn-to-cpu: attn.attention / attn.merge on tensors down to the LLVM
/// dialect: decomposition into tiled online-softmax loops, the merge
/// lowering, bufferisation with deallocation, loops, and conversion to LLVM.
/// Functions marked `llvm.emit_c_interface` keep a C-callable wrapper.
void buildAttnToCPUPipeline(OpPassManager &pm, const AttnToCPUOptions &options);

/// Registers the named pipelines with the global pass registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
