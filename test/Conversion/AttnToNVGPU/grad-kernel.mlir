// RUN: attn-opt %s --attn-to-nvgpu --canonicalize --cse --split-input-file | FileCheck %s

// The backward kernel of a causal GQA attention (4 query heads over 2
// key/value heads, Sq = 100, Sk = 130): CTAs 0..5 own a key/value block of
// 64 keys each (3 blocks x 2 key/value heads), CTAs 6..13 a query block of
// 64 rows (2 blocks x 4 query heads).
func.func @gqa(%q: tensor<1x4x100x64xf16>, %k: tensor<1x2x130x64xf16>, %v: tensor<1x2x130x64xf16>,
               %o: tensor<1x4x100x64xf16>, %lse: tensor<1x4x100xf32>, %do: tensor<1x4x100x64xf16>,
               %dq0: tensor<1x4x100x64xf16>, %dk0: tensor<1x2x130x64xf16>, %dv0: tensor<1x2x130x64xf16>)
    -> (tensor<1x4x100x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x4x100x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>)
      out(%o, %lse : tensor<1x4x100x64xf16>, tensor<1x4x100xf32>) grad(%do : tensor<1x4x100x64xf16>)
      outs(%dq0, %dk0, %dv0 : tensor<1x4x100x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>) {causal}
      -> tensor<1x4x100x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>
  return %dq, %dk, %dv : tensor<1x4x100x64xf16>, tensor<1x2x130x64xf16>, tensor<1x2x130x64xf16>
}

// CHECK-LABEL: gpu.func @gqa_attention_grad0
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x4x100x64xf16>, %[[K:[a-z0-9]+]]: memref<1x2x130x64xf16>, %[[V:[a-z0-9]+]]: memref<1x2x130x64xf16>,
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1x4x100x64xf16>, %[[LSE:[a-z0-9]+]]: memref<1x4x100xf32>, %[[DO:[a-z0-9]+]]: memref<1x4x100x64xf16>,
// CHECK-SAME: %[[DQ:[a-z0-9]+]]: memref<1x4x100x64xf16>, %[[DK:[a-z0-9]+]]: memref<1x2x130x64xf16>, %[[DV:[a-z0-9]+]]: memref<1x2x130x64xf16>)
// CHECK-SAME: attn.launch = {attention = {causal = true, scale = 1.250000e-01 : f32}, block = array<i64: 128, 1, 1>,
// Own rows (two 64 x 64 tiles), the streamed block (two more) and the
// streamed rows' LSE and Dsum: 4 x 8192 + 2 x 256 bytes.
// CHECK-SAME: dynamic_shared_memory = 33280 : i64, gradient, grid = array<i64: 14, 1, 1>,
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV"]
// CHECK-SAME: tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 1>
// CHECK: %[[ROWSA:.+]] = memref.view %{{.+}}[%c0][] : {{.+}} to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[ROWSB:.+]] = memref.view %{{.+}}[%c8192][] : {{.+}} to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[STREAMA:.+]] = memref.view %{{.+}}[%c16384][] : {{.+}} to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[STREAMB:.+]] = memref.view %{{.+}}[%c24576][] : {{.+}} to memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK: %[[LSEROWS:.+]] = memref.view %{{.+}}[%c32768][] : {{.+}} to memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[DSUMROWS:.+]] = memref.view %{{.+}}[%c33024][] : {{.+}} to memref<64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[CTA:.+]] = gpu.block_id x
// CHECK: %[[KEYCTA:.+]] = arith.cmpi ult, %[[CTA]], %c6 : index
// CHECK: scf.if %[[KEYCTA]] {
// A key/value CTA: K and V of its block stay; it walks the 2 query heads of
// its group and the query blocks that see the block.
// CHECK: nvgpu.device_async_copy %[[K]]{{.+}}, %[[ROWSA]]
// CHECK: nvgpu.device_async_copy %[[V]]{{.+}}, %[[ROWSB]]
// CHECK: scf.for %{{.+}} = %c0 to %c2 step %c1 iter_args
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvgpu.device_async_copy %[[Q]]{{.+}}, %[[STREAMA]]
// CHECK: nvgpu.device_async_copy %[[DO]]{{.+}}, %[[STREAMB]]
// Dsum = rowsum(dO O) of the streamed query rows, a row a warp at a time.
// CHECK: memref.load %[[DO]]
// CHECK: memref.load %[[O]]
// CHECK: gpu.shuffle xor %{{.+}}, %c16_i32, %c32_i32 : f32
// CHECK: memref.load %[[LSE]]
// CHECK: memref.store %{{.+}}, %[[LSEROWS]]
// CHECK: memref.store %{{.+}}, %[[DSUMROWS]]
// CHECK: nvgpu.device_async_wait
// CHECK: gpu.barrier
// S^T = K Q^T, dP^T = V dO^T (4 k steps x 8 n tiles each), then
// dV += P^T dO and dK += dS^T Q (4 k slices x 8 n tiles each).
// CHECK-COUNT-128: nvgpu.mma.sync
// dK is scaled once, at the end; dV is not.
// CHECK: vector.store %{{.+}}, %[[DK]]
// CHECK: vector.store %{{.+}}, %[[DV]]
// CHECK: } else {
// A query CTA: Q and dO stay; S = Q K^T, dP = dO V^T, dQ += dS K.
// CHECK: nvgpu.device_async_copy %[[Q]]{{.+}}, %[[ROWSA]]
// CHECK: nvgpu.device_async_copy %[[DO]]{{.+}}, %[[ROWSB]]
// CHECK: scf.for
// CHECK: nvgpu.device_async_copy %[[K]]{{.+}}, %[[STREAMA]]
// CHECK: nvgpu.device_async_copy %[[V]]{{.+}}, %[[STREAMB]]
// CHECK-COUNT-96: nvgpu.mma.sync
// CHECK: vector.store %{{.+}}, %[[DQ]]
// CHECK-NOT: nvgpu.mma.sync

