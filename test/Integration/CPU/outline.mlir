// A function with three attentions (chained through O, sharing K and V; one
// with a score region that scales by a value of the function, one with
// dynamic sizes and a split-KV partition) runs outlined by attn-outline in
// the attn-to-cpu pipeline and must agree with the same attentions compiled
// one per function (which attn-outline leaves alone), on the same inputs.
// RUN: attn-opt %s --attn-to-cpu | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-DAG: llvm.func @layer(
// IR-DAG: llvm.func @layer_attention(
// IR-DAG: llvm.func @layer_attention_0(
// IR-DAG: llvm.func @layer_attention_1(
// IR-NOT: @step1_attention
// CHECK: agree: 1
// CHECK: nonzero: 1

#all4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
#all3 = affine_map<(b, h, m) -> (b, h, m)>
#none4 = affine_map<(b, h, m, n) -> ()>
#none3 = affine_map<(b, h, m) -> ()>

!q = tensor<2x4x40x16xf32>
!kv = tensor<2x2x40x16xf32>
!lse = tensor<2x4x40xf32>
!dyn = tensor<2x4x?x16xf32>

func.func @layer(%q: !q, %k: !kv, %v: !kv, %bias: f32, %n: index)
    -> (!q, !lse, !dyn) {
  %e = tensor.empty() : !q
  %l = tensor.empty() : !lse
  %o1, %lse1 = attn.attention ins(%q, %k, %v : !q, !kv, !kv)
      outs(%e, %l : !q, !lse) {causal} -> !q, !lse
  %half = arith.constant 0.5 : f32
  %o2 = attn.attention ins(%o1, %k, %v : !q, !kv, !kv) outs(%e : !q)
      {window = array<i64: 9, 3>} -> !q score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %scaled = arith.mulf %s, %half : f32
    %r = arith.mulf %scaled, %bias : f32
    attn.yield %r : f32
  }
  %qd = tensor.cast %q : !q to !dyn
  %ed = tensor.empty(%n) : !dyn
  %o3 = attn.attention ins(%qd, %k, %v : !dyn, !kv, !kv) outs(%ed : !dyn)
      {partition = #attn.split_kv<splits = 2>,
       tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>} -> !dyn
  return %o2, %lse1, %o3 : !q, !lse, !dyn
}

func.func private @step1(%q: !q, %k: !kv, %v: !kv) -> (!q, !lse) {
  %e = tensor.empty() : !q
  %l = tensor.empty() : !lse
  %o1, %lse1 = attn.attention ins(%q, %k, %v : !q, !kv, !kv)
      outs(%e, %l : !q, !lse) {causal} -> !q, !lse
  return %o1, %lse1 : !q, !lse
}

func.func private @step2(%o1: !q, %k: !kv, %v: !kv, %bias: f32) -> !q {
  %e = tensor.empty() : !q
  %half = arith.constant 0.5 : f32
  %o2 = attn.attention ins(%o1, %k, %v : !q, !kv, !kv) outs(%e : !q)
      {window = array<i64: 9, 3>} -> !q score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %scaled = arith.mulf %s, %half : f32
    %r = arith.mulf %scaled, %bias : f32
    attn.yield %r : f32
  }
  return %o2 : !q
}

func.func private @step3(%q: !q, %k: !kv, %v: !kv, %n: index) -> !dyn {
  %qd = tensor.cast %q : !q to !dyn
  %ed = tensor.empty(%n) : !dyn
  %o3 = attn.attention ins(%qd, %k, %v : !dyn, !kv, !kv) outs(%ed : !dyn)
      {partition = #attn.split_kv<splits = 2>,
       tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>} -> !dyn
  return %o3 : !dyn
}

func.func private @seeded(%phase: f32, %init: tensor<2x?x40x16xf32>) -> tensor<2x?x40x16xf32> {
  %t = linalg.generic {indexing_maps = [#all4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%init : tensor<2x?x40x16xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i0, %i1 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i3 : index
    %d = arith.addi %c, %i2 : index
    %x = arith.index_cast %d : index to i64
    %f = arith.sitofp %x : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<2x?x40x16xf32>
  return %t : tensor<2x?x40x16xf32>
}

// max |a - b| + (accumulated), and the sum of |a|.
func.func private @compare4(%a: !q, %b: !q, %acc: tensor<f32>, %sum: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %r:2 = linalg.generic {indexing_maps = [#all4, #all4, #none4, #none4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : !q, !q) outs(%acc, %sum : tensor<f32>, tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32, %s: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %mm = arith.maximumf %ad, %m : f32
    %ax = math.absf %x : f32
    %ss = arith.addf %ax, %s : f32
    linalg.yield %mm, %ss : f32, f32
  } -> (tensor<f32>, tensor<f32>)
  return %r#0, %r#1 : tensor<f32>, tensor<f32>
}

func.func private @compare3(%a: !lse, %b: !lse, %acc: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#all3, #all3, #none3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%a, %b : !lse, !lse) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %mm = arith.maximumf %ad, %m : f32
    linalg.yield %mm : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %bias = arith.constant 1.5 : f32
  %four = arith.constant 4 : index
  %two = arith.constant 2 : index
  %n = arith.constant 40 : index
  %eq = tensor.empty(%four) : tensor<2x?x40x16xf32>
  %ekv = tensor.empty(%two) : tensor<2x?x40x16xf32>
  %qd = call @seeded(%c1, %eq) : (f32, tensor<2x?x40x16xf32>) -> tensor<2x?x40x16xf32>
  %kd = call @seeded(%c2, %ekv) : (f32, tensor<2x?x40x16xf32>) -> tensor<2x?x40x16xf32>
  %vd = call @seeded(%c3, %ekv) : (f32, tensor<2x?x40x16xf32>) -> tensor<2x?x40x16xf32>
  %q = tensor.cast %qd : tensor<2x?x40x16xf32> to !q
  %k = tensor.cast %kd : tensor<2x?x40x16xf32> to !kv
  %v = tensor.cast %vd : tensor<2x?x40x16xf32> to !kv

  %o2, %lse1, %o3d = call @layer(%q, %k, %v, %bias, %n) : (!q, !kv, !kv, f32, index) -> (!q, !lse, !dyn)
  %r1:2 = call @step1(%q, %k, %v) : (!q, !kv, !kv) -> (!q, !lse)
  %r2 = call @step2(%r1#0, %k, %v, %bias) : (!q, !kv, !kv, f32) -> !q
  %r3d = call @step3(%q, %k, %v, %n) : (!q, !kv, !kv, index) -> !dyn
  %o3 = tensor.cast %o3d : !dyn to !q
  %r3 = tensor.cast %r3d : !dyn to !q

  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %d2, %s2 = call @compare4(%o2, %r2, %acc0, %acc0) : (!q, !q, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %d3, %s3 = call @compare4(%o3, %r3, %d2, %s2) : (!q, !q, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %d1 = call @compare3(%lse1, %r1#1, %d3) : (!lse, !lse, tensor<f32>) -> tensor<f32>
  %max = tensor.extract %d1[] : tensor<f32>
  %sum = tensor.extract %s3[] : tensor<f32>
  %tol = arith.constant 1.0e-6 : f32
  %ok = arith.cmpf olt, %max, %tol : f32
  vector.print str "agree: "
  vector.print %ok : i1
  %nonzero = arith.cmpf ogt, %sum, %c1 : f32
  vector.print str "nonzero: "
  vector.print %nonzero : i1
  return
}
