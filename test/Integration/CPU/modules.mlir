// attn-run on a module runs every attention in it, with the attributes,
// mask operand, partition and tiles the module gives.
// RUN: attn-run %s | FileCheck %s

// CHECK: @gqa_window: B=2 Hq=8 Hkv=2 (GQA 4:1) Sq=100 Sk=300 D=64 Dv=32 f16 window=[50, 10] boolean-mask +lse
// CHECK:   schedule: tiles 32x64 (the op's tiles)
// CHECK:   check O  : {{.*}} PASS
// CHECK:   check LSE: {{.*}} PASS
// CHECK: @decode: B=4 Hq=4 Hkv=1 (MQA) Sq=1 Sk=777 D=128 Dv=128 bf16->f32 causal
// CHECK:   split-KV into 5 partials merged with attn.merge
// CHECK:   check O  : {{.*}} PASS
// CHECK: {{^PASS$}}

func.func @gqa_window(%q: tensor<2x8x100x64xf16>, %k: tensor<2x2x300x64xf16>,
                      %v: tensor<2x2x300x32xf16>, %mask: tensor<1x8x100x300xi1>)
    -> (tensor<2x8x100x32xf16>, tensor<2x8x100xf32>) {
  %o0 = tensor.empty() : tensor<2x8x100x32xf16>
  %l0 = tensor.empty() : tensor<2x8x100xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<2x8x100x64xf16>,
      tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>)
      mask(%mask : tensor<1x8x100x300xi1>)
      outs(%o0, %l0 : tensor<2x8x100x32xf16>, tensor<2x8x100xf32>)
      {window = array<i64: 50, 10>, tiles = #attn.fa2<block_m = 32, block_n = 64, warps = 2, stages = 2>}
      -> tensor<2x8x100x32xf16>, tensor<2x8x100xf32>
  return %o, %lse : tensor<2x8x100x32xf16>, tensor<2x8x100xf32>
}

func.func @decode(%q: tensor<4x4x1x128xbf16>, %k: tensor<4x1x777x128xbf16>,
                  %v: tensor<4x1x777x128xbf16>) -> tensor<4x4x1x128xf32> {
  %o0 = tensor.empty() : tensor<4x4x1x128xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<4x4x1x128xbf16>,
      tensor<4x1x777x128xbf16>, tensor<4x1x777x128xbf16>)
      outs(%o0 : tensor<4x4x1x128xf32>)
      {causal, partition = #attn.split_kv<splits = 5>} -> tensor<4x4x1x128xf32>
  return %o : tensor<4x4x1x128xf32>
}
