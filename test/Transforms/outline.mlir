// RUN: attn-opt %s --attn-outline --split-input-file | FileCheck %s

// One attention in a function: nothing to isolate, left alone.
// CHECK-LABEL: func.func @single
// CHECK-NOT: call
// CHECK: attn.attention
// CHECK-NOT: func.func private
func.func @single(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                  %v: tensor<1x2x64x32xf32>) -> tensor<1x2x64x32xf32> {
  %e = tensor.empty() : tensor<1x2x64x32xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x64x32xf32>,
      tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>)
      outs(%e : tensor<1x2x64x32xf32>) {causal} -> tensor<1x2x64x32xf32>
  return %o : tensor<1x2x64x32xf32>
}

// -----

// Two attentions sharing K and V, the second reading the first's O, with a
// mask and an LSE destination: each becomes a call; the caller's tensors
// cross as read-only buffers, each destination is a new buffer read back as
// a tensor. A name already taken gets a suffix.
// CHECK-LABEL: func.func @layer(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x64x32xf32>, %[[K:[^:]+]]: tensor<1x2x64x32xf32>, %[[V:[^:]+]]: tensor<1x2x64x32xf32>, %[[M:[^:]+]]: tensor<1x1x64x64xf32>
// CHECK-DAG: %[[QB:.+]] = bufferization.to_buffer %[[Q]] read_only : tensor<1x2x64x32xf32> to memref<1x2x64x32xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK-DAG: %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG: %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[O1:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x64x32xf32>
// CHECK: call @[[F1:layer_attention_[0-9]+]](%[[QB]], %[[KB]], %[[VB]], %[[O1]])
// CHECK: %[[T1:.+]] = bufferization.to_tensor %[[O1]] restrict writable
// CHECK: %[[T1B:.+]] = bufferization.to_buffer %[[T1]] read_only
// CHECK: %[[MB:.+]] = bufferization.to_buffer %[[M]] read_only : tensor<1x1x64x64xf32> to memref<1x1x64x64xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK: %[[O2:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x64x32xf32>
// CHECK: %[[L2:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x64xf32>
// CHECK: call @[[F2:layer_attention_[0-9]+]](%[[T1B]], %{{.+}}, %{{.+}}, %[[MB]], %[[O2]], %[[L2]])
// CHECK-DAG: %[[R2:.+]] = bufferization.to_tensor %[[O2]] restrict writable
// CHECK-DAG: %[[RL:.+]] = bufferization.to_tensor %[[L2]] restrict writable
// CHECK: return %[[R2]], %[[RL]]
// CHECK: func.func private @layer_attention()
// CHECK: func.func private @[[F1]](%[[AQ:[^:]+]]: memref<1x2x64x32xf32, strided<[?, ?, ?, ?], offset: ?>>, %[[AK:[^:]+]]: memref<1x2x64x32xf32, strided<[?, ?, ?, ?], offset: ?>>, %[[AV:[^:]+]]: memref<1x2x64x32xf32, strided<[?, ?, ?, ?], offset: ?>>, %[[AO:[^:]+]]: memref<1x2x64x32xf32>)
// CHECK-DAG: %[[TQ:.+]] = bufferization.to_tensor %[[AQ]] restrict :
// CHECK-DAG: %[[TK:.+]] = bufferization.to_tensor %[[AK]] restrict :
// CHECK-DAG: %[[TV:.+]] = bufferization.to_tensor %[[AV]] restrict :
// CHECK-DAG: %[[E:.+]] = tensor.empty() : tensor<1x2x64x32xf32>
// CHECK: %[[R:.+]] = attn.attention ins(%[[TQ]], %[[TK]], %[[TV]] : {{.*}}) outs(%[[E]] : tensor<1x2x64x32xf32>) {causal}
// CHECK: bufferization.materialize_in_destination %[[R]] in restrict writable %[[AO]]
// CHECK: return
// CHECK: func.func private @[[F2]]({{.*}}: memref<1x1x64x64xf32, strided<[?, ?, ?, ?], offset: ?>>, %{{[^:]+}}: memref<1x2x64x32xf32>, %[[ALSE:[^:]+]]: memref<1x2x64xf32>)
// CHECK: %[[R:.+]]:2 = attn.attention {{.*}} mask(%{{.+}} : tensor<1x1x64x64xf32>)
// CHECK: bufferization.materialize_in_destination %[[R]]#0 in restrict writable
// CHECK: bufferization.materialize_in_destination %[[R]]#1 in restrict writable %[[ALSE]]
func.func @layer(%q: tensor<1x2x64x32xf32>, %k: tensor<1x2x64x32xf32>,
                 %v: tensor<1x2x64x32xf32>, %m: tensor<1x1x64x64xf32>)
    -> (tensor<1x2x64x32xf32>, tensor<1x2x64xf32>) {
  %e = tensor.empty() : tensor<1x2x64x32xf32>
  %o1 = attn.attention ins(%q, %k, %v : tensor<1x2x64x32xf32>,
      tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>)
      outs(%e : tensor<1x2x64x32xf32>) {causal} -> tensor<1x2x64x32xf32>
  %l = tensor.empty() : tensor<1x2x64xf32>
  %o2, %lse = attn.attention ins(%o1, %k, %v : tensor<1x2x64x32xf32>,
      tensor<1x2x64x32xf32>, tensor<1x2x64x32xf32>)
      mask(%m : tensor<1x1x64x64xf32>)
      outs(%e, %l : tensor<1x2x64x32xf32>, tensor<1x2x64xf32>)
      -> tensor<1x2x64x32xf32>, tensor<1x2x64xf32>
  return %o2, %lse : tensor<1x2x64x32xf32>, tensor<1x2x64xf32>
}
func.func private @layer_attention() {
  return
}

