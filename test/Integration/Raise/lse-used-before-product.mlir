// The front end's log-sum-exp used before the product P V: the LSE's
// reshape for the second result written ahead of the product, as
// MIGraphX-style TOSA does. The raised op is built at the product, so the
// LSE's users that do not feed the product move after it (the softmax's
// keep the front end's value and die with it): the pass must never leave a
// use its definition does not dominate (attn-opt verifies after the pass).
// Otherwise tosa-lse-softmax.mlir; runs to the same O and LSE raised and
// not.
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),canonicalize,cse,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),linalg-fuse-elementwise-ops,attn-raise-attention{remarks=true})" 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor,convert-elementwise-to-linalg),linalg-fuse-elementwise-ops,attn-raise-attention,attn-to-cpu)" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// IR: remark: raised to attn.attention (scale 2.500000e-01, the front end's log-sum-exp as its LSE)
// IR-LABEL: func.func private @tosa_lse_attention
// IR-NOT: math.log
// IR: %[[ATTN:.*]]:2 = attn.attention
// IR-NOT: math.log
// IR-NOT: linalg.batch_matmul
// IR: tensor.collapse_shape %[[ATTN]]#1
// IR: return
// OUT: 74.5356
// OUT-NEXT: 938.142
func.func private @tosa_lse_attention(%q: tensor<8x32x16xf32>, %k: tensor<8x32x16xf32>, %v: tensor<8x32x16xf32>) -> (tensor<8x32x16xf32>, tensor<8x32xf32>) {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<8x32x16xf32>) -> tensor<8x16x32xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<8x32x16xf32>, tensor<8x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x32xf32>
  %scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %x = tosa.mul %s, %scale, %shift : (tensor<8x32x32xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<8x32x32xf32>
  %m = tosa.reduce_max %x {axis = 2 : i32} : (tensor<8x32x32xf32>) -> tensor<8x32x1xf32>
  %d = tosa.sub %x, %m : (tensor<8x32x32xf32>, tensor<8x32x1xf32>) -> tensor<8x32x32xf32>
  %e = math.exp %d : tensor<8x32x32xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<8x32x32xf32>) -> tensor<8x32x1xf32>
  %log = tosa.log %sum : (tensor<8x32x1xf32>) -> tensor<8x32x1xf32>
  %lse = tosa.add %m, %log : (tensor<8x32x1xf32>, tensor<8x32x1xf32>) -> tensor<8x32x1xf32>
  %d2 = tosa.sub %x, %lse : (tensor<8x32x32xf32>, tensor<8x32x1xf32>) -> tensor<8x32x32xf32>
  %p = math.exp %d2 : tensor<8x32x32xf32>
  %rows = tosa.const_shape {values = dense<[8, 32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %lse2 = tosa.reshape %lse, %rows : (tensor<8x32x1xf32>, !tosa.shape<2>) -> tensor<8x32xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<8x32x32xf32>, tensor<8x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8x32x16xf32>
  return %o, %lse2 : tensor<8x32x16xf32>, tensor<8x32xf32>
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
  %o, %lse = call @tosa_lse_attention(%q, %k, %v) : (tensor<8x32x16xf32>, tensor<8x32x16xf32>, tensor<8x32x16xf32>) -> (tensor<8x32x16xf32>, tensor<8x32xf32>)
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
  %lsum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%lse : tensor<8x32xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %lval = tensor.extract %lsum[] : tensor<f32>
  vector.print %lval : f32
  return
}
