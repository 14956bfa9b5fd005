// The causal and padding mask of a PyTorch-to-TOSA Llama layer
// (docs/raising-forms.md row M2, as in buddy-llama): the causal part by a
// generic comparing arange against (arange + 1) reshaped to [L, 1] over a
// unit "reduction" loop, turned additive by select(c, 0, lowest); the
// padding part from a [1, S] key mask broadcast by a logical or with a
// false constant, cast to f32, 1 - x, cast back to i1 and select(p, lowest,
// x); the two added, then added to the [1, H, L, S] scores (broadcast over
// the heads) between the scale and the softmax; heads folded into the
// batch around both products. Lowered by tosa-to-linalg and raised with
// the [1, 1, L, S] sum as an additive mask, as it is, after canonicalize
// and cse, and after linalg-fuse-elementwise-ops (which fuses the mask's
// element-wise steps into the addition: the pass computes the mask again
// on its own); runs to the same result raised and not (a position-weighted
// sum of O).
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention)" | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,cse,attn-raise-attention)" | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention)" | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),linalg-fuse-elementwise-ops,attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// IR-LABEL: func.func private @llama_masked
// IR: attn.attention {{.*}} mask({{.*}} : tensor<1x1x8x8xf32>) {{.*}} {scale = 0.353553{{[0-9]*}} : f32}
// IR-NOT: linalg.batch_matmul
// OUT: 1107.0{{[0-9]*}}

#arange = affine_map<(d0, d1, d2) -> (d1)>
#rowsPlusOne = affine_map<(d0, d1, d2) -> (d0, d2)>
#causal = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

