// The attention of one Llama-3-8B layer (32 query heads grouped 4:1 onto 8
// key/value heads, head dimension 128, bf16), cut to a quarter of the heads
// and to lengths a CPU runs in seconds: the default example of the main job.
//
// @prefill: a 512-token causal prompt, keeping the log-sum-exp.
// @decode:  one new token for each of 2 sequences against a 4096-token KV
//           cache, split over the key/value range into 4 partials
//           (flash-decoding) that attn.merge recombines.
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
        {causal, partition = #attn.split_kv<splits = 4>} -> tensor<2x8x1x128xbf16>
    return %o : tensor<2x8x1x128xbf16>
  }
}
