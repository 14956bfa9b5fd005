// One causal prefill of 1024 tokens (8 query heads grouped 4:1 onto 2
// key/value heads, head dimension 64, bf16, keeping the log-sum-exp)
// distributed over 4 MPI ranks two ways. Run it with
//   mpirun -n 4 build/bin/attn-run examples/distributed-prefill.mlir
// Every rank compiles its own program (attn-distribute), holds 256 tokens of
// Q, K, V and O, and rank 0 checks the gathered result against the float64
// reference and reports the bytes each rank sent against the model.
//
// @attention2d: ATTENTION2D on a 2 x 2 grid: rank (i, j) gathers query chunk
//               i over its row and key/value chunk j over its column, and the
//               row's partials are merged in a reduce-scatter.
// @ring:        ring attention over the same 4 ranks: 4 steps, the key/value
//               shards passed one rank on after each.
module {
  func.func @attention2d(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>,
                         %v: tensor<1x2x1024x64xbf16>) -> (tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>) {
    %o0 = tensor.empty() : tensor<1x8x1024x64xbf16>
    %l0 = tensor.empty() : tensor<1x8x1024xf32>
    %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>,
                                               tensor<1x2x1024x64xbf16>)
        outs(%o0, %l0 : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>)
        {causal, partition = #attn.attention2d<q_parts = 2, kv_parts = 2>}
        -> tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>
    return %o, %lse : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>
  }

  func.func @ring(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>,
                  %v: tensor<1x2x1024x64xbf16>) -> (tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>) {
    %o0 = tensor.empty() : tensor<1x8x1024x64xbf16>
    %l0 = tensor.empty() : tensor<1x8x1024xf32>
    %o, %lse = attn.attention ins(%q, %k, %v : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>,
                                               tensor<1x2x1024x64xbf16>)
        outs(%o0, %l0 : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>)
        {causal, partition = #attn.ring<devices = 4>}
        -> tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>
    return %o, %lse : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>
  }
}
