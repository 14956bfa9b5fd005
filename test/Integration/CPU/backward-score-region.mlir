// The gradient through a score region: attn-decompose-grad multiplies dS by
// the region's derivative with respect to the score, built by forward-mode
// differentiation of its body (ScoreDerivative). attn-run checks dQ, dK and
// dV against the float64 reference gradient, whose derivative of the region
// is a five-point difference of the region's body compiled alone: an
// independent derivative.
// RUN: attn-run --backward %s | FileCheck %s
// RUN: attn-run --backward --grad-splits=2 --block-m=16 --block-n=16 %s | FileCheck %s

// CHECK: @relative_bias:
// CHECK:   check dQ : {{.*}} PASS
// CHECK:   check dK : {{.*}} PASS
// CHECK:   check dV : {{.*}} PASS
// CHECK: @smooth_mix:
// CHECK:   check dQ : {{.*}} PASS
// CHECK:   check dK : {{.*}} PASS
// CHECK: @documents:
// CHECK:   check dQ : {{.*}} PASS
// CHECK: @clamp_and_gate:
// CHECK:   check dQ : {{.*}} PASS
// CHECK:   check dK : {{.*}} PASS
// CHECK:   check dV : {{.*}} PASS
// CHECK: @remaining_rules:
// CHECK:   check dQ : {{.*}} PASS
// CHECK:   check dK : {{.*}} PASS
// CHECK: @infinite_where_hidden:
// CHECK:   check dQ : {{.*}} PASS
// CHECK:   check dK : {{.*}} PASS
// CHECK: @slope_table:
// CHECK:   check dQ : {{.*}} PASS
// CHECK:   check dK : {{.*}} PASS
// CHECK:   check dV : {{.*}} PASS
// CHECK: {{^PASS$}}

// A bias along the relative position (ALiBi's shape): region' = 1.
func.func @relative_bias(%q: tensor<1x2x33x32xf32>, %k: tensor<1x2x45x32xf32>,
                         %v: tensor<1x2x45x32xf32>) -> (tensor<1x2x33x32xf32>, tensor<1x2x33xf32>) {
  %o0 = tensor.empty() : tensor<1x2x33x32xf32>
  %l0 = tensor.empty() : tensor<1x2x33xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<1x2x33x32xf32>, tensor<1x2x45x32xf32>, tensor<1x2x45x32xf32>)
      outs(%o0, %l0 : tensor<1x2x33x32xf32>, tensor<1x2x33xf32>) {causal}
      -> tensor<1x2x33x32xf32>, tensor<1x2x33xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %c = arith.constant 0.05 : f32
    %bias = arith.mulf %df, %c : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<1x2x33x32xf32>, tensor<1x2x33xf32>
}

// Products, quotients, exp, log, tanh and sqrt of the score, with GQA and a
// head-dependent factor.
func.func @smooth_mix(%q: tensor<2x4x20x16xf32>, %k: tensor<2x2x50x16xf32>,
                      %v: tensor<2x2x50x24xf32>) -> (tensor<2x4x20x24xf32>, tensor<2x4x20xf32>) {
  %o0 = tensor.empty() : tensor<2x4x20x24xf32>
  %l0 = tensor.empty() : tensor<2x4x20xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<2x4x20x16xf32>, tensor<2x2x50x16xf32>, tensor<2x2x50x24xf32>)
      outs(%o0, %l0 : tensor<2x4x20x24xf32>, tensor<2x4x20xf32>)
      -> tensor<2x4x20x24xf32>, tensor<2x4x20xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %hi = arith.index_cast %h : index to i64
    %hf = arith.sitofp %hi : i64 to f32
    %one = arith.constant 1.0 : f32
    %quarter = arith.constant 0.25 : f32
    %w = arith.addf %hf, %one : f32
    %t = math.tanh %s : f32
    %tw = arith.mulf %t, %w : f32
    %sq = arith.mulf %s, %s : f32
    %p = arith.addf %sq, %one : f32
    %root = math.sqrt %p : f32
    %lg = math.log %p : f32
    %e = math.exp %t : f32
    %q1 = arith.divf %s, %root : f32
    %a = arith.addf %tw, %q1 : f32
    %b2 = arith.mulf %lg, %quarter : f32
    %c = arith.subf %a, %b2 : f32
    %r = arith.addf %c, %e : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<2x4x20x24xf32>, tensor<2x4x20xf32>
}

// Document masking in the region (-inf across documents: no gradient there),
// bf16.
func.func @documents(%q: tensor<1x2x40x32xbf16>, %k: tensor<1x2x40x32xbf16>,
                     %v: tensor<1x2x40x32xbf16>) -> (tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>) {
  %o0 = tensor.empty() : tensor<1x2x40x32xbf16>
  %l0 = tensor.empty() : tensor<1x2x40xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<1x2x40x32xbf16>, tensor<1x2x40x32xbf16>, tensor<1x2x40x32xbf16>)
      outs(%o0, %l0 : tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>) {causal}
      -> tensor<1x2x40x32xbf16>, tensor<1x2x40xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c13 = arith.constant 13 : index
    %di = arith.divui %i, %c13 : index
    %dj = arith.divui %j, %c13 : index
    %same = arith.cmpi eq, %di, %dj : index
    %ninf = arith.constant 0xFF800000 : f32
    %r = arith.select %same, %s, %ninf : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>
}

