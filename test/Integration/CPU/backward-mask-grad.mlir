// The gradient of an additive mask (attn.attention_grad's optional dMask):
// dS summed over the mask's broadcast dimensions, checked against the
// float64 reference's dMask with the same tolerances as dQ, dK and dV. The
// spec's masks are [B, 1, Sq, Sk] (summed over the heads) and hide about a
// tenth of the scores with -inf (dMask = 0 there).
// RUN: attn-run --backward --mask-grad --heads=4 --kv-heads=2 --seq-q=33 --seq-k=47 --head-dim=16 --mask=additive | FileCheck %s --check-prefix=SPEC
// RUN: attn-run --backward --mask-grad --heads=4 --seq-q=70 --seq-k=90 --head-dim=32 --mask=additive --block-mask=32,32 --grad-splits=2 --causal --dtype=bf16 | FileCheck %s --check-prefix=SPEC
// RUN: attn-run --backward --mask-grad %s | FileCheck %s
// RUN: not attn-run --backward --mask-grad --mask=bool 2>&1 | FileCheck %s --check-prefix=BOOLEAN
// RUN: not attn-run --mask-grad --mask=additive 2>&1 | FileCheck %s --check-prefix=NO-BACKWARD

// SPEC: check dMask: {{.*}} PASS
// SPEC: {{^PASS$}}
// BOOLEAN: error: --mask-grad takes an additive mask: a boolean mask has no gradient
// NO-BACKWARD: error: --mask-grad needs --backward

// CHECK: @shared_bias:
// CHECK: check dMask: {{.*}} PASS
// CHECK: @full_f16_bias:
// CHECK: check dMask: {{.*}} PASS
// CHECK: {{^PASS$}}

// One bias for every sequence and head: dMask sums over both.
func.func @shared_bias(%q: tensor<2x4x20x16xf32>, %k: tensor<2x2x30x16xf32>, %v: tensor<2x2x30x16xf32>,
                       %m: tensor<1x1x20x30xf32>) -> (tensor<2x4x20x16xf32>, tensor<2x4x20xf32>) {
  %o0 = tensor.empty() : tensor<2x4x20x16xf32>
  %l0 = tensor.empty() : tensor<2x4x20xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<2x4x20x16xf32>, tensor<2x2x30x16xf32>, tensor<2x2x30x16xf32>)
      mask(%m : tensor<1x1x20x30xf32>)
      outs(%o0, %l0 : tensor<2x4x20x16xf32>, tensor<2x4x20xf32>) {window = array<i64: 8, 8>}
      -> tensor<2x4x20x16xf32>, tensor<2x4x20xf32>
  return %o#0, %o#1 : tensor<2x4x20x16xf32>, tensor<2x4x20xf32>
}

// A bias per sequence and head, in f16, with key lengths.
func.func @full_f16_bias(%q: tensor<2x2x24x16xbf16>, %k: tensor<2x2x40x16xbf16>, %v: tensor<2x2x40x16xbf16>,
                         %m: tensor<2x2x24x40xf16>, %len: tensor<2xi32>) -> (tensor<2x2x24x16xbf16>, tensor<2x2x24xf32>) {
  %o0 = tensor.empty() : tensor<2x2x24x16xbf16>
  %l0 = tensor.empty() : tensor<2x2x24xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<2x2x24x16xbf16>, tensor<2x2x40x16xbf16>, tensor<2x2x40x16xbf16>)
      mask(%m : tensor<2x2x24x40xf16>) key_lengths(%len : tensor<2xi32>)
      outs(%o0, %l0 : tensor<2x2x24x16xbf16>, tensor<2x2x24xf32>) {causal}
      -> tensor<2x2x24x16xbf16>, tensor<2x2x24xf32>
  return %o#0, %o#1 : tensor<2x2x24x16xbf16>, tensor<2x2x24xf32>
}
