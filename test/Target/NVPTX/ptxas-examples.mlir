// The shipped examples compile to GPU bundles whose kernels assemble for
// their target without spilling: gqa-layer's FlashAttention-2 prefill and
// Lean decode (the main job's bundle), llama3-8b's prefill and decode.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %attn_src_root/examples/gqa-layer.mlir -o %t/gqa | FileCheck %s --check-prefix=GQA
// RUN: attn-compile %attn_src_root/examples/llama3-8b.mlir -o %t/llama | FileCheck %s --check-prefix=LLAMA
// RUN: %ptxas -arch=sm_90a -v %t/gqa/kernels.ptx -o %t/gqa.cubin > %t/gqa.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/llama/kernels.ptx -o %t/llama.cubin > %t/llama.log 2>&1
// RUN: cat %t/gqa.log %t/llama.log | FileCheck %s
// RUN: cat %t/gqa.log %t/llama.log | FileCheck %s --check-prefix=NOSPILL
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/gqa/manifest.json

// GQA: 2 kernel(s) for sm_90a
// LLAMA: 2 kernel(s) for sm_90a
// CHECK-DAG: Compiling entry function 'prefill_attention0'
// CHECK-DAG: Compiling entry function 'decode_attention0'
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// MANIFEST: "name": "decode_attention0"
// MANIFEST: "persistent": true
