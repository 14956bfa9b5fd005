// Decode kernels with per-sequence key lengths (key_lengths, an i32 per
// sequence) assemble with ptxas for sm_80 and sm_90a without spilling: a
// Llama-3-8B decode step over caches of run-time batch and capacity (GQA
// packed, split-KV, LSE), and a causal speculative step (Sq = 4) on
// FlashAttention-2's grid. The manifest names the lengths as the last
// tensor parameter, of type i32, with the batch's run-time size.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 --split-kv=false | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a --split-kv=false | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/sm90a/manifest.json
// RUN: attn-launch --validate %t/sm90a | FileCheck %s --check-prefix=VALID

// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized

// COMPILE: 2 kernel(s)
// MANIFEST: "name": "key_lengths",
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: null
// MANIFEST-NEXT: ],
// MANIFEST: "type": "i32"
// The sm_90a kernels have producer warps (manifest version 11): their K
// and V come by tensor copies, the keys past a sequence's end zeroed in
// shared memory by the producer.
// MANIFEST: "version": 11
// VALID: 2 kernel(s), manifest valid

func.func @decode_cache(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>,
                        %v: tensor<?x8x?x128xbf16>, %lengths: tensor<?xi32>,
                        %o: tensor<?x32x1x128xbf16>, %l: tensor<?x32x1xf32>)
    -> (tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      key_lengths(%lengths : tensor<?xi32>)
      outs(%o, %l : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 4>,
       partition = #attn.split_kv<splits = 8>}
      -> tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
  return %r#0, %r#1 : tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>
}

func.func @speculative_causal(%q: tensor<4x32x4x128xf16>, %k: tensor<4x8x4096x128xf16>,
                              %v: tensor<4x8x4096x128xf16>, %lengths: tensor<4xi32>,
                              %o: tensor<4x32x4x128xf16>) -> tensor<4x32x4x128xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<4x32x4x128xf16>, tensor<4x8x4096x128xf16>, tensor<4x8x4096x128xf16>)
      key_lengths(%lengths : tensor<4xi32>)
      outs(%o : tensor<4x32x4x128xf16>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<4x32x4x128xf16>
  return %r : tensor<4x32x4x128xf16>
}
