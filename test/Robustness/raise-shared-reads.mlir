// attn-raise-attention reads element-wise ops as expression trees. A value
// read several times is read once (the reads of a match are memoized), so
// ops that each read the previous result twice do not double the work at
// each step: here Q goes through 30 such generics (2^30 reads unmemoized),
// and one generic's body squares a value 30 times. The pass finishes (under
// the timeout) and raises the attention.
// RUN: timeout 60 attn-opt %s --attn-raise-attention=remarks=true -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: raised to attn.attention (scale 1.000000e+00)
// CHECK: remark: raised to attn.attention (scale 1.000000e+00)

#id = affine_map<(b, m, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m)>

func.func @chain_of_ops(%q0: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %eq = tensor.empty() : tensor<2x8x4xf32>
  %q1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q0, %q0 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q1, %q1 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q2, %q2 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q3, %q3 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q4, %q4 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q5, %q5 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q7 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q6, %q6 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q8 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q7, %q7 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q9 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q8, %q8 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q10 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q9, %q9 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q11 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q10, %q10 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q12 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q11, %q11 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q13 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q12, %q12 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q14 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q13, %q13 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q15 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q14, %q14 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q16 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q15, %q15 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q17 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q16, %q16 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q18 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q17, %q17 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q19 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q18, %q18 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q20 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q19, %q19 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q21 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q20, %q20 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q22 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q21, %q21 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q23 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q22, %q22 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q24 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q23, %q23 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q25 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q24, %q24 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q26 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q25, %q25 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q27 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q26, %q26 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q28 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q27, %q27 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q29 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q28, %q28 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %q30 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q29, %q29 : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x4xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q30, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x8x8xf32>) outs(%sm0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

func.func @chain_in_one_body(%q0: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %eq = tensor.empty() : tensor<2x8x4xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q0 : tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%b0: f32, %out: f32):
    %b1 = arith.mulf %b0, %b0 : f32
    %b2 = arith.mulf %b1, %b1 : f32
    %b3 = arith.mulf %b2, %b2 : f32
    %b4 = arith.mulf %b3, %b3 : f32
    %b5 = arith.mulf %b4, %b4 : f32
    %b6 = arith.mulf %b5, %b5 : f32
    %b7 = arith.mulf %b6, %b6 : f32
    %b8 = arith.mulf %b7, %b7 : f32
    %b9 = arith.mulf %b8, %b8 : f32
    %b10 = arith.mulf %b9, %b9 : f32
    %b11 = arith.mulf %b10, %b10 : f32
    %b12 = arith.mulf %b11, %b11 : f32
    %b13 = arith.mulf %b12, %b12 : f32
    %b14 = arith.mulf %b13, %b13 : f32
    %b15 = arith.mulf %b14, %b14 : f32
    %b16 = arith.mulf %b15, %b15 : f32
    %b17 = arith.mulf %b16, %b16 : f32
    %b18 = arith.mulf %b17, %b17 : f32
    %b19 = arith.mulf %b18, %b18 : f32
    %b20 = arith.mulf %b19, %b19 : f32
    %b21 = arith.mulf %b20, %b20 : f32
    %b22 = arith.mulf %b21, %b21 : f32
    %b23 = arith.mulf %b22, %b22 : f32
    %b24 = arith.mulf %b23, %b23 : f32
    %b25 = arith.mulf %b24, %b24 : f32
    %b26 = arith.mulf %b25, %b25 : f32
    %b27 = arith.mulf %b26, %b26 : f32
    %b28 = arith.mulf %b27, %b27 : f32
    %b29 = arith.mulf %b28, %b28 : f32
    %b30 = arith.mulf %b29, %b29 : f32
    linalg.yield %b30 : f32
  } -> tensor<2x8x4xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x8x8xf32>) outs(%sm0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}