func.func private @llama_masked(%q: tensor<4x8x8xf32>, %k: tensor<4x8x8xf32>, %v: tensor<4x8x8xf32>, %keys: tensor<1x8xi1>) -> tensor<4x8x8xf32> {
  // Causal: key j is seen by row i when j < i + 1.
  %lowest = arith.constant dense<-3.40282347E+38> : tensor<8x8xf32>
  %ar = "tosa.const"() <{values = dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %ones = "tosa.const"() <{values = dense<1> : tensor<8xi64>}> : () -> tensor<8xi64>
  %ar1 = tosa.add %ar, %ones : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
  %shape81 = tosa.const_shape {values = dense<[8, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %rows = tosa.reshape %ar1, %shape81 : (tensor<8xi64>, !tosa.shape<2>) -> tensor<8x1xi64>
  %ce = tensor.empty() : tensor<8x8xi1>
  %c = linalg.generic {indexing_maps = [#arange, #rowsPlusOne, #causal], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ar, %rows : tensor<8xi64>, tensor<8x1xi64>) outs(%ce : tensor<8x8xi1>) {
  ^bb0(%in: i64, %in_0: i64, %out: i1):
    %lt = arith.cmpi slt, %in, %in_0 : i64
    linalg.yield %lt : i1
  } -> tensor<8x8xi1>
  %zero = arith.constant 0.000000e+00 : f32
  %cae = tensor.empty() : tensor<8x8xf32>
  %causalAdd = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%c, %lowest : tensor<8x8xi1>, tensor<8x8xf32>) outs(%cae : tensor<8x8xf32>) {
  ^bb0(%in: i1, %in_0: f32, %out: f32):
    %r = arith.select %in, %zero, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %shape1188 = tosa.const_shape {values = dense<[1, 1, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %causal4 = tosa.reshape %causalAdd, %shape1188 : (tensor<8x8xf32>, !tosa.shape<4>) -> tensor<1x1x8x8xf32>
  // Padding: keys whose mask is false get lowest.
  %shape1118 = tosa.const_shape {values = dense<[1, 1, 1, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %keys4 = tosa.reshape %keys, %shape1118 : (tensor<1x8xi1>, !tosa.shape<4>) -> tensor<1x1x1x8xi1>
  %false = "tosa.const"() <{values = dense<false> : tensor<1x1x8x8xi1>}> : () -> tensor<1x1x8x8xi1>
  %keysb = tosa.logical_or %keys4, %false : (tensor<1x1x1x8xi1>, tensor<1x1x8x8xi1>) -> tensor<1x1x8x8xi1>
  %keysf = tosa.cast %keysb : (tensor<1x1x8x8xi1>) -> tensor<1x1x8x8xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x8x8xf32>}> : () -> tensor<1x1x8x8xf32>
  %hiddenf = tosa.sub %one, %keysf : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  %hidden = tosa.cast %hiddenf : (tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xi1>
  %pe = tensor.empty() : tensor<1x1x8x8xf32>
  %lowestf = arith.constant -3.40282347E+38 : f32
  %padAdd = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hidden, %hiddenf : tensor<1x1x8x8xi1>, tensor<1x1x8x8xf32>) outs(%pe : tensor<1x1x8x8xf32>) {
  ^bb0(%in: i1, %in_0: f32, %out: f32):
    %r = arith.select %in, %lowestf, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<1x1x8x8xf32>
  %mask = tosa.add %padAdd, %causal4 : (tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  // Q K^T on the heads folded into the batch, the softmax on [1, H, L, S].
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8x8xf32>
  %shape1488 = tosa.const_shape {values = dense<[1, 4, 8, 8]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s4 = tosa.reshape %s, %shape1488 : (tensor<4x8x8xf32>, !tosa.shape<4>) -> tensor<1x4x8x8xf32>
  %sqrt_d = "tosa.const"() <{values = dense<2.82842708> : tensor<1x4x8x8xf32>}> : () -> tensor<1x4x8x8xf32>
  %inv = tosa.reciprocal %sqrt_d : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x0 = tosa.mul %s4, %inv, %shift : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1xi8>) -> tensor<1x4x8x8xf32>
  %x = tosa.add %x0, %mask : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32>
  %m = tosa.reduce_max %x {axis = 3 : i32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x1xf32>
  %d = tosa.sub %x, %m : (tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>) -> tensor<1x4x8x8xf32>
  %e = tosa.exp %d : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %sum = tosa.reduce_sum %e {axis = 3 : i32} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x1xf32>
  %r = tosa.reciprocal %sum : (tensor<1x4x8x1xf32>) -> tensor<1x4x8x1xf32>
  %p4 = tosa.mul %e, %r, %shift : (tensor<1x4x8x8xf32>, tensor<1x4x8x1xf32>, tensor<1xi8>) -> tensor<1x4x8x8xf32>
  %shape488 = tosa.const_shape {values = dense<[4, 8, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %p = tosa.reshape %p4, %shape488 : (tensor<1x4x8x8xf32>, !tosa.shape<3>) -> tensor<4x8x8xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<4x8x8xf32>
  return %o : tensor<4x8x8xf32>
}

func.func private @seeded(%phase: f32) -> tensor<4x8x8xf32> {
  %e = tensor.empty() : tensor<4x8x8xf32>
  %t = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<4x8x8xf32>) {
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
  } -> tensor<4x8x8xf32>
  return %t : tensor<4x8x8xf32>
}

// Each element weighted by its position, so that O in another layout
// prints another number.
func.func private @print_weighted_sum(%o: tensor<4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%o : tensor<4x8x8xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %c8 = arith.constant 8 : index
    %a = arith.muli %i0, %c8 : index
    %b = arith.addi %a, %i1 : index
    %c = arith.muli %b, %c8 : index
    %d = arith.addi %c, %i2 : index
    %n = arith.index_cast %d : index to i64
    %f = arith.sitofp %n : i64 to f32
    %one = arith.constant 1.0 : f32
    %w = arith.addf %f, %one : f32
    %xw = arith.mulf %x, %w : f32
    %r = arith.addf %xw, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %q = call @seeded(%c1) : (f32) -> tensor<4x8x8xf32>
  %k = call @seeded(%c2) : (f32) -> tensor<4x8x8xf32>
  %v = call @seeded(%c3) : (f32) -> tensor<4x8x8xf32>
  // The last two keys are padding.
  %keys = arith.constant dense<[[true, true, true, true, true, true, false, false]]> : tensor<1x8xi1>
  %o = call @llama_masked(%q, %k, %v, %keys) : (tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<1x8xi1>) -> tensor<4x8x8xf32>
  call @print_weighted_sum(%o) : (tensor<4x8x8xf32>) -> ()
  return
}