// -----

// Rows wider than 64 stream 32-row blocks (a warp's dK and dV fragments
// take 128 registers at D = 128).
func.func @wide(%q: tensor<1x1x64x128xbf16>, %o: tensor<1x1x64x128xbf16>, %lse: tensor<1x1x64xf32>)
    -> (tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %q, %q : tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>)
      out(%o, %lse : tensor<1x1x64x128xbf16>, tensor<1x1x64xf32>) grad(%o : tensor<1x1x64x128xbf16>)
      outs(%q, %q, %q : tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>) {softcap = 30.0 : f32}
      -> tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>
  return %dq, %dk, %dv : tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>, tensor<1x1x64x128xbf16>
}

// CHECK-LABEL: gpu.func @wide_attention_grad0
// CHECK-SAME: dynamic_shared_memory = 49664 : i64, gradient, grid = array<i64: 2, 1, 1>
// CHECK-SAME: tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>

// -----

// Key lengths: the last parameter; each sequence's Sk is its entry clamped
// to [0, Sk] (read once, at the entry), and a key/value block past it is
// seen by no query block: its dK and dV are stored as zeros, every key of
// the tensor written.
func.func @key_lengths(%q: tensor<2x2x64x64xf16>, %k: tensor<2x2x200x64xf16>, %o: tensor<2x2x64x64xf16>,
                       %lse: tensor<2x2x64xf32>, %n: tensor<2xi32>)
    -> (tensor<2x2x64x64xf16>, tensor<2x2x200x64xf16>, tensor<2x2x200x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<2x2x64x64xf16>, tensor<2x2x200x64xf16>, tensor<2x2x200x64xf16>)
      out(%o, %lse : tensor<2x2x64x64xf16>, tensor<2x2x64xf32>) grad(%o : tensor<2x2x64x64xf16>)
      key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %k : tensor<2x2x64x64xf16>, tensor<2x2x200x64xf16>, tensor<2x2x200x64xf16>) {causal}
      -> tensor<2x2x64x64xf16>, tensor<2x2x200x64xf16>, tensor<2x2x200x64xf16>
  return %dq, %dk, %dv : tensor<2x2x64x64xf16>, tensor<2x2x200x64xf16>, tensor<2x2x200x64xf16>
}

// CHECK-LABEL: gpu.func @key_lengths_attention_grad0
// CHECK-SAME: %[[DV:[a-z0-9]+]]: memref<2x2x200x64xf16>, %[[N:[a-z0-9]+]]: memref<2xi32>)
// CHECK-SAME: grid = array<i64: 10, 2, 1>
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV", "key_lengths"]
// CHECK: %[[B:.+]] = gpu.block_id y
// CHECK: %[[ENTRY:.+]] = memref.load %[[N]][%[[B]]] : memref<2xi32>
// CHECK: %[[LENGTH:.+]] = arith.index_cast %[[ENTRY]] : i32 to index
// CHECK: %[[POSITIVE:.+]] = arith.maxsi %[[LENGTH]], %c0 : index
// CHECK: %[[KEYS:.+]] = arith.minsi %[[POSITIVE]], %c200 : index
// CHECK: scf.if
// CHECK: %[[SEEN:.+]] = arith.cmpi ult, %[[KEY0:.+]], %[[KEYS]] : index
// CHECK: arith.select %[[SEEN]]
// The stores of dK and dV run to Sk = 200, not to the sequence's length.
// CHECK: arith.cmpi ult, %{{.+}}, %c200 : index

// -----

// A mask operand: a parameter after dV (before the key lengths), read for
// every score both walks recompute, in the blocks that straddle a mask
// boundary and in those that do not. A boolean mask's false hides the
// score (-inf before exp2); a size-1 head dimension broadcasts (index 0).
func.func @bool_mask(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>, %o: tensor<1x2x64x64xf16>,
                     %lse: tensor<1x2x64xf32>, %m: tensor<1x1x64x64xi1>)
    -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
      out(%o, %lse : tensor<1x2x64x64xf16>, tensor<1x2x64xf32>) grad(%o : tensor<1x2x64x64xf16>)
      mask(%m : tensor<1x1x64x64xi1>)
      outs(%q, %k, %k : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
      -> tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
  return %dq, %dk, %dv : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>
}

