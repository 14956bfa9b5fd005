// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// An additive mask operand is a kernel parameter after O. Each score leaves
// the mma in natural units (times scale = 0.5), gets its element of the mask
// added (batch from the grid, the size-1 head dimension broadcast, the row
// clamped to the last one, Sq - 1 = 63, so that rows past Sq read inside the
// tensor) and is then taken to base 2 (times log2 e).
// CHECK-LABEL: gpu.func @additive_attention0
// CHECK-SAME: %[[MASK:arg4]]: memref<2x1x64x64xf32>
// CHECK-SAME: param_names = ["Q", "K", "V", "O", "mask"]
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK: scf.for
// CHECK: %[[NATURAL:.+]] = arith.mulf %{{.+}}, %[[HALF]] : f32
// CHECK: %[[ROW:.+]] = arith.minui %{{.+}}, %c63 : index
// CHECK: %[[ELEMENT:.+]] = memref.load %[[MASK]][%block_id_y, %c0, %[[ROW]], %{{.+}}] : memref<2x1x64x64xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[NATURAL]], %[[ELEMENT]] : f32
// CHECK: arith.mulf %[[SUM]], %[[LOG2E]] : f32
func.func @additive(%q: tensor<2x2x64x64xf16>, %m: tensor<2x1x64x64xf32>, %o: tensor<2x2x64x64xf16>) -> tensor<2x2x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<2x2x64x64xf16>, tensor<2x2x64x64xf16>, tensor<2x2x64x64xf16>)
      mask(%m : tensor<2x1x64x64xf32>)
      outs(%o : tensor<2x2x64x64xf16>) {scale = 0.5 : f32, tiles = #attn.fa2<block_m = 64, block_n = 16, warps = 4, stages = 1>} -> tensor<2x2x64x64xf16>
  return %r : tensor<2x2x64x64xf16>
}

// -----

// A boolean mask with run-time lengths: its last row and key are read off
// the tensor at the kernel's entry. A block that ends past Sk (the element
// mask's branch) clamps the keys it reads too; a whole block reads its keys
// as they are. A false element hides the score (-inf).
// CHECK-LABEL: gpu.func @boolean_run_time_attention0
// CHECK: %[[VIEW:.+]] = memref.reinterpret_cast %arg4 {{.+}} to memref<1x1x?x?xi1, strided<[?, ?, ?, 1]>>
// CHECK: %[[ROWS:.+]] = memref.dim %[[VIEW]], %c2
// CHECK: %[[LAST_ROW:.+]] = arith.subi %[[ROWS]], %c1 : index
// CHECK: %[[KEYS:.+]] = memref.dim %[[VIEW]], %c3
// CHECK: %[[LAST_KEY:.+]] = arith.subi %[[KEYS]], %c1 : index
// CHECK: scf.if %{{.+}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: %[[ROW:.+]] = arith.minui %{{.+}}, %[[LAST_ROW]] : index
// CHECK: %[[KEY:.+]] = arith.minui %{{.+}}, %[[LAST_KEY]] : index
// CHECK: %[[KEEP:.+]] = memref.load %[[VIEW]][%c0, %c0, %[[ROW]], %[[KEY]]]
// CHECK: arith.select %[[KEEP]], %{{.+}}, %cst
// CHECK: } else {
// CHECK: %[[ROW2:.+]] = arith.minui %{{.+}}, %[[LAST_ROW]] : index
// CHECK-NOT: arith.minui
// CHECK: memref.load %[[VIEW]][%c0, %c0, %[[ROW2]], %{{.+}}]
func.func @boolean_run_time(%q: tensor<1x2x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, %m: tensor<1x1x?x?xi1>, %o: tensor<1x2x?x64xbf16>) -> tensor<1x2x?x64xbf16> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>, tensor<1x2x?x64xbf16>)
      mask(%m : tensor<1x1x?x?xi1>)
      outs(%o : tensor<1x2x?x64xbf16>) {tiles = #attn.fa2<block_m = 64, block_n = 16, warps = 4, stages = 1>} -> tensor<1x2x?x64xbf16>
  return %r : tensor<1x2x?x64xbf16>
}

// -----

// A full block of the block mask (2) does not read the mask operand: one
// uniform branch per block, after the empty test (0).
// CHECK-LABEL: gpu.func @full_blocks_attention0
// CHECK: scf.for
// CHECK: %[[STATUS:.+]] = memref.load %{{.+}} : memref<1x1x1x4xi8>
// CHECK: arith.cmpi eq, %[[STATUS]], %c0_i8 : i8
// CHECK: %[[FULL:.+]] = arith.cmpi eq, %[[STATUS]], %c2_i8 : i8
// CHECK: scf.if %[[FULL]]
// CHECK-NOT: memref.load %arg4
// CHECK: } else {
// CHECK: %[[ELEMENT:.+]] = memref.load %arg4[%c0, %c0, %{{.+}}, %{{.+}}] : memref<1x1x64x64xf16>
// CHECK: arith.extf %[[ELEMENT]] : f16 to f32
func.func @full_blocks(%q: tensor<1x1x64x64xf16>, %m: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %bm = arith.constant dense<[[[[2, 1, 0, 2]]]]> : tensor<1x1x1x4xi8>
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      mask(%m : tensor<1x1x64x64xf16>) block_mask(%bm : tensor<1x1x1x4xi8> blocks [64, 16])
      outs(%o : tensor<1x1x64x64xf16>) {tiles = #attn.fa2<block_m = 64, block_n = 16, warps = 4, stages = 1>} -> tensor<1x1x64x64xf16>
  return %r : tensor<1x1x64x64xf16>
}
