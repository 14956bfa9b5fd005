// JAX's grouped-query attention as StableHLO writes it (docs/raising-forms.md
// rows G3, S9, seen in a sharded JAX export, jax-gqa), lowered to linalg the
// way stablehlo-legalize-to-linalg lowers each op: Q [B, S, Hq, D] reshaped
// to [B, S, Hkv, G, D] and scaled, the scores a dot_general of K (not
// repeated, [B, Sk, Hkv, D]) and the grouped Q with B and Hkv as batching
// dimensions (a generic over loops (b, hkv, key, s, g, d) whose result is
// [B, Hkv, Sk, S, G]), transposed to [B, Hkv, G, S, Sk] for the softmax
// over the keys, and the second product a dot_general of V and P (result
// [B, Hkv, Dv, G, S]) transposed to [B, S, Hkv, G, Dv] and reshaped to
// [B, S, Hq, Dv]. @primitive uses the primitive ops (linalg.map, linalg.reduce,
// linalg.broadcast, linalg.transpose), @generic the default lowering's
// generics and a boolean mask selected on the grouped scores (M8, with
// -inf). Raised with K and V read in place (Hkv heads), as it is, after
// canonicalize and cse, and after linalg-fuse-elementwise-ops, and runs to
// the same result raised and not (a position-weighted sum of O).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @primitive
// IR: attn.attention ins({{.*}} : tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x4xf32>) {{.*}} {scale = 0.353553{{[0-9]*}} : f32}
// IR-NOT: reduction
// IR-LABEL: func.func private @generic
// IR: attn.attention ins({{.*}} : tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x4xf32>) mask(%{{.*}} : tensor<1x1x4x6xi1>) {{.*}} {scale = 0.353553{{[0-9]*}} : f32}
// IR-NOT: reduction
// IR-LABEL: func.func private @seeded
// CHECK: -40.566{{[0-9]*}}
// CHECK: 21.585{{[0-9]*}}

#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#rows5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#scalar5 = affine_map<(d0, d1, d2, d3, d4) -> ()>
#toSoftmax = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3, d2)>
#toBSHGD = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4, d3, d1)>
#k = affine_map<(b, h, t, s, g, d) -> (b, t, h, d)>
#q = affine_map<(b, h, t, s, g, d) -> (b, s, h, g, d)>
#scores = affine_map<(b, h, t, s, g, d) -> (b, h, t, s, g)>
#v = affine_map<(b, h, e, g, s, t) -> (b, t, h, e)>
#p = affine_map<(b, h, e, g, s, t) -> (b, h, g, s, t)>
#ot = affine_map<(b, h, e, g, s, t) -> (b, h, e, g, s)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#maskHeads = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#maskGroups = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>
#scalar4 = affine_map<(d0, d1, d2, d3) -> ()>

