func.func @cut(%q: tensor<1x8x16x64xf16>, %k: tensor<1x2x16x64xf16>, %o: tensor<1x8x16x64xf16>) -> tensor<1x8x16x64xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x8x16x64xf16>, tensor<1x2x16x64xf16>, tensor<1x2x16x64xf16>)
      outs(%o : tensor<1x8x16x
