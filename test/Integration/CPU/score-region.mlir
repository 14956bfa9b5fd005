// A score region from a module is inlined into the score computation; the
// reference cannot evaluate arbitrary IR, so attn-run runs it only with
// --no-check and otherwise refuses before compiling anything.
// RUN: attn-run %s --no-check | FileCheck %s
// RUN: not attn-run %s 2>&1 | FileCheck %s --check-prefix=REFUSED

// CHECK: @relative_bias: B=1 Hq=2 Hkv=2 (MHA) Sq=33 Sk=45 D=32 Dv=32 f32 score-mod
// CHECK:   check: skipped (--no-check)
// CHECK: {{^PASS$}}

// REFUSED-NOT: compile
// REFUSED: error: @relative_bias: the reference cannot evaluate the attention's score region; run with --no-check

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
