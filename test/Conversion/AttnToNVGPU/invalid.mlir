// RUN: attn-opt %s --attn-to-nvgpu --split-input-file --verify-diagnostics

func.func @f32(%q: tensor<1x1x64x64xf32>, %o: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{attn-to-nvgpu supports f16 and bf16 operands, got 'f32'}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
      outs(%o : tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  return %r : tensor<1x1x64x64xf32>
}

// -----

func.func @mask(%q: tensor<1x1x64x64xf16>, %m: tensor<1x1x64x64xi1>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu does not support the mask operand yet}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      mask(%m : tensor<1x1x64x64xi1>) outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}

// -----

func.func @softcap(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu does not support softcap yet}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) {softcap = 30.0 : f32} -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}

// -----

func.func @score_region(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu does not support a score region yet}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %s : f32
  }
  return %r : tensor<1x1x64x64xf16>
}

// -----

func.func @split(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x512x64xf16>, %o: tensor<1x1x1x64xf16>) -> tensor<1x1x1x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu does not support partitions yet, got #attn.split_kv<splits = 4>}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x1x1x64xf16>, tensor<1x1x512x64xf16>, tensor<1x1x512x64xf16>)
      outs(%o : tensor<1x1x1x64xf16>) {partition = #attn.split_kv<splits = 4>} -> tensor<1x1x1x64xf16>
  return %r : tensor<1x1x1x64xf16>
}

// -----

func.func @head_dim(%q: tensor<1x1x64x80xf16>, %o: tensor<1x1x64x80xf16>) -> tensor<1x1x64x80xf16> {
  // expected-error @+1 {{attn-to-nvgpu needs D = Dv, a multiple of 64; got D = 80, Dv = 80}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x80xf16>, tensor<1x1x64x80xf16>, tensor<1x1x64x80xf16>)
      outs(%o : tensor<1x1x64x80xf16>) -> tensor<1x1x64x80xf16>
  return %r : tensor<1x1x64x80xf16>
}

// -----

func.func @dynamic(%q: tensor<1x1x?x64xf16>, %o: tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu needs static sizes}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>)
      outs(%o : tensor<1x1x?x64xf16>) -> tensor<1x1x?x64xf16>
  return %r : tensor<1x1x?x64xf16>
}

// -----

func.func @out_type(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{attn-to-nvgpu needs O in the element type of Q}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  return %r : tensor<1x1x64x64xf32>
}
