// RUN: attn-opt %s --attn-decompose="block-m=64 block-n=32" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-decompose --split-input-file --canonicalize | FileCheck %s --check-prefix=DEFAULT

// Parallel over batch, heads and query blocks; sequential over key blocks with
// the online-softmax state (m, l, acc) carried through the loop.
// CHECK-LABEL: func.func @structure
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x100x64xf16>, %[[K:[^:]+]]: tensor<2x2x300x64xf16>, %[[V:[^:]+]]: tensor<2x2x300x32xf16>
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 0.180336878 : f32
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[MB:.+]]) in (2, 8, 2) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<2x8x100x32xf16>)
// CHECK:   %[[ROW0:.+]] = arith.muli %[[MB]], %{{.+}} : index
// CHECK:   %[[ROWS:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// GQA: the query head reads its key/value head in place.
// The query block's rows of O are written in place.
// CHECK:   %[[OSLICE:.+]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 32] [1, 1, 1, 1] : tensor<2x8x100x32xf16> to tensor<?x32xf16>
// CHECK:   %[[KVH:.+]] = arith.divui %[[H]], %c4 : index
// CHECK:   tensor.extract_slice %[[Q]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 64] [1, 1, 1, 1] : tensor<2x8x100x64xf16> to tensor<?x64xf16>
// CHECK:   %[[STATE:.+]]:3 = scf.for %[[N:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x32xf32>)
// CHECK:     tensor.extract_slice %[[K]][%[[B]], %[[KVH]], %{{.+}}, 0] [1, 1, %{{.+}}, 64]
// CHECK:     tensor.extract_slice %[[V]][%[[B]], %[[KVH]], %{{.+}}, 0] [1, 1, %{{.+}}, 32]
// Q K^T with f32 accumulation, then one multiply by scale * log2(e) = 0.125 * 1.4427.
// CHECK:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:       arith.extf
// The dot products may be reassociated and fused (as tensor cores do).
// CHECK:       arith.mulf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:       arith.addf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:     arith.mulf %{{.+}}, %[[SCALE]] : f32
// Without causal or window no block is masked: no scf.if.
// CHECK-NOT: scf.if
// m_new: a row-max reduction seeded with a copy of m; then m is overwritten
// by the op that reads it last (alpha = exp2(m - m_safe)).
// CHECK:     %[[SEED:.+]] = linalg.copy ins(%[[M]] : tensor<?xf32>)
// CHECK:     %[[MNEW:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[SEED]] : tensor<?xf32>)
// CHECK:       arith.maximumf
// CHECK:     %[[UPDATE:.+]]:2 = linalg.generic {{.*}} ins(%[[MNEW]], %{{.+}} : tensor<?xf32>, tensor<?xf32>) outs(%[[M]], %{{.+}} : tensor<?xf32>, tensor<?xf32>)
// CHECK:       math.exp2
// CHECK:     math.exp2
// P V with the value dimension innermost: rows of V are read contiguously.
// CHECK:     linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME:  ins(%{{.+}}, %{{.+}} : tensor<?x?xf32>, tensor<?x32xf16>)
// CHECK:       arith.mulf {{.*}} fastmath<reassoc,contract> : f32
// CHECK:     scf.yield %[[UPDATE]]#0,
// One division by l after the loop, rounded to f16 once.
// CHECK:   linalg.generic {{.*}} outs(%[[OSLICE]] : tensor<?x32xf16>)
// CHECK:   arith.divf
// CHECK:   arith.truncf %{{.+}} : f32 to f16
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[B]], %[[H]], %[[ROW0]], 0] [1, 1, %[[ROWS]], 32]
// CHECK-NOT: attn.attention
func.func @structure(%q: tensor<2x8x100x64xf16>, %k: tensor<2x2x300x64xf16>, %v: tensor<2x2x300x32xf16>,
                     %o: tensor<2x8x100x32xf16>) -> tensor<2x8x100x32xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x100x64xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>)
      outs(%o : tensor<2x8x100x32xf16>) {scale = 0.125 : f32} -> tensor<2x8x100x32xf16>
  return %r : tensor<2x8x100x32xf16>
}

// -----

