//===- AttnDialect.td - The attn dialect definition --------*- tablegen -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Exact attention as one op, and the schedules that lower it.";
  let description = [{
    The `attn` dialect states *what* an exact attention computes,
    `softmax(Q K^T * scale + bias) V`, with grouped-query heads, causal and
    sliding-window masking, softcapping, an optional mask operand and an
    optional score-modification region. Passes decide *how* it is computed:
    tiled online-softmax loops, FlashAttention-2 work partitioning, split-KV,
    Lean-attention stream-K and ATTENTION2D distribution. Those schedules are
    described by the attributes of this dialect, and every schedule that splits
    the key/value range recombines its partial results with `attn.merge`.

    The dialect attribute `attn.target`, placed on a module, names the GPU the
    module is compiled for (`#attn.target<...>`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasCanonicalizer = 0;
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
  let extraClassDeclaration = [{
    /// Name of the discardable module attribute holding a `#attn.target`.
    static constexpr ::llvm::StringLiteral getTargetAttrName() {
      return ::llvm::StringLiteral("attn.target");
    }
    /// Name of the discardable module attribute holding an `#attn.cluster`.
    static constexpr ::llvm::StringLiteral getClusterAttrName() {
      return ::llvm::StringLiteral("attn.cluster");
    }
    /// Name of the discardable kernel attribute that says how to launch a
    /// generated kernel: a dictionary with `grid` and `block` (i64 arrays of
    /// 3), `dynamic_shared_memory` (i64 bytes), `tiles` (`#attn.fa2`) and
    /// `attention` (a dictionary of what it computes: scale, causal, window),
    /// `params` (the memref types through which the kernel views its tensor
    /// parameters) and `scalars` (for each trailing i64 parameter, the size
    /// or stride of a view it carries: `{param = i, size = d}` or
    /// `{param = i, stride = d}`); a persistent kernel (Lean attention) adds `persistent` (all CTAs must
    /// be resident at once) and `workspaces` (a list of dictionaries of
    /// name, bytes and zero_init: buffers the runtime passes after the
    /// parameters); a backward kernel (attn.attention_grad's) adds
    /// `gradient`; a kernel with tensor copies adds `tensor_maps` (a list of
    /// dictionaries of name, param (the index of the tensor parameter it
    /// maps), box (innermost first) and swizzle bytes: CUtensorMaps the
    /// runtime passes by value, the kernel's last parameters, in order); a
    /// warp-specialised kernel adds `producer_warps` (the warps after the
    /// tiles' warps that only issue copies, a warpgroup: the block has
    /// 32 (tiles' warps + producer_warps) threads).
    static constexpr ::llvm::StringLiteral getLaunchAttrName() {
      return ::llvm::StringLiteral("attn.launch");
    }
  private:
    void registerAttributes();
  public:
  }];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
