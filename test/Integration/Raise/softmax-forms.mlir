// Softmax and precision forms real producers use (docs/raising-forms.md):
// @rebroadcast (X10): the maximum combined as maximumf(%out, %in), the sum
// started from -0.0, and both copied back to the full [B, Sq, Sk] shape by
// broadcasting generics before the subtraction and the division;
// @maxnum_reciprocal (X8, X11): the maximum by arith.maxnumf from f32's
// lowest finite value, the sum inverted as 1.0 / sum and multiplied;
// @f16_accumulate_f32 (C1, X5): f16 products accumulating in f32 fills
// with their results truncated to f16, the softmax computed in f32 between
// an extf and a truncf; @f16_exp_f32_sum (C7, JAX's f16 BERT): Q and K
// extended to f32 for a product into f16, the maximum, exponential and
// division in f16, the sum extended to f32 and truncated back, P and V
// extended to f32 for the second product. Each is raised as it is, after canonicalize and
// cse, and after linalg-fuse-elementwise-ops, and runs to the same result
// raised and not (sum of squares of O).
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @rebroadcast
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @maxnum_reciprocal
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @f16_accumulate_f32
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// IR-LABEL: func.func private @f16_exp_f32_sum
// IR: attn.attention {{.*}} {scale = 5.000000e-01 : f32}
// IR-NOT: linalg.batch_matmul
// f32 agrees to the digits printed; the f16 forms (O rounded to f16 on both
// sides; C7's exponential in f16 unraised) to 2e-4.
// CHECK: 9.73315
// CHECK-NEXT: 9.73315
// CHECK-NEXT: 9.73{{[01][0-9]*}}
// CHECK-NEXT: {{9\.7299|9\.730|9\.731}}

#id = affine_map<(b, m, n) -> (b, m, n)>
#row = affine_map<(b, m, n) -> (b, m)>
#id2 = affine_map<(b, m) -> (b, m)>

