// RUN: attn-opt %s --attn-decompose --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --attn-decompose="block-m=16 block-n=64" --canonicalize --cse | FileCheck %s --check-prefix=PINNED

// Each tile reads its block's element of the block mask: an empty block (0)
// leaves the online-softmax state as it is, without loading K or V; a full
// block (2) computes its scores without the mask operand. Default tiles
// nest in the 32 x 64 blocks (FlashAttention-2's 128 x 128 for D = 64 would
// not).
// CHECK-LABEL: func.func @blocks
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<2x1x100x256xi1>, %[[BLOCKS:[^:]+]]: tensor<1x4x4x4xi8>
// CHECK:     scf.forall (%[[B:.+]], %[[H:.+]], %[[MB:.+]]) in (2, 4, 4)
// CHECK:       %[[ROW0:.+]] = arith.muli %[[MB]], %c32
// CHECK:       %[[BROW:.+]] = arith.divui %[[ROW0]], %c32
// CHECK:       scf.for %[[N:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[M:.+]] = %{{.+}}, %[[L:.+]] = %{{.+}}, %[[ACC:.+]] = %{{.+}})
// CHECK:         %[[KEY0:.+]] = arith.muli %[[N]], %c64
// The block mask broadcasts over the batch (size 1), not over the heads.
// CHECK:         %[[BCOL:.+]] = arith.divui %[[KEY0]], %c64
// CHECK:         %[[STATUS:.+]] = tensor.extract %[[BLOCKS]][%c0, %[[H]], %[[BROW]], %[[BCOL]]] : tensor<1x4x4x4xi8>
// CHECK:         %[[FULL:.+]] = arith.cmpi eq, %[[STATUS]], %c2_i8 : i8
// CHECK:         %[[EMPTY:.+]] = arith.cmpi eq, %[[STATUS]], %c0_i8 : i8
// CHECK:         %[[NEXT:.+]]:3 = scf.if %[[EMPTY]]
// CHECK-NEXT:      scf.yield %[[M]], %[[L]], %[[ACC]]
// CHECK-NEXT:    } else {
// CHECK:           tensor.extract_slice %{{.+}}[%[[B]], %{{.+}}, %[[KEY0]], 0]
// CHECK:           %[[MASKTILE:.+]] = tensor.extract_slice %[[MASK]][%[[B]], 0, %[[ROW0]], %[[KEY0]]]
// CHECK:           scf.if %[[FULL]]
// A full block: no mask operand.
// CHECK-NOT:         %[[MASKTILE]]
// CHECK:           } else {
// CHECK:             linalg.generic {{.*}} ins(%{{.+}}, %[[MASKTILE]] : tensor<?x?xf32>, tensor<?x?xi1>)
// CHECK:           }
// CHECK:         scf.yield %[[NEXT]]#0, %[[NEXT]]#1, %[[NEXT]]#2

// PINNED-LABEL: func.func @blocks
// PINNED: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (2, 4, 7)
// PINNED:   arith.divui %{{.+}}, %c32

func.func @blocks(%q: tensor<2x4x100x64xf16>, %k: tensor<2x4x256x64xf16>,
                  %v: tensor<2x4x256x64xf16>, %mask: tensor<2x1x100x256xi1>,
                  %blocks: tensor<1x4x4x4xi8>) -> tensor<2x4x100x64xf16> {
  %o0 = tensor.empty() : tensor<2x4x100x64xf16>
  %o = attn.attention ins(%q, %k, %v : tensor<2x4x100x64xf16>,
      tensor<2x4x256x64xf16>, tensor<2x4x256x64xf16>)
      mask(%mask : tensor<2x1x100x256xi1>)
      block_mask(%blocks : tensor<1x4x4x4xi8> blocks [32, 64])
      outs(%o0 : tensor<2x4x100x64xf16>) -> tensor<2x4x100x64xf16>
  return %o : tensor<2x4x100x64xf16>
}
