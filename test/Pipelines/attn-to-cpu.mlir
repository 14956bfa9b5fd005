// RUN: attn-opt %s --attn-to-cpu | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="block-m=32 block-n=16" | FileCheck %s
// RUN: attn-opt %s --attn-partition-kv --attn-decompose --attn-lower-merge --canonicalize --one-shot-bufferize="bufferize-function-boundaries" | FileCheck %s --check-prefix=BUFFERS

// The pipeline reaches the LLVM dialect with nothing of attn, tensors or
// memrefs left.
// CHECK: llvm.func @prefill
// CHECK-NOT: attn.
// CHECK-NOT: tensor<
// CHECK-NOT: memref<
// The online-softmax state and the output tiles are updated in place: no
// buffer is copied, so nothing calls the runtime's memrefCopy.
// CHECK-NOT: memrefCopy

// FlashAttention's O(N) memory: after bufferisation no buffer holds the
// 4096 x 4096 scores (nor any Sq x Sk slice of them); score tiles are at most
// block_m x block_n.
// BUFFERS-LABEL: func.func @prefill
// BUFFERS-NOT: memref<{{([0-9]+x)*}}4096x4096x
// BUFFERS-NOT: memref<{{([0-9]+x)*}}4096x4096xf32
// BUFFERS: memref.alloc
// BUFFERS-NOT: memref<{{([0-9]+x)*}}4096x4096x
// BUFFERS-LABEL: func.func @decode_split
// BUFFERS-NOT: memref<{{([0-9]+x)*}}8192xf32
// BUFFERS-NOT: memref<{{([0-9]+x)*}}1x8192x
func.func @prefill(%q: tensor<1x4x4096x64xbf16>, %k: tensor<1x1x4096x64xbf16>, %v: tensor<1x1x4096x64xbf16>,
                   %o: tensor<1x4x4096x64xbf16>, %l: tensor<1x4x4096xf32>) -> (tensor<1x4x4096x64xbf16>, tensor<1x4x4096xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<1x4x4096x64xbf16>, tensor<1x1x4096x64xbf16>, tensor<1x1x4096x64xbf16>)
      outs(%o, %l : tensor<1x4x4096x64xbf16>, tensor<1x4x4096xf32>) {causal, softcap = 20.0 : f32}
      -> tensor<1x4x4096x64xbf16>, tensor<1x4x4096xf32>
  return %r#0, %r#1 : tensor<1x4x4096x64xbf16>, tensor<1x4x4096xf32>
}

func.func @decode_split(%q: tensor<2x8x1x128xf16>, %k: tensor<2x8x8192x128xf16>, %o: tensor<2x8x1x128xf16>) -> tensor<2x8x1x128xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<2x8x1x128xf16>, tensor<2x8x8192x128xf16>, tensor<2x8x8192x128xf16>)
      outs(%o : tensor<2x8x1x128xf16>) {partition = #attn.split_kv<splits = 8>} -> tensor<2x8x1x128xf16>
  return %r : tensor<2x8x1x128xf16>
}
