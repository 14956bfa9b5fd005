// One attention of a training step: a 1024-token causal, sliding-window
// (512 keys back) GQA attention in bf16 (8 query heads over 2 key/value
// heads, D = 64), forward and backward. attn-run --backward runs the forward
// of @forward, then its attn.attention_grad on a seeded dO, and checks O,
// LSE, dQ, dK and dV against the float64 reference:
//
//   build/bin/attn-run examples/training-step.mlir --backward --grad-splits=2
//
// @gradient is the same gradient written out, with its schedule pinned: the
// key/value blocks of each (batch, key/value head) cut into 2 pieces, each
// piece's program owning their dK and dV and its own f32 copy of dQ.
// attn-print-plan reports and draws it (docs/schedules.md).
func.func @forward(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>,
                   %v: tensor<1x2x1024x64xbf16>) -> (tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>) {
  %o0 = tensor.empty() : tensor<1x8x1024x64xbf16>
  %l0 = tensor.empty() : tensor<1x8x1024xf32>
  %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>,
                                             tensor<1x2x1024x64xbf16>)
      outs(%o0, %l0 : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>)
      {causal, window = array<i64: 512, 0>} -> tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>
  return %o, %lse : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>
}

func.func @gradient(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>,
                    %v: tensor<1x2x1024x64xbf16>, %o: tensor<1x8x1024x64xbf16>,
                    %lse: tensor<1x8x1024xf32>, %do: tensor<1x8x1024x64xbf16>)
    -> (tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>) {
  %dq0 = tensor.empty() : tensor<1x8x1024x64xbf16>
  %dk0 = tensor.empty() : tensor<1x2x1024x64xbf16>
  %dv0 = tensor.empty() : tensor<1x2x1024x64xbf16>
  %dq, %dk, %dv = attn.attention_grad
      ins(%q, %k, %v : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>)
      out(%o, %lse : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>)
      grad(%do : tensor<1x8x1024x64xbf16>)
      outs(%dq0, %dk0, %dv0 : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>)
      {causal, window = array<i64: 512, 0>, partition = #attn.split_kv<splits = 2>}
      -> tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>
  return %dq, %dk, %dv : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>
}
