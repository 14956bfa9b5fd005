// The head layout of Hugging Face BERT through torch-mlir's linalg lowering
// (docs/raising-forms.md rows H1, H2, T1, M1 as in buddy-bert): the hidden
// states [B, S, H * D] viewed as [B, S, H, D] by expand_shape, permuted to
// [B, H, S, D] by a copying generic, heads folded into the batch around each
// product, the scale a division by a truncated f64 8.0 (here 2.0), the key
// padding bias (1 - m) * lowest on [1, 1, 1, S], and the output permuted
// back to [B, S, H * D]. linalg-fuse-elementwise-ops moves the [B, S, H, D]
// views into the products (they read Q, K and V through permuted maps) and
// the zero fills behind reshapes. Raised as it is, after canonicalize and
// cse, and after linalg-fuse-elementwise-ops, and runs to the same result
// raised and not (sum of squares of O).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @bert_heads
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// CHECK: 13.8004

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#b03 = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#heads = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#tr = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
#b0 = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, d3)>
#keys = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
#scalar = affine_map<(d0, d1, d2, d3) -> ()>
#keep = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#keepb = affine_map<(d0, d1, d2, d3) -> (0, d1, d2, 0)>

func.func private @bert_heads(%qx: tensor<1x8x16xf32>, %kx: tensor<1x8x16xf32>, %vx: tensor<1x8x16xf32>, %m: tensor<1x8xf32>) -> tensor<1x8x16xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %two = arith.constant dense<2.000000e+00> : tensor<f64>
  %lowest = arith.constant dense<-3.4028234663852886E+38> : tensor<f64>
  // [1, 8, 16] hidden states (S = 8, H = 2, D = 8) as [1, 2, 8, 8] heads.
  %q4 = tensor.expand_shape %qx [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
  %qe = tensor.empty() : tensor<1x2x8x8xf32>
  %q = linalg.generic {indexing_maps = [#id4, #heads], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q4 : tensor<1x8x2x8xf32>) outs(%qe : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x8xf32>
  %k4 = tensor.expand_shape %kx [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
  %ke = tensor.empty() : tensor<1x2x8x8xf32>
  %k = linalg.generic {indexing_maps = [#id4, #heads], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k4 : tensor<1x8x2x8xf32>) outs(%ke : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x8xf32>
  %v4 = tensor.expand_shape %vx [[0], [1], [2, 3]] output_shape [1, 8, 2, 8] : tensor<1x8x16xf32> into tensor<1x8x2x8xf32>
  %ve = tensor.empty() : tensor<1x2x8x8xf32>
  %v = linalg.generic {indexing_maps = [#id4, #heads], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v4 : tensor<1x8x2x8xf32>) outs(%ve : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x8xf32>
  %e4 = tensor.empty() : tensor<1x2x8x8xf32>
  %kt = linalg.generic {indexing_maps = [#id4, #tr], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x8x8xf32>) outs(%e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x8x8xf32>
  %qc = tensor.collapse_shape %q [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %ktc = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %s0 = tensor.empty() : tensor<2x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%qc, %ktc : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%sz : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %m4 = tensor.expand_shape %m [[0, 1, 2], [3]] output_shape [1, 1, 1, 8] : tensor<1x8xf32> into tensor<1x1x1x8xf32>
  %be = tensor.empty() : tensor<1x1x1x8xf32>
  %bias = linalg.generic {indexing_maps = [#id4, #scalar, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%m4, %lowest : tensor<1x1x1x8xf32>, tensor<f64>) outs(%be : tensor<1x1x1x8xf32>) {
  ^bb0(%in: f32, %l: f64, %out: f32):
    %one = arith.constant 1.0 : f32
    %hidden = arith.subf %one, %in : f32
    %t = arith.truncf %l : f64 to f32
    %r = arith.mulf %hidden, %t : f32
    linalg.yield %r : f32
  } -> tensor<1x1x1x8xf32>
  %x = linalg.generic {indexing_maps = [#b0, #scalar, #keys, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s4, %two, %bias : tensor<1x2x8x8xf32>, tensor<f64>, tensor<1x1x1x8xf32>) outs(%e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %c: f64, %b: f32, %out: f32):
    %t = arith.truncf %c : f64 to f32
    %d = arith.divf %in, %t : f32
    %r = arith.addf %d, %b : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %k0 = tensor.empty() : tensor<1x2x8x1xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : tensor<1x2x8x8xf32>) outs(%mx0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %ex = linalg.generic {indexing_maps = [#b0, #keepb, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x2x8x8xf32>) outs(%sm0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#b0, #keepb, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%e4 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %pc = tensor.collapse_shape %p [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %vc = tensor.collapse_shape %v [[0, 1], [2], [3]] : tensor<1x2x8x8xf32> into tensor<2x8x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = linalg.batch_matmul ins(%pc, %vc : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%oz : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [1, 2, 8, 8] : tensor<2x8x8xf32> into tensor<1x2x8x8xf32>
  %eo = tensor.empty() : tensor<1x8x2x8xf32>
  %ot = linalg.generic {indexing_maps = [#id4, #heads], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o4 : tensor<1x2x8x8xf32>) outs(%eo : tensor<1x8x2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x8x2x8xf32>
  %merged = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<1x8x2x8xf32> into tensor<1x8x16xf32>
  return %merged : tensor<1x8x16xf32>
}

func.func private @seeded(%phase: f32) -> tensor<1x8x16xf32> {
  %e = tensor.empty() : tensor<1x8x16xf32>
  %t = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%e : tensor<1x8x16xf32>) {
  ^bb0(%out: f32):
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %a = arith.muli %i1, %i2 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i1 : index
    %n = arith.index_cast %c : index to i64
    %f = arith.sitofp %n : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %t : tensor<1x8x16xf32>
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %q = call @seeded(%c1) : (f32) -> tensor<1x8x16xf32>
  %k = call @seeded(%c2) : (f32) -> tensor<1x8x16xf32>
  %v = call @seeded(%c3) : (f32) -> tensor<1x8x16xf32>
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
  %o = call @bert_heads(%q, %k, %v, %m) : (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8xf32>) -> tensor<1x8x16xf32>
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%o : tensor<1x8x16xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %acc1: f32):
    %w = arith.mulf %x, %x : f32
    %r = arith.addf %w, %acc1 : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}
