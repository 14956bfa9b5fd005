// The execution test of attn-raise-attention: @raised (the attention as a
// front end writes it: products, divide by a constant, an additive causal
// mask, softmax as max/exp/sum/divide) is raised to attn.attention;
// @reference computes the same softmax without subtracting the row maximum,
// which the pass must not raise. Both run on the CPU on the same inputs and
// must agree within 1e-5 (f32), raised or not.
// RUN: attn-opt %s --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR-LABEL: func.func private @raised
// IR: attn.attention
// IR-NOT: linalg.generic
// IR-LABEL: func.func private @reference
// IR-NOT: attn.attention
// IR-COUNT-4: linalg.generic
// CHECK: agree: 1

#q = affine_map<(b, h, m, n, k) -> (b, h, m, k)>
#kt = affine_map<(b, h, m, n, k) -> (b, h, n, k)>
#v = affine_map<(b, h, m, n, k) -> (b, h, k, n)>
#o = affine_map<(b, h, m, n, k) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mask = affine_map<(b, h, m, n) -> (m, n)>
#fill = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mask2 = affine_map<(m, n) -> (m, n)>
func.func private @raised(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
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
  %o = linalg.generic {indexing_maps = [#q, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) outs(%oz : tensor<2x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

func.func private @reference(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
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
    %r = math.exp %a : f32
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
  %o = linalg.generic {indexing_maps = [#q, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) outs(%oz : tensor<2x4x16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

func.func private @seeded(%phase: f32) -> tensor<2x4x16x8xf32> {
  %e = tensor.empty() : tensor<2x4x16x8xf32>
  %t = linalg.generic {indexing_maps = [#fill], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%e : tensor<2x4x16x8xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i0, %i1 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i3 : index
    %d = arith.addi %c, %i2 : index
    %n = arith.index_cast %d : index to i64
    %f = arith.sitofp %n : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<2x4x16x8xf32>
  return %t : tensor<2x4x16x8xf32>
}

func.func @main() {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %q = call @seeded(%c1) : (f32) -> tensor<2x4x16x8xf32>
  %k = call @seeded(%c2) : (f32) -> tensor<2x4x16x8xf32>
  %v = call @seeded(%c3) : (f32) -> tensor<2x4x16x8xf32>
  // A causal mask: -1e9 above the diagonal.
  %me = tensor.empty() : tensor<16x16xf32>
  %mask = linalg.generic {indexing_maps = [#mask2], iterator_types = ["parallel", "parallel"]}
      outs(%me : tensor<16x16xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %hidden = arith.cmpi ugt, %j, %i : index
    %big = arith.constant -1.0e9 : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.select %hidden, %big, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>
  %a = call @raised(%q, %k, %v, %mask) : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<16x16xf32>) -> tensor<2x4x16x8xf32>
  %b = call @reference(%q, %k, %v, %mask) : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<16x16xf32>) -> tensor<2x4x16x8xf32>
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %diff = linalg.generic {indexing_maps = [#fill, #fill, affine_map<(b, h, m, n) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %r = arith.maximumf %ad, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %max = tensor.extract %diff[] : tensor<f32>
  %tol = arith.constant 1.0e-5 : f32
  %ok = arith.cmpf olt, %max, %tol : f32
  vector.print str "agree: "
  vector.print %ok : i1
  return
}
