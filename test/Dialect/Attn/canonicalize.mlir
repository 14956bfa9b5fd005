// RUN: attn-opt %s --canonicalize --split-input-file | FileCheck %s

// A merge of one partial is the identity: it becomes a reshape that drops the
// unit split dimension.
// CHECK-LABEL: func.func @single_partial
// CHECK-SAME: (%[[PO:.+]]: tensor<1x2x8x1x64xf32>, %[[PL:.+]]: tensor<1x2x8x1xf32>
// CHECK-NOT: attn.merge
// CHECK-DAG: %[[O:.+]] = tensor.collapse_shape %[[PO]] {{\[}}[0, 1], [2], [3], [4]] : tensor<1x2x8x1x64xf32> into tensor<2x8x1x64xf32>
// CHECK-DAG: %[[L:.+]] = tensor.collapse_shape %[[PL]] {{\[}}[0, 1], [2], [3]] : tensor<1x2x8x1xf32> into tensor<2x8x1xf32>
// CHECK: return %[[O]], %[[L]]
func.func @single_partial(%po: tensor<1x2x8x1x64xf32>, %pl: tensor<1x2x8x1xf32>,
                          %o: tensor<2x8x1x64xf32>, %l: tensor<2x8x1xf32>) -> (tensor<2x8x1x64xf32>, tensor<2x8x1xf32>) {
  %r:2 = attn.merge ins(%po, %pl : tensor<1x2x8x1x64xf32>, tensor<1x2x8x1xf32>)
      outs(%o, %l : tensor<2x8x1x64xf32>, tensor<2x8x1xf32>) dim = 0 -> tensor<2x8x1x64xf32>, tensor<2x8x1xf32>
  return %r#0, %r#1 : tensor<2x8x1x64xf32>, tensor<2x8x1xf32>
}

// -----

// The split dimension may sit anywhere.
// CHECK-LABEL: func.func @single_partial_inner_dim
// CHECK-NOT: attn.merge
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<3x1x16xf32> into tensor<3x16xf32>
func.func @single_partial_inner_dim(%po: tensor<3x1x16xf32>, %pl: tensor<3x1xf32>,
                                    %o: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %r = attn.merge ins(%po, %pl : tensor<3x1x16xf32>, tensor<3x1xf32>) outs(%o : tensor<3x16xf32>) dim = 1 -> tensor<3x16xf32>
  return %r : tensor<3x16xf32>
}

// -----

// A rank-1 partial LSE collapses to a rank-0 LSE.
// CHECK-LABEL: func.func @single_partial_scalar_lse
// CHECK-NOT: attn.merge
// CHECK-DAG: tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
// CHECK-DAG: tensor.collapse_shape %{{.+}} [] : tensor<1xf32> into tensor<f32>
func.func @single_partial_scalar_lse(%po: tensor<1x64xf32>, %pl: tensor<1xf32>, %o: tensor<64xf32>,
                                     %l: tensor<f32>) -> (tensor<64xf32>, tensor<f32>) {
  %r:2 = attn.merge ins(%po, %pl : tensor<1x64xf32>, tensor<1xf32>) outs(%o, %l : tensor<64xf32>, tensor<f32>) dim = 0 -> tensor<64xf32>, tensor<f32>
  return %r#0, %r#1 : tensor<64xf32>, tensor<f32>
}

// -----

// Rounding to a narrower output is not a reshape: the merge stays.
// CHECK-LABEL: func.func @single_partial_rounded
// CHECK: attn.merge
func.func @single_partial_rounded(%po: tensor<1x4x64xf32>, %pl: tensor<1x4xf32>,
                                  %o: tensor<4x64xbf16>) -> tensor<4x64xbf16> {
  %r = attn.merge ins(%po, %pl : tensor<1x4x64xf32>, tensor<1x4xf32>) outs(%o : tensor<4x64xbf16>) dim = 0 -> tensor<4x64xbf16>
  return %r : tensor<4x64xbf16>
}

// -----

// Several partials, or a dynamic count, are merged for real.
// CHECK-LABEL: func.func @several_partials
// CHECK-COUNT-2: attn.merge
func.func @several_partials(%po: tensor<4x4x64xf32>, %pl: tensor<4x4xf32>, %o: tensor<4x64xf32>,
                            %dpo: tensor<?x4x64xf32>, %dpl: tensor<?x4xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %r = attn.merge ins(%po, %pl : tensor<4x4x64xf32>, tensor<4x4xf32>) outs(%o : tensor<4x64xf32>) dim = 0 -> tensor<4x64xf32>
  %d = attn.merge ins(%dpo, %dpl : tensor<?x4x64xf32>, tensor<?x4xf32>) outs(%o : tensor<4x64xf32>) dim = 0 -> tensor<4x64xf32>
  return %r, %d : tensor<4x64xf32>, tensor<4x64xf32>
}
