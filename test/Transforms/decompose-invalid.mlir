// RUN: attn-opt %s --attn-decompose --split-input-file --verify-diagnostics

func.func @partition_not_explicit(%q: tensor<1x1x16x64xf32>, %o: tensor<1x1x16x64xf32>) -> tensor<1x1x16x64xf32> {
  // expected-error @+1 {{attn-decompose takes attentions without a partition; got #attn.lean<ctas = 8> (split_kv and lean: run attn-partition-kv first)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      outs(%o : tensor<1x1x16x64xf32>) {partition = #attn.lean<ctas = 8>} -> tensor<1x1x16x64xf32>
  return %r : tensor<1x1x16x64xf32>
}

// -----

func.func @no_default_tiles(%q: tensor<1x1x16x512xf32>, %o: tensor<1x1x16x512xf32>) -> tensor<1x1x16x512xf32> {
  // expected-error @+1 {{no default tiling for this head dimension (above 256 or dynamic): pin one with the tiles attribute or the block-m/block-n options}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>)
      outs(%o : tensor<1x1x16x512xf32>) -> tensor<1x1x16x512xf32>
  return %r : tensor<1x1x16x512xf32>
}


// -----

func.func @tiles_straddle_mask_blocks(%q: tensor<1x1x64x64xf32>, %o: tensor<1x1x64x64xf32>,
                                      %blocks: tensor<1x1x2x2xi8>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{tiles 64x32 do not nest in the block mask's 32x32 blocks: block_m must divide Bq and block_n Bk}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
      block_mask(%blocks : tensor<1x1x2x2xi8> blocks [32, 32])
      outs(%o : tensor<1x1x64x64xf32>) {tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>}
      -> tensor<1x1x64x64xf32>
  return %r : tensor<1x1x64x64xf32>
}
