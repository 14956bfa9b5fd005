// The attention of one Llama-3-8B layer (32 query heads grouped 4:1 onto 8
// key/value heads, head dimension 128, bf16), cut to a quarter of the heads
// and to lengths a CPU runs in seconds: the default example of the main job.
//
// @prefill: a 512-token causal prompt, keeping the log-sum-exp. No schedule
//           is pinned: on the GPU its 8 x 4 query-block CTAs fill few of 2 x
//           132 wave slots, so attn-compile splits the key/value range
//           (split-KV, FlashAttention-2's rule).
// @decode:  one new token for each of 2 sequences against a 4096-token KV
//           cache with Lean attention (stream-K): its 2 x 8 x 64 = 1024
//           LeanTiles (64 x 64 tiles) divided evenly over 264 persistent
//           CTAs (two per H100 SM), each output tile's pieces merged with the
//           log-sum-exp merge. Tiles and partition are pinned, so the CPU run
//           computes exactly the pieces the GPU kernel does.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {

  func.func @prefill(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x512x128xbf16>,
                     %v: tensor<1x2x512x128xbf16>) -> (tensor<1x8x512x128xbf16>, tensor<1x8x512xf32>) {
    %o0 = tensor.empty() : tensor<1x8x512x128xbf16>
    %l0 = tensor.empty() : tensor<1x8x512xf32>
    %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x512x128xbf16>, tensor<1x2x512x128xbf16>,
                                               tensor<1x2x512x128xbf16>)
        outs(%o0, %l0 : tensor<1x8x512x128xbf16>, tensor<1x8x512xf32>)
        {causal} -> tensor<1x8x512x128xbf16>, tensor<1x8x512xf32>
    return %o, %lse : tensor<1x8x512x128xbf16>, tensor<1x8x512xf32>
  }

  func.func @decode(%q: tensor<2x8x1x128xbf16>, %k_cache: tensor<2x2x4096x128xbf16>,
                    %v_cache: tensor<2x2x4096x128xbf16>) -> tensor<2x8x1x128xbf16> {
    %o0 = tensor.empty() : tensor<2x8x1x128xbf16>
    %o = attn.attention ins(%q, %k_cache, %v_cache : tensor<2x8x1x128xbf16>, tensor<2x2x4096x128xbf16>,
                                                     tensor<2x2x4096x128xbf16>)
        outs(%o0 : tensor<2x8x1x128xbf16>)
        {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>,
         partition = #attn.lean<ctas = 264>} -> tensor<2x8x1x128xbf16>
    return %o : tensor<2x8x1x128xbf16>
  }
}
