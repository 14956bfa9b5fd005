// A block mask that is a constant of the module (block-sparse.mlir): attn-run
// keeps its values.
func.func @constant_blocks(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %o0 = tensor.empty() : tensor<1x2x64x16xf32>
  %blocks = arith.constant dense<[[[[1, 0], [2, 1]]]]> : tensor<1x1x2x2xi8>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>)
      block_mask(%blocks : tensor<1x1x2x2xi8> blocks [32, 32])
      outs(%o0 : tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}
