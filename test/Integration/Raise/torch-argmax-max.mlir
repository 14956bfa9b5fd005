// The form current torch-mlir gives softmax(Q K^T / 2) V through its
// per-op linalg lowering (docs/raising-forms.md, rows T2 and X1), rewritten
// here at a small size: K^T by linalg.transpose followed by a same-type
// tensor.cast, heads folded into the batch of linalg.batch_matmul, the row
// maximum a two-result linalg.generic that also computes an i64 argmax
// nothing reads (aten.max.dim), kept as [.., 1] and passed through another
// same-type tensor.cast. The f16 function starts its maximum from f16's
// lowest finite value (-65504), as torch-mlir does for f16. Each is raised
// as it is, after canonicalize and cse, and after
// linalg-fuse-elementwise-ops, and runs to the same result raised and not
// (sum of squares of O).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @torch_f32
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @torch_f16
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// f32 agrees to the digits printed; f16 (its softmax in f16 unraised, in
// f32 raised) to 1e-4.
// CHECK: 9.437
// CHECK-NEXT: 9.43{{[45][0-9]*}}

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#keep = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

func.func private @torch_f32(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %izero = arith.constant 0 : i64
  %half = arith.constant 5.000000e-01 : f32
  %t0 = tensor.empty() : tensor<1x2x4x8xf32>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x4xf32>) outs(%t0 : tensor<1x2x4x8xf32>) permutation = [0, 1, 3, 2]
  %ktcast = tensor.cast %kt : tensor<1x2x4x8xf32> to tensor<1x2x4x8xf32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %ktc = tensor.collapse_shape %ktcast [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %s0 = tensor.empty() : tensor<2x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%sz : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x2x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %k0 = tensor.empty() : tensor<1x2x8x1xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %i0 = tensor.empty() : tensor<1x2x8x1xi64>
  %ix0 = linalg.fill ins(%izero : i64) outs(%i0 : tensor<1x2x8x1xi64>) -> tensor<1x2x8x1xi64>
  %mx:2 = linalg.generic {indexing_maps = [#id4, #keep, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<1x2x8x8xf32>) outs(%mx0, %ix0 : tensor<1x2x8x1xf32>, tensor<1x2x8x1xi64>) {
  ^bb0(%in: f32, %out: f32, %out_i: i64):
    %i = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %out : f32
    %c = arith.cmpf ogt, %in, %out : f32
    %sel = arith.select %c, %ii, %out_i : i64
    linalg.yield %m, %sel : f32, i64
  } -> (tensor<1x2x8x1xf32>, tensor<1x2x8x1xi64>)
  %mxcast = tensor.cast %mx#0 : tensor<1x2x8x1xf32> to tensor<1x2x8x1xf32>
  %sub = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mxcast : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.subf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sub : tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x2x8x8xf32>) outs(%sm0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 4] : tensor<2x8x4xf32> into tensor<1x2x8x4xf32>
  return %o4 : tensor<1x2x8x4xf32>
}

