// The decode kernel attn-select-schedule chooses for run-time lengths (one
// query row, batch and cache length dynamic, GQA 2:1, sm_90a) runs on the
// CPU at several cache lengths and must agree with the attention without a
// partition on the same inputs. With `split-kv` FlashAttention-2's rule
// picks S for the smallest batch and a cache too long to bound it (the 2
// packed output tiles of B = 1 fill 218 of 264 slots with S = 109), so most
// pieces are empty at these lengths (Sk = 1, 57, 300 and 1000: 1 to 16
// key/value blocks of 64) and an empty cache leaves every piece empty
// (O = 0); with `lean` every resident CTA takes part, and the LeanTiles and
// each CTA's range are counted at each call.
// RUN: attn-opt %s --attn-select-schedule="split-kv=true" | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --attn-select-schedule="lean=true" | FileCheck %s --check-prefix=LEAN
// attn-to-cpu chooses the same schedule itself (its split-kv is on by
// default, as attn-to-ptx's), and runs it.
// RUN: attn-opt %s --attn-to-cpu --mlir-print-ir-after=attn-select-schedule -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: attn-opt %s --attn-to-cpu="lean=true" --mlir-print-ir-after=attn-select-schedule -o /dev/null 2>&1 | FileCheck %s --check-prefix=LEAN
// RUN: attn-opt %s --attn-to-cpu | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu="lean=true" | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// SPLIT: partition = #attn.split_kv<splits = 109>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 2>
// LEAN: partition = #attn.lean<ctas = {{[0-9]+}}>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 2>
// CHECK-COUNT-6: agree: 1
// CHECK-NOT: agree: 0

#all4 = affine_map<(b, h, m, n) -> (b, h, m, n)>
#none4 = affine_map<(b, h, m, n) -> ()>

!q = tensor<?x4x1x16xf32>
!kv = tensor<?x2x?x16xf32>

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536,
    regs_per_thread = 255>} {

func.func private @decode(%q: !q, %k: !kv, %v: !kv) -> !q {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : !q
  %e = tensor.empty(%b) : !q
  %o = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%e : !q) -> !q
  return %o : !q
}

// Pinned tiles keep FlashAttention-2's grid: no partition.
func.func private @reference(%q: !q, %k: !kv, %v: !kv) -> !q {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %q, %c0 : !q
  %e = tensor.empty(%b) : !q
  %o = attn.attention ins(%q, %k, %v : !q, !kv, !kv) outs(%e : !q)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>} -> !q
  return %o : !q
}

// Deterministic values in [-1, 1] of the given shape.
func.func private @seeded(%phase: f32, %init: tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %t = linalg.generic {indexing_maps = [#all4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%init : tensor<?x?x?x16xf32>) {
  ^bb0(%out: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %a = arith.muli %i0, %i1 : index
    %b = arith.addi %a, %i2 : index
    %c = arith.muli %b, %i3 : index
    %d = arith.addi %c, %i2 : index
    %x = arith.index_cast %d : index to i64
    %f = arith.sitofp %x : i64 to f32
    %g = arith.addf %f, %phase : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  } -> tensor<?x?x?x16xf32>
  return %t : tensor<?x?x?x16xf32>
}

func.func private @inputs(%b: index, %sk: index) -> (!q, !kv, !kv) {
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %four = arith.constant 4 : index
  %eq = tensor.empty(%b, %four, %one) : tensor<?x?x?x16xf32>
  %ekv = tensor.empty(%b, %two, %sk) : tensor<?x?x?x16xf32>
  %qd = call @seeded(%c1, %eq) : (f32, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %kd = call @seeded(%c2, %ekv) : (f32, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %vd = call @seeded(%c3, %ekv) : (f32, tensor<?x?x?x16xf32>) -> tensor<?x?x?x16xf32>
  %q = tensor.cast %qd : tensor<?x?x?x16xf32> to !q
  %k = tensor.cast %kd : tensor<?x?x?x16xf32> to !kv
  %v = tensor.cast %vd : tensor<?x?x?x16xf32> to !kv
  return %q, %k, %v : !q, !kv, !kv
}

// Prints whether max |a - b| < 1e-5.
func.func private @agree(%a: !q, %b: !q) {
  %zero = arith.constant 0.0 : f32
  %acc = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%acc : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#all4, #all4, #none4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%a, %b : !q, !q) outs(%acc0 : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %m: f32):
    %d = arith.subf %x, %y : f32
    %ad = math.absf %d : f32
    %mm = arith.maximumf %ad, %m : f32
    linalg.yield %mm : f32
  } -> tensor<f32>
  %max = tensor.extract %r[] : tensor<f32>
  %tol = arith.constant 1.0e-5 : f32
  %ok = arith.cmpf olt, %max, %tol : f32
  vector.print str "agree: "
  vector.print %ok : i1
  return
}

// One decode step of a batch of `b` over `sk` cached keys.
func.func private @step(%b: index, %sk: index) {
  %q, %k, %v = call @inputs(%b, %sk) : (index, index) -> (!q, !kv, !kv)
  %d = call @decode(%q, %k, %v) : (!q, !kv, !kv) -> !q
  %r = call @reference(%q, %k, %v) : (!q, !kv, !kv) -> !q
  call @agree(%d, %r) : (!q, !q) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c57 = arith.constant 57 : index
  %c300 = arith.constant 300 : index
  %c1000 = arith.constant 1000 : index
  call @step(%c1, %c1) : (index, index) -> ()
  call @step(%c1, %c57) : (index, index) -> ()
  call @step(%c3, %c300) : (index, index) -> ()
  call @step(%c1, %c1000) : (index, index) -> ()
  call @step(%c3, %c1000) : (index, index) -> ()
  call @step(%c1, %c0) : (index, index) -> ()
  return
}

}
