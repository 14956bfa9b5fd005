// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @gqa_prefill_with_lse
func.func @gqa_prefill_with_lse(%q: tensor<1x32x2048x128xbf16>, %k: tensor<1x8x2048x128xbf16>,
                                %v: tensor<1x8x2048x128xbf16>, %o: tensor<1x32x2048x128xbf16>,
                                %l: tensor<1x32x2048xf32>) -> (tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>) {
  // CHECK: %{{.+}}:2 = attn.attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<1x32x2048x128xbf16>, tensor<1x8x2048x128xbf16>, tensor<1x8x2048x128xbf16>)
  // CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>)
  // CHECK-SAME: {causal, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>}
  // CHECK-SAME: -> tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>
  %r:2 = attn.attention ins(%q, %k, %v : tensor<1x32x2048x128xbf16>, tensor<1x8x2048x128xbf16>, tensor<1x8x2048x128xbf16>)
      outs(%o, %l : tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>)
      {causal, tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>}
      -> tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>
  return %r#0, %r#1 : tensor<1x32x2048x128xbf16>, tensor<1x32x2048xf32>
}

// The kernel plan round-trips; its registers and CTAs an SM are printed only
// when they are not 0.
// CHECK-LABEL: func.func @kernel_plans
func.func @kernel_plans(%q: tensor<1x8x1024x64xf16>, %o: tensor<1x8x1024x64xf16>) -> (tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>) {
  // CHECK: kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>
  %r0 = attn.attention ins(%q, %q, %q : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>)
      outs(%o : tensor<1x8x1024x64xf16>)
      {kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>}
      -> tensor<1x8x1024x64xf16>
  // CHECK: kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes, min_ctas_per_sm = 2>}
  %r1 = attn.attention ins(%q, %q, %q : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>)
      outs(%o : tensor<1x8x1024x64xf16>)
      {kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes, producer_registers = 0, min_ctas_per_sm = 2>}
      -> tensor<1x8x1024x64xf16>
  return %r0, %r1 : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>
}

// GQA packing: packed_heads is printed only when it is not 1.
// CHECK-LABEL: func.func @gqa_decode_packed
func.func @gqa_decode_packed(%q: tensor<2x32x1x128xbf16>, %k: tensor<2x8x4096x128xbf16>,
                             %v: tensor<2x8x4096x128xbf16>, %o: tensor<2x32x1x128xbf16>)
    -> tensor<2x32x1x128xbf16> {
  // CHECK: tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>
  %r = attn.attention ins(%q, %k, %v : tensor<2x32x1x128xbf16>, tensor<2x8x4096x128xbf16>, tensor<2x8x4096x128xbf16>)
      outs(%o : tensor<2x32x1x128xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>}
      -> tensor<2x32x1x128xbf16>
  // CHECK: tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2>}
  %r1 = attn.attention ins(%q, %k, %v : tensor<2x32x1x128xbf16>, tensor<2x8x4096x128xbf16>, tensor<2x8x4096x128xbf16>)
      outs(%r : tensor<2x32x1x128xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 1>}
      -> tensor<2x32x1x128xbf16>
  return %r1 : tensor<2x32x1x128xbf16>
}

