// RUN: attn-opt %s --attn-raise-attention=remarks=true --split-input-file --verify-diagnostics | FileCheck %s

// The forms front ends emit (written after what torch-mlir's linalg lowering,
// TOSA-to-linalg and hand-written linalg produce; see the pass description)
// are raised; near misses are left alone with a remark saying why.

// Decomposed softmax (max, exp of the difference, sum, divide) between two
// linalg.generic products, scale as a division by a constant fused with an
// additive [Sq, Sk] mask: one attn.attention, the mask as [1, 1, Sq, Sk].
// CHECK-LABEL: func.func @decomposed(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[K:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x4x16x8xf32>, %[[MASK:[a-z0-9]+]]: tensor<16x16xf32>)
// CHECK-NEXT: %[[M4:.*]] = tensor.expand_shape %[[MASK]] {{\[\[}}0, 1, 2], [3]] output_shape [1, 1, 16, 16]
// CHECK-NEXT: %[[INIT:.*]] = tensor.empty() : tensor<2x4x16x8xf32>
// CHECK-NEXT: %[[O:.*]] = attn.attention ins(%[[Q]], %[[K]], %[[V]] : {{.*}}) mask(%[[M4]] : tensor<1x1x16x16xf32>) outs(%[[INIT]] : tensor<2x4x16x8xf32>) {scale = 0.353553385 : f32}
// CHECK-NEXT: return %[[O]]
#q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#kt = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#v = affine_map<(b, h, m, n, k) -> (b, h, k, n)>
#o = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask = affine_map<(b, h, m, n) -> (m, n)>
func.func @decomposed(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 2.828427 : f32
  %e0 = tensor.empty() : tensor<2x4x16x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#q, #kt, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%z0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x16x16xf32>, tensor<16x16xf32>) outs(%e0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %d = arith.divf %a, %c : f32
    %r = arith.addf %d, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %r0 = tensor.empty() : tensor<2x4x16xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x16x16xf32>) outs(%mx0 : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%e0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%sm0 : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sm : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%e0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %oe = tensor.empty() : tensor<2x4x16x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  // expected-remark @+1 {{raised to attn.attention (scale 3.535534e-01, additive mask)}}
  %o = linalg.generic {indexing_maps = [#q, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) outs(%oz : tensor<2x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Named ops on [B*H, S, D] (heads folded into the batch): K transposed by
// linalg.transpose, linalg.batch_matmul, the scale as a multiplication by a
// splat constant tensor, linalg.softmax: attn.attention on [1, B*H, S, D]
// views, its result collapsed back.
// CHECK-LABEL: func.func @named(
// CHECK: %[[Q4:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2], [3]] output_shape [1, 8, 32, 16]
// CHECK: %[[K4:.*]] = tensor.expand_shape %arg1
// CHECK: %[[V4:.*]] = tensor.expand_shape %arg2
// CHECK: %[[O4:.*]] = attn.attention ins(%[[Q4]], %[[K4]], %[[V4]] : tensor<1x8x32x16xf32>, tensor<1x8x32x16xf32>, tensor<1x8x32x16xf32>) outs(%{{.*}} : tensor<1x8x32x16xf32>) {scale = 2.500000e-01 : f32}
// CHECK: %[[O:.*]] = tensor.collapse_shape %[[O4]] {{\[\[}}0, 1], [2], [3]] : tensor<1x8x32x16xf32> into tensor<8x32x16xf32>
// CHECK: return %[[O]]
// CHECK-NOT: linalg.
func.func @named(%q: tensor<8x32x16xf32>, %k: tensor<8x32x16xf32>, %v: tensor<8x32x16xf32>) -> tensor<8x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %kt0 = tensor.empty() : tensor<8x16x32xf32>
  %kt = linalg.transpose ins(%k : tensor<8x32x16xf32>) outs(%kt0 : tensor<8x16x32xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<8x32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x32x16xf32>, tensor<8x16x32xf32>) outs(%sz : tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %quarter = arith.constant dense<0.25> : tensor<8x32x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %quarter : tensor<8x32x32xf32>, tensor<8x32x32xf32>) outs(%s0 : tensor<8x32x32xf32>) {
  ^bb0(%a: f32, %c: f32, %out: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<8x32x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<8x32x32xf32>) outs(%s0 : tensor<8x32x32xf32>) -> tensor<8x32x32xf32>
  %o0 = tensor.empty() : tensor<8x32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x32x16xf32>) -> tensor<8x32x16xf32>
  // expected-remark @+1 {{raised to attn.attention (scale 2.500000e-01)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x32x32xf32>, tensor<8x32x16xf32>) outs(%oz : tensor<8x32x16xf32>) -> tensor<8x32x16xf32>
  return %o : tensor<8x32x16xf32>
}

// -----

// 2-D linalg.matmul on f16 with the softmax in f32 (extf before, truncf
// after) and the row statistics as linalg.reduce; no scale anywhere: the
// attention gets scale 1, not 1/sqrt(D). K^T is given: a transpose of it is
// inserted.
// CHECK-LABEL: func.func @mixed_precision(
// CHECK: %[[K:.*]] = linalg.transpose ins(%arg1 : tensor<64x48xf16>) outs(%{{.*}} : tensor<48x64xf16>) permutation = [1, 0]
// CHECK: attn.attention ins({{.*}} : tensor<1x1x40x64xf16>, tensor<1x1x48x64xf16>, tensor<1x1x48x32xf16>) outs({{.*}} : tensor<1x1x40x32xf16>) {scale = 1.000000e+00 : f32}
func.func @mixed_precision(%q: tensor<40x64xf16>, %kt: tensor<64x48xf16>, %v: tensor<48x32xf16>) -> tensor<40x32xf16> {
  %zero = arith.constant 0.0 : f16
  %zf = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s0 = tensor.empty() : tensor<40x48xf16>
  %sz = linalg.fill ins(%zero : f16) outs(%s0 : tensor<40x48xf16>) -> tensor<40x48xf16>
  %s = linalg.matmul ins(%q, %kt : tensor<40x64xf16>, tensor<64x48xf16>) outs(%sz : tensor<40x48xf16>) -> tensor<40x48xf16>
  %f0 = tensor.empty() : tensor<40x48xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<40x48xf16>) outs(%f0 : tensor<40x48xf32>) {
  ^bb0(%a: f16, %out: f32):
    %r = arith.extf %a : f16 to f32
    linalg.yield %r : f32
  } -> tensor<40x48xf32>
  %r0 = tensor.empty() : tensor<40xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<40xf32>) -> tensor<40xf32>
  %mx = linalg.reduce ins(%x : tensor<40x48xf32>) outs(%mx0 : tensor<40xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    }
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<40x48xf32>, tensor<40xf32>) outs(%f0 : tensor<40x48xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<40x48xf32>
  %sm0 = linalg.fill ins(%zf : f32) outs(%r0 : tensor<40xf32>) -> tensor<40xf32>
  %sm = linalg.reduce ins(%ex : tensor<40x48xf32>) outs(%sm0 : tensor<40xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sm : tensor<40x48xf32>, tensor<40xf32>) outs(%s0 : tensor<40x48xf16>) {
  ^bb0(%a: f32, %b: f32, %out: f16):
    %d = arith.divf %a, %b : f32
    %r = arith.truncf %d : f32 to f16
    linalg.yield %r : f16
  } -> tensor<40x48xf16>
  %o0 = tensor.empty() : tensor<40x32xf16>
  %oz = linalg.fill ins(%zero : f16) outs(%o0 : tensor<40x32xf16>) -> tensor<40x32xf16>
  // expected-remark @+1 {{raised to attn.attention (scale 1.000000e+00)}}
  %o = linalg.matmul ins(%p, %v : tensor<40x48xf16>, tensor<48x32xf16>) outs(%oz : tensor<40x32xf16>) -> tensor<40x32xf16>
  return %o : tensor<40x32xf16>
}

