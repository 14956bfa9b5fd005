// JAX's attention as StableHLO writes it (docs/raising-forms.md rows T6, H6,
// S7, seen in TensorRT-Incubator's llama-68m, BERT and GPT-2 exports),
// lowered to linalg the way stablehlo-legalize-to-linalg lowers each op:
// Q, K and V stay [B, S, H, D] (no head folding); the first product is a
// dot_general with B and H as batching dimensions (a generic reading Q and
// K through permuted maps), the second is written as V^T P^T (a generic
// whose result is O^T, [B, H, Dv, Sq]) followed by a transpose back to
// [B, Sq, H, Dv]; Q is divided by sqrt(D) before the product. @primitive
// uses the primitive ops (linalg.map, linalg.reduce, linalg.broadcast,
// linalg.transpose)
// and adds a [B, Sq, Sk] mask broadcast over the heads; @generic uses the
// default lowering's generics (reductions, broadcasts through a [.., 1]
// view, a copying transpose); @batch_matmul has the products as IREE's
// StableHLO input pipeline rewrites a dot_general before lowering it
// (operands transposed and folded into a linalg.batch_matmul, P read
// transposed by the second). Raised as it is, after canonicalize and cse,
// and after linalg-fuse-elementwise-ops, and runs to the same result raised
// and not (a position-weighted sum of O).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @primitive
// IR: attn.attention {{.*}} {scale = 0.353553{{[0-9]*}} : f32}
// IR-NOT: reduction
// IR-LABEL: func.func private @generic
// IR: attn.attention {{.*}} {scale = 0.353553{{[0-9]*}} : f32}
// IR-NOT: reduction
// IR-LABEL: func.func private @batch_matmul
// IR: attn.attention {{.*}} {scale = 0.353553{{[0-9]*}} : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @seeded
// CHECK: -25.146{{[0-9]*}}
// CHECK: {{-0.477(19|20)[0-9]*}}
// CHECK: {{-0.477(19|20)[0-9]*}}

#q = affine_map<(b, h, s, k, d) -> (b, s, h, d)>
#k = affine_map<(b, h, s, k, d) -> (b, k, h, d)>
#scores = affine_map<(b, h, s, k, d) -> (b, h, s, k)>
#v = affine_map<(b, h, e, s, k) -> (b, k, h, e)>
#p = affine_map<(b, h, e, s, k) -> (b, h, s, k)>
#ot = affine_map<(b, h, e, s, k) -> (b, h, e, s)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#rows1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
#toBSHD = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