func.func private @rebroadcast(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %nzero = arith.constant -0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %mxb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mx : tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mxb : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %d = arith.subf %in, %in_1 : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %sm0 = linalg.fill ins(%nzero : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x8x8xf32>) outs(%sm0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %smb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sm : tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %smb : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

func.func private @maxnum_reciprocal(%q: tensor<2x8x4xf32>, %kt: tensor<2x4x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %half : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%lowest : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxnumf %in, %out : f32
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
  %rc = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%sm : tensor<2x8xf32>) outs(%r0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.divf %one, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %rc : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.mulf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

func.func private @f16_accumulate_f32(%q: tensor<2x8x4xf16>, %kt: tensor<2x4x8xf16>, %v: tensor<2x8x4xf16>) -> tensor<2x8x4xf16> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant 0.5 : f16
  %e32 = tensor.empty() : tensor<2x8x8xf32>
  %e16 = tensor.empty() : tensor<2x8x8xf16>
  %z = linalg.fill ins(%zero : f32) outs(%e32 : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s32 = linalg.batch_matmul ins(%q, %kt : tensor<2x8x4xf16>, tensor<2x4x8xf16>) outs(%z : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s32 : tensor<2x8x8xf32>) outs(%e16 : tensor<2x8x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x8xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf16>) outs(%e16 : tensor<2x8x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %r = arith.mulf %in, %half : f16
    linalg.yield %r : f16
  } -> tensor<2x8x8xf16>
  %xf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x8x8xf16>) outs(%e32 : tensor<2x8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r0 = tensor.empty() : tensor<2x8xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xf : tensor<2x8x8xf32>) outs(%mx0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xf, %mx : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e32 : tensor<2x8x8xf32>) {
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
  %pf = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e32 : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %r = arith.divf %in, %in_1 : f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pf : tensor<2x8x8xf32>) outs(%e16 : tensor<2x8x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x8xf16>
  %o0 = tensor.empty() : tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o32 = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf16>, tensor<2x8x4xf16>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o16 = tensor.empty() : tensor<2x8x4xf16>
  %o = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o32 : tensor<2x8x4xf32>) outs(%o16 : tensor<2x8x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x4xf16>
  return %o : tensor<2x8x4xf16>
}

func.func private @f16_exp_f32_sum(%q: tensor<2x8x4xf16>, %kt: tensor<2x4x8xf16>, %v: tensor<2x8x4xf16>) -> tensor<2x8x4xf16> {
  %zero = arith.constant 0.0 : f32
  %zero16 = arith.constant 0.0 : f16
  %ninf = arith.constant 0xFC00 : f16
  %half = arith.constant 0.5 : f16
  %eq = tensor.empty() : tensor<2x8x4xf32>
  %ek = tensor.empty() : tensor<2x4x8xf32>
  %q32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<2x8x4xf16>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  %kt32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kt : tensor<2x4x8xf16>) outs(%ek : tensor<2x4x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x4x8xf32>
  %e32 = tensor.empty() : tensor<2x8x8xf32>
  %e16 = tensor.empty() : tensor<2x8x8xf16>
  %z = linalg.fill ins(%zero16 : f16) outs(%e16 : tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %s = linalg.batch_matmul ins(%q32, %kt32 : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%z : tensor<2x8x8xf16>) -> tensor<2x8x8xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x8x8xf16>) outs(%e16 : tensor<2x8x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %r = arith.mulf %in, %half : f16
    linalg.yield %r : f16
  } -> tensor<2x8x8xf16>
  %r16 = tensor.empty() : tensor<2x8xf16>
  %mx0 = linalg.fill ins(%ninf : f16) outs(%r16 : tensor<2x8xf16>) -> tensor<2x8xf16>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x8x8xf16>) outs(%mx0 : tensor<2x8xf16>) {
  ^bb0(%in: f16, %out: f16):
    %r = arith.maximumf %in, %out : f16
    linalg.yield %r : f16
  } -> tensor<2x8xf16>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mx : tensor<2x8x8xf16>, tensor<2x8xf16>) outs(%e16 : tensor<2x8x8xf16>) {
  ^bb0(%in: f16, %in_1: f16, %out: f16):
    %d = arith.subf %in, %in_1 : f16
    %r = math.exp %d : f16
    linalg.yield %r : f16
  } -> tensor<2x8x8xf16>
  %exf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex : tensor<2x8x8xf16>) outs(%e32 : tensor<2x8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %r32 = tensor.empty() : tensor<2x8xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r32 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sm = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%exf : tensor<2x8x8xf32>) outs(%sm0 : tensor<2x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %sm16 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%sm : tensor<2x8xf32>) outs(%r16 : tensor<2x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8xf16>
  %p16 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sm16 : tensor<2x8x8xf16>, tensor<2x8xf16>) outs(%e16 : tensor<2x8x8xf16>) {
  ^bb0(%in: f16, %in_1: f16, %out: f16):
    %r = arith.divf %in, %in_1 : f16
    linalg.yield %r : f16
  } -> tensor<2x8x8xf16>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p16 : tensor<2x8x8xf16>) outs(%e32 : tensor<2x8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x8xf32>
  %v32 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<2x8x4xf16>) outs(%eq : tensor<2x8x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eq : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o32 = linalg.batch_matmul ins(%p, %v32 : tensor<2x8x8xf32>, tensor<2x8x4xf32>) outs(%oz : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o16 = tensor.empty() : tensor<2x8x4xf16>
  %o = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o32 : tensor<2x8x4xf32>) outs(%o16 : tensor<2x8x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x4xf16>
  return %o : tensor<2x8x4xf16>
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
  %o1 = call @rebroadcast(%q, %kt, %v) : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o1) : (tensor<2x8x4xf32>) -> ()
  %o2 = call @maxnum_reciprocal(%q, %kt, %v) : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o2) : (tensor<2x8x4xf32>) -> ()
  %q16e = tensor.empty() : tensor<2x8x4xf16>
  %q16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<2x8x4xf32>) outs(%q16e : tensor<2x8x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x4xf16>
  %kt16e = tensor.empty() : tensor<2x4x8xf16>
  %kt16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kt : tensor<2x4x8xf32>) outs(%kt16e : tensor<2x4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x4x8xf16>
  %v16e = tensor.empty() : tensor<2x8x4xf16>
  %v16 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<2x8x4xf32>) outs(%v16e : tensor<2x8x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x8x4xf16>
  %o3 = call @f16_accumulate_f32(%q16, %kt16, %v16) : (tensor<2x8x4xf16>, tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x8x4xf16>
  %o3fe = tensor.empty() : tensor<2x8x4xf32>
  %o3f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o3 : tensor<2x8x4xf16>) outs(%o3fe : tensor<2x8x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o3f) : (tensor<2x8x4xf32>) -> ()
  %o4 = call @f16_exp_f32_sum(%q16, %kt16, %v16) : (tensor<2x8x4xf16>, tensor<2x4x8xf16>, tensor<2x8x4xf16>) -> tensor<2x8x4xf16>
  %o4fe = tensor.empty() : tensor<2x8x4xf32>
  %o4f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%o4 : tensor<2x8x4xf16>) outs(%o4fe : tensor<2x8x4xf32>) {
  ^bb0(%in: f16, %out: f32):
    %r = arith.extf %in : f16 to f32
    linalg.yield %r : f32
  } -> tensor<2x8x4xf32>
  call @print_sum_of_squares(%o4f) : (tensor<2x8x4xf32>) -> ()
  return
}