// -----

// Softmax over the wrong axis: left alone.
// CHECK-LABEL: func.func @softmax_over_queries(
// CHECK-NOT: attn.attention
func.func @softmax_over_queries(%q: tensor<4x32x16xf32>, %kt: tensor<4x16x32xf32>, %v: tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4x32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x32x16xf32>, tensor<4x16x32xf32>) outs(%sz : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %p = linalg.softmax dimension(1) ins(%s : tensor<4x32x32xf32>) outs(%s0 : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %o0 = tensor.empty() : tensor<4x32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  // expected-remark @+1 {{not raised to attn.attention: the softmax is not over the keys (the last dimension)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x32x32xf32>, tensor<4x32x16xf32>) outs(%oz : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  return %o : tensor<4x32x16xf32>
}

// -----

// The scale applied after the mask (c * (S + mask)) is not
// softmax(c * S + mask): left alone.
// CHECK-LABEL: func.func @scaled_mask(
// CHECK-NOT: attn.attention
func.func @scaled_mask(%q: tensor<4x32x16xf32>, %kt: tensor<4x16x32xf32>, %v: tensor<4x32x16xf32>, %m: tensor<4x32x32xf32>) -> tensor<4x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.25 : f32
  %s0 = tensor.empty() : tensor<4x32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x32x16xf32>, tensor<4x16x32xf32>) outs(%sz : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<4x32x32xf32>, tensor<4x32x32xf32>) outs(%s0 : tensor<4x32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %t = arith.addf %a, %b : f32
    %r = arith.mulf %t, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x32x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x32x32xf32>) outs(%s0 : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %o0 = tensor.empty() : tensor<4x32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are not a matrix product (or are modified in a way attn.attention does not express)}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x32x32xf32>, tensor<4x32x16xf32>) outs(%oz : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  return %o : tensor<4x32x16xf32>
}

