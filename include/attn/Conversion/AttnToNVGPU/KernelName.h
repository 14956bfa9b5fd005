//===- KernelName.h - The name of an attention's GPU kernel -----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-to-nvgpu names the kernel of an attention `<function>_attention<i>`,
// the i-th attention of its function in walk order, and the kernel of an
// attn.attention_grad `<function>_attention_grad<i>`; bundles carry those
// names and attn-run looks kernels up by them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTONVGPU_KERNELNAME_H
#define ATTN_CONVERSION_ATTNTONVGPU_KERNELNAME_H

#include <string>

namespace mlir::attn {

class AttentionOp;
class AttentionGradOp;

std::string getAttentionKernelName(AttentionOp op);
std::string getAttentionGradKernelName(AttentionGradOp op);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTONVGPU_KERNELNAME_H