// Piecewise: a clamp (maximumf, minimumf), an absolute value and a sine, with
// softcap before the region.
func.func @clamp_and_gate(%q: tensor<1x2x24x16xf32>, %k: tensor<1x2x36x16xf32>,
                          %v: tensor<1x2x36x16xf32>) -> (tensor<1x2x24x16xf32>, tensor<1x2x24xf32>) {
  %o0 = tensor.empty() : tensor<1x2x24x16xf32>
  %l0 = tensor.empty() : tensor<1x2x24xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<1x2x24x16xf32>, tensor<1x2x36x16xf32>, tensor<1x2x36x16xf32>)
      outs(%o0, %l0 : tensor<1x2x24x16xf32>, tensor<1x2x24xf32>) {softcap = 4.0 : f32}
      -> tensor<1x2x24x16xf32>, tensor<1x2x24xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %lo = arith.constant -1.5 : f32
    %hi = arith.constant 2.5 : f32
    %half = arith.constant 0.5 : f32
    %m = arith.maximumf %s, %lo : f32
    %c = arith.minimumf %m, %hi : f32
    %a = math.absf %s : f32
    %sn = math.sin %a : f32
    %g = arith.mulf %sn, %half : f32
    %r = arith.addf %c, %g : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<1x2x24x16xf32>, tensor<1x2x24xf32>
}

// The other rules: exp2, log2, cos, negf, maxnumf, minnumf and fma.
func.func @remaining_rules(%q: tensor<1x2x18x16xf32>, %k: tensor<1x2x27x16xf32>,
                           %v: tensor<1x2x27x16xf32>) -> (tensor<1x2x18x16xf32>, tensor<1x2x18xf32>) {
  %o0 = tensor.empty() : tensor<1x2x18x16xf32>
  %l0 = tensor.empty() : tensor<1x2x18xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<1x2x18x16xf32>, tensor<1x2x27x16xf32>, tensor<1x2x27x16xf32>)
      outs(%o0, %l0 : tensor<1x2x18x16xf32>, tensor<1x2x18xf32>) {causal}
      -> tensor<1x2x18x16xf32>, tensor<1x2x18xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1.0 : f32
    %tenth = arith.constant 0.1 : f32
    %lo = arith.constant -2.0 : f32
    %hi = arith.constant 3.0 : f32
    %e = math.exp2 %s : f32
    %es = arith.mulf %e, %tenth : f32
    %sq = arith.mulf %s, %s : f32
    %p = arith.addf %sq, %one : f32
    %l = math.log2 %p : f32
    %c = math.cos %s : f32
    %n = arith.negf %c : f32
    %m = arith.maxnumf %s, %lo : f32
    %m2 = arith.minnumf %m, %hi : f32
    %f = math.fma %s, %tenth, %m2 : f32
    %a = arith.addf %es, %l : f32
    %a2 = arith.addf %a, %n : f32
    %r = arith.addf %a2, %f : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<1x2x18x16xf32>, tensor<1x2x18xf32>
}

// A region whose derivative is infinite at keys the causal mask hides
// (s / (1 + q - k) at k = q + 1): hidden scores contribute 0, not NaN.
func.func @infinite_where_hidden(%q: tensor<1x2x24x16xf32>, %k: tensor<1x2x24x16xf32>,
                                 %v: tensor<1x2x24x16xf32>) -> (tensor<1x2x24x16xf32>, tensor<1x2x24xf32>) {
  %o0 = tensor.empty() : tensor<1x2x24x16xf32>
  %l0 = tensor.empty() : tensor<1x2x24xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32>, tensor<1x2x24x16xf32>)
      outs(%o0, %l0 : tensor<1x2x24x16xf32>, tensor<1x2x24xf32>) {causal}
      -> tensor<1x2x24x16xf32>, tensor<1x2x24xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %one = arith.constant 1.0 : f32
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %d = arith.subi %ii, %ji : i64
    %df = arith.sitofp %d : i64 to f32
    %den = arith.addf %df, %one : f32
    %r = arith.divf %s, %den : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<1x2x24x16xf32>, tensor<1x2x24xf32>
}

// ALiBi as models ship it: a table of per-head slopes, f32, read by
// tensor.extract (the reference evaluates the region in f64, the table
// widened with it).
func.func @slope_table(%q: tensor<1x2x20x16xf32>, %k: tensor<1x2x30x16xf32>,
                       %v: tensor<1x2x30x16xf32>) -> (tensor<1x2x20x16xf32>, tensor<1x2x20xf32>) {
  %slopes = arith.constant dense<[0.25, 0.0625]> : tensor<2xf32>
  %o0 = tensor.empty() : tensor<1x2x20x16xf32>
  %l0 = tensor.empty() : tensor<1x2x20xf32>
  %o:2 = attn.attention ins(%q, %k, %v : tensor<1x2x20x16xf32>, tensor<1x2x30x16xf32>, tensor<1x2x30x16xf32>)
      outs(%o0, %l0 : tensor<1x2x20x16xf32>, tensor<1x2x20xf32>) {causal}
      -> tensor<1x2x20x16xf32>, tensor<1x2x20xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %m = tensor.extract %slopes[%h] : tensor<2xf32>
    %ii = arith.index_cast %i : index to i64
    %ji = arith.index_cast %j : index to i64
    %d = arith.subi %ji, %ii : i64
    %df = arith.sitofp %d : i64 to f32
    %t = arith.mulf %m, %df : f32
    %r = arith.addf %s, %t : f32
    attn.yield %r : f32
  }
  return %o#0, %o#1 : tensor<1x2x20x16xf32>, tensor<1x2x20xf32>
}
