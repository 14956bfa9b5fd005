// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s --check-prefix=DOCS
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize --cse | FileCheck %s --check-prefix=CONSTANT

// A softcap and a score region with a math op: each score leaves the mma in
// natural units (times scale = 0.5), is capped (20 tanh(s / 20), tanh as
// 1 - 2 / (2^(2 x log2 e) + 1) with ex2.approx and rcp.approx), goes
// through the region's operations on its row and key (math.tanh lowered the
// same way, no libdevice), and is then taken to base 2 (times log2 e).
func.func @capped_bias(%q: tensor<1x2x64x64xf16>, %o: tensor<1x2x64x64xf16>) -> tensor<1x2x64x64xf16> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
      outs(%o : tensor<1x2x64x64xf16>) {softcap = 20.0 : f32, scale = 0.5 : f32,
       tiles = #attn.fa2<block_m = 64, block_n = 16, warps = 4, stages = 1>} -> tensor<1x2x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %slope = arith.constant 0.25 : f32
    %bias = arith.mulf %df, %slope : f32
    %t = math.tanh %bias : f32
    %r = arith.addf %s, %t : f32
    attn.yield %r : f32
  }
  return %r : tensor<1x2x64x64xf16>
}

// The manifest entry says so: the GPU check applies the softcap and knows it
// cannot evaluate the region.
// CHECK: gpu.func @capped_bias_attention0
// CHECK-SAME: attention = {causal = false, scale = 5.000000e-01 : f32, score_region, softcap = 2.000000e+01 : f32}
// CHECK-DAG: %[[QUARTER:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-DAG: %[[CAP:.+]] = arith.constant 2.000000e+01 : f32
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[TWOLOG2E:.+]] = arith.constant 2.885390e+00 : f32
// CHECK-DAG: %[[INVCAP:.+]] = arith.constant 5.000000e-02 : f32
// CHECK-DAG: %[[LOG2E:.+]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: nvgpu.mma.sync
// CHECK: %[[RAW:.+]] = vector.extract %{{.+}}[0, 0]
// CHECK: %[[S:.+]] = arith.mulf %[[RAW]], %[[SCALE]] : f32
// CHECK: %[[X:.+]] = arith.mulf %[[S]], %[[INVCAP]] : f32
// CHECK: %[[X2:.+]] = arith.mulf %[[X]], %[[TWOLOG2E]] : f32
// CHECK: %[[E:.+]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[X2]])
// CHECK: %[[E1:.+]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK: %[[R:.+]] = llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"(%[[E1]])
// CHECK: %[[R2:.+]] = arith.mulf %[[R]], %[[TWO]] : f32
// CHECK: %[[T:.+]] = arith.subf %[[ONE]], %[[R2]] : f32
// CHECK: %[[CAPPED:.+]] = arith.mulf %[[T]], %[[CAP]] : f32
// The region, on this element's key and row.
// CHECK: %[[DIST:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK: %[[DI:.+]] = arith.index_cast %[[DIST]] : index to i64
// CHECK: %[[DF:.+]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK: %[[BIAS:.+]] = arith.mulf %[[DF]], %[[QUARTER]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: llvm.call_intrinsic "llvm.nvvm.rcp.approx.ftz.f"
// CHECK: %[[TB:.+]] = arith.subf %[[ONE]], %{{.+}} : f32
// CHECK: %[[SUM:.+]] = arith.addf %[[CAPPED]], %[[TB]] : f32
// CHECK: arith.mulf %[[SUM]], %[[LOG2E]] : f32

// -----

// A constant block mask and a document-id table become constant globals of
// the kernel's module: each key/value block loads its element and an empty
// one leaves the state as it is; the region reads the table element by
// element.
// DOCS-LABEL: gpu.module @attn_kernels
// DOCS-DAG: memref.global "private" constant @[[DOCS:attn_table[_0-9]*]] : memref<64xi32> = dense<{{.*}}>
// DOCS-DAG: memref.global "private" constant @[[BLOCKS:attn_table[_0-9]*]] : memref<1x1x2x2xi8> = dense<{{\[\[\[\[}}1, 0], [2, 1]]]]>
// DOCS: gpu.func @documents_attention0
// DOCS-SAME: block_mask
// DOCS-DAG: %[[TABLE:.+]] = memref.get_global @[[BLOCKS]]
// DOCS-DAG: %[[IDS:.+]] = memref.get_global @[[DOCS]]
// DOCS: scf.for
// DOCS: %[[STATUS:.+]] = memref.load %[[TABLE]]
// DOCS: %[[EMPTY:.+]] = arith.cmpi eq, %[[STATUS]], %c0_i8 : i8
// DOCS: scf.if %[[EMPTY]]
// DOCS-NEXT: scf.yield
// DOCS: } else {
// DOCS: nvgpu.mma.sync
// DOCS: memref.load %[[IDS]]
func.func @documents(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %docs = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]> : tensor<64xi32>
  %blocks = arith.constant dense<[[[[1, 0], [2, 1]]]]> : tensor<1x1x2x2xi8>
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      block_mask(%blocks : tensor<1x1x2x2xi8> blocks [32, 32])
      outs(%o : tensor<1x1x64x64xf16>) {tiles = #attn.fa2<block_m = 32, block_n = 32, warps = 2, stages = 1>}
      -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %docs[%i] : tensor<64xi32>
    %dj = tensor.extract %docs[%j] : tensor<64xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %same, %s, %ninf : f32
    attn.yield %y : f32
  }
  return %r : tensor<1x1x64x64xf16>
}

// -----

// A region that yields a constant from its function: the constant is
// cloned into the kernel, and every score is 0.5 (in base 2, times log2 e).
// CONSTANT-LABEL: gpu.func @constant_scores_attention0
// CONSTANT: arith.constant 0.72134751 : f32
func.func @constant_scores(%q: tensor<1x1x64x64xf16>, %o: tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> {
  %half = arith.constant 0.5 : f32
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>)
      outs(%o : tensor<1x1x64x64xf16>) -> tensor<1x1x64x64xf16> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    attn.yield %half : f32
  }
  return %r : tensor<1x1x64x64xf16>
}
