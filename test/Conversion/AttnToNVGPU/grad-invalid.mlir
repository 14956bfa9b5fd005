// RUN: attn-opt %s --attn-to-nvgpu --split-input-file --verify-diagnostics

// What attn-to-nvgpu's backward kernel does not take yet, or at all.

func.func @mask_gradient(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>, %m: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel does not support the mask's gradient yet: run the gradient on the CPU (attn-to-cpu)}}
  %dq, %dk, %dv, %dm = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      mask(%m : tensor<1x1x64x64xf32>)
      outs(%q, %k, %k, %m : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf32>)  -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf32>
  return %dm : tensor<1x1x64x64xf32>
}

// -----

func.func @partition(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel has its own schedule (a CTA per key/value block and per query block); the partition #attn.split_kv<splits = 2> cuts the CPU's loops: drop it for the GPU}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      outs(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>) {partition = #attn.split_kv<splits = 2>} -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
  return %dq : tensor<1x1x64x64xf16>
}

// -----

func.func @tiles(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel takes 64 x 64 tiles at D = 64, Dv = 64; got 128 x 64: drop the tiles attribute for the GPU}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      outs(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>) {tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 1>} -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
  return %dq : tensor<1x1x64x64xf16>
}

// -----

func.func @wide(%q: tensor<1x1x64x264xbf16>, %k: tensor<1x1x64x264xbf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x264xbf16> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel needs head dimensions that are multiples of 8 up to 256; got D = 264, Dv = 264: run the gradient on the CPU (attn-to-cpu)}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x264xbf16>, tensor<1x1x64x264xbf16>, tensor<1x1x64x264xbf16>)
      out(%q, %lse : tensor<1x1x64x264xbf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x264xbf16>)
      outs(%q, %k, %k : tensor<1x1x64x264xbf16>, tensor<1x1x64x264xbf16>, tensor<1x1x64x264xbf16>)  -> tensor<1x1x64x264xbf16>, tensor<1x1x64x264xbf16>, tensor<1x1x64x264xbf16>
  return %dq : tensor<1x1x64x264xbf16>
}

// -----

func.func @f32(%q: tensor<1x1x64x64xf32>, %k: tensor<1x1x64x64xf32>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{attn-to-nvgpu supports f16 and bf16 operands, got 'f32': the tensor cores multiply 16-bit inputs, or run the gradient on the CPU (attn-to-cpu)}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
      out(%q, %lse : tensor<1x1x64x64xf32>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf32>)
      outs(%q, %k, %k : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)  -> tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>
  return %dq : tensor<1x1x64x64xf32>
}

// -----

func.func @dynamic(%q: tensor<1x1x?x64xf16>, %k: tensor<1x1x?x64xf16>, %lse: tensor<1x1x?xf32>) -> tensor<1x1x?x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel needs static sizes (run-time lengths are not supported on the GPU yet): run the gradient on the CPU (attn-to-cpu)}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>)
      out(%q, %lse : tensor<1x1x?x64xf16>, tensor<1x1x?xf32>) grad(%q : tensor<1x1x?x64xf16>)
      outs(%q, %k, %k : tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>)  -> tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>, tensor<1x1x?x64xf16>
  return %dq : tensor<1x1x?x64xf16>
}

// -----

func.func @region_without_derivative(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel: the score region uses the score in 'arith.remf', which has no derivative rule}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      outs(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)  -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 3.0 : f32
    %r = arith.remf %s, %c : f32
    attn.yield %r : f32
  }
  return %dq : tensor<1x1x64x64xf16>
}

// -----

func.func @region_not_inlinable(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>) -> tensor<1x1x64x64xf16> {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      outs(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)  -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{attn-to-nvgpu inlines score regions of scalar arith operations, math.tanh, exp, exp2, log, log2, absf and sqrt, and tensor.extract from constant tensors; 'math.sin' is not one (attn-to-cpu runs any region)}}
    %r = math.sin %s : f32
    attn.yield %r : f32
  }
  return %dq : tensor<1x1x64x64xf16>
}

// -----

func.func @region_yields_argument(%q: tensor<1x1x64x64xf16>, %k: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>, %bias: f32) -> tensor<1x1x64x64xf16> {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      outs(%q, %k, %k : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)  -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{attn-to-nvgpu inlines a score region into a kernel: it may use only its arguments, the values it defines and constants}}
    attn.yield %bias : f32
  }
  return %dq : tensor<1x1x64x64xf16>
}

// -----

func.func @block_mask_blocks(%q: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>, %bm: tensor<1x1x2x1xi8>) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu's backward kernel needs block-mask blocks whose rows and keys are multiples of 64 (its tiles nest in them both ways); got 32 x 64: run the gradient on the CPU (attn-to-cpu)}}
  %dq, %dk, %dv = attn.attention_grad ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%q, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%q : tensor<1x1x64x64xf16>)
      block_mask(%bm : tensor<1x1x2x1xi8> blocks [32, 64])
      outs(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>
  return %dq : tensor<1x1x64x64xf16>
}
