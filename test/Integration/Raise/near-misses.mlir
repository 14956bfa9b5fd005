// Forms real producers emit that look like attention and are not
// softmax(scale * Q K^T + mask) V (docs/raising-forms.md): left alone, with
// a remark naming the step and the op the match stopped at, as they are,
// after canonicalize and cse, and after linalg-fuse-elementwise-ops.
// @tensor_scale (S5): the scores multiplied by a full-size tensor argument,
// not a constant. @softmax_over_queries (X17): the softmax over axis 1.
// @extra_exp (X18): an exponential of the scores before the softmax.
// @safe_softmax (X15): rows whose scores are all -inf give 0, not NaN.
// @head_mask (C11): P multiplied by a per-head vector that is not constant.
// @mask_from_scores: a term added to the scores computed from them (after
// fusion, in the same body). @probabilities_transposed: P^T V, the second
// product reading P with the keys as rows: read transposed, P is not a
// softmax over the keys. @transposed_softmax_over_queries: H6's
// V^T P^T with the softmax over the queries, reported for the reading in
// which P is the softmax. @group_outside_heads: JAX's grouped-query form
// with K read per group of query heads instead of per key/value head.
// RUN: attn-opt %s --attn-raise-attention=remarks=true -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention=remarks=true -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention=remarks=true -o /dev/null 2>&1 | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the scores are scaled by something else than a positive constant (the match stopped at linalg.generic on line 53)
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the softmax does not divide by a row sum (the match stopped at linalg.generic on line 114)
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the scores are not a matrix product (or are modified in a way attn.attention does not express) (the match stopped at linalg.generic on line 132)
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the left operand of the second product is not a softmax (the match stopped at linalg.generic on line 208)
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the left operand of the second product is not a softmax (the match stopped at linalg.generic on line 246)
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: a term added to the scores is computed from them (the match stopped at linalg.batch_matmul on line 264)
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the softmax does not divide by a row sum (the match stopped at linalg.generic on line {{331|338}})
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: the softmax does not divide by a row sum (the match stopped at linalg.generic on line {{373|380}})
// CHECK-NOT: remark: raised
// CHECK: remark: not raised to attn.attention: a product whose right operand is not [.., k, n] in some order (the match stopped at linalg.generic on line 414)
// CHECK-NOT: remark: raised
// IR-NOT: attn.attention

#id = affine_map<(b, m, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m)>
#col = affine_map<(b, m, n) -> (b, n)>
#head = affine_map<(b, m, n) -> (b)>