// Causal: the key-block loop ends at the block holding the last row's
// diagonal, so it depends on the query block; only blocks that straddle the
// diagonal take the masked branch.
// CHECK-LABEL: func.func @causal_block_skipping
// CHECK: scf.forall (%{{.+}}, %[[MB:.+]]) in (4, 16)
// CHECK:   %[[ROW0:.+]] = arith.muli %[[MB]], %c64 : index
// CHECK:   %[[ROWS:.+]] = arith.minsi
// CHECK:   %[[END:.+]] = arith.addi %[[ROW0]], %[[ROWS]] : index
// CHECK:   %[[KEYEND:.+]] = arith.minsi %[[END]], %c1000 : index
// CHECK:   %[[CLAMPED:.+]] = arith.maxsi %[[KEYEND]], %c0 : index
// CHECK:   %[[NEND:.+]] = arith.ceildivui %[[CLAMPED]], %c32 : index
// CHECK:   %[[UB:.+]] = arith.select %{{.+}}, %[[NEND]], %c0 : index
// CHECK:   scf.for %{{.+}} = %c0 to %[[UB]] step %c1
// The first row's last visible key comes before the block's end.
// CHECK:     %[[STRADDLES:.+]] = arith.cmpi slt, %{{.+}}, %{{.+}} : index
// CHECK:     scf.if %[[STRADDLES]] -> (tensor<?x?xf32>)
// CHECK:       linalg.index 0
// CHECK:       linalg.index 1
// CHECK:       arith.cmpi slt
// CHECK:       arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK:     } else {
// CHECK-NOT:   linalg.index
// CHECK:       scf.yield
func.func @causal_block_skipping(%q: tensor<1x4x1000x64xf32>, %k: tensor<1x4x1000x64xf32>,
                                 %o: tensor<1x4x1000x64xf32>) -> tensor<1x4x1000x64xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x1000x64xf32>, tensor<1x4x1000x64xf32>, tensor<1x4x1000x64xf32>)
      outs(%o : tensor<1x4x1000x64xf32>) {causal} -> tensor<1x4x1000x64xf32>
  return %r : tensor<1x4x1000x64xf32>
}

// -----

// A sliding window also moves the first key block: 128 keys left of the
// first row's diagonal.
// CHECK-LABEL: func.func @window_moves_loop_start
// CHECK: %[[ROW0:.+]] = arith.muli %{{.+}}, %c64 : index
// CHECK: %[[FIRST:.+]] = arith.subi %[[ROW0]], %c128 : index
// CHECK: %[[BEGIN:.+]] = arith.maxsi %[[FIRST]], %c0 : index
// CHECK: %[[LB:.+]] = arith.divui %[[BEGIN]], %c32 : index
// CHECK: scf.for %{{.+}} = %[[LB]] to
func.func @window_moves_loop_start(%q: tensor<1x1x512x64xf32>, %o: tensor<1x1x512x64xf32>) -> tensor<1x1x512x64xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x512x64xf32>, tensor<1x1x512x64xf32>, tensor<1x1x512x64xf32>)
      outs(%o : tensor<1x1x512x64xf32>) {window = array<i64: 128, 0>} -> tensor<1x1x512x64xf32>
  return %r : tensor<1x1x512x64xf32>
}

// -----

// Softcap, the score region, the additive mask and the boolean mask act on the
// natural-unit score, which is then scaled by log2(e); LSE is written.
// CHECK-LABEL: func.func @score_modifiers
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[LN2:.+]] = arith.constant 0.693147182 : f32
// CHECK: scf.forall {{.*}} shared_outs(%[[O:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}})
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<16x16xf32>, tensor<16x16xf32>)
// CHECK:   arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK:   math.tanh
// CHECK:   arith.subi
// CHECK:   arith.sitofp
// CHECK:   arith.addf
// CHECK:   arith.addf
// CHECK:   arith.mulf %{{.+}}, %[[LOG2E]] : f32
// CHECK: math.log2
// CHECK: arith.mulf %{{.+}}, %[[LN2]] : f32
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[L]]
func.func @score_modifiers(%q: tensor<1x2x16x32xf32>, %bias: tensor<1x1x16x16xf32>, %o: tensor<1x2x16x32xf32>,
                           %l: tensor<1x2x16xf32>) -> (tensor<1x2x16x32xf32>, tensor<1x2x16xf32>) {
  %r:2 = attn.attention ins(%q, %q, %q : tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32>)
      mask(%bias : tensor<1x1x16x16xf32>) outs(%o, %l : tensor<1x2x16x32xf32>, tensor<1x2x16xf32>)
      {softcap = 30.0 : f32} -> tensor<1x2x16x32xf32>, tensor<1x2x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %r = arith.addf %s, %df : f32
        attn.yield %r : f32
      }
  return %r#0, %r#1 : tensor<1x2x16x32xf32>, tensor<1x2x16xf32>
}