func.func private @primitive(%q: tensor<1x4x4x8xf32>, %k: tensor<1x6x2x8xf32>, %v: tensor<1x6x2x4xf32>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant dense<0.353553385> : tensor<f32>
  %q5 = tensor.expand_shape %q [[0], [1], [2, 3], [4]] output_shape [1, 4, 2, 2, 8] : tensor<1x4x4x8xf32> into tensor<1x4x2x2x8xf32>
  %qe = tensor.empty() : tensor<1x4x2x2x8xf32>
  %sb = linalg.broadcast ins(%scale : tensor<f32>) outs(%qe : tensor<1x4x2x2x8xf32>) dimensions = [0, 1, 2, 3, 4]
  %qs = linalg.map ins(%q5, %sb : tensor<1x4x2x2x8xf32>, tensor<1x4x2x2x8xf32>) outs(%qe : tensor<1x4x2x2x8xf32>)
    (%in: f32, %c: f32, %out: f32) {
      %r = arith.mulf %in, %c : f32
      linalg.yield %r : f32
    }
  %se = tensor.empty() : tensor<1x2x6x4x2xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x6x4x2xf32>) -> tensor<1x2x6x4x2xf32>
  %s = linalg.generic {indexing_maps = [#k, #q, #scores], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k, %qs : tensor<1x6x2x8xf32>, tensor<1x4x2x2x8xf32>) outs(%sz : tensor<1x2x6x4x2xf32>) {
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
  %d = linalg.map ins(%x, %mxb : tensor<1x2x2x4x6xf32>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %r = arith.subf %in, %in_0 : f32
      linalg.yield %r : f32
    }
  %ex = linalg.map ins(%d : tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>)
    (%in: f32, %out: f32) {
      %r = math.exp %in : f32
      linalg.yield %r : f32
    }
  %sm0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %sm = linalg.reduce ins(%ex : tensor<1x2x2x4x6xf32>) outs(%sm0 : tensor<1x2x2x4xf32>) dimensions = [4]
    (%in: f32, %init: f32) {
      %r = arith.addf %in, %init : f32
      linalg.yield %r : f32
    }
  %smb = linalg.broadcast ins(%sm : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) dimensions = [4]
  %p = linalg.map ins(%ex, %smb : tensor<1x2x2x4x6xf32>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>)
    (%in: f32, %in_0: f32, %out: f32) {
      %r = arith.divf %in, %in_0 : f32
      linalg.yield %r : f32
    }
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

func.func private @generic(%q: tensor<1x4x4x8xf32>, %k: tensor<1x6x2x8xf32>, %v: tensor<1x6x2x4xf32>, %mask: tensor<1x1x4x6xi1>) -> tensor<1x4x4x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant dense<0.353553385> : tensor<f32>
  %q5 = tensor.expand_shape %q [[0], [1], [2, 3], [4]] output_shape [1, 4, 2, 2, 8] : tensor<1x4x4x8xf32> into tensor<1x4x2x2x8xf32>
  %qe = tensor.empty() : tensor<1x4x2x2x8xf32>
  %qs = linalg.generic {indexing_maps = [#id5, #scalar5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%q5, %scale : tensor<1x4x2x2x8xf32>, tensor<f32>) outs(%qe : tensor<1x4x2x2x8xf32>) {
  ^bb0(%in: f32, %c: f32, %out: f32):
    %r = arith.mulf %in, %c : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2x8xf32>
  %se = tensor.empty() : tensor<1x2x6x4x2xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x6x4x2xf32>) -> tensor<1x2x6x4x2xf32>
  %s = linalg.generic {indexing_maps = [#k, #q, #scores], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%k, %qs : tensor<1x6x2x8xf32>, tensor<1x4x2x2x8xf32>) outs(%sz : tensor<1x2x6x4x2xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %m = arith.mulf %in, %in_0 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<1x2x6x4x2xf32>
  %pe = tensor.empty() : tensor<1x2x2x4x6xf32>
  %st = linalg.generic {indexing_maps = [#toSoftmax, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x6x4x2xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x4x6xf32>
  // where(mask, scores, -inf) on the grouped scores (jax-gqa's M8 form with
  // -inf: its f32 lowest would differ from a mask in rows that see no key):
  // the [B, 1, Sq, Sk] mask broadcast over the key/value heads, viewed as
  // [B, Hkv, 1, Sq, Sk] and read broadcast over the group.
  %mb = tensor.empty() : tensor<1x2x4x6xi1>
  %maskb = linalg.generic {indexing_maps = [#maskHeads, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask : tensor<1x1x4x6xi1>) outs(%mb : tensor<1x2x4x6xi1>) {
  ^bb0(%in: i1, %out: i1):
    linalg.yield %in : i1
  } -> tensor<1x2x4x6xi1>
  %mask5 = tensor.expand_shape %maskb [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 4, 6] : tensor<1x2x4x6xi1> into tensor<1x2x1x4x6xi1>
  %x = linalg.generic {indexing_maps = [#maskGroups, #id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%mask5, %st : tensor<1x2x1x4x6xi1>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%m: i1, %in: f32, %out: f32):
    %ninf5 = arith.constant 0xFF800000 : f32
    %r = arith.select %m, %in, %ninf5 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x6xf32>
  %re = tensor.empty() : tensor<1x2x2x4xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %mx = linalg.generic {indexing_maps = [#id5, #rows5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x2x2x4x6xf32>) outs(%mx0 : tensor<1x2x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4xf32>
  %mxb = linalg.generic {indexing_maps = [#rows5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%mx : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x4x6xf32>
  %d = linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x, %mxb : tensor<1x2x2x4x6xf32>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %r = arith.subf %in, %in_0 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x6xf32>
  %ex = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%d : tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x6xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %sm = linalg.generic {indexing_maps = [#id5, #rows5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x2x2x4x6xf32>) outs(%sm0 : tensor<1x2x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4xf32>
  %smb = linalg.generic {indexing_maps = [#rows5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%sm : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x4x6xf32>
  %p = linalg.generic {indexing_maps = [#id5, #id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ex, %smb : tensor<1x2x2x4x6xf32>, tensor<1x2x2x4x6xf32>) outs(%pe : tensor<1x2x2x4x6xf32>) {
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
  %o5 = linalg.generic {indexing_maps = [#toBSHGD, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ot : tensor<1x2x4x2x4xf32>) outs(%oe : tensor<1x4x2x2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x2x2x4xf32>
  %o = tensor.collapse_shape %o5 [[0], [1], [2, 3], [4]] : tensor<1x4x2x2x4xf32> into tensor<1x4x4x4xf32>
  return %o : tensor<1x4x4x4xf32>
}

func.func private @seeded(%phase: f32) -> tensor<1x6x4x8xf32> {
  %e = tensor.empty() : tensor<1x6x4x8xf32>
  %t = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x6x4x8xf32>) {
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
  } -> tensor<1x6x4x8xf32>
  return %t : tensor<1x6x4x8xf32>
}

// Each element weighted by its position, so that O in another layout
// prints another number.
func.func private @print_weighted_sum(%o: tensor<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id4, #scalar4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<1x4x4x4xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c4 = arith.constant 4 : index
    %c4_ = arith.constant 4 : index
    %a = arith.muli %i1, %c4 : index
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
  %x1 = call @seeded(%c1) : (f32) -> tensor<1x6x4x8xf32>
  %x2 = call @seeded(%c2) : (f32) -> tensor<1x6x4x8xf32>
  %x3 = call @seeded(%c3) : (f32) -> tensor<1x6x4x8xf32>
  %q = tensor.extract_slice %x1[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x6x4x8xf32> to tensor<1x4x4x8xf32>
  %k = tensor.extract_slice %x2[0, 0, 0, 0] [1, 6, 2, 8] [1, 1, 1, 1] : tensor<1x6x4x8xf32> to tensor<1x6x2x8xf32>
  %v = tensor.extract_slice %x3[0, 0, 1, 2] [1, 6, 2, 4] [1, 1, 1, 1] : tensor<1x6x4x8xf32> to tensor<1x6x2x4xf32>
  %o1 = call @primitive(%q, %k, %v) : (tensor<1x4x4x8xf32>, tensor<1x6x2x8xf32>, tensor<1x6x2x4xf32>) -> tensor<1x4x4x4xf32>
  call @print_weighted_sum(%o1) : (tensor<1x4x4x4xf32>) -> ()
  // Query i sees keys up to i + 2 (a causal mask with Sk - Sq = 2).
  %me = tensor.empty() : tensor<1x1x4x6xi1>
  %mask = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%me : tensor<1x1x4x6xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %c2i = arith.constant 2 : index
    %last = arith.addi %i, %c2i : index
    %seen = arith.cmpi ule, %j, %last : index
    linalg.yield %seen : i1
  } -> tensor<1x1x4x6xi1>
  %o2 = call @generic(%q, %k, %v, %mask) : (tensor<1x4x4x8xf32>, tensor<1x6x2x8xf32>, tensor<1x6x2x4xf32>, tensor<1x1x4x6xi1>) -> tensor<1x4x4x4xf32>
  call @print_weighted_sum(%o2) : (tensor<1x4x4x4xf32>) -> ()
  return
}