// CHECK-LABEL: gpu.func @bool_mask_attention_grad0
// CHECK-SAME: %[[DV:[a-z0-9]+]]: memref<1x2x64x64xf16>, %[[M:[a-z0-9]+]]: memref<1x1x64x64xi1>)
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV", "mask"]
// CHECK: %[[ELEMENT:.+]] = memref.load %[[M]][%c0, %c0, %{{.+}}, %{{.+}}] : memref<1x1x64x64xi1>
// CHECK: arith.select %[[ELEMENT]], %{{.+}}, %cst{{.*}} : f32

// -----

// An additive mask's element is added to the score in natural units (scale
// applied, the softcap's tanh taken), then the sum goes to base 2; one mask
// per query head reads the walked head's plane.
func.func @additive_mask(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %o: tensor<1x2x64x64xbf16>,
                         %lse: tensor<1x2x64xf32>, %m: tensor<1x2x64x64xbf16>, %n: tensor<1xi32>)
    -> (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
      out(%o, %lse : tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>) grad(%o : tensor<1x2x64x64xbf16>)
      mask(%m : tensor<1x2x64x64xbf16>) key_lengths(%n : tensor<1xi32>)
      outs(%q, %k, %k : tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {softcap = 20.0 : f32}
      -> tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
  return %dq, %dk, %dv : tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
}

// CHECK-LABEL: gpu.func @additive_mask_attention_grad0
// CHECK-SAME: %[[M:[a-z0-9]+]]: memref<1x2x64x64xbf16>, %[[N:[a-z0-9]+]]: memref<1xi32>)
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV", "mask", "key_lengths"]
// CHECK: %[[ELEMENT:.+]] = memref.load %[[M]][%c0, %[[HEAD:[a-z0-9_]+]], %{{.+}}, %{{.+}}] : memref<1x2x64x64xbf16>
// CHECK: %[[WIDE:.+]] = arith.extf %[[ELEMENT]] : bf16 to f32
// CHECK: %[[SUM:.+]] = arith.addf %{{.+}}, %[[WIDE]] : f32
// CHECK: arith.mulf %[[SUM]], %cst{{.*}} : f32

// -----

// A block mask parameter (after the mask): each visited block reads its
// status; an empty one (0) leaves the walk's state as it is, a full one (2)
// reads no mask operand.
func.func @block_mask(%q: tensor<1x2x128x64xf16>, %k: tensor<1x2x128x64xf16>, %o: tensor<1x2x128x64xf16>,
                      %lse: tensor<1x2x128xf32>, %m: tensor<1x1x128x128xi1>, %bm: tensor<1x2x2x1xi8>)
    -> (tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>)
      out(%o, %lse : tensor<1x2x128x64xf16>, tensor<1x2x128xf32>) grad(%o : tensor<1x2x128x64xf16>)
      mask(%m : tensor<1x1x128x128xi1>) block_mask(%bm : tensor<1x2x2x1xi8> blocks [64, 128])
      outs(%q, %k, %k : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>)
      -> tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
  return %dq, %dk, %dv : tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x2x128x64xf16>
}

// CHECK-LABEL: gpu.func @block_mask_attention_grad0
// CHECK-SAME: %[[M:[a-z0-9]+]]: memref<1x1x128x128xi1>, %[[BM:[a-z0-9]+]]: memref<1x2x2x1xi8>)
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV", "mask", "block_mask"]
// CHECK: %[[STATUS:.+]] = memref.load %[[BM]][%c0, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x2x2x1xi8>
// CHECK: %[[EMPTY:.+]] = arith.cmpi eq, %[[STATUS]], %c0_i8 : i8
// CHECK: scf.if %[[EMPTY]]
// CHECK: %[[FULL:.+]] = arith.cmpi eq, %[[STATUS]], %c2_i8 : i8
// CHECK: scf.if %[[FULL]]

// -----

// A region that yields a constant of its function: the kernel builds the
// constant itself (the host's value is not the kernel's), and its
// derivative is 0.
func.func @constant_score(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>)
    -> tensor<1x1x64x64xf16> {
  %c = arith.constant 0.25 : f32
  %dq, %dk, %dv = attn.attention_grad ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      out(%o, %lse : tensor<1x1x64x64xf16>, tensor<1x1x64xf32>) grad(%o : tensor<1x1x64x64xf16>)
      outs(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      -> tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %c : f32
  }
  return %dq : tensor<1x1x64x64xf16>
}

// CHECK-LABEL: gpu.func @constant_score_attention_grad0
// The score 0.25 in base 2 (0.25 log2 e), folded.
// CHECK: arith.constant 0.360673755 : f32
// CHECK: gpu.return
