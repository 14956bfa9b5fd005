// Where front ends put the scale (docs/raising-forms.md): @query_divided
// (S7): Q divided by sqrt(D) before the product, here a linalg.generic
// product into which linalg-fuse-elementwise-ops fuses the division;
// @split_scale (S8): Q and K^T each multiplied by sqrt(scale) (the scale is
// the product of the two factors as written, 0.70710677^2);
// @baddbmm (S10): torch-mlir's baddbmm with alpha = 1 and beta = 0, the
// scores multiplied by 1 and 0 times a zero fill added. Each is raised as it
// is, after canonicalize and cse, and after linalg-fuse-elementwise-ops, and
// runs to the same result raised and not (sum of squares of O).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @query_divided
// IR-SAME: %[[Q:[a-z0-9]+]]: tensor<2x8x4xf32>
// IR: %[[Q4:.*]] = tensor.expand_shape %[[Q]]
// IR: attn.attention ins(%[[Q4]], {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @split_scale
// IR-SAME: %[[Q:[a-z0-9]+]]: tensor<2x8x4xf32>
// IR: %[[Q4:.*]] = tensor.expand_shape %[[Q]]
// IR: attn.attention ins(%[[Q4]], {{.*}} {scale = 0.49999997 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @baddbmm
// IR: attn.attention {{.*}} {scale = 1.000000e+00 : f32}
// IR-NOT: linalg.batch_matmul
// CHECK: 9.73315
// CHECK-NEXT: 9.73315
// CHECK-NEXT: 12.1494

#id = affine_map<(b, m, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m)>
#pq = affine_map<(b, m, n, k) -> (b, m, k)>
#pk = affine_map<(b, m, n, k) -> (b, k, n)>
#po = affine_map<(b, m, n, k) -> (b, m, n)>

func.func private @query_divided(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %two = arith.constant 2.0 : f32
  %eq = tensor.empty() : tensor<2x8x4xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %in, %two : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  %s = linalg.generic {indexing_maps = [#pq, #pk, #po], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qs, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
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

func.func private @split_scale(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %root = arith.constant 0.707106769 : f32
  %eq = tensor.empty() : tensor<2x8x4xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %root : f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  %ek = tensor.empty() : tensor<2x4x8xf32>
  %ks = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kt : tensor<2x4x8xf32>) outs(%ek : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %root, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %s = linalg.batch_matmul ins(%qs, %ks : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
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

func.func private @baddbmm(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %one = arith.constant 1.0 : f32
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %z : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %a = arith.mulf %in, %one : f32
    %b = arith.mulf %in_1, %zero : f32
    %r = arith.addf %a, %b : f32
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

func.func private @print_sum_of_squares(%o: tensor<2x8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(b, m, n) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%o : tensor<2x8x4xf32>) outs(%acc0 : tensor<f32>) {
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
  %q = tensor.extract_slice %x0[0, 0, 0] [2, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x8x4xf32>
  %kt = tensor.extract_slice %x1[0, 0, 0] [2, 4, 8] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x4x8xf32>
  %v = tensor.extract_slice %x2[0, 0, 0] [2, 8, 4] [1, 1, 1] : tensor<2x8x8xf32> to tensor<2x8x4xf32>
  %o1 = call @query_divided(%q, %kt, %v) : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o1) : (tensor<2x8x4xf32>) -> ()
  %o2 = call @split_scale(%q, %kt, %v) : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o2) : (tensor<2x8x4xf32>) -> ()
  %o3 = call @baddbmm(%q, %kt, %v) : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o3) : (tensor<2x8x4xf32>) -> ()
  return
}
