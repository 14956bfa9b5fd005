// RUN: attn-opt %s --attn-derive-block-mask="block-m=16 block-n=16" --split-input-file | FileCheck %s

// A document mask over constant sequence ids (documents of 20, 20 and 24
// tokens): the blocks whose query and key rows lie in different documents
// are empty; those that straddle a document boundary stay partial.
// CHECK-LABEL: func.func @documents
// CHECK: %[[BLOCKS:.+]] = arith.constant dense<{{\[\[\[}}[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]{{\]\]\]}}> : tensor<1x1x4x4xi8>
// CHECK: attn.attention {{.*}} block_mask(%[[BLOCKS]] : tensor<1x1x4x4xi8> blocks [16, 16])
func.func @documents(%q: tensor<2x4x64x32xf16>, %k: tensor<2x4x64x32xf16>, %v: tensor<2x4x64x32xf16>) -> tensor<2x4x64x32xf16> {
  %init = tensor.empty() : tensor<2x4x64x32xf16>
  %docs = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]> : tensor<64xi32>
  %o = attn.attention ins(%q, %k, %v : tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>, tensor<2x4x64x32xf16>)
      outs(%init : tensor<2x4x64x32xf16>) -> tensor<2x4x64x32xf16> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %docs[%i] : tensor<64xi32>
      %dj = tensor.extract %docs[%j] : tensor<64xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %same, %s, %ninf : f32
      attn.yield %r : f32
  }
  return %o : tensor<2x4x64x32xf16>
}

// -----

// A prefix-LM mask written in the region (every query sees the 16-token
// prefix and, causally, the keys up to itself), with a softcap before it:
// blocks above the diagonal and past the prefix are empty.
// CHECK-LABEL: func.func @prefix_lm
// CHECK: %[[BLOCKS:.+]] = arith.constant dense<{{\[\[\[}}[1, 0, 0], [1, 1, 0], [1, 1, 1]{{\]\]\]}}> : tensor<1x1x3x3xi8>
// CHECK: block_mask(%[[BLOCKS]] : tensor<1x1x3x3xi8> blocks [16, 16])
func.func @prefix_lm(%q: tensor<1x2x48x32xbf16>, %k: tensor<1x2x48x32xbf16>, %v: tensor<1x2x48x32xbf16>) -> tensor<1x2x48x32xbf16> {
  %init = tensor.empty() : tensor<1x2x48x32xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x48x32xbf16>, tensor<1x2x48x32xbf16>, tensor<1x2x48x32xbf16>)
      outs(%init : tensor<1x2x48x32xbf16>) {softcap = 30.0 : f32} -> tensor<1x2x48x32xbf16> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %prefix = arith.constant 16 : index
      %in_prefix = arith.cmpi ult, %j, %prefix : index
      %causal = arith.cmpi ule, %j, %i : index
      %visible = arith.ori %in_prefix, %causal : i1
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %visible, %s, %ninf : f32
      attn.yield %r : f32
  }
  return %o : tensor<1x2x48x32xbf16>
}

// -----

// A window that grows with the head (16 (h + 1) keys back, index
// arithmetic on h): the block mask has one row of blocks per head.
// CHECK-LABEL: func.func @per_head_window
// CHECK: %[[BLOCKS:.+]] = arith.constant dense<{{\[\[\[\[}}1, 0, 0], [1, 1, 0], [0, 1, 1]], {{\[\[}}1, 0, 0], [1, 1, 0], [1, 1, 1]]]]> : tensor<1x2x3x3xi8>
// CHECK: block_mask(%[[BLOCKS]] : tensor<1x2x3x3xi8> blocks [16, 16])
func.func @per_head_window(%q: tensor<1x2x48x32xf32>, %k: tensor<1x2x48x32xf32>, %v: tensor<1x2x48x32xf32>) -> tensor<1x2x48x32xf32> {
  %init = tensor.empty() : tensor<1x2x48x32xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x48x32xf32>, tensor<1x2x48x32xf32>, tensor<1x2x48x32xf32>)
      outs(%init : tensor<1x2x48x32xf32>) -> tensor<1x2x48x32xf32> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %c1 = arith.constant 1 : index
      %c16 = arith.constant 16 : index
      %h1 = arith.addi %h, %c1 : index
      %reach = arith.muli %h1, %c16 : index
      %jr = arith.addi %j, %reach : index
      %near = arith.cmpi sgt, %jr, %i : index
      %causal = arith.cmpi sle, %j, %i : index
      %visible = arith.andi %near, %causal : i1
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %visible, %s, %ninf : f32
      attn.yield %r : f32
  }
  return %o : tensor<1x2x48x32xf32>
}