// -----

// A scale that is not a constant, and a row maximum of other values than
// the exponential reads: left alone.
// CHECK-LABEL: func.func @runtime_scale(
// CHECK-NOT: attn.attention
func.func @runtime_scale(%q: tensor<4x32x16xf32>, %kt: tensor<4x16x32xf32>, %v: tensor<4x32x16xf32>, %c: f32) -> tensor<4x32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4x32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x32x16xf32>, tensor<4x16x32xf32>) outs(%sz : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<4x32x32xf32>) outs(%s0 : tensor<4x32x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = arith.mulf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x32x32xf32>
  %p = linalg.softmax dimension(2) ins(%x : tensor<4x32x32xf32>) outs(%s0 : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %o0 = tensor.empty() : tensor<4x32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  // expected-remark @+1 {{not raised to attn.attention: the scores are scaled by something else than a positive constant}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x32x32xf32>, tensor<4x32x16xf32>) outs(%oz : tensor<4x32x16xf32>) -> tensor<4x32x16xf32>
  return %o : tensor<4x32x16xf32>
}

// CHECK-LABEL: func.func @other_maximum(
// CHECK-NOT: attn.attention
func.func @other_maximum(%q: tensor<32x16xf32>, %kt: tensor<16x32xf32>, %v: tensor<32x16xf32>, %other: tensor<32x32xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s0 = tensor.empty() : tensor<32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<32x16xf32>, tensor<16x32xf32>) outs(%sz : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r0 = tensor.empty() : tensor<32xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<32xf32>) -> tensor<32xf32>
  %mx = linalg.reduce ins(%other : tensor<32x32xf32>) outs(%mx0 : tensor<32xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    }
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mx : tensor<32x32xf32>, tensor<32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<32xf32>) -> tensor<32xf32>
  %sm = linalg.reduce ins(%ex : tensor<32x32xf32>) outs(%sm0 : tensor<32xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sm : tensor<32x32xf32>, tensor<32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %o0 = tensor.empty() : tensor<32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{not raised to attn.attention: the row maximum is of something else than the scores}}
  %o = linalg.matmul ins(%p, %v : tensor<32x32xf32>, tensor<32x16xf32>) outs(%oz : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %o : tensor<32x16xf32>
}

// -----

// Exponentials without normalisation: not a softmax, left alone (no remark:
// nothing divides).
// CHECK-LABEL: func.func @unnormalised(
// CHECK-NOT: attn.attention
func.func @unnormalised(%q: tensor<32x16xf32>, %kt: tensor<16x32xf32>, %v: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<32x16xf32>, tensor<16x32xf32>) outs(%sz : tensor<32x32xf32>) -> tensor<32x32xf32>
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<32x32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %o0 = tensor.empty() : tensor<32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  %o = linalg.matmul ins(%ex, %v : tensor<32x32xf32>, tensor<32x16xf32>) outs(%oz : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %o : tensor<32x16xf32>
}

// -----

