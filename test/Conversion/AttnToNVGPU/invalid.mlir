// RUN: attn-opt %s --attn-to-nvgpu --split-input-file --verify-diagnostics

func.func @f32(%q: tensor<1x1x64x64xf32>, %o: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{attn-to-nvgpu supports f16 and bf16 operands, got 'f32': the tensor cores multiply 16-bit inputs; convert Q, K and V (arith.truncf) to bf16 (f32's range) or f16 before the attention, or run it on the CPU (attn-to-cpu)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>)
      outs(%o : tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  return %r : tensor<1x1x64x64xf32>
}

// -----

func.func @constant_block_mask_dynamic_lengths(%q: tensor<?x1x?x64xf16>, %o: tensor<?x1x?x64xf16>) -> tensor<?x1x?x64xf16> {
  %m = arith.constant dense<1> : tensor<1x1x1x1xi8>
  // expected-error @+1 {{attn-to-nvgpu: a constant block mask covers the blocks of one Sq and Sk, and this attention's lengths are known at run time only: pass the block mask as an argument (the kernel's block_mask parameter)}}
  %r = attn.attention ins(%q, %q, %q : tensor<?x1x?x64xf16>, tensor<?x1x?x64xf16>, tensor<?x1x?x64xf16>)
      block_mask(%m : tensor<1x1x1x1xi8> blocks [64, 64]) outs(%o : tensor<?x1x?x64xf16>) -> tensor<?x1x?x64xf16>
  return %r : tensor<?x1x?x64xf16>
}

// -----

func.func @region_with_tensor(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>, %docs: tensor<64xi32>) -> tensor<1x1x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{attn-to-nvgpu inlines score regions of scalar arith operations, math.tanh, exp, exp2, log, log2, absf and sqrt, and tensor.extract from constant tensors; 'tensor.extract' is not one (attn-to-cpu runs any region)}}
    %d = tensor.extract %docs[%i] : tensor<64xi32>
    %f = arith.sitofp %d : i32 to f32
    %r = arith.addf %s, %f : f32
    attn.yield %r : f32
  }
  return %r : tensor<1x1x64x64xf16>
}

// -----

func.func @region_with_math_call(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{'math.erf' is not one}}
    %e = math.erf %s : f32
    attn.yield %e : f32
  }
  return %r : tensor<1x1x64x64xf16>
}

// -----

func.func @region_with_argument(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>, %bias: f32) -> tensor<1x1x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{attn-to-nvgpu inlines a score region into a kernel: it may use only its arguments, the values it defines and constants}}
    %x = arith.addf %s, %bias : f32
    attn.yield %x : f32
  }
  return %r : tensor<1x1x64x64xf16>
}

// -----

// The yielded value is checked too: a value of the function that is not a
// constant cannot be inlined.
func.func @region_yields_argument(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>, %bias: f32) -> tensor<1x1x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{attn-to-nvgpu inlines a score region into a kernel: it may use only its arguments, the values it defines and constants}}
    attn.yield %bias : f32
  }
  return %r : tensor<1x1x64x64xf16>
}

// -----

func.func @attention2d(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x512x64xf16>, %o: tensor<1x1x1x64xf16>) -> tensor<1x1x1x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu lowers FlashAttention-2's grid, #attn.split_kv and #attn.lean; not yet #attn.attention2d<q_parts = 2, kv_parts = 2>: attn-distribute turns it into each rank's program, which runs on the CPU (attn-to-cpu)}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x1x1x64xf16>, tensor<1x1x512x64xf16>, tensor<1x1x512x64xf16>)
      outs(%o : tensor<1x1x1x64xf16>) {partition = #attn.attention2d<q_parts = 2, kv_parts = 2>} -> tensor<1x1x1x64xf16>
  return %r : tensor<1x1x1x64xf16>
}

// -----