// -----

// Dynamic sizes: the caller allocates with the destination's sizes, the
// outlined function makes its empty destination from the buffer's. The score
// region's constant is cloned, its other value from outside is an argument.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x2x?x32xf32>
// CHECK-SAME: %[[BIAS:[^:]+]]: f32
// CHECK: %[[E:.+]] = tensor.empty(%[[N:.+]]) : tensor<1x2x?x32xf32>
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[D:.+]] = tensor.dim %[[E]], %[[C2]]
// CHECK: %[[O:.+]] = memref.alloc(%[[D]]) {alignment = 64 : i64} : memref<1x2x?x32xf32>
// CHECK: call @dynamic_attention({{.*}}, %[[BIAS]], %[[O]]) : (memref<1x2x?x32xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<1x2x?x32xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<1x2x?x32xf32, strided<[?, ?, ?, ?], offset: ?>>, f32, memref<1x2x?x32xf32>) -> ()
// CHECK: func.func private @dynamic_attention(%{{[^:]+}}: memref<1x2x?x32xf32, strided<[?, ?, ?, ?], offset: ?>>, %{{[^:]+}}: memref<1x2x?x32xf32, strided<[?, ?, ?, ?], offset: ?>>, %{{[^:]+}}: memref<1x2x?x32xf32, strided<[?, ?, ?, ?], offset: ?>>, %[[B:[^:]+]]: f32, %[[AO:[^:]+]]: memref<1x2x?x32xf32>)
// CHECK: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[DO:.+]] = memref.dim %[[AO]], %[[C2]]
// CHECK: %[[E2:.+]] = tensor.empty(%[[DO]]) : tensor<1x2x?x32xf32>
// CHECK: attn.attention {{.*}} outs(%[[E2]] : tensor<1x2x?x32xf32>)
// CHECK: arith.mulf %{{.+}}, %[[HALF]]
// CHECK: arith.addf %{{.+}}, %[[B]]
// CHECK: func.func private @dynamic_attention_0
func.func @dynamic(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>,
                   %v: tensor<1x2x?x32xf32>, %bias: f32, %n: index)
    -> (tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>) {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty(%n) : tensor<1x2x?x32xf32>
  %o1 = attn.attention ins(%q, %k, %v : tensor<1x2x?x32xf32>,
      tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>)
      outs(%e : tensor<1x2x?x32xf32>) -> tensor<1x2x?x32xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %scaled = arith.mulf %s, %half : f32
    %r = arith.addf %scaled, %bias : f32
    attn.yield %r : f32
  }
  %o2 = attn.attention ins(%q, %k, %v : tensor<1x2x?x32xf32>,
      tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>)
      outs(%e : tensor<1x2x?x32xf32>) {causal} -> tensor<1x2x?x32xf32>
  return %o1, %o2 : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>
}