func.func private @torch_f16(%q: tensor<1x2x8x4xf16>, %k: tensor<1x2x8x4xf16>, %v: tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf16> {
  %zero = arith.constant 0.000000e+00 : f16
  %lowest = arith.constant -6.550400e+04 : f16
  %izero = arith.constant 0 : i64
  %half = arith.constant 5.000000e-01 : f16
  %t0 = tensor.empty() : tensor<1x2x4x8xf16>
  %kt = linalg.transpose ins(%k : tensor<1x2x8x4xf16>) outs(%t0 : tensor<1x2x4x8xf16>) permutation = [0, 1, 3, 2]
  %ktcast = tensor.cast %kt : tensor<1x2x4x8xf16> to tensor<1x2x4x8xf16>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x4xf16> into tensor<2x8x4xf16>
  %ktc = tensor.collapse_shape %ktcast [[0, 1], [2], [3]] : tensor<1x2x4x8xf16> into tensor<2x4x8xf16>
  %s0 = tensor.empty() : tensor<2x8x8xf16>
  %sz = linalg.fill ins(%zero : f16) outs(%s0 : tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x8x4xf16>, tensor<2x4x8xf16>) outs(%sz : tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf16> into tensor<1x2x8x8xf16>
  %e = tensor.empty() : tensor<1x2x8x8xf16>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4 : tensor<1x2x8x8xf16>) outs(%e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %r = arith.mulf %in, %half : f16
    linalg.yield %r : f16
  } -> tensor<1x2x8x8xf16>
  %k0 = tensor.empty() : tensor<1x2x8x1xf16>
  %mx0 = linalg.fill ins(%lowest : f16) outs(%k0 : tensor<1x2x8x1xf16>) -> tensor<1x2x8x1xf16>
  %i0 = tensor.empty() : tensor<1x2x8x1xi64>
  %ix0 = linalg.fill ins(%izero : i64) outs(%i0 : tensor<1x2x8x1xi64>) -> tensor<1x2x8x1xi64>
  %mx:2 = linalg.generic {indexing_maps = [#id4, #keep, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<1x2x8x8xf16>) outs(%mx0, %ix0 : tensor<1x2x8x1xf16>, tensor<1x2x8x1xi64>) {
  ^bb0(%in: f16, %out: f16, %out_i: i64):
    %i = linalg.index 3 : index
    %ii = arith.index_cast %i : index to i64
    %m = arith.maximumf %in, %out : f16
    %c = arith.cmpf ogt, %in, %out : f16
    %sel = arith.select %c, %ii, %out_i : i64
    linalg.yield %m, %sel : f16, i64
  } -> (tensor<1x2x8x1xf16>, tensor<1x2x8x1xi64>)
  %sub = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mx#0 : tensor<1x2x8x8xf16>, tensor<1x2x8x1xf16>) outs(%e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f16, %in_1: f16, %out: f16):
    %r = arith.subf %in, %in_1 : f16
    linalg.yield %r : f16
  } -> tensor<1x2x8x8xf16>
  %ex = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sub : tensor<1x2x8x8xf16>) outs(%e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %r = math.exp %in : f16
    linalg.yield %r : f16
  } -> tensor<1x2x8x8xf16>
  %sm0 = linalg.fill ins(%zero : f16) outs(%k0 : tensor<1x2x8x1xf16>) -> tensor<1x2x8x1xf16>
  %sm = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x2x8x8xf16>) outs(%sm0 : tensor<1x2x8x1xf16>) {
  ^bb0(%in: f16, %out: f16):
    %r = arith.addf %in, %out : f16
    linalg.yield %r : f16
  } -> tensor<1x2x8x1xf16>
  %p = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<1x2x8x8xf16>, tensor<1x2x8x1xf16>) outs(%e : tensor<1x2x8x8xf16>) {
  ^bb0(%in: f16, %in_1: f16, %out: f16):
    %r = arith.divf %in, %in_1 : f16
    linalg.yield %r : f16
  } -> tensor<1x2x8x8xf16>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf16> into tensor<2x8x8xf16>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x4xf16> into tensor<2x8x4xf16>
  %o0 = tensor.empty() : tensor<2x8x4xf16>
  %oz = linalg.fill ins(%zero : f16) outs(%o0 : tensor<2x8x4xf16>) -> tensor<2x8x4xf16>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x8x8xf16>, tensor<2x8x4xf16>) outs(%oz : tensor<2x8x4xf16>) -> tensor<2x8x4xf16>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 4] : tensor<2x8x4xf16> into tensor<1x2x8x4xf16>
  return %o4 : tensor<1x2x8x4xf16>
}

// Seeded inputs: sin of an index product, one tensor per offset.
func.func private @input(%offset: index) -> tensor<1x2x8x4xf32> {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %x = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x2x8x4xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i1, %i2 : index
    %b = arith.addi %a, %i3 : index
    %c = arith.muli %b, %i2 : index
    %d = arith.addi %c, %offset : index
    %n = arith.index_cast %d : index to i64
    %f = arith.sitofp %n : i64 to f32
    %s = math.sin %f : f32
    linalg.yield %s : f32
  } -> tensor<1x2x8x4xf32>
  return %x : tensor<1x2x8x4xf32>
}

func.func private @print_sum_of_squares(%o: tensor<1x2x8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%o : tensor<1x2x8x4xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%v: f32, %m: f32):
    %w = arith.mulf %v, %v : f32
    %r = arith.addf %w, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}

func.func private @to_f16(%x: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf16> {
  %e = tensor.empty() : tensor<1x2x8x4xf16>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x8x4xf32>) outs(%e : tensor<1x2x8x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x2x8x4xf16>
  return %y : tensor<1x2x8x4xf16>
}

func.func private @to_f32(%x: tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf32> {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x8x4xf16>) outs(%e : tensor<1x2x8x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %t = arith.extf %in : f16 to f32
    linalg.yield %t : f32
  } -> tensor<1x2x8x4xf32>
  return %y : tensor<1x2x8x4xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %q = call @input(%c0) : (index) -> tensor<1x2x8x4xf32>
  %k = call @input(%c1) : (index) -> tensor<1x2x8x4xf32>
  %v = call @input(%c2) : (index) -> tensor<1x2x8x4xf32>
  %o = call @torch_f32(%q, %k, %v) : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  call @print_sum_of_squares(%o) : (tensor<1x2x8x4xf32>) -> ()
  %q16 = call @to_f16(%q) : (tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf16>
  %k16 = call @to_f16(%k) : (tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf16>
  %v16 = call @to_f16(%v) : (tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf16>
  %o16 = call @torch_f16(%q16, %k16, %v16) : (tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>, tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf16>
  %o32 = call @to_f32(%o16) : (tensor<1x2x8x4xf16>) -> tensor<1x2x8x4xf32>
  call @print_sum_of_squares(%o32) : (tensor<1x2x8x4xf32>) -> ()
  return
}
