// Grouped-query attention the way a Dynamo-to-TOSA front end writes
// Hugging Face's repeat_kv (docs/raising-forms.md rows G1, S4, H3, C5):
// K and V reshaped to [B, Hkv, 1, S, D], broadcast to [B, Hkv, G, S, D] by
// adding a full-size constant of zeros, passed through tosa.identity and a
// full-size tensor.extract_slice, reshaped to [B, Hq, S, D]; the heads
// folded into the batch of rank-3 tosa.matmul; the scale a multiplication
// by a splat constant. Raised as it is, after canonicalize and cse, and
// after linalg-fuse-elementwise-ops (which propagates the [Hq] -> [Hkv, G]
// reshape into the first product and the maximum, so the two products
// group their batch differently): one attn.attention that reads the 2
// key/value heads in place (no repeated copy); runs to the same result
// raised and not (sum of squares of O).
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,cse,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// IR: remark: raised to attn.attention (scale 2.500000e-01, grouped-query heads read in place)
// IR-LABEL: func.func private @tosa_gqa
// IR-SAME: %[[Q:[a-z0-9]+]]: tensor<1x4x8x16xf32>, %[[K:[a-z0-9]+]]: tensor<1x2x8x16xf32>, %[[V:[a-z0-9]+]]: tensor<1x2x8x16xf32>
// IR-NOT: linalg.generic
// IR: attn.attention ins(%[[Q]], %[[K]], %[[V]] : tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>)
// IR-NOT: linalg.batch_matmul
// OUT: 34.2439
func.func private @tosa_gqa(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %s5 = tosa.const_shape {values = dense<[1, 2, 1, 8, 16]> : tensor<5xindex>} : () -> !tosa.shape<5>
  %s4 = tosa.const_shape {values = dense<[1, 4, 8, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %zeros = "tosa.const"() <{values = dense<0.0> : tensor<1x2x2x8x16xf32>}> : () -> tensor<1x2x2x8x16xf32>
  %k5 = tosa.reshape %k, %s5 : (tensor<1x2x8x16xf32>, !tosa.shape<5>) -> tensor<1x2x1x8x16xf32>
  %kr5 = tosa.add %k5, %zeros : (tensor<1x2x1x8x16xf32>, tensor<1x2x2x8x16xf32>) -> tensor<1x2x2x8x16xf32>
  %kri = tosa.identity %kr5 : (tensor<1x2x2x8x16xf32>) -> tensor<1x2x2x8x16xf32>
  %krs = tensor.extract_slice %kri[0, 0, 0, 0, 0] [1, 2, 2, 8, 16] [1, 1, 1, 1, 1] : tensor<1x2x2x8x16xf32> to tensor<1x2x2x8x16xf32>
  %kr = tosa.reshape %krs, %s4 : (tensor<1x2x2x8x16xf32>, !tosa.shape<4>) -> tensor<1x4x8x16xf32>
  %v5 = tosa.reshape %v, %s5 : (tensor<1x2x8x16xf32>, !tosa.shape<5>) -> tensor<1x2x1x8x16xf32>
  %vr5 = tosa.add %v5, %zeros : (tensor<1x2x1x8x16xf32>, tensor<1x2x2x8x16xf32>) -> tensor<1x2x2x8x16xf32>
  %vri = tosa.identity %vr5 : (tensor<1x2x2x8x16xf32>) -> tensor<1x2x2x8x16xf32>
  %vr = tosa.reshape %vri, %s4 : (tensor<1x2x2x8x16xf32>, !tosa.shape<4>) -> tensor<1x4x8x16xf32>
  %kt = tosa.transpose %kr {perms = array<i32: 0, 1, 3, 2>} : (tensor<1x4x8x16xf32>) -> tensor<1x4x16x8xf32>
  %s3q = tosa.const_shape {values = dense<[4, 8, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3k = tosa.const_shape {values = dense<[4, 16, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s3s = tosa.const_shape {values = dense<[4, 8, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4s = tosa.const_shape {values = dense<[1, 4, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q3 = tosa.reshape %q, %s3q : (tensor<1x4x8x16xf32>, !tosa.shape<3>) -> tensor<4x8x16xf32>
  %kt3 = tosa.reshape %kt, %s3k : (tensor<1x4x16x8xf32>, !tosa.shape<3>) -> tensor<4x16x8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q3, %kt3, %zp, %zp : (tensor<4x8x16xf32>, tensor<4x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8x8xf32>
  %sc = tosa.reshape %s, %s4s : (tensor<4x8x8xf32>, !tosa.shape<4>) -> tensor<1x4x8x8xf32>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %sc, %scale, %shift : (tensor<1x4x8x8xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x8x8xf32>
  %m = tosa.reduce_max %x {axis = 3 : i32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x1xf32>
  %d = tosa.sub %x, %m : (tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) -> tensor<1x4x8x8xf32>
  %e = tosa.exp %d : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x1xf32>
  %r = tosa.reciprocal %sum : (tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>, tensor<1xi8>) -> tensor<1x4x8x8xf32>
  %p3 = tosa.reshape %p, %s3s : (tensor<1x4x8x8xf32>, !tosa.shape<3>) -> tensor<4x8x8xf32>
  %v3 = tosa.reshape %vr, %s3q : (tensor<1x4x8x16xf32>, !tosa.shape<3>) -> tensor<4x8x16xf32>
  %o3 = tosa.matmul %p3, %v3, %zp, %zp : (tensor<4x8x8xf32>, tensor<4x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8x16xf32>
  %o = tosa.reshape %o3, %s4 : (tensor<4x8x16xf32>, !tosa.shape<4>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func private @seeded(%phase: f32, %heads: index) -> tensor<?x?x8x16xf32> {
  %c1 = arith.constant 1 : index
  %e = tensor.empty(%c1, %heads) : tensor<?x?x8x16xf32>
  %t = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<?x?x8x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i1, %i2 : index
    %b = arith.addi %a, %i3 : index
    %c = arith.muli %b, %i2 : index
    %n = arith.index_cast %c : index to i64
    %f = arith.sitofp %n : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<?x?x8x16xf32>
  return %t : tensor<?x?x8x16xf32>
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %two = arith.constant 2 : index
  %four = arith.constant 4 : index
  %qd = call @seeded(%c1, %four) : (f32, index) -> tensor<?x?x8x16xf32>
  %kd = call @seeded(%c2, %two) : (f32, index) -> tensor<?x?x8x16xf32>
  %vd = call @seeded(%c3, %two) : (f32, index) -> tensor<?x?x8x16xf32>
  %q = tensor.cast %qd : tensor<?x?x8x16xf32> to tensor<1x4x8x16xf32>
  %k = tensor.cast %kd : tensor<?x?x8x16xf32> to tensor<1x2x8x16xf32>
  %v = tensor.cast %vd : tensor<?x?x8x16xf32> to tensor<1x2x8x16xf32>
  %o = call @tosa_gqa(%q, %k, %v) : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<1x4x8x16xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %w = arith.mulf %x, %x : f32
    %r = arith.addf %w, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}