// -----

// A partial attention: a slot dimension in front of the forall, and each
// slot's piece of the visible key blocks as the loop bounds. Split-KV: slot s
// covers key blocks [32 s, 32 s + 32) of the 128 visible ones.
// CHECK-LABEL: func.func @split_kv_partial
// CHECK-SAME: %[[PO:[^:]+]]: tensor<4x1x8x1x64xf32>, %[[PL:[^:]+]]: tensor<4x1x8x1xf32>
// CHECK: scf.forall (%[[S:.+]], %[[H:.+]]) in (4, 8) shared_outs(%{{.+}} = %[[PO]], %{{.+}} = %[[PL]])
// CHECK:   %[[FIRST:.+]] = arith.muli %[[S]], %c32 : index
// CHECK:   %[[BEGIN:.+]] = arith.minsi %[[FIRST]], %c128 : index
// CHECK:   %[[NEXT:.+]] = arith.addi %[[BEGIN]], %c32 : index
// CHECK:   %[[END:.+]] = arith.minsi %[[NEXT]], %c128 : index
// CHECK:   scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c1
// CHECK:   tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[S]], 0, %[[H]], 0, 0] [1, 1, 1, 1, 64]
// CHECK-NOT: attn.merge
func.func @split_kv_partial(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x1x4096x64xbf16>,
                            %po: tensor<4x1x8x1x64xf32>, %pl: tensor<4x1x8x1xf32>)
    -> (tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>) {
  %r:2 = attn.partial_attention ins(%q, %k, %k : tensor<1x8x1x64xbf16>, tensor<1x1x4096x64xbf16>, tensor<1x1x4096x64xbf16>)
      outs(%po, %pl : tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 1>,
       partition = #attn.split_kv<splits = 4>} -> tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>
  return %r#0, %r#1 : tensor<4x1x8x1x64xf32>, tensor<4x1x8x1xf32>
}

// -----

// Tile sizes: the pass options win, else the op's tiles, else FlashAttention-2's
// default for the head dimension (D=128: 128 x 128, the first that fits the
// registers of a thread).
// DEFAULT-LABEL: func.func @default_tiles
// DEFAULT: scf.forall (%{{.+}}, %{{.+}}) in (2, 2)
// DEFAULT: scf.for %{{.+}} = %c0 to %c2
// DEFAULT-LABEL: func.func @pinned_tiles
// DEFAULT: scf.forall (%{{.+}}, %{{.+}}) in (2, 16)
// DEFAULT: scf.for %{{.+}} = %c0 to %c8
func.func @default_tiles(%q: tensor<1x2x256x128xf32>, %o: tensor<1x2x256x128xf32>) -> tensor<1x2x256x128xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>)
      outs(%o : tensor<1x2x256x128xf32>) -> tensor<1x2x256x128xf32>
  return %r : tensor<1x2x256x128xf32>
}
func.func @pinned_tiles(%q: tensor<1x2x256x128xf32>, %o: tensor<1x2x256x128xf32>) -> tensor<1x2x256x128xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>)
      outs(%o : tensor<1x2x256x128xf32>) {tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 1>}
      -> tensor<1x2x256x128xf32>
  return %r : tensor<1x2x256x128xf32>
}

// -----

// A framed attention: keys from Sk' - k0 on are hidden (the padding of a
// distributed shard), so blocks that reach them take the element mask, and
// the score region sees positions in the larger attention (q0 + i, k0 + k).
// CHECK-LABEL: func.func @framed(
// CHECK-SAME: %[[Q0:[a-z0-9]+]]: index, %[[K0:[a-z0-9]+]]: index, %[[SQ:[a-z0-9]+]]: index, %[[SK:[a-z0-9]+]]: index)
// CHECK: %[[KEYEND:.*]] = arith.subi %[[SK]], %[[K0]] : index
// CHECK: %[[VISIBLE:.*]] = arith.minsi %[[KEYEND]], %{{.*}} : index
// CHECK: scf.if
// CHECK: linalg.generic
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %[[Q0]] : index
// CHECK: %[[KEY:.*]] = arith.addi %{{.*}}, %[[K0]] : index
// CHECK: arith.subi %[[KEY]], %[[ROW]] : index
// CHECK: arith.subi %[[VISIBLE]], %{{.*}} : index
func.func @framed(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %o: tensor<1x1x64x16xf32>,
                  %q0: index, %k0: index, %sq: index, %sk: index) -> tensor<1x1x64x16xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>)
      frame(%q0, %k0 of %sq, %sk) outs(%o : tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %c = arith.index_cast %d : index to i64
        %f = arith.sitofp %c : i64 to f32
        %t = arith.addf %s, %f : f32
        attn.yield %t : f32
      }
  return %r : tensor<1x1x64x16xf32>
}

