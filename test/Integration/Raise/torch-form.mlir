// The form torch-mlir's linalg lowering gives a BERT-style self-attention
// (aten.matmul, aten.div, aten.softmax, aten.matmul; seen in a public MLIR
// compiler's tests of that output, rewritten here at a small size): heads
// folded into the batch of linalg.batch_matmul by collapse_shape and
// expand_shape around each product, K^T by a transposing generic, [1, ..]
// operands read with constant-0 maps, the row maximum and sum kept as
// [.., 1], the scale a truncated f64 constant, exp and the subtraction in
// separate generics. @torch_padded adds HF BERT's key-padding mask (M1):
// (1 - m) * lowest on [1, 1, 1, Sk], which the raised attention takes
// broadcast to [1, 1, Sq, Sk] (after linalg-fuse-elementwise-ops the mask
// is computed where it is added; the pass computes it again over the keys
// alone). Raised as they are, after canonicalize and cse, and after
// linalg-fuse-elementwise-ops, and run to the same results as the unraised
// ops (sum of squares of O, printed to 6 digits).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @torch_like
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @torch_padded
// IR: linalg.broadcast
// IR: attn.attention {{.*}} mask({{.*}} : tensor<1x1x8x8xf32>) {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// CHECK: 2.99517
// CHECK-NEXT: 1.8768

#b0 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
#keep = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#keepb = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, 0)>
#keys = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
func.func private @torch_like(%x: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eight = arith.constant dense<2.000000e+00> : tensor<f64>
  %e4 = tensor.empty() : tensor<1x2x4x8xf32>
  %kt = linalg.generic {indexing_maps = [#id4, #tr], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x8x4xf32>) outs(%e4 : tensor<1x2x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x8xf32>
  %e3 = tensor.empty() : tensor<1x2x8x4xf32>
  %q = linalg.generic {indexing_maps = [#b0, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x8x4xf32>) outs(%e3 : tensor<1x2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x4xf32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %s0 = tensor.empty() : tensor<2x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%sz : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x2x8x8xf32>
  %d = linalg.generic {indexing_maps = [#scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%eight : tensor<f64>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f64, %out: f32):
    %t = arith.truncf %in : f64 to f32
    linalg.yield %t : f32
  } -> tensor<1x2x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#b0, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %d : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %k0 = tensor.empty() : tensor<1x2x8x1xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<1x2x8x8xf32>) outs(%mx0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %sub = linalg.generic {indexing_maps = [#b0, #keepb, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mx : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.subf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %ex = linalg.generic {indexing_maps = [#b0, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sub : tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
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
  %p = linalg.generic {indexing_maps = [#b0, #keepb, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%pc, %qc : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 4] : tensor<2x8x4xf32> into tensor<1x2x8x4xf32>
  return %o4 : tensor<1x2x8x4xf32>
}
func.func private @torch_padded(%x: tensor<1x2x8x4xf32>, %m: tensor<1x8xf32>) -> tensor<1x2x8x4xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %eight = arith.constant dense<2.000000e+00> : tensor<f64>
  %e4 = tensor.empty() : tensor<1x2x4x8xf32>
  %kt = linalg.generic {indexing_maps = [#id4, #tr], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x8x4xf32>) outs(%e4 : tensor<1x2x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x8xf32>
  %e3 = tensor.empty() : tensor<1x2x8x4xf32>
  %q = linalg.generic {indexing_maps = [#b0, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x8x4xf32>) outs(%e3 : tensor<1x2x8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x4xf32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x4xf32> into tensor<2x8x4xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x4x8xf32> into tensor<2x4x8xf32>
  %s0 = tensor.empty() : tensor<2x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%sz : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %e = tensor.empty() : tensor<1x2x8x8xf32>
  %d = linalg.generic {indexing_maps = [#scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%eight : tensor<f64>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f64, %out: f32):
    %t = arith.truncf %in : f64 to f32
    linalg.yield %t : f32
  } -> tensor<1x2x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#b0, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %d : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  // HF BERT's extended attention mask: (1 - m) * lowest, [1, 1, 1, Sk].
  %m4 = tensor.expand_shape %m [[0, 1, 2], [3]] output_shape [1, 1, 1, 8] : tensor<1x8xf32> into tensor<1x1x1x8xf32>
  %lowest = arith.constant dense<-3.4028234663852886E+38> : tensor<f64>
  %be = tensor.empty() : tensor<1x1x1x8xf32>
  %bias = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m4, %lowest : tensor<1x1x1x8xf32>, tensor<f64>) outs(%be : tensor<1x1x1x8xf32>) {
  ^bb0(%in: f32, %l: f64, %out: f32):
    %one = arith.constant 1.0 : f32
    %hidden = arith.subf %one, %in : f32
    %t = arith.truncf %l : f64 to f32
    %r = arith.mulf %hidden, %t : f32
    linalg.yield %r : f32
  } -> tensor<1x1x1x8xf32>
  %masked = linalg.generic {indexing_maps = [#id4, #keys, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %bias : tensor<1x2x8x8xf32>, tensor<1x1x1x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.addf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %k0 = tensor.empty() : tensor<1x2x8x1xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x8x8xf32>) outs(%mx0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %sub = linalg.generic {indexing_maps = [#b0, #keepb, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %mx : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.subf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %ex = linalg.generic {indexing_maps = [#b0, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sub : tensor<1x2x8x8xf32>) outs(%e : tensor<1x2x8x8xf32>) {
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
  %p = linalg.generic {indexing_maps = [#b0, #keepb, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%pc, %qc : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 4] : tensor<2x8x4xf32> into tensor<1x2x8x4xf32>
  return %o4 : tensor<1x2x8x4xf32>
}
func.func @main() {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %x = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<1x2x8x4xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i1, %i2 : index
    %b = arith.addi %a, %i3 : index
    %c = arith.muli %b, %i2 : index
    %n = arith.index_cast %c : index to i64
    %f = arith.sitofp %n : i64 to f32
    %s = math.sin %f : f32
    linalg.yield %s : f32
  } -> tensor<1x2x8x4xf32>
  %o = call @torch_like(%x) : (tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  call @print_sum_of_squares(%o) : (tensor<1x2x8x4xf32>) -> ()
  // The first 6 of 8 keys are real, the last 2 padding.
  %me = tensor.empty() : tensor<1x8xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%me : tensor<1x8xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 1 : index
    %c6 = arith.constant 6 : index
    %real = arith.cmpi ult, %j, %c6 : index
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %real, %one, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8xf32>
  %op = call @torch_padded(%x, %m) : (tensor<1x2x8x4xf32>, tensor<1x8xf32>) -> tensor<1x2x8x4xf32>
  call @print_sum_of_squares(%op) : (tensor<1x2x8x4xf32>) -> ()
  return
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
