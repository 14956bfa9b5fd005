// RUN: attn-opt %s --split-input-file --attn-decompose="block-n=16" --verify-diagnostics

// A partial attention's pieces are made of its tiles: other block sizes
// would change what each slot holds.
func.func @partial_tiles_overridden(%q: tensor<1x1x16x64xf32>, %po: tensor<2x1x1x16x64xf32>, %pl: tensor<2x1x1x16xf32>) -> tensor<2x1x1x16x64xf32> {
  // expected-error @+1 {{the tiles of a partial attention define its pieces: got block-m/block-n 0 x 16 for tiles 16 x 32}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      outs(%po, %pl : tensor<2x1x1x16x64xf32>, tensor<2x1x1x16xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 2>}
      -> tensor<2x1x1x16x64xf32>, tensor<2x1x1x16xf32>
  return %r#0 : tensor<2x1x1x16x64xf32>
}

// -----

// Too few slots for Lean's pieces, which the verifier does not simulate:
// causal, Sq = Sk = 40, 16 x 16 tiles: 1 + 2 + 3 = 6 LeanTiles over 7 CTAs,
// one each, so the last tile's 3 blocks are 3 pieces.
func.func @partial_lean_too_few_slots(%q: tensor<1x1x40x64xf32>, %po: tensor<1x1x1x40x64xf32>, %pl: tensor<1x1x1x40xf32>) -> tensor<1x1x1x40x64xf32> {
  // expected-error @+1 {{'attn.partial_attention' op lean with 7 CTAs cuts an output tile into 3 pieces, one slot each; got 1 slots}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x40x64xf32>, tensor<1x1x40x64xf32>, tensor<1x1x40x64xf32>)
      outs(%po, %pl : tensor<1x1x1x40x64xf32>, tensor<1x1x1x40xf32>)
      {causal, tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.lean<ctas = 7>}
      -> tensor<1x1x1x40x64xf32>, tensor<1x1x1x40xf32>
  return %r#0 : tensor<1x1x1x40x64xf32>
}