// -----

// GQA packing: Q and O are viewed as [B, Hq / p, p Sq, ...] (the rows of the
// p heads that share a key/value head, head after head), the tiles run over
// those rows, tiled head t reads key/value head t p / (Hq / Hkv), and the
// causal mask sees each tiled row's query row (row mod Sq).
// CHECK-LABEL: func.func @gqa_packed
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x3x64xf16>, %[[K:[^:]+]]: tensor<2x2x300x64xf16>
// CHECK: %[[QE:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 2, 4, 3, 64]
// CHECK: %[[QP:.+]] = tensor.collapse_shape %[[QE]] {{\[\[}}0], [1], [2, 3], [4]] : tensor<2x2x4x3x64xf16> into tensor<2x2x12x64xf16>
// CHECK: tensor.collapse_shape {{.*}} into tensor<2x2x12x32xf16>
// CHECK: scf.forall (%[[B:.+]], %[[T:.+]]) in (2, 2) shared_outs
// CHECK: %[[T4:.+]] = arith.muli %[[T]], %c4
// CHECK: %[[KVH:.+]] = arith.divui %[[T4]], %c4
// CHECK: scf.for
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[KVH]],
// CHECK: tensor.extract_slice %[[QP]][%[[B]], %[[T]], 0, 0] [1, 1, 12, 64]
// CHECK: arith.remui %{{.+}}, %c3
// CHECK: tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [2, 2, 4, 3, 32]
// CHECK: tensor.collapse_shape {{.*}} into tensor<2x8x3x32xf16>
func.func @gqa_packed(%q: tensor<2x8x3x64xf16>, %k: tensor<2x2x300x64xf16>, %v: tensor<2x2x300x32xf16>,
                      %o: tensor<2x8x3x32xf16>) -> tensor<2x8x3x32xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x3x64xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>)
      outs(%o : tensor<2x8x3x32xf16>) {causal, tiles = #attn.fa2<block_m = 64, block_n = 32, warps = 4, stages = 2, packed_heads = 4>}
      -> tensor<2x8x3x32xf16>
  return %r : tensor<2x8x3x32xf16>
}

// -----

// Per-sequence key lengths: each sequence's entry, clamped to [0, Sk], is
// its Sk: its key blocks end at ceil(L_b / block_n) and its last key tile
// ends at L_b.
// CHECK-LABEL: func.func @key_lengths
// CHECK-SAME: %[[K:[^:]+]]: tensor<3x2x100x16xf32>, %[[LENGTHS:[^:]+]]: tensor<3xi32>
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]]) in (3, 2)
// CHECK: %[[L32:.+]] = tensor.extract %[[LENGTHS]][%[[B]]] : tensor<3xi32>
// CHECK: %[[L:.+]] = arith.index_cast %[[L32]] : i32 to index
// CHECK: %[[NONNEG:.+]] = arith.maxsi %[[L]], %c0 : index
// CHECK: %[[SK:.+]] = arith.minsi %[[NONNEG]], %c100 : index
// CHECK: arith.ceildivui %{{.+}}, %c32
// CHECK: scf.for %[[BLOCK:.+]] = %c0 to
// CHECK: %[[KEY0:.+]] = arith.muli %[[BLOCK]], %c32
// CHECK: %[[LEFT:.+]] = arith.subi %[[SK]], %[[KEY0]]
// CHECK: %[[COLS:.+]] = arith.minui %[[LEFT]], %c32
// CHECK: tensor.extract_slice %[[K]][%[[B]], %[[H]], %[[KEY0]], 0] [1, 1, %[[COLS]], 16]
func.func @key_lengths(%q: tensor<3x2x1x16xf32>, %k: tensor<3x2x100x16xf32>, %lengths: tensor<3xi32>,
                       %o: tensor<3x2x1x16xf32>) -> tensor<3x2x1x16xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<3x2x1x16xf32>, tensor<3x2x100x16xf32>, tensor<3x2x100x16xf32>)
      key_lengths(%lengths : tensor<3xi32>) outs(%o : tensor<3x2x1x16xf32>) -> tensor<3x2x1x16xf32>
  return %r : tensor<3x2x1x16xf32>
}
