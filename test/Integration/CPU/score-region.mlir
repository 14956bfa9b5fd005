// A score region from a module is inlined into the score computation of
// every schedule; attn-run checks it against the float64 reference, which
// evaluates the region's body compiled alone (ScoreRegionFunction) inside
// its own loops.
// RUN: attn-run %s | FileCheck %s
// RUN: attn-run %s --block-m=16 --block-n=16 | FileCheck %s --check-prefix=SMALL
// RUN: not attn-run %S/Inputs/region-uses-argument.mlir 2>&1 | FileCheck %s --check-prefix=ARGUMENT
// RUN: not attn-run %S/Inputs/region-uses-argument.mlir --no-check 2>&1 | FileCheck %s --check-prefix=ARGUMENT-ALONE

// CHECK: @relative_bias: B=1 Hq=2 Hkv=2 (MHA) Sq=33 Sk=45 D=32 Dv=32 f32 score-mod
// CHECK:   check O  : {{.*}} PASS
// CHECK: @documents: B=1 Hq=2 Hkv=2 (MHA) Sq=40 Sk=40 D=32 Dv=32 bf16 causal score-mod +lse
// CHECK:   check O  : {{.*}} PASS
// CHECK:   check LSE: {{.*}} PASS
// CHECK: @capped_gqa_split: B=2 Hq=4 Hkv=2 (GQA 2:1) Sq=3 Sk=300 D=64 Dv=64 f16 softcap={{.*}} score-mod
// CHECK:   check O  : {{.*}} PASS
// CHECK: @lean_tanh_gate: B=1 Hq=2 Hkv=2 (MHA) Sq=20 Sk=70 D=16 Dv=16 f32 score-mod
// CHECK:   check O  : {{.*}} PASS
// CHECK: @constant_scores:
// CHECK:   check O  : {{.*}} PASS
// CHECK: {{^PASS$}}

// SMALL: @documents:
// SMALL:   schedule: tiles 16x16 (--block-m/--block-n); per (batch, head) 3 query blocks, 6 of 9 key blocks visited, 3 with an element mask; the IR proves 2 of 9 blocks empty and 0 full (a block mask is attached)
// SMALL:   check LSE: {{.*}} PASS
// SMALL: {{^PASS$}}

// The reference cannot take the region out of its function when it reads a
// value computed there; neither can the compiled attention.
// ARGUMENT: error: @bias_argument: the reference evaluates the score region alone, so the score region may use only its arguments, the values it defines and constants; it uses a f32 defined outside it, at {{.*}}region-uses-argument.mlir:6:
// ARGUMENT-ALONE: error: each attention is compiled alone, so the score region may use only

// A bias along the relative position, with Sq != Sk.
func.func @relative_bias(%q: tensor<1x2x33x32xf32>, %k: tensor<1x2x45x32xf32>,
                         %v: tensor<1x2x45x32xf32>) -> tensor<1x2x33x32xf32> {
  %o0 = tensor.empty() : tensor<1x2x33x32xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x33x32xf32>,
      tensor<1x2x45x32xf32>, tensor<1x2x45x32xf32>)
      outs(%o0 : tensor<1x2x33x32xf32>) -> tensor<1x2x33x32xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %c = arith.constant 0.01 : f32
    %bias = arith.mulf %df, %c : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x33x32xf32>
}

// A document mask from constant sequence ids (three documents of 13, 17 and
// 10 tokens), with causal: the first row of each document sees only itself.
func.func @documents(%q: tensor<1x2x40x32xbf16>, %k: tensor<1x2x40x32xbf16>,
                     %v: tensor<1x2x40x32xbf16>)
    -> (tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>) {
  %o0 = tensor.empty() : tensor<1x2x40x32xbf16>
  %l0 = tensor.empty() : tensor<1x2x40xf32>
  %docs = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      2, 2, 2, 2, 2, 2, 2, 2, 2, 2]> : tensor<40xi32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x2x40x32xbf16>,
      tensor<1x2x40x32xbf16>, tensor<1x2x40x32xbf16>)
      outs(%o0, %l0 : tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>) {causal}
      -> tensor<1x2x40x32xbf16>, tensor<1x2x40xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<40xi32>
    %dj = tensor.extract %docs[%j] : tensor<40xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %hidden = arith.constant 0xFF800000 : f32
    %r = arith.select %same, %s, %hidden : f32
    attn.yield %r : f32
  }
  return %o, %lse : tensor<1x2x40x32xbf16>, tensor<1x2x40xf32>
}

// Softcap, then a per-head and per-batch bias, through split-KV: the region
// runs inside every piece.
func.func @capped_gqa_split(%q: tensor<2x4x3x64xf16>, %k: tensor<2x2x300x64xf16>,
                            %v: tensor<2x2x300x64xf16>) -> tensor<2x4x3x64xf16> {
  %o0 = tensor.empty() : tensor<2x4x3x64xf16>
  %o = attn.attention ins(%q, %k, %v : tensor<2x4x3x64xf16>,
      tensor<2x2x300x64xf16>, tensor<2x2x300x64xf16>)
      outs(%o0 : tensor<2x4x3x64xf16>)
      {softcap = 5.0 : f32, partition = #attn.split_kv<splits = 3>}
      -> tensor<2x4x3x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %bh = arith.addi %b, %h : index
    %x = arith.index_cast %bh : index to i32
    %xf = arith.sitofp %x : i32 to f32
    %c = arith.constant 0.25 : f32
    %bias = arith.mulf %xf, %c : f32
    %r = arith.subf %s, %bias : f32
    attn.yield %r : f32
  }
  return %o : tensor<2x4x3x64xf16>
}

// A math function of the score and a key-dependent gate, through Lean
// attention's pieces and merge.
func.func @lean_tanh_gate(%q: tensor<1x2x20x16xf32>, %k: tensor<1x2x70x16xf32>,
                          %v: tensor<1x2x70x16xf32>) -> tensor<1x2x20x16xf32> {
  %o0 = tensor.empty() : tensor<1x2x20x16xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x20x16xf32>,
      tensor<1x2x70x16xf32>, tensor<1x2x70x16xf32>)
      outs(%o0 : tensor<1x2x20x16xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>,
       partition = #attn.lean<ctas = 3>} -> tensor<1x2x20x16xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %t = math.tanh %s : f32
    %three = arith.constant 3 : index
    %rem = arith.remui %j, %three : index
    %zero = arith.constant 0 : index
    %gated = arith.cmpi eq, %rem, %zero : index
    %half = arith.constant 0.5 : f32
    %g = arith.mulf %t, %half : f32
    %r = arith.select %gated, %g, %s : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x2x20x16xf32>
}

// A region that yields a constant from its function: every score is the
// same, O is the mean of V.
func.func @constant_scores(%q: tensor<1x1x16x16xf32>, %k: tensor<1x1x16x16xf32>,
                           %v: tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
  %o0 = tensor.empty() : tensor<1x1x16x16xf32>
  %half = arith.constant 0.5 : f32
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x16x16xf32>,
      tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>)
      outs(%o0 : tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %half : f32
  }
  return %o : tensor<1x1x16x16xf32>
}
