// TOSA attention the way a PyTorch-to-TOSA front end writes a Llama layer
// (docs/raising-forms.md rows S3, T3, C5): the scale as a multiplication by
// the tosa.reciprocal of a full-size constant sqrt(D), K^T by tosa.transpose
// followed by an addition of zeros, and another addition of zeros on P
// before the second product (TOSA's folders drop both). Lowered by
// tosa-to-linalg and raised as it is, after canonicalize and cse, and after
// linalg-fuse-elementwise-ops (whose reshape propagation gives the
// reductions a unit loop and reads the scores through an expand_shape that
// adds a unit dimension); runs to the same result raised and not (sum of
// squares of O).
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention)" | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,cse,attn-raise-attention)" | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention)" | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// IR-LABEL: func.func private @tosa_attention
// IR: attn.attention {{.*}} {scale = 2.500000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// OUT: 74.5356
func.func private @tosa_attention(%q: tensor<8x32x16xf32>, %k: tensor<8x32x16xf32>, %v: tensor<8x32x16xf32>) -> tensor<8x32x16xf32> {
  %kt0 = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x32x16xf32>) -> tensor<8x16x32xf32>
  %zeros_k = "tosa.const"() <{values = dense<0.0> : tensor<8x16x32xf32>}> : () -> tensor<8x16x32xf32>
  %kt = tosa.add %kt0, %zeros_k : (tensor<8x16x32xf32>, tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x32x16xf32>, tensor<8x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %sqrt_d = "tosa.const"() <{values = dense<4.0> : tensor<8x32x32xf32>}> : () -> tensor<8x32x32xf32>
  %inv = tosa.reciprocal %sqrt_d : (tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %s, %inv, %shift : (tensor<8x32x32xf32>, tensor<8x32x32xf32>, tensor<1xi8>) -> tensor<8x32x32xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<8x32x32xf32>) -> tensor<8x32x1xf32>
  %d = tosa.sub %x, %m : (tensor<8x32x32xf32>, tensor<8x32x1xf32>) -> tensor<8x32x32xf32>
  %e = tosa.exp %d : (tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x32x32xf32>) -> tensor<8x32x1xf32>
  %r = tosa.reciprocal %sum : (tensor<8x32x1xf32>) -> tensor<8x32x1xf32>
  %p0 = tosa.mul %e, %r, %shift : (tensor<8x32x32xf32>, tensor<8x32x1xf32>, tensor<1xi8>) -> tensor<8x32x32xf32>
  %zeros_p = "tosa.const"() <{values = dense<0.0> : tensor<8x32x32xf32>}> : () -> tensor<8x32x32xf32>
  %p = tosa.add %p0, %zeros_p : (tensor<8x32x32xf32>, tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x32x32xf32>, tensor<8x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x16xf32>
  return %o : tensor<8x32x16xf32>
}

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @seeded(%phase: f32) -> tensor<8x32x16xf32> {
  %e = tensor.empty() : tensor<8x32x16xf32>
  %t = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<8x32x16xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %a = arith.muli %i0, %i1 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i1 : index
    %n = arith.index_cast %c : index to i64
    %f = arith.sitofp %n : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<8x32x16xf32>
  return %t : tensor<8x32x16xf32>
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %q = call @seeded(%c1) : (f32) -> tensor<8x32x16xf32>
  %k = call @seeded(%c2) : (f32) -> tensor<8x32x16xf32>
  %v = call @seeded(%c3) : (f32) -> tensor<8x32x16xf32>
  %o = call @tosa_attention(%q, %k, %v) : (tensor<8x32x16xf32>, tensor<8x32x16xf32>, tensor<8x32x16xf32>) -> tensor<8x32x16xf32>
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%o : tensor<8x32x16xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %w = arith.mulf %x, %x : f32
    %r = arith.addf %w, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}
