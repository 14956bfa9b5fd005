// A front end that also returns the natural log-sum-exp of the rows,
// computed from the softmax's statistics as log(rowsum) + rowmax in its own
// element-wise generic, kept as [.., Sq, 1] (FlashAttention's softmax_lse,
// docs/raising-forms.md rows L1 and L2): the raised attention computes it
// as its LSE result instead of keeping the chain. Raised as it is, after
// canonicalize and cse, and after linalg-fuse-elementwise-ops, and runs to
// the same O and LSE raised and not (sum of squares of O, sum of LSE).
// RUN: attn-opt %s --attn-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR: remark: raised to attn.attention (scale 5.000000e-01, the front end's log-sum-exp as its LSE)
// IR-LABEL: func.func private @with_lse
// IR-NOT: math.log
// IR: %[[O:.*]]:2 = attn.attention
// IR-NOT: math.log
// IR: %[[LSE:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2, 3]] output_shape [1, 2, 8, 1] : tensor<16xf32> into tensor<1x2x8x1xf32>
// IR-NEXT: return %[[O]]#0, %[[LSE]]
// CHECK: 9.437
// CHECK-NEXT: 34.5433

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#keep = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#kt = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#v = affine_map<(b, h, m, n, k) -> (b, h, k, n)>
#o = affine_map<(b, h, m, n, k) -> (b, h, m, n)>

func.func private @with_lse(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>, %v: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x1xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant 5.000000e-01 : f32
  %s0 = tensor.empty() : tensor<1x2x8x8xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %s = linalg.generic {indexing_maps = [#q, #kt, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) outs(%sz : tensor<1x2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %scaled = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x8x8xf32>) outs(%s0 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %k0 = tensor.empty() : tensor<1x2x8x1xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%scaled : tensor<1x2x8x8xf32>) outs(%mx0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mx : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%s0 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%k0 : tensor<1x2x8x1xf32>) -> tensor<1x2x8x1xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #keep], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<1x2x8x8xf32>) outs(%sm0 : tensor<1x2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #keep, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<1x2x8x8xf32>, tensor<1x2x8x1xf32>) outs(%s0 : tensor<1x2x8x8xf32>) {
  ^bb0(%in: f32, %t: f32, %out: f32):
    %r = arith.divf %in, %t : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x8xf32>
  %lse = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sm, %mx : tensor<1x2x8x1xf32>, tensor<1x2x8x1xf32>) outs(%k0 : tensor<1x2x8x1xf32>) {
  ^bb0(%t: f32, %m: f32, %out: f32):
    %l = math.log %t : f32
    %r = arith.addf %l, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x1xf32>
  %o0 = tensor.empty() : tensor<1x2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %o = linalg.generic {indexing_maps = [#q, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x4xf32>) outs(%oz : tensor<1x2x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x2x8x4xf32>
  return %o, %lse : tensor<1x2x8x4xf32>, tensor<1x2x8x1xf32>
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

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %q = call @input(%c0) : (index) -> tensor<1x2x8x4xf32>
  %k = call @input(%c1) : (index) -> tensor<1x2x8x4xf32>
  %v = call @input(%c2) : (index) -> tensor<1x2x8x4xf32>
  %o, %lse = call @with_lse(%q, %k, %v) : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x1xf32>)
  call @print_sum_of_squares(%o) : (tensor<1x2x8x4xf32>) -> ()
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id4, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%lse : tensor<1x2x8x1xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %m: f32):
    %r = arith.addf %x, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %val = tensor.extract %sum[] : tensor<f32>
  vector.print %val : f32
  return
}
