// A score region that attn-decompose-grad cannot differentiate (math.erf
// of the score has no derivative rule).
func.func @erf(%q: tensor<1x2x16x16xf32>, %o: tensor<1x2x16x16xf32>, %l: tensor<1x2x16xf32>)
    -> (tensor<1x2x16x16xf32>, tensor<1x2x16xf32>) {
  %r:2 = attn.attention ins(%q, %q, %q : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>)
      outs(%o, %l : tensor<1x2x16x16xf32>, tensor<1x2x16xf32>) -> tensor<1x2x16x16xf32>, tensor<1x2x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %e = math.erf %s : f32
        attn.yield %e : f32
      }
  return %r#0, %r#1 : tensor<1x2x16x16xf32>, tensor<1x2x16xf32>
}
