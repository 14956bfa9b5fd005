// One Lean attention compiled for run-time lengths (batch, Sq and Sk
// dynamic; 5 CTAs and 16 x 16 tiles fixed) runs at three sets of lengths
// and must agree with the attention without a partition on the same inputs:
// a causal square prefill, a speculative-decoding step (Sq = 3) over 57 keys
// (a tail block), causal Sq = 50 > Sk = 20, whose first query blocks see
// no key, and a prefill without a mask (Sq = 40, Sk = 57: 3 query blocks of
// 4 key blocks each, whose LeanTiles are located by a division instead of
// a scan, and whose CTAs' ranges cross query blocks and heads). The LeanTiles, the even split over the CTAs and the slot count
// are computed from the lengths at each call (attn-partition-kv,
// WorkAssignment.h); the GPU kernel counts them the same way.
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// CHECK-COUNT-4: agree: 1
// CHECK-NOT: agree: 0

#all4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
#none4 = affine_map<(b, h, m, n) -> ()>

!q = tensor<?x4x?x16xf32>
!kv = tensor<?x2x?x16xf32>

func.func private @lean_causal(%q: !q, %k: !kv, %v: !kv) -> !q {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : !q
  %s = tensor.dim %q, %c2 : !q
  %e = tensor.empty(%b, %s) : !q
  %o = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%e : !q)
      {causal, partition = #attn.lean<ctas = 5>,
       tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>} -> !q
  return %o : !q
}

func.func private @reference_causal(%q: !q, %k: !kv, %v: !kv) -> !q {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : !q
  %s = tensor.dim %q, %c2 : !q
  %e = tensor.empty(%b, %s) : !q
  %o = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%e : !q) {causal} -> !q
  return %o : !q
}

func.func private @lean(%q: !q, %k: !kv, %v: !kv) -> !q {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : !q
  %s = tensor.dim %q, %c2 : !q
  %e = tensor.empty(%b, %s) : !q
  %o = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%e : !q)
      {partition = #attn.lean<ctas = 5>,
       tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>} -> !q
  return %o : !q
}

func.func private @reference(%q: !q, %k: !kv, %v: !kv) -> !q {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : !q
  %s = tensor.dim %q, %c2 : !q
  %e = tensor.empty(%b, %s) : !q
  %o = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%e : !q) -> !q
  return %o : !q
}

// Deterministic values in [-1, 1] of the given shape.
func.func private @seeded(%phase: f32, %init: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %t = linalg.generic {indexing_maps = [#all4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%init : tensor<?x?x?x16xf32>) {
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
  } -> tensor<?x?x?x16xf32>
  return %t : tensor<?x?x?x16xf32>
}

func.func private @inputs(%b: index, %sq: index, %sk: index) -> (!q, !kv, !kv) {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %four = arith.constant 4 : index
  %two = arith.constant 2 : index
  %eq = tensor.empty(%b, %four, %sq) : tensor<?x?x?x16xf32>
  %ekv = tensor.empty(%b, %two, %sk) : tensor<?x?x?x16xf32>
  %qd = call @seeded(%c1, %eq) : (f32, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %kd = call @seeded(%c2, %ekv) : (f32, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %vd = call @seeded(%c3, %ekv) : (f32, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %q = tensor.cast %qd : tensor<?x?x?x16xf32> to !q
  %k = tensor.cast %kd : tensor<?x?x?x16xf32> to !kv
  %v = tensor.cast %vd : tensor<?x?x?x16xf32> to !kv
  return %q, %k, %v : !q, !kv, !kv
}

// Prints whether max |a - b| < 1e-5.
func.func private @agree(%a: !q, %b: !q) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#all4, #all4, #none4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : !q, !q) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %mm = arith.maximumf %ad, %m : f32
    linalg.yield %mm : f32
  } -> tensor<f32>
  %max = tensor.extract %r[] : tensor<f32>
  %tol = arith.constant 1.0e-5 : f32
  %ok = arith.cmpf olt, %max, %tol : f32
  vector.print str "agree: "
  vector.print %ok : i1
  return
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c20 = arith.constant 20 : index
  %c40 = arith.constant 40 : index
  %c50 = arith.constant 50 : index
  %c57 = arith.constant 57 : index

  %q1, %k1, %v1 = call @inputs(%c2, %c40, %c40) : (index, index, index) -> (!q, !kv, !kv)
  %l1 = call @lean_causal(%q1, %k1, %v1) : (!q, !kv, !kv) -> !q
  %r1 = call @reference_causal(%q1, %k1, %v1) : (!q, !kv, !kv) -> !q
  call @agree(%l1, %r1) : (!q, !q) -> ()

  %q2, %k2, %v2 = call @inputs(%c1, %c3, %c57) : (index, index, index) -> (!q, !kv, !kv)
  %l2 = call @lean(%q2, %k2, %v2) : (!q, !kv, !kv) -> !q
  %r2 = call @reference(%q2, %k2, %v2) : (!q, !kv, !kv) -> !q
  call @agree(%l2, %r2) : (!q, !q) -> ()

  %q3, %k3, %v3 = call @inputs(%c2, %c50, %c20) : (index, index, index) -> (!q, !kv, !kv)
  %l3 = call @lean_causal(%q3, %k3, %v3) : (!q, !kv, !kv) -> !q
  %r3 = call @reference_causal(%q3, %k3, %v3) : (!q, !kv, !kv) -> !q
  call @agree(%l3, %r3) : (!q, !q) -> ()

  %q4, %k4, %v4 = call @inputs(%c2, %c40, %c57) : (index, index, index) -> (!q, !kv, !kv)
  %l4 = call @lean(%q4, %k4, %v4) : (!q, !kv, !kv) -> !q
  %r4 = call @reference(%q4, %k4, %v4) : (!q, !kv, !kv) -> !q
  call @agree(%l4, %r4) : (!q, !q) -> ()
  return
}
