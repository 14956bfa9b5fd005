// Block sparsity proven from the IR (attn-derive-block-mask, part of
// attn-to-cpu): the empty blocks are skipped and the full ones read no mask,
// and the results still match the float64 reference, which knows nothing of
// blocks.
// RUN: attn-run %s --block-m=16 --block-n=16 | FileCheck %s --check-prefixes=CHECK,SIXTEEN
// RUN: attn-run %s --block-m=32 --block-n=16 | FileCheck %s
// The shipped packed-documents example.
// RUN: attn-run %attn_src_root/examples/document-mask.mlir | FileCheck %s --check-prefix=EXAMPLE
// EXAMPLE: the IR proves 172 of 256 blocks empty and 0 full
// EXAMPLE: check O  : {{.*}} PASS

// CHECK: @documents:
// SIXTEEN: the IR proves 6 of 16 blocks empty and 0 full
// CHECK: check O  : {{.*}} PASS
// CHECK: @prefix_lm_split:
// SIXTEEN: the IR proves 10 of 25 blocks empty and 0 full
// CHECK: check O  : {{.*}} PASS
// CHECK: @per_head_window:
// SIXTEEN: the IR proves 7 of 18 blocks empty and 0 full
// CHECK: check O  : {{.*}} PASS
// CHECK: @constant_mask:
// SIXTEEN: the IR proves 1 of 4 blocks empty and 2 full
// CHECK: check O  : {{.*}} PASS
// CHECK: {{^PASS$}}

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

// Prefix-LM (a 16-token prefix, causal after it) with a softcap, through
// split-KV: the pieces skip the empty blocks too.
func.func @prefix_lm_split(%q: tensor<1x2x80x32xbf16>, %k: tensor<1x2x80x32xbf16>, %v: tensor<1x2x80x32xbf16>) -> tensor<1x2x80x32xbf16> {
  %init = tensor.empty() : tensor<1x2x80x32xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x80x32xbf16>, tensor<1x2x80x32xbf16>, tensor<1x2x80x32xbf16>)
      outs(%init : tensor<1x2x80x32xbf16>) {softcap = 30.0 : f32, partition = #attn.split_kv<splits = 2>}
      -> tensor<1x2x80x32xbf16> score {
    ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
      %prefix = arith.constant 16 : index
      %in_prefix = arith.cmpi ult, %j, %prefix : index
      %causal = arith.cmpi ule, %j, %i : index
      %visible = arith.ori %in_prefix, %causal : i1
      %ninf = arith.constant 0xFF800000 : f32
      %r = arith.select %visible, %s, %ninf : f32
      attn.yield %r : f32
  }
  return %o : tensor<1x2x80x32xbf16>
}

// A causal window of 16 (h + 1) keys, per head.
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

// A constant boolean mask: blocks (0, 0) and (1, 1) keep every score
// (full), block (0, 1) hides them all (empty), block (1, 0) is mixed.
func.func @constant_mask(%q: tensor<1x1x32x16xf32>, %k: tensor<1x1x32x16xf32>, %v: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %init = tensor.empty() : tensor<1x1x32x16xf32>
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
