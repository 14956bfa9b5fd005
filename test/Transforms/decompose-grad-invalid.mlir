// RUN: attn-opt %s --attn-decompose-grad --split-input-file --verify-diagnostics

func.func @score_region(%q: tensor<1x1x16x64xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>) {
  // expected-error @+1 {{attn-decompose-grad: the score region uses the score in 'math.erf', which has no derivative rule}}
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      out(%q, %l : tensor<1x1x16x64xf32>, tensor<1x1x16xf32>) grad(%q : tensor<1x1x16x64xf32>)
      outs(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %e = math.erf %s : f32
        %r = arith.addf %e, %s : f32
        attn.yield %r : f32
      }
  return %r#0, %r#1, %r#2 : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
}

// -----

func.func @no_default_tiles(%q: tensor<1x1x16x512xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>) {
  // expected-error @+1 {{no default backward tiling for this head dimension (above 256 or dynamic): pin one with the tiles attribute or the block-m/block-n options}}
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>)
      out(%q, %l : tensor<1x1x16x512xf32>, tensor<1x1x16xf32>) grad(%q : tensor<1x1x16x512xf32>)
      outs(%q, %q, %q : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>)
      -> tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>
  return %r#0, %r#1, %r#2 : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>
}

// -----

func.func @tiles_straddle_mask_blocks(%q: tensor<1x1x64x64xf32>, %l: tensor<1x1x64xf32>, %blocks: tensor<1x1x2x2xi8>)
    -> (tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>) {
  // expected-error @+1 {{tiles 64x32 do not nest in the block mask's 32x32 blocks: block_m must divide Bq and block_n Bk}}
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
      out(%q, %l : tensor<1x1x64x64xf32>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf32>)
      block_mask(%blocks : tensor<1x1x2x2xi8> blocks [32, 32])
      outs(%q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
      {tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>}
      -> tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>
  return %r#0, %r#1, %r#2 : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>
}

// -----

// An op without a rule is fine where it does not depend on the score.
func.func @rule_not_needed(%q: tensor<1x1x16x64xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>) {
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      out(%q, %l : tensor<1x1x16x64xf32>, tensor<1x1x16xf32>) grad(%q : tensor<1x1x16x64xf32>)
      outs(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %ji = arith.index_cast %j : index to i64
        %jf = arith.sitofp %ji : i64 to f32
        %e = math.erf %jf : f32
        %r = arith.addf %e, %s : f32
        attn.yield %r : f32
      }
  return %r#0, %r#1, %r#2 : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
}

// -----

// The score read inside a nested region needs a rule too: the scf.if's
// operand is an i1, but its branches read the score.
func.func @nested_region(%q: tensor<1x1x16x64xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>) {
  // expected-error @+1 {{attn-decompose-grad: the score region uses the score in 'scf.if', which has no derivative rule}}
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      out(%q, %l : tensor<1x1x16x64xf32>, tensor<1x1x16xf32>) grad(%q : tensor<1x1x16x64xf32>)
      outs(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.cmpi ult, %j, %i : index
        %half = arith.constant 0.5 : f32
        %y = scf.if %c -> f32 {
          scf.yield %s : f32
        } else {
          %m = arith.mulf %s, %half : f32
          scf.yield %m : f32
        }
        attn.yield %y : f32
      }
  return %r#0, %r#1, %r#2 : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
}

// -----

// Through an integer: a bitcast passes the score on, it is not a comparison.
func.func @bitcast(%q: tensor<1x1x16x64xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>) {
  // expected-error @+1 {{attn-decompose-grad: the score region uses the score in 'arith.bitcast', which has no derivative rule}}
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      out(%q, %l : tensor<1x1x16x64xf32>, tensor<1x1x16xf32>) grad(%q : tensor<1x1x16x64xf32>)
      outs(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %bits = arith.bitcast %s : f32 to i32
        %y = arith.bitcast %bits : i32 to f32
        attn.yield %y : f32
      }
  return %r#0, %r#1, %r#2 : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
}