func.func private @primitive(%q: tensor<1x6x2x8xf32>, %k: tensor<1x8x2x8xf32>, %v: tensor<1x8x2x4xf32>, %mask: tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %root = arith.constant dense<2.828427> : tensor<f32>
  %eq = tensor.empty() : tensor<1x6x2x8xf32>
  %rootb = linalg.broadcast ins(%root : tensor<f32>) outs(%eq : tensor<1x6x2x8xf32>) dimensions = [0, 1, 2, 3]
  %qs = linalg.map ins(%q, %rootb : tensor<1x6x2x8xf32>, tensor<1x6x2x8xf32>) outs(%eq : tensor<1x6x2x8xf32>)
    (%in: f32, %c: f32, %out: f32) {
      %r = arith.divf %in, %c : f32
      linalg.yield %r : f32
    }
  %se = tensor.empty() : tensor<1x2x6x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #scores], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qs, %k : tensor<1x6x2x8xf32>, tensor<1x8x2x8xf32>) outs(%sz : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x6x8xf32>
  %maskb = linalg.broadcast ins(%mask : tensor<1x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>) dimensions = [1]
  %x = linalg.map ins(%s, %maskb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %r = arith.addf %in, %in_0 : f32
      linalg.yield %r : f32
    }
  %re = tensor.empty() : tensor<1x2x6xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %mx = linalg.reduce ins(%x : tensor<1x2x6x8xf32>) outs(%mx0 : tensor<1x2x6xf32>) dimensions = [3]
    (%in: f32, %init: f32) {
      %r = arith.maximumf %in, %init : f32
      linalg.yield %r : f32
    }
  %mxb = linalg.broadcast ins(%mx : tensor<1x2x6xf32>) outs(%se : tensor<1x2x6x8xf32>) dimensions = [3]
  %d = linalg.map ins(%x, %mxb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %r = arith.subf %in, %in_0 : f32
      linalg.yield %r : f32
    }
  %ex = linalg.map ins(%d : tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>)
    (%in: f32, %out: f32) {
      %r = math.exp %in : f32
      linalg.yield %r : f32
    }
  %sm0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %sm = linalg.reduce ins(%ex : tensor<1x2x6x8xf32>) outs(%sm0 : tensor<1x2x6xf32>) dimensions = [3]
    (%in: f32, %init: f32) {
      %r = arith.addf %in, %init : f32
      linalg.yield %r : f32
    }
  %smb = linalg.broadcast ins(%sm : tensor<1x2x6xf32>) outs(%se : tensor<1x2x6x8xf32>) dimensions = [3]
  %p = linalg.map ins(%ex, %smb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %r = arith.divf %in, %in_0 : f32
      linalg.yield %r : f32
    }
  %ote = tensor.empty() : tensor<1x2x4x6xf32>
  %otz = linalg.fill ins(%zero : f32) outs(%ote : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %ot = linalg.generic {indexing_maps = [#v, #p, #ot], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v, %p : tensor<1x8x2x4xf32>, tensor<1x2x6x8xf32>) outs(%otz : tensor<1x2x4x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x4x6xf32>
  %oe = tensor.empty() : tensor<1x6x2x4xf32>
  %o = linalg.transpose ins(%ot : tensor<1x2x4x6xf32>) outs(%oe : tensor<1x6x2x4xf32>) permutation = [0, 3, 1, 2]
  return %o : tensor<1x6x2x4xf32>
}

func.func private @generic(%q: tensor<1x6x2x8xf32>, %k: tensor<1x8x2x8xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x6x2x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %root = arith.constant dense<2.828427> : tensor<f32>
  %eq = tensor.empty() : tensor<1x6x2x8xf32>
  %qs = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q, %root : tensor<1x6x2x8xf32>, tensor<f32>) outs(%eq : tensor<1x6x2x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.divf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x6x2x8xf32>
  %se = tensor.empty() : tensor<1x2x6x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #scores], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qs, %k : tensor<1x6x2x8xf32>, tensor<1x8x2x8xf32>) outs(%sz : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x6x8xf32>
  %re = tensor.empty() : tensor<1x2x6xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%s : tensor<1x2x6x8xf32>) outs(%mx0 : tensor<1x2x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6xf32>
  // broadcast_in_dim to [1, 2, 6, 1], reshape to [1, 2, 6], broadcast_in_dim
  // to the scores' shape.
  %mx1 = tensor.expand_shape %mx [[0], [1], [2, 3]] output_shape [1, 2, 6, 1] : tensor<1x2x6xf32> into tensor<1x2x6x1xf32>
  %mx2 = tensor.collapse_shape %mx1 [[0], [1], [2, 3]] : tensor<1x2x6x1xf32> into tensor<1x2x6xf32>
  %mxb = linalg.generic {indexing_maps = [#rows, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mx2 : tensor<1x2x6xf32>) outs(%se : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x6x8xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mxb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %r = arith.subf %in, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6x8xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%d : tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #rows], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x2x6x8xf32>) outs(%sm0 : tensor<1x2x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6xf32>
  %smb = linalg.generic {indexing_maps = [#rows, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm : tensor<1x2x6xf32>) outs(%se : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x6x8xf32>
  %p = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %smb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %r = arith.divf %in, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x6x8xf32>
  %ote = tensor.empty() : tensor<1x2x4x6xf32>
  %otz = linalg.fill ins(%zero : f32) outs(%ote : tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %ot = linalg.generic {indexing_maps = [#v, #p, #ot], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%v, %p : tensor<1x8x2x4xf32>, tensor<1x2x6x8xf32>) outs(%otz : tensor<1x2x4x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x4x6xf32>
  %oe = tensor.empty() : tensor<1x6x2x4xf32>
  %o = linalg.generic {indexing_maps = [#toBSHD, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ot : tensor<1x2x4x6xf32>) outs(%oe : tensor<1x6x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x6x2x4xf32>
  return %o : tensor<1x6x2x4xf32>
}

// The same attention after IREE's canonicalization of dot_general (before
// its linalg lowering): each product's operands transposed to [batch,
// free, contracting] and [batch, contracting, free], the batch folded,
// linalg.batch_matmul, the result unfolded; V^T P^T thus reads P
// transposed.
func.func private @batch_matmul(%q: tensor<1x6x2x8xf32>, %k: tensor<1x8x2x8xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x6x2x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %root = arith.constant dense<2.828427> : tensor<f32>
  %eq = tensor.empty() : tensor<1x6x2x8xf32>
  %qs = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q, %root : tensor<1x6x2x8xf32>, tensor<f32>) outs(%eq : tensor<1x6x2x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.divf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x6x2x8xf32>
  %qte = tensor.empty() : tensor<1x2x6x8xf32>
  %qt = linalg.transpose ins(%qs : tensor<1x6x2x8xf32>) outs(%qte : tensor<1x2x6x8xf32>) permutation = [0, 2, 1, 3]
  %qc = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<1x2x6x8xf32> into tensor<2x6x8xf32>
  %kte = tensor.empty() : tensor<1x2x8x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x8x2x8xf32>) outs(%kte : tensor<1x2x8x8xf32>) permutation = [0, 2, 3, 1]
  %kc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %s3e = tensor.empty() : tensor<2x6x8xf32>
  %s3z = linalg.fill ins(%zero : f32) outs(%s3e : tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %s3 = linalg.batch_matmul ins(%qc, %kc : tensor<2x6x8xf32>, tensor<2x8x8xf32>) outs(%s3z : tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  %s = tensor.expand_shape %s3 [[0, 1], [2], [3]] output_shape [1, 2, 6, 8] : tensor<2x6x8xf32> into tensor<1x2x6x8xf32>
  %se = tensor.empty() : tensor<1x2x6x8xf32>
  %re = tensor.empty() : tensor<1x2x6xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %mx = linalg.reduce ins(%s : tensor<1x2x6x8xf32>) outs(%mx0 : tensor<1x2x6xf32>) dimensions = [3]
    (%in: f32, %init: f32) {
      %r = arith.maximumf %in, %init : f32
      linalg.yield %r : f32
    }
  %mxb = linalg.broadcast ins(%mx : tensor<1x2x6xf32>) outs(%se : tensor<1x2x6x8xf32>) dimensions = [3]
  %ex = linalg.map ins(%s, %mxb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %d = arith.subf %in, %in_0 : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
    }
  %sm0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x6xf32>) -> tensor<1x2x6xf32>
  %sm = linalg.reduce ins(%ex : tensor<1x2x6x8xf32>) outs(%sm0 : tensor<1x2x6xf32>) dimensions = [3]
    (%in: f32, %init: f32) {
      %r = arith.addf %in, %init : f32
      linalg.yield %r : f32
    }
  %smb = linalg.broadcast ins(%sm : tensor<1x2x6xf32>) outs(%se : tensor<1x2x6x8xf32>) dimensions = [3]
  %p = linalg.map ins(%ex, %smb : tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs(%se : tensor<1x2x6x8xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %r = arith.divf %in, %in_0 : f32
      linalg.yield %r : f32
    }
  %vte = tensor.empty() : tensor<1x2x4x8xf32>
  %vt = linalg.transpose ins(%v : tensor<1x8x2x4xf32>) outs(%vte : tensor<1x2x4x8xf32>) permutation = [0, 2, 3, 1]
  %vc = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %pte = tensor.empty() : tensor<1x2x8x6xf32>
  %pt = linalg.transpose ins(%p : tensor<1x2x6x8xf32>) outs(%pte : tensor<1x2x8x6xf32>) permutation = [0, 1, 3, 2]
  %pc = tensor.collapse_shape %pt [[0, 1], [2], [3]] : tensor<1x2x8x6xf32> into tensor<2x8x6xf32>
  %ot3e = tensor.empty() : tensor<2x4x6xf32>
  %ot3z = linalg.fill ins(%zero : f32) outs(%ot3e : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %ot3 = linalg.batch_matmul ins(%vc, %pc : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%ot3z : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %ot = tensor.expand_shape %ot3 [[0, 1], [2], [3]] output_shape [1, 2, 4, 6] : tensor<2x4x6xf32> into tensor<1x2x4x6xf32>
  %oe = tensor.empty() : tensor<1x6x2x4xf32>
  %o = linalg.transpose ins(%ot : tensor<1x2x4x6xf32>) outs(%oe : tensor<1x6x2x4xf32>) permutation = [0, 3, 1, 2]
  return %o : tensor<1x6x2x4xf32>
}

func.func private @seeded(%phase: f32) -> tensor<1x8x2x8xf32> {
  %e = tensor.empty() : tensor<1x8x2x8xf32>
  %t = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x8x2x8xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i1, %i3 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i3 : index
    %d = arith.addi %c, %i1 : index
    %n = arith.index_cast %d : index to i64
    %f = arith.sitofp %n : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<1x8x2x8xf32>
  return %t : tensor<1x8x2x8xf32>
}

// Each element weighted by its position, so that O in another layout
// prints another number.
func.func private @print_weighted_sum(%o: tensor<1x6x2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id4, #scalar], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<1x6x2x4xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c2 = arith.constant 2 : index
    %c4_ = arith.constant 4 : index
    %a = arith.muli %i1, %c2 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %c4_ : index
    %d = arith.addi %c, %i3 : index
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
  %x1 = call @seeded(%c1) : (f32) -> tensor<1x8x2x8xf32>
  %k = call @seeded(%c2) : (f32) -> tensor<1x8x2x8xf32>
  %x3 = call @seeded(%c3) : (f32) -> tensor<1x8x2x8xf32>
  %q = tensor.extract_slice %x1[0, 0, 0, 0] [1, 6, 2, 8] [1, 1, 1, 1] : tensor<1x8x2x8xf32> to tensor<1x6x2x8xf32>
  %v = tensor.extract_slice %x3[0, 0, 0, 0] [1, 8, 2, 4] [1, 1, 1, 1] : tensor<1x8x2x8xf32> to tensor<1x8x2x4xf32>
  // Query i sees keys up to i + 2 (0 added), the others get -inf.
  %me = tensor.empty() : tensor<1x6x8xf32>
  %mask = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%me : tensor<1x6x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c2i = arith.constant 2 : index
    %last = arith.addi %i, %c2i : index
    %seen = arith.cmpi ule, %j, %last : index
    %zero = arith.constant 0.0 : f32
    %hidden = arith.constant 0xFF800000 : f32
    %r = arith.select %seen, %zero, %hidden : f32
    linalg.yield %r : f32
  } -> tensor<1x6x8xf32>
  %o1 = call @primitive(%q, %k, %v, %mask) : (tensor<1x6x2x8xf32>, tensor<1x8x2x8xf32>, tensor<1x8x2x4xf32>, tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32>
  call @print_weighted_sum(%o1) : (tensor<1x6x2x4xf32>) -> ()
  %o2 = call @generic(%q, %k, %v) : (tensor<1x6x2x8xf32>, tensor<1x8x2x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x6x2x4xf32>
  call @print_weighted_sum(%o2) : (tensor<1x6x2x4xf32>) -> ()
  %o3 = call @batch_matmul(%q, %k, %v) : (tensor<1x6x2x8xf32>, tensor<1x8x2x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x6x2x4xf32>
  call @print_weighted_sum(%o3) : (tensor<1x6x2x4xf32>) -> ()
  return
}
