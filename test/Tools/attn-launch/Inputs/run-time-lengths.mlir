// A prefill of run-time batch and lengths, for attn-launch --lengths.
func.func @prefill(%q: tensor<?x4x?x64xbf16>, %k: tensor<?x4x?x64xbf16>,
                   %v: tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x4x?x64xbf16>
  %s = tensor.dim %q, %c2 : tensor<?x4x?x64xbf16>
  %e = tensor.empty(%b, %s) : tensor<?x4x?x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>, tensor<?x4x?x64xbf16>)
      outs(%e : tensor<?x4x?x64xbf16>) -> tensor<?x4x?x64xbf16>
  return %o : tensor<?x4x?x64xbf16>
}
