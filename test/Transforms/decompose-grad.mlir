// RUN: attn-opt %s --attn-decompose-grad="block-m=32 block-n=64" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-decompose-grad --split-input-file --canonicalize | FileCheck %s --check-prefix=DEFAULT

// FlashAttention-2's backward: Dsum first; parallel over (piece, batch,
// key/value head); each program walks its piece's key/value blocks, owning
// their dK and dV, and for each block the query heads of its group and the
// query blocks that see it; dQ terms go into the piece's f32 copy, summed
// at the end.
// CHECK-LABEL: func.func @structure
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x100x64xf16>, %[[K:[^:]+]]: tensor<2x2x300x64xf16>, %[[V:[^:]+]]: tensor<2x2x300x32xf16>, %[[O:[^:]+]]: tensor<2x8x100x32xf16>, %[[LSE:[^:]+]]: tensor<2x8x100xf32>, %[[DO:[^:]+]]: tensor<2x8x100x32xf16>
// Dsum = rowsum(dO * O), in f32.
// CHECK: %[[DSUM:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[DO]], %[[O]] : {{.*}}) outs(%{{.+}} : tensor<2x8x100xf32>)
// One zeroed f32 copy of dQ per piece; dK and dV start at zero (keys past a
// sequence's length keep it).
// CHECK: %[[COPIES:.+]] = linalg.fill {{.*}} -> tensor<3x2x8x100x64xf32>
// CHECK: %[[DK0:.+]] = linalg.fill {{.*}} -> tensor<2x2x300x64xf16>
// CHECK: %[[DV0:.+]] = linalg.fill {{.*}} -> tensor<2x2x300x32xf16>
// CHECK: %[[R:.+]]:3 = scf.forall (%[[S:.+]], %[[B:.+]], %[[G:.+]]) in (3, 2, 2) shared_outs(%[[DQC:.+]] = %[[COPIES]], %[[DK:.+]] = %[[DK0]], %[[DV:.+]] = %[[DV0]])
// The piece's blocks: runs of ceil(5 / 3) = 2 of the 5 blocks.
// CHECK:   %[[FIRST:.+]] = arith.minsi %{{.+}}, %c5 : index
// CHECK:   tensor.extract_slice %[[DQC]][%[[S]], %[[B]], %{{.+}}, 0, 0] [1, 1, 4, 100, 64]
// CHECK:   scf.for %[[N:.+]] = %[[FIRST]] to %{{.+}} step %c1 iter_args
// CHECK:     %[[KEY0:.+]] = arith.muli %[[N]], %c64 : index
// CHECK:     tensor.extract_slice %[[K]][%[[B]], %[[G]], %[[KEY0]], 0]
// CHECK:     tensor.extract_slice %[[V]][%[[B]], %[[G]], %[[KEY0]], 0]
// Causal (Sk - Sq = 200): the first query row that sees key0 is key0 - 200.
// CHECK:     arith.subi %[[KEY0]], %c200 : index
// The query heads of the group (Hq / Hkv = 4), then the query blocks.
// CHECK:     scf.for %[[HG:.+]] = %c0 to %c4 step %c1
// CHECK:       scf.for %[[M:.+]] = %{{.+}} to %{{.+}} step %c1
// CHECK:         tensor.extract_slice %[[LSE]]
// CHECK:         tensor.extract_slice %[[DSUM]]
// Scores as the forward's, masked only on tiles that straddle the diagonal.
// CHECK:         scf.if
// CHECK:           arith.cmpi slt
// CHECK:           arith.select
// CHECK:         } else {
// P = exp2(S - LSE log2 e), 0 where LSE = -inf.
// CHECK:         linalg.generic
// CHECK:           arith.cmpf oeq, %{{.+}}, %cst
// CHECK:           math.exp2
// dV += P^T dO: the query rows are the reduction.
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// dP = dO V^T
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// dS = P (dP - Dsum), times the scale 0.125.
// CHECK:         linalg.generic
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:           arith.mulf %{{.+}}, %cst{{.*}} : f32
// dQ += dS K into the piece's copy; dK += dS^T Q.
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:         tensor.insert_slice
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]
// The block's dK and dV, rounded once.
// CHECK:     arith.truncf %{{.+}} : f32 to f16
// CHECK:     arith.truncf %{{.+}} : f32 to f16
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %[[DQC]][%[[S]], %[[B]], %{{.+}}, 0, 0] [1, 1, 4, 100, 64]
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %[[DK]][%[[B]], %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 64]
// CHECK:     tensor.parallel_insert_slice %{{.+}} into %[[DV]][%[[B]], %[[G]], %{{.+}}, 0] [1, 1, %{{.+}}, 32]
// dQ: the copies summed in piece order (the last loop is the reduction).
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[R]]#0 : tensor<3x2x8x100x64xf32>)
// CHECK: return %{{.+}}, %[[R]]#1, %[[R]]#2

// The default tiles at D = 64 are 128 x 128: one key/value block of 300 keys
// holds 128 of them.
// DEFAULT-LABEL: func.func @structure
// DEFAULT: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (3, 2, 2)
// DEFAULT:   arith.muli %{{.+}}, %c128 : index

func.func @structure(%q: tensor<2x8x100x64xf16>, %k: tensor<2x2x300x64xf16>, %v: tensor<2x2x300x32xf16>,
                     %o: tensor<2x8x100x32xf16>, %l: tensor<2x8x100xf32>, %do: tensor<2x8x100x32xf16>)
    -> (tensor<2x8x100x64xf32>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>) {
  %dq0 = tensor.empty() : tensor<2x8x100x64xf32>
  %r:3 = attn.attention_grad ins(%q, %k, %v : tensor<2x8x100x64xf16>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>)
      out(%o, %l : tensor<2x8x100x32xf16>, tensor<2x8x100xf32>) grad(%do : tensor<2x8x100x32xf16>)
      outs(%dq0, %k, %v : tensor<2x8x100x64xf32>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>)
      {causal, partition = #attn.split_kv<splits = 3>}
      -> tensor<2x8x100x64xf32>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>
  return %r#0, %r#1, %r#2 : tensor<2x8x100x64xf32>, tensor<2x2x300x64xf16>, tensor<2x2x300x32xf16>
}

// -----

// Softcap: dS goes back through softcap * tanh(x / softcap), whose slope is
// 1 - tanh^2, at x = scale * raw (scale / softcap = 0.125 / 20).
// CHECK-LABEL: func.func @softcap
// CHECK: %[[RATIO:.+]] = arith.constant 6.250000e-03 : f32
// CHECK: math.tanh
// CHECK: arith.mulf %{{.+}}, %[[RATIO]] : f32
// CHECK-NEXT: %[[T:.+]] = math.tanh
// CHECK-NEXT: %[[T2:.+]] = arith.mulf %[[T]], %[[T]] : f32
// CHECK-NEXT: %[[SLOPE:.+]] = arith.subf %cst{{.*}}, %[[T2]] : f32
// CHECK-NEXT: arith.mulf %{{.+}}, %[[SLOPE]] : f32
func.func @softcap(%q: tensor<1x1x16x64xf32>, %o: tensor<1x1x16x64xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>) {
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      out(%o, %l : tensor<1x1x16x64xf32>, tensor<1x1x16xf32>) grad(%o : tensor<1x1x16x64xf32>)
      outs(%q, %q, %q : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>)
      {softcap = 20.0 : f32}
      -> tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
  return %r#0, %r#1, %r#2 : tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>, tensor<1x1x16x64xf32>
}