// CHECK-LABEL: func.func @mqa_decode_split_kv
func.func @mqa_decode_split_kv(%q: tensor<4x16x1x64xf16>, %k: tensor<4x1x4096x64xf16>,
                               %v: tensor<4x1x4096x64xf16>, %o: tensor<4x16x1x64xf32>) -> tensor<4x16x1x64xf32> {
  // CHECK: attn.attention
  // CHECK-SAME: {partition = #attn.split_kv<splits = 16>, scale = 1.250000e-01 : f32, softcap = 5.000000e+01 : f32}
  %r = attn.attention ins(%q, %k, %v : tensor<4x16x1x64xf16>, tensor<4x1x4096x64xf16>, tensor<4x1x4096x64xf16>)
      outs(%o : tensor<4x16x1x64xf32>)
      {partition = #attn.split_kv<splits = 16>, scale = 0.125 : f32, softcap = 50.0 : f32}
      -> tensor<4x16x1x64xf32>
  return %r : tensor<4x16x1x64xf32>
}

// CHECK-LABEL: func.func @window_and_masks
func.func @window_and_masks(%q: tensor<2x8x17x80xf32>, %k: tensor<2x8x33x80xf32>, %v: tensor<2x8x33x96xf32>,
                            %bool: tensor<1x1x17x33xi1>, %bias: tensor<2x1x17x33xf32>,
                            %o: tensor<2x8x17x96xf32>) -> (tensor<2x8x17x96xf32>, tensor<2x8x17x96xf32>) {
  // CHECK: attn.attention ins({{.*}}) mask(%{{.+}} : tensor<1x1x17x33xi1>) outs(%{{.+}} : tensor<2x8x17x96xf32>)
  // CHECK-SAME: {causal, window = array<i64: 8, 0>}
  %a = attn.attention ins(%q, %k, %v : tensor<2x8x17x80xf32>, tensor<2x8x33x80xf32>, tensor<2x8x33x96xf32>)
      mask(%bool : tensor<1x1x17x33xi1>) outs(%o : tensor<2x8x17x96xf32>)
      {causal, window = array<i64: 8, 0>} -> tensor<2x8x17x96xf32>
  // CHECK: attn.attention ins({{.*}}) mask(%{{.+}} : tensor<2x1x17x33xf32>)
  // CHECK-SAME: {partition = #attn.lean<ctas = 264>}
  %b = attn.attention ins(%q, %k, %v : tensor<2x8x17x80xf32>, tensor<2x8x33x80xf32>, tensor<2x8x33x96xf32>)
      mask(%bias : tensor<2x1x17x33xf32>) outs(%o : tensor<2x8x17x96xf32>)
      {partition = #attn.lean<ctas = 264>} -> tensor<2x8x17x96xf32>
  return %a, %b : tensor<2x8x17x96xf32>, tensor<2x8x17x96xf32>
}

// CHECK-LABEL: func.func @block_sparse
func.func @block_sparse(%q: tensor<2x8x100x64xbf16>, %k: tensor<2x2x1000x64xbf16>,
                        %v: tensor<2x2x1000x64xbf16>, %bool: tensor<2x1x100x1000xi1>,
                        %blocks: tensor<1x8x2x8xi8>, %o: tensor<2x8x100x64xbf16>) -> tensor<2x8x100x64xbf16> {
  // CHECK: attn.attention ins({{.*}}) mask(%{{.+}} : tensor<2x1x100x1000xi1>)
  // CHECK-SAME: block_mask(%{{.+}} : tensor<1x8x2x8xi8> blocks [64, 128]) outs(%{{.+}} : tensor<2x8x100x64xbf16>)
  // CHECK-SAME: {causal}
  %a = attn.attention ins(%q, %k, %v : tensor<2x8x100x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>)
      mask(%bool : tensor<2x1x100x1000xi1>)
      block_mask(%blocks : tensor<1x8x2x8xi8> blocks [64, 128])
      outs(%o : tensor<2x8x100x64xbf16>) {causal} -> tensor<2x8x100x64xbf16>
  return %a : tensor<2x8x100x64xbf16>
}

// CHECK-LABEL: func.func @key_lengths
func.func @key_lengths(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>,
                       %lengths: tensor<?xi32>, %o: tensor<?x32x1x128xbf16>) -> tensor<?x32x1x128xbf16> {
  // CHECK: attn.attention ins({{.*}}) key_lengths(%{{.+}} : tensor<?xi32>) outs(%{{.+}} : tensor<?x32x1x128xbf16>)
  // CHECK-SAME: {causal, partition = #attn.split_kv<splits = 4>}
  %a = attn.attention ins(%q, %k, %k : tensor<?x32x1x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      key_lengths(%lengths : tensor<?xi32>)
      outs(%o : tensor<?x32x1x128xbf16>) {causal, partition = #attn.split_kv<splits = 4>} -> tensor<?x32x1x128xbf16>
  return %a : tensor<?x32x1x128xbf16>
}

// CHECK-LABEL: func.func @alibi_score_region
func.func @alibi_score_region(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>,
                              %v: tensor<2x8x128x64xf16>, %o: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  // CHECK: attn.attention
  // CHECK-SAME: -> tensor<2x8x128x64xf16> score {
  // CHECK-NEXT: ^bb0(%[[S:.+]]: f32, %{{.+}}: index, %[[H:.+]]: index, %[[I:.+]]: index, %[[J:.+]]: index):
  // CHECK: %[[D:.+]] = arith.subi %[[J]], %[[I]] : index
  // CHECK: %[[R:.+]] = arith.addf %[[S]], %{{.+}} : f32
  // CHECK-NEXT: attn.yield %[[R]] : f32
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>)
      outs(%o : tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %slope = arith.constant 0.0625 : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
      }
  return %r : tensor<2x8x128x64xf16>
}

// CHECK-LABEL: func.func @dynamic_lengths
func.func @dynamic_lengths(%q: tensor<?x32x?x128xbf16>, %k: tensor<?x8x?x128xbf16>, %v: tensor<?x8x?x128xbf16>,
                           %o: tensor<?x32x?x128xbf16>) -> tensor<?x32x?x128xbf16> {
  // CHECK: attn.attention ins({{.*}} : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
  %r = attn.attention ins(%q, %k, %v : tensor<?x32x?x128xbf16>, tensor<?x8x?x128xbf16>, tensor<?x8x?x128xbf16>)
      outs(%o : tensor<?x32x?x128xbf16>) {causal} -> tensor<?x32x?x128xbf16>
  return %r : tensor<?x32x?x128xbf16>
}

// CHECK-LABEL: func.func @merge_partials
func.func @merge_partials(%po: tensor<8x1x32x1x128xf32>, %pl: tensor<8x1x32x1xf32>,
                          %o: tensor<1x32x1x128xbf16>, %l: tensor<1x32x1xf32>,
                          %po2: tensor<2x16x?x4x64xf32>, %pl2: tensor<2x16x?x4xf32>,
                          %o2: tensor<2x16x?x64xf32>) -> (tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>, tensor<2x16x?x64xf32>) {
  // CHECK: %{{.+}}:2 = attn.merge ins(%{{.+}}, %{{.+}} : tensor<8x1x32x1x128xf32>, tensor<8x1x32x1xf32>)
  // CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>) dim = 0
  // CHECK-SAME: -> tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>
  %r:2 = attn.merge ins(%po, %pl : tensor<8x1x32x1x128xf32>, tensor<8x1x32x1xf32>)
      outs(%o, %l : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>) dim = 0
      -> tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>
  // CHECK: attn.merge {{.*}} dim = 3 -> tensor<2x16x?x64xf32>
  %s = attn.merge ins(%po2, %pl2 : tensor<2x16x?x4x64xf32>, tensor<2x16x?x4xf32>)
      outs(%o2 : tensor<2x16x?x64xf32>) dim = 3 -> tensor<2x16x?x64xf32>
  return %r#0, %r#1, %s : tensor<1x32x1x128xbf16>, tensor<1x32x1xf32>, tensor<2x16x?x64xf32>
}

// CHECK-LABEL: module @targeted
// CHECK-SAME: attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>
module @targeted attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448,
                                                        smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  // CHECK: partition = #attn.attention2d<q_parts = 2, kv_parts = 4>
  func.func @distributed(%q: tensor<1x16x4096x64xbf16>, %k: tensor<1x16x4096x64xbf16>,
                         %v: tensor<1x16x4096x64xbf16>, %o: tensor<1x16x4096x64xbf16>) -> tensor<1x16x4096x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<1x16x4096x64xbf16>, tensor<1x16x4096x64xbf16>, tensor<1x16x4096x64xbf16>)
        outs(%o : tensor<1x16x4096x64xbf16>) {partition = #attn.attention2d<q_parts = 2, kv_parts = 4>}
        -> tensor<1x16x4096x64xbf16>
    return %r : tensor<1x16x4096x64xbf16>
  }
}

// A partial attention: Lean pieces in dynamic slots, with a score region.
// CHECK-LABEL: func.func @partial_lean
// CHECK: %{{.+}}:2 = attn.partial_attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<1x8x4x128xbf16>, tensor<1x2x8192x128xbf16>, tensor<1x2x8192x128xbf16>) outs(%{{.+}}, %{{.+}} : tensor<?x1x8x4x128xf32>, tensor<?x1x8x4xf32>)
// CHECK-SAME: partition = #attn.lean<ctas = 264>
// CHECK-SAME: tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2>
// CHECK: score
// CHECK: attn.yield
func.func @partial_lean(%q: tensor<1x8x4x128xbf16>, %k: tensor<1x2x8192x128xbf16>,
                        %po: tensor<?x1x8x4x128xf32>, %pl: tensor<?x1x8x4xf32>)
    -> (tensor<?x1x8x4x128xf32>, tensor<?x1x8x4xf32>) {
  %r:2 = attn.partial_attention ins(%q, %k, %k : tensor<1x8x4x128xbf16>, tensor<1x2x8192x128xbf16>, tensor<1x2x8192x128xbf16>)
      outs(%po, %pl : tensor<?x1x8x4x128xf32>, tensor<?x1x8x4xf32>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2>,
       partition = #attn.lean<ctas = 264>} -> tensor<?x1x8x4x128xf32>, tensor<?x1x8x4xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return %r#0, %r#1 : tensor<?x1x8x4x128xf32>, tensor<?x1x8x4xf32>
}

// A framed attention (one rank's part of a larger one) and a ring partition.
// CHECK-LABEL: func.func @framed
// CHECK: attn.attention ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>) frame(%{{.+}}, %{{.+}} of %{{.+}}, %{{.+}}) outs(%{{.+}} : tensor<1x2x16x8xf32>) {causal}
// CHECK: partition = #attn.ring<devices = 8>
// CHECK: partition = #attn.attention2d<q_parts = 2, kv_parts = 2, zigzag = true>
func.func @framed(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x32x8xf32>, %o: tensor<1x2x16x8xf32>,
                  %q0: index, %k0: index, %sq: index, %sk: index)
    -> (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) {
  %r = attn.attention ins(%q, %k, %k : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>)
      frame(%q0, %k0 of %sq, %sk) outs(%o : tensor<1x2x16x8xf32>) {causal} -> tensor<1x2x16x8xf32>
  %s = attn.attention ins(%q, %k, %k : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>)
      outs(%o : tensor<1x2x16x8xf32>) {partition = #attn.ring<devices = 8>} -> tensor<1x2x16x8xf32>
  %t = attn.attention ins(%q, %k, %k : tensor<1x2x16x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>)
      outs(%o : tensor<1x2x16x8xf32>) {partition = #attn.attention2d<q_parts = 2, kv_parts = 2, zigzag = true>} -> tensor<1x2x16x8xf32>
  return %r, %s : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>
}

// The gradient, with every optional part: mask, key lengths, a pinned
// schedule and the score region.
// CHECK-LABEL: func.func @attention_grad
func.func @attention_grad(%q: tensor<2x8x64x32xbf16>, %k: tensor<2x2x96x32xbf16>, %v: tensor<2x2x96x16xbf16>,
                          %o: tensor<2x8x64x16xbf16>, %l: tensor<2x8x64xf32>, %do: tensor<2x8x64x16xbf16>,
                          %m: tensor<1x8x64x96xf32>, %len: tensor<2xi32>, %dq: tensor<2x8x64x32xf32>)
    -> (tensor<2x8x64x32xf32>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>) {
  // CHECK: %{{.+}}:3 = attn.attention_grad ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x8x64x32xbf16>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>)
  // CHECK-SAME: out(%{{.+}}, %{{.+}} : tensor<2x8x64x16xbf16>, tensor<2x8x64xf32>) grad(%{{.+}} : tensor<2x8x64x16xbf16>)
  // CHECK-SAME: mask(%{{.+}} : tensor<1x8x64x96xf32>) key_lengths(%{{.+}} : tensor<2xi32>)
  // CHECK-SAME: outs(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x8x64x32xf32>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>)
  // CHECK-SAME: {causal, deterministic, partition = #attn.split_kv<splits = 2>, softcap = 3.000000e+01 : f32, tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 2>}
  // CHECK: attn.yield
  %r:3 = attn.attention_grad ins(%q, %k, %v : tensor<2x8x64x32xbf16>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>)
      out(%o, %l : tensor<2x8x64x16xbf16>, tensor<2x8x64xf32>) grad(%do : tensor<2x8x64x16xbf16>)
      mask(%m : tensor<1x8x64x96xf32>) key_lengths(%len : tensor<2xi32>)
      outs(%dq, %k, %v : tensor<2x8x64x32xf32>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>)
      {causal, deterministic, softcap = 30.0 : f32, partition = #attn.split_kv<splits = 2>,
       tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 2>}
      -> tensor<2x8x64x32xf32>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        attn.yield %s : f32
      }
  return %r#0, %r#1, %r#2 : tensor<2x8x64x32xf32>, tensor<2x2x96x32xbf16>, tensor<2x2x96x16xbf16>
}