// Split-KV: more splits than key/value blocks (512 keys in 64-key blocks)
// only add empty partials.
func.func @too_many_splits(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x512x64xf16>, %o: tensor<1x1x1x64xf16>) -> tensor<1x1x1x64xf16> {
  // expected-error @+1 {{split_kv splits 9 exceed the 8 key/value blocks of 64 keys: use at most 8 splits}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x1x1x64xf16>, tensor<1x1x512x64xf16>, tensor<1x1x512x64xf16>)
      outs(%o : tensor<1x1x1x64xf16>) {partition = #attn.split_kv<splits = 9>,
                                       tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x1x1x64xf16>
  return %r : tensor<1x1x1x64xf16>
}

// -----

// Split-KV's grid has Hq x splits CTAs in z.
func.func @split_grid(%q: tensor<1x4096x1x64xf16>, %k: tensor<1x4096x?x64xf16>, %o: tensor<1x4096x1x64xf16>) -> tensor<1x4096x1x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu: 4096 query heads x 16 splits exceed the grid's 65535 CTAs in z: use at most 15 splits}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x4096x1x64xf16>, tensor<1x4096x?x64xf16>, tensor<1x4096x?x64xf16>)
      outs(%o : tensor<1x4096x1x64xf16>) {partition = #attn.split_kv<splits = 16>} -> tensor<1x4096x1x64xf16>
  return %r : tensor<1x4096x1x64xf16>
}

// -----

// FlashAttention's test matrix: D = 59 and 111 are rejected, not multiples
// of 8.
func.func @head_dim(%q: tensor<1x1x64x59xf16>, %o: tensor<1x1x64x59xf16>) -> tensor<1x1x64x59xf16> {
  // expected-error @+1 {{attn-to-nvgpu needs head dimensions that are multiples of 8 up to 256; got D = 59, Dv = 59: pad Q and K (or V) with zero columns to the next multiple of 8 (zero columns of Q and K leave the scores unchanged; drop V's padding from O), or run on the CPU (attn-to-cpu)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x59xf16>, tensor<1x1x64x59xf16>, tensor<1x1x64x59xf16>)
      outs(%o : tensor<1x1x64x59xf16>) -> tensor<1x1x64x59xf16>
  return %r : tensor<1x1x64x59xf16>
}

// -----

func.func @value_dim(%q: tensor<1x1x64x64xf16>, %v: tensor<1x1x64x111xf16>, %o: tensor<1x1x64x111xf16>) -> tensor<1x1x64x111xf16> {
  // expected-error @+1 {{got D = 64, Dv = 111}}
  %r = attn.attention ins(%q, %q, %v : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x111xf16>)
      outs(%o : tensor<1x1x64x111xf16>) -> tensor<1x1x64x111xf16>
  return %r : tensor<1x1x64x111xf16>
}

// -----

func.func @wide(%q: tensor<1x1x64x264xf16>, %o: tensor<1x1x64x264xf16>) -> tensor<1x1x64x264xf16> {
  // expected-error @+1 {{multiples of 8 up to 256; got D = 264}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x264xf16>, tensor<1x1x64x264xf16>, tensor<1x1x64x264xf16>)
      outs(%o : tensor<1x1x64x264xf16>) -> tensor<1x1x64x264xf16>
  return %r : tensor<1x1x64x264xf16>
}

// -----

func.func @dynamic_head_dim(%q: tensor<1x1x16x?xf16>, %o: tensor<1x1x16x?xf16>) -> tensor<1x1x16x?xf16> {
  // expected-error @+1 {{attn-to-nvgpu needs static head counts and head dimensions (the kernel is specialised for them); the batch, Sq and Sk may be dynamic}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x16x?xf16>, tensor<1x1x16x?xf16>, tensor<1x1x16x?xf16>)
      outs(%o : tensor<1x1x16x?xf16>) {scale = 0.125 : f32} -> tensor<1x1x16x?xf16>
  return %r : tensor<1x1x16x?xf16>
}

// -----

func.func @out_type(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> {
  // expected-error @+1 {{attn-to-nvgpu needs O in the element type of Q ('f16'), got 'f32': give O Q's element type and convert the result after the attention (arith.extf), or run it on the CPU (attn-to-cpu)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32>
  return %r : tensor<1x1x64x64xf32>
}

// -----

// Lean's persistent CTAs must all be resident: D = 128 in 128 x 128 tiles
// with 8 warps, 160 KiB of shared memory, is one CTA per SM on sm_90a.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @lean_too_many_ctas(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x8x4096x128xbf16>, %o: tensor<1x8x1x128xbf16>) -> tensor<1x8x1x128xbf16> {
    // expected-error @+1 {{#attn.lean with 133 CTAs cannot run on sm_90a: its persistent CTAs must all be resident, and 132 SMs x 1 CTA(s) per SM hold 132: use at most that many (#attn.lean<ctas = 132>)}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x1x128xbf16>, tensor<1x8x4096x128xbf16>, tensor<1x8x4096x128xbf16>)
        outs(%o : tensor<1x8x1x128xbf16>)
        {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>, partition = #attn.lean<ctas = 133>} -> tensor<1x8x1x128xbf16>
    return %r : tensor<1x8x1x128xbf16>
  }
}

// -----

// The residency check counts registers as attn-select-schedule does for a
// kernel that splits the key/value range (its loop starts at a run-time
// block, and with a softcap fa2RegistersPerThread adds a register per score
// of its S tile): D = 64 in 64 x 64 tiles is two CTAs per SM, not the three
// of a FlashAttention-2 grid kernel of these tiles.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @lean_registers_of_a_split_kernel(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x4096x64xf16>, %o: tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16> {
    // expected-error @+1 {{#attn.lean with 300 CTAs cannot run on sm_90a: its persistent CTAs must all be resident, and 132 SMs x 2 CTA(s) per SM hold 264: use at most that many (#attn.lean<ctas = 264>)}}
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x1x64xf16>, tensor<1x8x4096x64xf16>, tensor<1x8x4096x64xf16>)
        outs(%o : tensor<1x8x1x64xf16>)
        {softcap = 30.0 : f32, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, partition = #attn.lean<ctas = 300>} -> tensor<1x8x1x64xf16>
    return %r : tensor<1x8x1x64xf16>
  }
}

