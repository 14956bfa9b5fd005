// The shipped examples compile to GPU bundles whose kernels assemble for
// their target without spilling: gqa-layer's FlashAttention-2 prefill and
// Lean decode (the main job's bundle), llama3-8b's prefill and decode,
// document-mask's block-sparse packed documents.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %attn_src_root/examples/gqa-layer.mlir -o %t/gqa | FileCheck %s --check-prefix=GQA
// RUN: attn-compile %attn_src_root/examples/llama3-8b.mlir -o %t/llama | FileCheck %s --check-prefix=LLAMA
// RUN: attn-compile %attn_src_root/examples/document-mask.mlir -o %t/docs | FileCheck %s --check-prefix=DOCS
// RUN: %ptxas -arch=sm_90a -v %t/docs/kernels.ptx -o %t/docs.cubin 2>&1 | FileCheck %s --check-prefix=NOSPILL
// RUN: FileCheck %s --check-prefix=DOCS-MANIFEST --input-file=%t/docs/manifest.json
// RUN: %ptxas -arch=sm_90a -v %t/gqa/kernels.ptx -o %t/gqa.cubin > %t/gqa.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/llama/kernels.ptx -o %t/llama.cubin > %t/llama.log 2>&1
// RUN: cat %t/gqa.log %t/llama.log | FileCheck %s
// RUN: cat %t/gqa.log %t/llama.log | FileCheck %s --check-prefix=NOSPILL
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/gqa/manifest.json

// GQA: 2 kernel(s) for sm_90a
// LLAMA: 2 kernel(s) for sm_90a
// DOCS: 1 kernel(s) for sm_90a
// DOCS-MANIFEST: "block_mask": true
// CHECK-DAG: Compiling entry function 'prefill_attention0'
// CHECK-DAG: Compiling entry function 'decode_attention0'
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// MANIFEST: "name": "decode_attention0"
// MANIFEST: "persistent": true
