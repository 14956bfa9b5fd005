// A score region that reads a value of its function (see score-region.mlir).
func.func @bias_argument(%q: tensor<1x1x16x16xf32>, %k: tensor<1x1x16x16xf32>,
                         %v: tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> {
  %o0 = tensor.empty() : tensor<1x1x16x16xf32>
  %bias = arith.constant 0.5 : f32
  %scaled = arith.mulf %bias, %bias : f32
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x16x16xf32>,
      tensor<1x1x16x16xf32>, tensor<1x1x16x16xf32>)
      outs(%o0 : tensor<1x1x16x16xf32>) -> tensor<1x1x16x16xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %r = arith.addf %s, %scaled : f32
    attn.yield %r : f32
  }
  return %o : tensor<1x1x16x16xf32>
}