// -----

// A constant boolean mask: blocks it hides are empty, blocks it keeps whole
// are full (the mask is not read there), the others partial.
// CHECK-LABEL: func.func @constant_mask
// CHECK: %[[BLOCKS:.+]] = arith.constant dense<{{\[\[\[}}[2, 0], [1, 2]{{\]\]\]}}> : tensor<1x1x2x2xi8>
// CHECK: mask(%{{.+}} : tensor<1x1x32x32xi1>) block_mask(%[[BLOCKS]] : tensor<1x1x2x2xi8> blocks [16, 16])
func.func @constant_mask(%q: tensor<1x1x32x16xf32>, %k: tensor<1x1x32x16xf32>, %v: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %init = tensor.empty() : tensor<1x1x32x16xf32>
  // Block (0, 0) and (1, 1) true, (0, 1) false, (1, 0) mixed.
  %m = arith.constant dense<[[[[true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false, false],
      [true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true],
      [true, true, false, true, true, false, true, true, false, true, true, false, true, true, false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]]]]> : tensor<1x1x32x32xi1>
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      mask(%m : tensor<1x1x32x32xi1>) outs(%init : tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32>
  return %o : tensor<1x1x32x16xf32>
}

// -----

// An additive constant mask of zeros keeps every score: every block full.
// CHECK-LABEL: func.func @additive_zeros
// CHECK: %[[BLOCKS:.+]] = arith.constant dense<2> : tensor<1x1x2x2xi8>
// CHECK: block_mask(%[[BLOCKS]] : tensor<1x1x2x2xi8> blocks [16, 16])
func.func @additive_zeros(%q: tensor<1x1x32x16xf32>, %k: tensor<1x1x32x16xf32>, %v: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %init = tensor.empty() : tensor<1x1x32x16xf32>
  %m = arith.constant dense<0.0> : tensor<1x1x32x32xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      mask(%m : tensor<1x1x32x32xf32>) outs(%init : tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32>
  return %o : tensor<1x1x32x16xf32>
}

// -----

// Nothing to prove: ALiBi never hides a score, ids that are not constants
// are unknown, a block mask already given stays, dynamic lengths are left.
// CHECK-LABEL: func.func @unproven
// CHECK-NOT: block_mask(
// CHECK: block_mask(%arg4 : tensor<1x1x1x1xi8> blocks [32, 32])
// CHECK-NOT: block_mask(
// CHECK: return
func.func @unproven(%q: tensor<1x1x32x16xf32>, %k: tensor<1x1x32x16xf32>, %v: tensor<1x1x32x16xf32>,
                    %docs: tensor<32xi32>, %bm: tensor<1x1x1x1xi8>, %qd: tensor<1x1x?x16xf32>)
    -> (tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x?x16xf32>) {
  %init = tensor.empty() : tensor<1x1x32x16xf32>
  %a = attn.attention ins(%q, %k, %v : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      outs(%init : tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %d = arith.subi %j, %i : index
      %di = arith.index_cast %d : index to i64
      %df = arith.sitofp %di : i64 to f32
      %r = arith.addf %s, %df : f32
      attn.yield %r : f32
  }
  %c = attn.attention ins(%q, %k, %v : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      outs(%init : tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %di = tensor.extract %docs[%i] : tensor<32xi32>
      %dj = tensor.extract %docs[%j] : tensor<32xi32>
      %same = arith.cmpi eq, %di, %dj : i32
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %same, %s, %ninf : f32
      attn.yield %r : f32
  }
  %given = attn.attention ins(%q, %k, %v : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      block_mask(%bm : tensor<1x1x1x1xi8> blocks [32, 32])
      outs(%init : tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %ninf = arith.constant 0xFF800000 : f32
      attn.yield %ninf : f32
  }
  %c32 = arith.constant 32 : index
  %dynInit = tensor.empty(%c32) : tensor<1x1x?x16xf32>
  %e = attn.attention ins(%qd, %k, %v : tensor<1x1x?x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>)
      outs(%dynInit : tensor<1x1x?x16xf32>) -> tensor<1x1x?x16xf32> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %ninf = arith.constant 0xFF800000 : f32
      attn.yield %ninf : f32
  }
  return %a, %c, %given, %e : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x?x16xf32>
}
