// RUN: attn-opt %s --attn-lower-merge --split-input-file | FileCheck %s

// The merge becomes reductions along the split dimension: the max of the
// LSEs, the sum of their exponentials, the weighted sum of the partials, then
// one rounding to the output type and LSE = M + ln W.
// CHECK-LABEL: func.func @merge
// CHECK-SAME: (%[[PO:.+]]: tensor<4x2x8x64xf32>, %[[PL:.+]]: tensor<4x2x8xf32>, %[[O:.+]]: tensor<2x8x64xbf16>, %[[L:.+]]: tensor<2x8xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[PL]] : tensor<4x2x8xf32>)
// CHECK:   arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[PL]], %[[MAX]] : tensor<4x2x8xf32>, tensor<2x8xf32>)
// CHECK:   math.exp
// CHECK: %[[ACC:.+]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%[[PO]], %[[PL]], %[[MAX]], %[[SUM]] : tensor<4x2x8x64xf32>, tensor<4x2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// Empty partials (weight 0) are skipped whatever they hold.
// CHECK:   arith.cmpf ueq
// CHECK:   arith.select
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : tensor<2x8x64xf32>) outs(%[[O]] : tensor<2x8x64xbf16>)
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
// CHECK: linalg.generic {{.*}} ins(%[[MAX]], %[[SUM]] : tensor<2x8xf32>, tensor<2x8xf32>) outs(%[[L]] : tensor<2x8xf32>)
// CHECK:   math.log
// CHECK-NOT: attn.merge
func.func @merge(%po: tensor<4x2x8x64xf32>, %pl: tensor<4x2x8xf32>, %o: tensor<2x8x64xbf16>,
                 %l: tensor<2x8xf32>) -> (tensor<2x8x64xbf16>, tensor<2x8xf32>) {
  %r:2 = attn.merge ins(%po, %pl : tensor<4x2x8x64xf32>, tensor<4x2x8xf32>)
      outs(%o, %l : tensor<2x8x64xbf16>, tensor<2x8xf32>) dim = 0 -> tensor<2x8x64xbf16>, tensor<2x8xf32>
  return %r#0, %r#1 : tensor<2x8x64xbf16>, tensor<2x8xf32>
}

// -----

// An inner split dimension with dynamic sizes and no LSE result.
// CHECK-LABEL: func.func @inner_dynamic
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<?x?xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-NOT: math.log
func.func @inner_dynamic(%po: tensor<?x?x32xf32>, %pl: tensor<?x?xf32>, %o: tensor<?x32xf32>) -> tensor<?x32xf32> {
  %r = attn.merge ins(%po, %pl : tensor<?x?x32xf32>, tensor<?x?xf32>) outs(%o : tensor<?x32xf32>) dim = 1 -> tensor<?x32xf32>
  return %r : tensor<?x32xf32>
}