func.func @tensor_scale(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>, %c: tensor<2x8x8xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %c : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
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

// The maximum, the sum and the division run over the queries (axis 1).
func.func @softmax_over_queries(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sm = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction", "parallel"]} ins(%ex : tensor<2x8x8xf32>) outs(%sm0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// softmax(exp(S)) V.
func.func @extra_exp(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
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

// PyTorch's _safe_softmax: where(all scores of the row are -inf, 0, P).
func.func @safe_softmax(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>, %mask: tensor<2x8x8xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %true = arith.constant true
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %b0 = tensor.empty() : tensor<2x8xi1>
  %false = arith.constant false
  %any0 = linalg.fill ins(%false : i1) outs(%b0 : tensor<2x8xi1>) -> tensor<2x8xi1>
  %any = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%any0 : tensor<2x8xi1>) {
  ^bb0(%in: f32, %out: i1):
    %c = arith.cmpf one, %in, %ninf : f32
    %r = arith.ori %c, %out : i1
    linalg.yield %r : i1
  } -> tensor<2x8xi1>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
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
  %p = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm, %any : tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8xi1>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %seen: i1, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    %r = arith.select %seen, %d, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// P scaled per head (Flax's head_mask) by a vector the caller passes.
func.func @head_mask(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>, %w: tensor<2xf32>) -> tensor<2x8x4xf32> {
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
  %p = linalg.generic {indexing_maps = [#id, #row, #head, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm, %w : tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %h: f32, %out: f32):
    %d = arith.divf %in, %in_1 : f32
    %r = arith.mulf %d, %h : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// A "mask" computed from the scores themselves (S + relu(S) as a mask).
func.func @mask_from_scores(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %m : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
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

// P^T V: the second product reads the probabilities with keys as rows.
func.func @probabilities_transposed(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
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
  %o = linalg.generic {indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// V^T P^T (H6's order) with the softmax over the queries.
func.func @transposed_softmax_over_queries(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sm = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction", "parallel"]} ins(%ex : tensor<2x8x8xf32>) outs(%sm0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x4x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, e, s, k) -> (b, k, e)>, affine_map<(b, e, s, k) -> (b, s, k)>, affine_map<(b, e, s, k) -> (b, e, s)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%v, %p : tensor<2x8x4xf32>, tensor<2x8x8xf32>) outs(%oz : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// JAX's grouped-query form (G3) with K read per group instead of per
// key/value head: query head (hkv, g) would read key head g, which
// attn.attention's h / G mapping does not express.
#gid5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#kByGroup = affine_map<(b, h, t, s, g, d) -> (b, t, g, d)>
#q = affine_map<(b, h, t, s, g, d) -> (b, s, h, g, d)>
#scores = affine_map<(b, h, t, s, g, d) -> (b, h, t, s, g)>
#v = affine_map<(b, h, e, g, s, t) -> (b, t, h, e)>
#p = affine_map<(b, h, e, g, s, t) -> (b, h, g, s, t)>
#ot = affine_map<(b, h, e, g, s, t) -> (b, h, e, g, s)>

func.func private @group_outside_heads(%q: tensor<1x4x4x8xf32>, %k: tensor<1x6x2x8xf32>, %v: tensor<1x6x2x4xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant dense<0.353553385> : tensor<f32>
  %q5 = tensor.expand_shape %q [[0], [1], [2, 3], [4]] output_shape [1, 4, 2, 2, 8] : tensor<1x4x4x8xf32> into tensor<1x4x2x2x8xf32>
  %qe = tensor.empty() : tensor<1x4x2x2x8xf32>
  %sb = linalg.broadcast ins(%scale : tensor<f32>) outs(%qe : tensor<1x4x2x2x8xf32>) dimensions = [0, 1, 2, 3, 4]
  %qs = linalg.generic {indexing_maps = [#gid5, #gid5, #gid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%q5, %sb : tensor<1x4x2x2x8xf32>, tensor<1x4x2x2x8xf32>) outs(%qe : tensor<1x4x2x2x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.mulf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2x8xf32>
  %se = tensor.empty() : tensor<1x2x6x4x2xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x6x4x2xf32>) -> tensor<1x2x6x4x2xf32>
  %s = linalg.generic {indexing_maps = [#kByGroup, #q, #scores], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k, %qs : tensor<1x6x2x8xf32>, tensor<1x4x2x2x8xf32>) outs(%sz : tensor<1x2x6x4x2xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x6x4x2xf32>
  %pe = tensor.empty() : tensor<1x2x2x4x6xf32>
  %x = linalg.transpose ins(%s : tensor<1x2x6x4x2xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) permutation = [0, 1, 4, 3, 2]
  %re = tensor.empty() : tensor<1x2x2x4xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %mx = linalg.reduce ins(%x : tensor<1x2x2x4x6xf32>) outs(%mx0 : tensor<1x2x2x4xf32>) dimensions = [4]
    (%in: f32, %init: f32) {
      %r = arith.maximumf %in, %init : f32
      linalg.yield %r : f32
    }
  %mxb = linalg.broadcast ins(%mx : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) dimensions = [4]
  %d = linalg.generic {indexing_maps = [#gid5, #gid5, #gid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %mxb : tensor<1x2x2x4x6xf32>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %r = arith.subf %in, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x6xf32>
  %ex = linalg.generic {indexing_maps = [#gid5, #gid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%d : tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x6xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %sm = linalg.reduce ins(%ex : tensor<1x2x2x4x6xf32>) outs(%sm0 : tensor<1x2x2x4xf32>) dimensions = [4]
    (%in: f32, %init: f32) {
      %r = arith.addf %in, %init : f32
      linalg.yield %r : f32
    }
  %smb = linalg.broadcast ins(%sm : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) dimensions = [4]
  %p = linalg.generic {indexing_maps = [#gid5, #gid5, #gid5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ex, %smb : tensor<1x2x2x4x6xf32>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %r = arith.divf %in, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x6xf32>
  %ote = tensor.empty() : tensor<1x2x4x2x4xf32>
  %otz = linalg.fill ins(%zero : f32) outs(%ote : tensor<1x2x4x2x4xf32>) -> tensor<1x2x4x2x4xf32>
  %ot = linalg.generic {indexing_maps = [#v, #p, #ot], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v, %p : tensor<1x6x2x4xf32>, tensor<1x2x2x4x6xf32>) outs(%otz : tensor<1x2x4x2x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x4x2x4xf32>
  %oe = tensor.empty() : tensor<1x4x2x2x4xf32>
  %o5 = linalg.transpose ins(%ot : tensor<1x2x4x2x4xf32>) outs(%oe : tensor<1x4x2x2x4xf32>) permutation = [0, 4, 1, 3, 2]
  %o = tensor.collapse_shape %o5 [[0], [1], [2, 3], [4]] : tensor<1x4x2x2x4xf32> into tensor<1x4x4x4xf32>
  return %o : tensor<1x4x4x4xf32>
}
