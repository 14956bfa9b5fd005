// Grouped-query attention as Llama's repeat_kv writes it (torch-mlir's
// form: K's 2 key/value heads unsqueezed, expanded by a broadcasting generic
// and folded into 4 heads; V's by a linalg.broadcast): attn-raise-attention
// reads the 2 heads in place (attn.attention's head h reads key/value head
// h / 2, repeat_kv's mapping), and the raised function agrees with the
// unraised @reference (softmax without the max, not raised) on the CPU.
// Raised as it is, after canonicalize and cse, and after
// linalg-fuse-elementwise-ops, which propagates the [Hq] -> [Hkv, G]
// reshape into the products and parts of the softmax (K read within the
// first product without the group dimension, V broadcast to it, the
// reductions on [B, Hq] and [B, Hkv, G] views): the steps read the same
// elements, and the attention reads the 2 heads in place.
// RUN: attn-opt %s --attn-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --canonicalize --cse --attn-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=IR
// RUN: attn-opt %s --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --linalg-fuse-elementwise-ops --attn-raise-attention --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// IR: remark: raised to attn.attention (scale 3.535534e-01, additive mask, grouped-query heads read in place)
// IR-LABEL: func.func private @raised
// IR-SAME: %[[K:[a-z0-9]+]]: tensor<2x2x16x8xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x16x8xf32>
// IR-NOT: linalg.generic
// IR-NOT: linalg.broadcast
// IR: attn.attention ins(%{{.+}}, %[[K]], %[[V]] : tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>)
// IR-LABEL: func.func private @reference
// IR-NOT: attn.attention
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
func.func private @raised(%q: tensor<2x4x16x8xf32>, %k0: tensor<2x2x16x8xf32>, %v0: tensor<2x2x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
  // repeat_kv(K): unsqueeze the group dimension, expand it, fold it into
  // the heads (torch-mlir: expand_shape, a broadcasting generic, collapse).
  %ku = tensor.expand_shape %k0 [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 8] : tensor<2x2x16x8xf32> into tensor<2x2x1x16x8xf32>
  %kg0 = tensor.empty() : tensor<2x2x2x16x8xf32>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, g, r, s, d) -> (b, g, 0, s, d)>, affine_map<(b, g, r, s, d) -> (b, g, r, s, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%ku : tensor<2x2x1x16x8xf32>) outs(%kg0 : tensor<2x2x2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x8xf32>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
  // repeat_kv(V) as a linalg.broadcast.
  %vg0 = tensor.empty() : tensor<2x2x2x16x8xf32>
  %vg = linalg.broadcast ins(%v0 : tensor<2x2x16x8xf32>) outs(%vg0 : tensor<2x2x2x16x8xf32>) dimensions = [2]
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
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

func.func private @reference(%q: tensor<2x4x16x8xf32>, %k0: tensor<2x2x16x8xf32>, %v0: tensor<2x2x16x8xf32>, %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
  // repeat_kv(K): unsqueeze the group dimension, expand it, fold it into
  // the heads (torch-mlir: expand_shape, a broadcasting generic, collapse).
  %ku = tensor.expand_shape %k0 [[0], [1, 2], [3], [4]] output_shape [2, 2, 1, 16, 8] : tensor<2x2x16x8xf32> into tensor<2x2x1x16x8xf32>
  %kg0 = tensor.empty() : tensor<2x2x2x16x8xf32>
  %kg = linalg.generic {indexing_maps = [affine_map<(b, g, r, s, d) -> (b, g, 0, s, d)>, affine_map<(b, g, r, s, d) -> (b, g, r, s, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%ku : tensor<2x2x1x16x8xf32>) outs(%kg0 : tensor<2x2x2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x2x16x8xf32>
  %k = tensor.collapse_shape %kg [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
  // repeat_kv(V) as a linalg.broadcast.
  %vg0 = tensor.empty() : tensor<2x2x2x16x8xf32>
  %vg = linalg.broadcast ins(%v0 : tensor<2x2x16x8xf32>) outs(%vg0 : tensor<2x2x2x16x8xf32>) dimensions = [2]
  %v = tensor.collapse_shape %vg [[0], [1, 2], [3], [4]] : tensor<2x2x2x16x8xf32> into tensor<2x4x16x8xf32>
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
  %kf = call @seeded(%c2) : (f32) -> tensor<2x4x16x8xf32>
  %vf = call @seeded(%c3) : (f32) -> tensor<2x4x16x8xf32>
  %k = tensor.extract_slice %kf[0, 0, 0, 0] [2, 2, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> to tensor<2x2x16x8xf32>
  %v = tensor.extract_slice %vf[0, 0, 0, 0] [2, 2, 16, 8] [1, 1, 1, 1] : tensor<2x4x16x8xf32> to tensor<2x2x16x8xf32>
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
  %a = call @raised(%q, %k, %v, %mask) : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<16x16xf32>) -> tensor<2x4x16x8xf32>
  %b = call @reference(%q, %k, %v, %mask) : (tensor<2x4x16x8xf32>, tensor<2x2x16x8xf32>, tensor<2x2x16x8xf32>, tensor<16x16xf32>) -> tensor<2x4x16x8xf32>
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
