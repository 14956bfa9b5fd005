// Causal masks built from index comparisons (docs/raising-forms.md rows M5
// and M9; M2's select(c, 0, lowest) without its size-1 reduction loop),
// with Sq = 4 queries and Sk = 8 keys: the mask an [Sq, Sk]
// generic computing select(j <= i + offset, 0, lowest) from linalg.index,
// added to the scaled scores. @top_left (offset 0, PyTorch's
// tril(ones(L, S))) and @bottom_right (offset Sk - Sq, the queries at the
// end of a KV cache) are both kept as additive masks, not as `causal`
// (which would be right only for one alignment). linalg-fuse-elementwise-ops
// fuses the mask's computation into the addition; the pass computes it
// again in a generic of its own over the [Sq, Sk] loops it depends on.
// Raised as they are, after canonicalize and cse, and after
// linalg-fuse-elementwise-ops, and run to the same result raised and not
// (sum of squares of O). @select_minus_inf (M9) hides the scores with
// select(j > i, -inf, x), the condition computed by a generic of its own
// (fused into the select by linalg-fuse-elementwise-ops): raised with the
// boolean mask j <= i.
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @top_left
// IR: linalg.index 0
// IR: attn.attention {{.*}} mask({{.*}} : tensor<1x1x4x8xf32>) {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @select_minus_inf
// IR: linalg.index 0
// IR: attn.attention {{.*}} mask({{.*}} : tensor<1x1x4x8xi1>) {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @bottom_right
// IR: linalg.index 0
// IR: attn.attention {{.*}} mask({{.*}} : tensor<1x1x4x8xf32>) {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// CHECK: 11.3868
// CHECK-NEXT: 11.3868
// CHECK-NEXT: 4.71052

#id = affine_map<(b, m, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m)>
#mn = affine_map<(b, m, n) -> (m, n)>
#id2 = affine_map<(m, n) -> (m, n)>

func.func private @top_left(%q: tensor<2x4x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %half = arith.constant 0.5 : f32
  %off = arith.constant 0 : index
  %e = tensor.empty() : tensor<2x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %me = tensor.empty() : tensor<4x8xf32>
  %mask = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%me : tensor<4x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %last = arith.addi %i, %off : index
    %seen = arith.cmpi ule, %j, %last : index
    %m = arith.select %seen, %zero, %lowest : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %a = arith.mulf %in, %half : f32
    %r = arith.addf %a, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %r0 = tensor.empty() : tensor<2x4xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%mx0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x8xf32>) outs(%sm0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %o0 = tensor.empty() : tensor<2x4x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}

func.func private @select_minus_inf(%q: tensor<2x4x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %half = arith.constant 0.5 : f32
  %off = arith.constant 0 : index
  %e = tensor.empty() : tensor<2x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ce = tensor.empty() : tensor<4x8xi1>
  %hidden = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%ce : tensor<4x8xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %last = arith.addi %i, %off : index
    %c = arith.cmpi ugt, %j, %last : index
    linalg.yield %c : i1
  } -> tensor<4x8xi1>
  %x = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %hidden : tensor<2x4x8xf32>, tensor<4x8xi1>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %h: i1, %out: f32):
    %a = arith.mulf %in, %half : f32
    %r = arith.select %h, %ninf, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %r0 = tensor.empty() : tensor<2x4xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%mx0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x8xf32>) outs(%sm0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %o0 = tensor.empty() : tensor<2x4x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}

func.func private @bottom_right(%q: tensor<2x4x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %half = arith.constant 0.5 : f32
  %off = arith.constant 4 : index
  %e = tensor.empty() : tensor<2x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %me = tensor.empty() : tensor<4x8xf32>
  %mask = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%me : tensor<4x8xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %last = arith.addi %i, %off : index
    %seen = arith.cmpi ule, %j, %last : index
    %m = arith.select %seen, %zero, %lowest : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %a = arith.mulf %in, %half : f32
    %r = arith.addf %a, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %r0 = tensor.empty() : tensor<2x4xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%mx0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x8xf32>) outs(%sm0 : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %o0 = tensor.empty() : tensor<2x4x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x4x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}

// Seeded inputs: sin of an index product, one tensor per offset.
func.func private @input(%offset: index) -> tensor<2x8x8xf32> {
  %e = tensor.empty() : tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %a = arith.muli %i0, %i1 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i1 : index
    %d = arith.addi %c, %offset : index
    %n = arith.index_cast %d : index to i64
    %f = arith.sitofp %n : i64 to f32
    %s = math.sin %f : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8xf32>
  return %x : tensor<2x8x8xf32>
}

func.func private @print_sum_of_squares(%o: tensor<2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(b, m, n) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%o : tensor<2x4x4xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %w = arith.mulf %x, %x : f32
    %r = arith.addf %w, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x0 = call @input(%c0) : (index) -> tensor<2x8x8xf32>
  %x1 = call @input(%c1) : (index) -> tensor<2x8x8xf32>
  %x2 = call @input(%c2) : (index) -> tensor<2x8x8xf32>
  %q = tensor.extract_slice %x0[0, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x4x4xf32>
  %kt = tensor.extract_slice %x1[0, 0, 0] [2, 4, 8] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x4x8xf32>
  %v = tensor.extract_slice %x2[0, 0, 0] [2, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x8x4xf32>
  %o1 = call @top_left(%q, %kt, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  call @print_sum_of_squares(%o1) : (tensor<2x4x4xf32>) -> ()
  %o3 = call @select_minus_inf(%q, %kt, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  call @print_sum_of_squares(%o3) : (tensor<2x4x4xf32>) -> ()
  %o2 = call @bottom_right(%q, %kt, %v) : (tensor<2x4x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  call @print_sum_of_squares(%o2) : (tensor<2x4x4xf32>) -> ()
  return
}