// -----

// A Lean kernel whose causal mask hides keys (4 queries; one query sees
// every key) needs kMaskedLeanRegisters more: D = 64 in 64 x 64 tiles is
// then two CTAs per SM, not three.
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @lean_registers_of_a_masked_kernel(%q: tensor<?x8x4x64xbf16>, %k: tensor<?x8x?x64xbf16>, %o: tensor<?x8x4x64xbf16>) -> tensor<?x8x4x64xbf16> {
    // expected-error @+1 {{#attn.lean with 396 CTAs cannot run on sm_90a: its persistent CTAs must all be resident, and 132 SMs x 2 CTA(s) per SM hold 264}}
    %r = attn.attention ins(%q, %k, %k : tensor<?x8x4x64xbf16>, tensor<?x8x?x64xbf16>, tensor<?x8x?x64xbf16>)
        outs(%o : tensor<?x8x4x64xbf16>)
        {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, partition = #attn.lean<ctas = 396>} -> tensor<?x8x4x64xbf16>
    return %r : tensor<?x8x4x64xbf16>
  }
}

// -----

func.func @frame(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>, %i: index) -> tensor<1x1x64x64xf16> {
  // expected-error @+1 {{attn-to-nvgpu does not support a frame (a part of a larger attention, which attn-distribute makes) yet: run the rank's program on the CPU (attn-to-cpu)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      frame(%i, %i of %i, %i) outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}

// -----

module attributes {attn.target = #attn.target<chip = "sm_75", sms = 40,
    smem_per_block = 65536, smem_per_sm = 65536, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @turing(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
    // expected-error @+1 {{attn-to-nvgpu generates sm_80 code (mma.sync m16n8k16, cp.async); the target sm_75 is older: run the attention on the CPU (attn-to-cpu)}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
        outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
    return %r : tensor<1x1x64x64xf16>
  }
}

// -----

func.func @block_mask_straddled(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %blocks = arith.constant dense<1> : tensor<1x1x2x2xi8>
  // expected-error @+1 {{attn-to-nvgpu: tiles 64x64 do not nest in the block mask's 32x32 blocks: block_m must divide Bq and block_n Bk}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      block_mask(%blocks : tensor<1x1x2x2xi8> blocks [32, 32]) outs(%o : tensor<1x1x64x64xf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>} -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}

// -----

// Without pinned tiles, the default ones nest in the blocks, which they
// cannot when a side is not a multiple of 16.
func.func @block_mask_unnestable(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %blocks = arith.constant dense<1> : tensor<1x1x2x2xi8>
  // expected-error @+1 {{attn-to-nvgpu: no FlashAttention-2 tiling nests in the block mask's 40x40 blocks: the sides of tiles are multiples of 16, so a block's must be too (the CPU takes any)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      block_mask(%blocks : tensor<1x1x2x2xi8> blocks [40, 40]) outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}

// -----

// Pinned tiles that do not fit the shared memory of a block (without a
// target: sm_80's 163 KiB), even with one stage.
func.func @shared_memory(%q: tensor<1x1x256x256xf16>, %o: tensor<1x1x256x256xf16>) -> tensor<1x1x256x256xf16> {
  // expected-error @+1 {{attn-to-nvgpu: the tiles need 196608 bytes of shared memory per block; the target allows 166912: pin smaller tiles (block_m or block_n of the op's tiles attribute)}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x256x256xf16>, tensor<1x1x256x256xf16>, tensor<1x1x256x256xf16>)
      outs(%o : tensor<1x1x256x256xf16>) {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 1>} -> tensor<1x1x256x256xf16>
  return %r : tensor<1x1x256x256xf16>
}
