// A causal mask the way a Dynamo-to-TOSA front end builds it for a
// DeepSeek layer (docs/raising-forms.md row M3): tosa.greater of constant
// key and query positions, tosa.cast of the booleans to f32, tosa.mul by
// -3.4e38, added to the scaled scores of every head. Raised with the mask as
// an additive [Sq, Sk] mask as it is, after canonicalize and cse, and after
// linalg-fuse-elementwise-ops (which fuses the mask's computation into the
// addition; the pass computes it again on its own); runs to the same result
// raised and not (sum of squares of O).
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,cse,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// IR: remark: raised to attn.attention (scale 2.500000e-01, additive mask)
// IR-LABEL: func.func private @tosa_attention
// IR: attn.attention {{.*}} mask({{.*}} : tensor<1x1x32x32xf32>)
// IR-NOT: linalg.batch_matmul
// OUT: 220.248
func.func private @tosa_attention(%q: tensor<8x32x16xf32>, %k: tensor<8x32x16xf32>, %v: tensor<8x32x16xf32>) -> tensor<8x32x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x32x16xf32>) -> tensor<8x16x32xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x32x16xf32>, tensor<8x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x0 = tosa.mul %s, %scale, %shift : (tensor<8x32x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<8x32x32xf32>
  %rows = "tosa.const"() <{values = dense<[[0], [1], [2], [3], [4], [5], [6], [7], [8], [9], [10], [11], [12], [13], [14], [15], [16], [17], [18], [19], [20], [21], [22], [23], [24], [25], [26], [27], [28], [29], [30], [31]]> : tensor<32x1xi32>}> : () -> tensor<32x1xi32>
  %cols = "tosa.const"() <{values = dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]]> : tensor<1x32xi32>}> : () -> tensor<1x32xi32>
  %later = tosa.greater %cols, %rows : (tensor<1x32xi32>, tensor<32x1xi32>) -> tensor<32x32xi1>
  %laterf = tosa.cast %later : (tensor<32x32xi1>) -> tensor<32x32xf32>
  %lowest = "tosa.const"() <{values = dense<-3.40282347E+38> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %mask = tosa.mul %laterf, %lowest, %shift : (tensor<32x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x32xf32>
  %s3 = tosa.const_shape {values = dense<[1, 32, 32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mask3 = tosa.reshape %mask, %s3 : (tensor<32x32xf32>, !tosa.shape<3>) -> tensor<1x32x32xf32>
  %x = tosa.add %x0, %mask3 : (tensor<8x32x32xf32>, tensor<1x32x32xf32>) -> tensor<8x32x32xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<8x32x32xf32>) -> tensor<8x32x1xf32>
  %d = tosa.sub %x, %m : (tensor<8x32x32xf32>, tensor<8x32x1xf32>) -> tensor<8x32x32xf32>
  %e = tosa.exp %d : (tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x32x32xf32>) -> tensor<8x32x1xf32>
  %r = tosa.reciprocal %sum : (tensor<8x32x1xf32>) -> tensor<8x32x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<8x32x32xf32>, tensor<8x32x1xf32>, tensor<1xi8>) -> tensor<8x32x32xf32>
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
