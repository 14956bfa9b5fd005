// A kernel for run-time lengths: each tensor is a pointer (a rank-0 memref)
// plus i64 scalars for its dynamic sizes and batch/head strides, bound at
// the entry by memref.reinterpret_cast; Sq and Sk are read off Q and K, and
// every key block's tail is masked at run time (Sk is unknown). The grid's
// query-block and batch sizes are dynamic.
// RUN: attn-opt %s --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// CHECK-LABEL: gpu.func @decode_attention0(
// CHECK-SAME: %[[Q:[^:]+]]: memref<f16>, %[[K:[^:]+]]: memref<f16>, %[[V:[^:]+]]: memref<f16>, %[[O:[^:]+]]: memref<f16>,
// CHECK-SAME: %[[QB:[^:]+]]: i64, %[[QS:[^:]+]]: i64, %[[QSB:[^:]+]]: i64, %[[QSH:[^:]+]]: i64,
// CHECK-SAME: grid = array<i64: -9223372036854775808, -9223372036854775808, 8>
// CHECK-SAME: params = [memref<?x8x?x64xf16, strided<[?, ?, 64, 1]>>, memref<?x2x?x64xf16, strided<[?, ?, 64, 1]>>, memref<?x2x?x64xf16, strided<[?, ?, 64, 1]>>, memref<?x8x?x64xf16, strided<[?, ?, 64, 1]>>]
// CHECK-SAME: scalars = [{param = 0 : i64, size = 0 : i64}, {param = 0 : i64, size = 2 : i64}, {param = 0 : i64, stride = 0 : i64}, {param = 0 : i64, stride = 1 : i64}, {param = 1 : i64, size = 0 : i64}
// CHECK: %[[QSI:.+]] = arith.index_cast %[[QS]] : i64 to index
// CHECK: %[[QVIEW:.+]] = memref.reinterpret_cast %[[Q]] to offset: [0], sizes: [%{{.+}}, 8, %[[QSI]], 64], strides: [%{{.+}}, %{{.+}}, 64, 1] : memref<f16> to memref<?x8x?x64xf16, strided<[?, ?, 64, 1]>>
// CHECK: %[[KVIEW:.+]] = memref.reinterpret_cast %[[K]]
// CHECK: %[[SQ:.+]] = memref.dim %[[QVIEW]], %c2
// CHECK: %[[SK:.+]] = memref.dim %[[KVIEW]], %c2
// The last row a copy may read: Sk - 1.
// CHECK: arith.subi %[[SK]], %c1
// CHECK: nvgpu.device_async_copy %[[QVIEW]]
// CHECK: scf.for
// CHECK: scf.if
// CHECK: gpu.return
func.func @decode(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %o: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>)
      outs(%o : tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16>
  return %r : tensor<?x8x?x64xf16>
}
