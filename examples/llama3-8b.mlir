// Llama-3-8B attention on an H100: 32 query heads share 8 key/value heads
// (grouped-query attention, 4:1), head dimension 128, bf16.
//
// @prefill: a 4096-token causal prompt, keeping the log-sum-exp.
// @decode:  one new token per sequence for a batch of 8 against a 16k-token
//           KV cache. No schedule is pinned: attn-select-schedule chooses for
//           the target. GQA packing puts the 4 query heads of each KV head
//           into one query block (each K and V block is read once for
//           them), leaving 8 x 8 = 64 CTAs for 2 x 132 wave slots, so
//           --attn-to-ptx splits the KV range in 4 (split-KV, the default;
//           --attn-to-ptx="lean=true" for Lean attention instead).
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {

  func.func @prefill(%q: tensor<1x32x4096x128xbf16>, %k: tensor<1x8x4096x128xbf16>,
                     %v: tensor<1x8x4096x128xbf16>) -> (tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>) {
    %o0 = tensor.empty() : tensor<1x32x4096x128xbf16>
    %l0 = tensor.empty() : tensor<1x32x4096xf32>
    %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x32x4096x128xbf16>, tensor<1x8x4096x128xbf16>,
                                               tensor<1x8x4096x128xbf16>)
        outs(%o0, %l0 : tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>)
        {causal} -> tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>
    return %o, %lse : tensor<1x32x4096x128xbf16>, tensor<1x32x4096xf32>
  }

  func.func @decode(%q: tensor<8x32x1x128xbf16>, %k_cache: tensor<8x8x16384x128xbf16>,
                    %v_cache: tensor<8x8x16384x128xbf16>) -> tensor<8x32x1x128xbf16> {
    %o0 = tensor.empty() : tensor<8x32x1x128xbf16>
    %o = attn.attention ins(%q, %k_cache, %v_cache : tensor<8x32x1x128xbf16>, tensor<8x8x16384x128xbf16>,
                                                     tensor<8x8x16384x128xbf16>)
        outs(%o0 : tensor<8x32x1x128xbf16>)
        {causal} -> tensor<8x32x1x128xbf16>
    return %o : tensor<8x32x1x128xbf16>
  }
}
