// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One test per verifier message of attn.attention_grad that attn.attention
// does not share (invalid.mlir tests the shared ones on attn.attention).

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{expects 3 or 4 outs operands (dQ, dK, dV, then optionally dMask), got 2}}
  %a, %b = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{expects one result per outs operand (3), got 2}}
  %a, %b = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{result #1 has type 'tensor<2x2x32x64xf32>' but its destination has type 'tensor<2x2x32x64xf16>'}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf16>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{LSE element type must be f32, got 'f16'}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf16>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x32xf16>) {
  // expected-error @+1 {{dO must have the shape of O ('tensor<2x8x16x64xf16>'), got 'tensor<2x8x16x32xf16>'}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x32xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>, %dk: tensor<2x8x32x64xf32>) {
  // expected-error @+1 {{dK must have the shape of K ('tensor<2x2x32x64xf16>'), got 'tensor<2x8x32x64xf32>'}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %dk, %v : tensor<2x8x16x64xf16>, tensor<2x8x32x64xf32>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x8x32x64xf32>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>, %dv: tensor<2x2x32x64xi8>) {
  // expected-error @+1 {{dV element type must be f16, bf16 or f32, got 'i8'}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %dv : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xi8>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xi8>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{the gradient takes packed_heads = 1, got 2}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 2, packed_heads = 2>} -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{the gradient's partition cuts the key/value blocks into pieces: #attn.split_kv, got #attn.lean<ctas = 4>}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) {partition = #attn.lean<ctas = 4>} -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // The shared checks apply: here the causal window's.
  // expected-error @+1 {{window sizes must be non-negative, got [-1, 0]}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) {window = array<i64: -1, 0>} -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{score region must yield an f32 score, got 'index'}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16> score {
  ^bb0(%s: f32, %b0: index, %h: index, %i: index, %j: index):
    attn.yield %j : index
  }
  return
}

// -----

func.func @f(%q: tensor<1x1024x65536x128xf16>, %k: tensor<1x1024x65536x128xf16>, %l: tensor<1x1024x65536xf32>) {
  // expected-error @+1 {{1000000 pieces' f32 copies of dQ hold more than 2^48 bytes (256 TiB)}}
  %a, %b, %c = attn.attention_grad ins(%q, %k, %k : tensor<1x1024x65536x128xf16>, tensor<1x1024x65536x128xf16>, tensor<1x1024x65536x128xf16>) out(%k, %l : tensor<1x1024x65536x128xf16>, tensor<1x1024x65536xf32>) grad(%k : tensor<1x1024x65536x128xf16>) outs(%q, %k, %k : tensor<1x1024x65536x128xf16>, tensor<1x1024x65536x128xf16>, tensor<1x1024x65536x128xf16>) {partition = #attn.split_kv<splits = 1000000>} -> tensor<1x1024x65536x128xf16>, tensor<1x1024x65536x128xf16>, tensor<1x1024x65536x128xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>, %dm: tensor<2x1x16x32xf32>) {
  // expected-error @+1 {{dMask is the gradient of an additive mask, and the op has no mask}}
  %a, %b, %c, %d = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) outs(%q, %k, %v, %dm : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x1x16x32xf32>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x1x16x32xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>, %m: tensor<2x1x16x32xi1>, %dm: tensor<2x1x16x32xf32>) {
  // expected-error @+1 {{dMask is the gradient of an additive mask, and the op has a boolean mask}}
  %a, %b, %c, %d = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) mask(%m : tensor<2x1x16x32xi1>) outs(%q, %k, %v, %dm : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x1x16x32xf32>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x1x16x32xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>, %m: tensor<2x1x16x32xf32>, %dm: tensor<2x8x16x32xf32>) {
  // expected-error @+1 {{dMask must have the shape of the mask ('tensor<2x1x16x32xf32>'), got 'tensor<2x8x16x32xf32>'}}
  %a, %b, %c, %d = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) mask(%m : tensor<2x1x16x32xf32>) outs(%q, %k, %v, %dm : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x8x16x32xf32>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<2x8x16x32xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>, %do: tensor<2x8x16x64xf16>, %m: tensor<?x8x16x32xf32>, %dm: tensor<1x8x16x32xf32>) {
  // expected-error @+1 {{dMask's batch and head sizes must be the mask's, dynamic where the mask's are (they say what dMask sums over): mask 'tensor<?x8x16x32xf32>', dMask 'tensor<1x8x16x32xf32>'}}
  %a, %b, %c, %d = attn.attention_grad ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) out(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) grad(%do : tensor<2x8x16x64xf16>) mask(%m : tensor<?x8x16x32xf32>) outs(%q, %k, %v, %dm : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<1x8x16x32xf32>) -> tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>, tensor<1x8x16x32xf32>
  return
}

// -----

func.func @f(%q: tensor<1x1024x1024x8xf16>, %k: tensor<1x1x134217728x8xf16>, %l: tensor<1x1024x1024xf32>, %m: tensor<1x1x1024x134217728xf16>) {
  // expected-error @+1 {{dMask's f32 scores [B, Hq, Sq, Sk] hold more than 2^48 bytes (256 TiB)}}
  %a, %b, %c, %d = attn.attention_grad ins(%q, %k, %k : tensor<1x1024x1024x8xf16>, tensor<1x1x134217728x8xf16>, tensor<1x1x134217728x8xf16>) out(%q, %l : tensor<1x1024x1024x8xf16>, tensor<1x1024x1024xf32>) grad(%q : tensor<1x1024x1024x8xf16>) mask(%m : tensor<1x1x1024x134217728xf16>) outs(%q, %k, %k, %m : tensor<1x1024x1024x8xf16>, tensor<1x1x134217728x8xf16>, tensor<1x1x134217728x8xf16>, tensor<1x1x1024x134217728xf16>) -> tensor<1x1024x1024x8xf16>, tensor<1x1x134217728x8xf16>, tensor<1x1x134217728x8xf16>, tensor<1x1x1024x134217728xf16>
  return
}
