// Grouped-query decode attention the way a Dynamo-to-TOSA front end writes
// it around a KV cache (docs/raising-forms.md rows G1, X12, C5, C6, S4; seen
// in a public MLIR compiler's attention examples, rewritten here small): one
// query (Sq = 1), 4 query heads over 2 key/value heads repeated by adding a
// full-size zero constant to a [B, Hkv, 1, S, D] reshape; K transposed
// twice; the first product a linalg.batch_matmul with explicit maps reading
// K as [.., n, k] into a dense<0> constant; the scale a tosa.mul by a
// tensor.splat; the softmax through its log-sum-exp with math.exp on whole
// tensors; an additive [1, 1, 1, Sk] mask. Raised as it is, after
// canonicalize and cse, and after linalg-fuse-elementwise-ops (which fuses
// the zero-add of V into the second product), and runs to the same result
// raised and not (sum of squares of O).
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),canonicalize,cse,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),linalg-fuse-elementwise-ops,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),linalg-fuse-elementwise-ops,attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// IR: remark: raised to attn.attention (scale 2.500000e-01, additive mask, grouped-query heads read in place
// IR-LABEL: func.func private @decode
// IR-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x1x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x32x16xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x32x16xf32>
// IR: attn.attention ins({{.*}}, %[[K]], %[[V]] : tensor<1x4x1x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>)
// IR-NOT: linalg.batch_matmul
// OUT: 0.881243
func.func private @decode(%q: tensor<1x4x1x16xf32>, %k: tensor<1x2x32x16xf32>, %v: tensor<1x2x32x16xf32>, %mask: tensor<1x1x1x32xf32>) -> tensor<1x4x1x16xf32> {
  %s5 = tosa.const_shape {values = dense<[1, 2, 1, 32, 16]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 4, 32, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<1x2x2x32x16xf32>}> : () -> tensor<1x2x2x32x16xf32>
  %k5 = tosa.reshape %k, %s5 : (tensor<1x2x32x16xf32>, !tosa.shape<5>) -> tensor<1x2x1x32x16xf32>
  %kr5 = tosa.add %k5, %zeros : (tensor<1x2x1x32x16xf32>, tensor<1x2x2x32x16xf32>) -> tensor<1x2x2x32x16xf32>
  %kr = tosa.reshape %kr5, %s4 : (tensor<1x2x2x32x16xf32>, !tosa.shape<4>) -> tensor<1x4x32x16xf32>
  %v5 = tosa.reshape %v, %s5 : (tensor<1x2x32x16xf32>, !tosa.shape<5>) -> tensor<1x2x1x32x16xf32>
  %vr5 = tosa.add %v5, %zeros : (tensor<1x2x1x32x16xf32>, tensor<1x2x2x32x16xf32>) -> tensor<1x2x2x32x16xf32>
  %vr = tosa.reshape %vr5, %s4 : (tensor<1x2x2x32x16xf32>, !tosa.shape<4>) -> tensor<1x4x32x16xf32>
  %m2s = tosa.const_shape {values = dense<[1, 32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %m2 = tosa.reshape %mask, %m2s : (tensor<1x1x1x32xf32>, !tosa.shape<2>) -> tensor<1x32xf32>
  %kt = tosa.transpose %kr {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x32x16xf32>) -> tensor<1x4x16x32xf32>
  %ktt = tosa.transpose %kt {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x16x32xf32>) -> tensor<1x4x32x16xf32>
  %q3s = tosa.const_shape {values = dense<[4, 1, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %k3s = tosa.const_shape {values = dense<[4, 32, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %q3 = tosa.reshape %q, %q3s : (tensor<1x4x1x16xf32>, !tosa.shape<3>) -> tensor<4x1x16xf32>
  %k3 = tosa.reshape %ktt, %k3s : (tensor<1x4x32x16xf32>, !tosa.shape<3>) -> tensor<4x32x16xf32>
  %init = arith.constant dense<0.000000e+00> : tensor<4x1x32xf32>
  %s = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>] ins(%q3, %k3 : tensor<4x1x16xf32>, tensor<4x32x16xf32>) outs(%init : tensor<4x1x32xf32>) -> tensor<4x1x32xf32>
  %c = arith.constant 0.25 : f32
  %scale = tensor.splat %c : tensor<4x1x32xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x0 = tosa.mul %s, %scale, %shift : (tensor<4x1x32xf32>, tensor<4x1x32xf32>, tensor<1xi8>) -> tensor<4x1x32xf32>
  %m3s = tosa.const_shape {values = dense<[1, 1, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %m3 = tosa.reshape %m2, %m3s : (tensor<1x32xf32>, !tosa.shape<3>) -> tensor<1x1x32xf32>
  %x = tosa.add %x0, %m3 : (tensor<4x1x32xf32>, tensor<1x1x32xf32>) -> tensor<4x1x32xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<4x1x32xf32>) -> tensor<4x1x1xf32>
  %d = tosa.sub %x, %m : (tensor<4x1x32xf32>, tensor<4x1x1xf32>) -> tensor<4x1x32xf32>
  %e = math.exp %d : tensor<4x1x32xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<4x1x32xf32>) -> tensor<4x1x1xf32>
  %log = tosa.log %sum : (tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %lse = tosa.add %m, %log : (tensor<4x1x1xf32>, tensor<4x1x1xf32>) -> tensor<4x1x1xf32>
  %d2 = tosa.sub %x, %lse : (tensor<4x1x32xf32>, tensor<4x1x1xf32>) -> tensor<4x1x32xf32>
  %p = math.exp %d2 : tensor<4x1x32xf32>
  %v3 = tosa.reshape %vr, %k3s : (tensor<1x4x32x16xf32>, !tosa.shape<3>) -> tensor<4x32x16xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %o3 = tosa.matmul %p, %v3, %zp, %zp : (tensor<4x1x32xf32>, tensor<4x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x1x16xf32>
  %o4s = tosa.const_shape {values = dense<[1, 4, 1, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %o = tosa.reshape %o3, %o4s : (tensor<4x1x16xf32>, !tosa.shape<4>) -> tensor<1x4x1x16xf32>
  return %o : tensor<1x4x1x16xf32>
}

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func private @seeded(%phase: f32, %heads: index, %rows: index) -> tensor<1x?x?x16xf32> {
  %e = tensor.empty(%heads, %rows) : tensor<1x?x?x16xf32>
  %t = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x?x?x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i1, %i2 : index
    %b = arith.addi %a, %i3 : index
    %c = arith.muli %b, %i2 : index
    %d = arith.addi %c, %i1 : index
    %n = arith.index_cast %d : index to i64
    %f = arith.sitofp %n : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<1x?x?x16xf32>
  return %t : tensor<1x?x?x16xf32>
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %four = arith.constant 4 : index
  %n32 = arith.constant 32 : index
  %qd = call @seeded(%c1, %four, %one) : (f32, index, index) -> tensor<1x?x?x16xf32>
  %kd = call @seeded(%c2, %two, %n32) : (f32, index, index) -> tensor<1x?x?x16xf32>
  %vd = call @seeded(%c3, %two, %n32) : (f32, index, index) -> tensor<1x?x?x16xf32>
  %q = tensor.cast %qd : tensor<1x?x?x16xf32> to tensor<1x4x1x16xf32>
  %k = tensor.cast %kd : tensor<1x?x?x16xf32> to tensor<1x2x32x16xf32>
  %v = tensor.cast %vd : tensor<1x?x?x16xf32> to tensor<1x2x32x16xf32>
  // The cache holds 20 of its 32 positions.
  %me = tensor.empty() : tensor<1x1x1x32xf32>
  %mask = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%me : tensor<1x1x1x32xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 3 : index
    %c20 = arith.constant 20 : index
    %valid = arith.cmpi ult, %j, %c20 : index
    %zero = arith.constant 0.0 : f32
    %hidden = arith.constant -1.0e+09 : f32
    %r = arith.select %valid, %zero, %hidden : f32
    linalg.yield %r : f32
  } -> tensor<1x1x1x32xf32>
  %o = call @decode(%q, %k, %v, %mask) : (tensor<1x4x1x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x1x1x32xf32>) -> tensor<1x4x1x16xf32>
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<1x4x1x16xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %w = arith.mulf %x, %x : f32
    %r = arith.addf %w, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}