// Key/value heads repeated with the group dimension in front of the heads
// (head h holds key/value head h mod 2, not h / 2) are not attn.attention's
// grouping: the attention is raised on the repeated heads as they are.
// CHECK-LABEL: func.func @interleaved_repeat(
// CHECK: %[[KR:.+]] = tensor.collapse_shape
// CHECK: %[[VR:.+]] = tensor.collapse_shape
// CHECK: attn.attention ins(%{{.+}}, %[[KR]], %[[VR]] : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
#q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#kt = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#v = affine_map<(b, h, m, n, k) -> (b, h, k, n)>
#o = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask = affine_map<(b, h, m, n) -> (m, n)>
func.func @interleaved_repeat(%q: tensor<2x4x16x8xf32>, %k0: tensor<2x2x16x8xf32>, %v0: tensor<2x2x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
  %kg0 = tensor.empty() : tensor<2x2x2x16x8xf32>
  %kg = linalg.broadcast ins(%k0 : tensor<2x2x16x8xf32>) outs(%kg0 : tensor<2x2x2x16x8xf32>) dimensions = [1]
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
  %vg = linalg.broadcast ins(%v0 : tensor<2x2x16x8xf32>) outs(%kg0 : tensor<2x2x2x16x8xf32>) dimensions = [1]
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c = arith.constant 2.828427 : f32
  %e0 = tensor.empty() : tensor<2x4x16x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#q, #kt, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%z0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #mask, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mask : tensor<2x4x16x16xf32>, tensor<16x16xf32>) outs(%e0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %m: f32, %out: f32):
    %d = arith.divf %a, %c : f32
    %r = arith.addf %d, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %r0 = tensor.empty() : tensor<2x4x16xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x16x16xf32>) outs(%mx0 : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %mx : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%e0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<2x4x16x16xf32>) outs(%sm0 : tensor<2x4x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sm : tensor<2x4x16x16xf32>, tensor<2x4x16xf32>) outs(%e0 : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %oe = tensor.empty() : tensor<2x4x16x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  // expected-remark @+1 {{raised to attn.attention (scale 3.535534e-01, additive mask)}}
  %o = linalg.generic {indexing_maps = [#q, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) outs(%oz : tensor<2x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// A maximum that also computes an argmax (torch-mlir's aten.max.dim) whose
// argmax is used: the generic is more than a row maximum, left alone, and
// the remark names the op the match stopped at.
// CHECK-LABEL: func.func @argmax_used(
// CHECK-NOT: attn.attention
func.func @argmax_used(%q: tensor<32x16xf32>, %kt: tensor<16x32xf32>, %v: tensor<32x16xf32>) -> (tensor<32x16xf32>, tensor<32xi64>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %izero = arith.constant 0 : i64
  %s0 = tensor.empty() : tensor<32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<32x16xf32>, tensor<16x32xf32>) outs(%sz : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r0 = tensor.empty() : tensor<32xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<32xf32>) -> tensor<32xf32>
  %i0 = tensor.empty() : tensor<32xi64>
  %ix0 = linalg.fill ins(%izero : i64) outs(%i0 : tensor<32xi64>) -> tensor<32xi64>
  %mx:2 = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<32x32xf32>) outs(%mx0, %ix0 : tensor<32xf32>, tensor<32xi64>) {
  ^bb0(%a: f32, %acc: f32, %idx: i64):
    %n = linalg.index 1 : index
    %ni = arith.index_cast %n : index to i64
    %m = arith.maximumf %a, %acc : f32
    %c = arith.cmpf ogt, %a, %acc : f32
    %sel = arith.select %c, %ni, %idx : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<32xf32>, tensor<32xi64>)
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mx#0 : tensor<32x32xf32>, tensor<32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<32xf32>) -> tensor<32xf32>
  %sm = linalg.reduce ins(%ex : tensor<32x32xf32>) outs(%sm0 : tensor<32xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sm : tensor<32x32xf32>, tensor<32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %o0 = tensor.empty() : tensor<32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{not raised to attn.attention: a reduction has another result that is used (the match stopped at linalg.generic on line 411)}}
  %o = linalg.matmul ins(%p, %v : tensor<32x32xf32>, tensor<32x16xf32>) outs(%oz : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %o, %mx#1 : tensor<32x16xf32>, tensor<32xi64>
}

// -----

// The row sum's reciprocal computed in the same generic as the product with
// the exponentials (what linalg-fuse-elementwise-ops makes of TOSA's
// reciprocal and mul): raised.
// CHECK-LABEL: func.func @fused_reciprocal(
// CHECK: attn.attention {{.*}} {scale = 1.000000e+00 : f32}
// CHECK-NOT: linalg.matmul
func.func @fused_reciprocal(%q: tensor<32x16xf32>, %kt: tensor<16x32xf32>, %v: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %s0 = tensor.empty() : tensor<32x32xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<32x32xf32>) -> tensor<32x32xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<32x16xf32>, tensor<16x32xf32>) outs(%sz : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r0 = tensor.empty() : tensor<32xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<32xf32>) -> tensor<32xf32>
  %mx = linalg.reduce ins(%s : tensor<32x32xf32>) outs(%mx0 : tensor<32xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.maximumf %a, %acc : f32
      linalg.yield %r : f32
    }
  %ex = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mx : tensor<32x32xf32>, tensor<32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<32xf32>) -> tensor<32xf32>
  %sm = linalg.reduce ins(%ex : tensor<32x32xf32>) outs(%sm0 : tensor<32xf32>) dimensions = [1]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %p = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m)>, affine_map<(m, n) -> (m, n)>], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sm : tensor<32x32xf32>, tensor<32xf32>) outs(%s0 : tensor<32x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %i = arith.divf %one, %b : f32
    %r = arith.mulf %a, %i : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %o0 = tensor.empty() : tensor<32x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<32x16xf32>) -> tensor<32x16xf32>
  // expected-remark @+1 {{raised to attn.attention (scale 1.000000e+00)}}
  %o = linalg.matmul ins(%p, %v : tensor<32x32xf32>, tensor<32x16xf32>) outs(%oz : tensor<32x16xf32>) -> tensor<32x16xf32>
  return %o : tensor<32x16xf32>
}
