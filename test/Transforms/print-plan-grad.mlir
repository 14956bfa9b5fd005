// RUN: attn-opt %s --attn-print-plan --split-input-file --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s
// RUN: rm -rf %t && mkdir %t && attn-opt %s --attn-print-plan="svg-dir=%t" --split-input-file --mlir-print-op-on-diagnostic=false 2>/dev/null && FileCheck %s --input-file=%t/causal-grad-0.svg --check-prefix=SVG

// The backward's plan: the tiles attn-decompose-grad uses, the key/value
// blocks and their pieces, and the tiles visited through MaskGeometry's
// transposed range (the same 72 of 128 as the forward's causal square).
// CHECK: remark: gradient of B=1 Hq=8 Hkv=2 (GQA 4:1) Sq=1024 Sk=1024 D=64 Dv=64 bf16 causal
// CHECK-NEXT: work: 2.68 GFLOP nominal (2.5 times the forward's)
// CHECK-NEXT: tiles: 128 query rows x 128 keys (FlashAttention-2's backward default)
// CHECK-NEXT: per (batch, key/value head): 8 key/value blocks in 2 pieces of 4, one program each owning their dK and dV; per query head, 36 of 64 (key/value block, query block) tiles visited (56.2%), 8 with an element mask
// CHECK-NEXT: dQ: 2 f32 copies (4.0 MiB), summed in piece order
// SVG: <svg
// SVG: FlashAttention-2 backward: colour = the piece (of 2) whose program owns the row's dK and dV
// SVG: rows: key/value blocks of 128 keys (8 in all); columns: query blocks of 128 rows (8 in all)
func.func @causal(%q: tensor<1x8x1024x64xbf16>, %k: tensor<1x2x1024x64xbf16>, %o: tensor<1x8x1024x64xbf16>,
                  %l: tensor<1x8x1024xf32>) -> (tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>) {
  %r:3 = attn.attention_grad ins(%q, %k, %k : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>)
      out(%o, %l : tensor<1x8x1024x64xbf16>, tensor<1x8x1024xf32>) grad(%o : tensor<1x8x1024x64xbf16>)
      outs(%q, %k, %k : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>)
      {causal, partition = #attn.split_kv<splits = 2>}
      -> tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>
  return %r#0, %r#1, %r#2 : tensor<1x8x1024x64xbf16>, tensor<1x2x1024x64xbf16>, tensor<1x2x1024x64xbf16>
}

// -----

// A head dimension without a default tiling is reported, not an error.
// CHECK: remark: gradient of B=1 Hq=1 Hkv=1 (MHA) Sq=16 Sk=16 D=512 Dv=512 f32
// CHECK: tiles: none applies (a head dimension above 256 or tiles that do not nest in the block mask's blocks)
func.func @wide(%q: tensor<1x1x16x512xf32>, %l: tensor<1x1x16xf32>)
    -> (tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>) {
  %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>)
      out(%q, %l : tensor<1x1x16x512xf32>, tensor<1x1x16xf32>) grad(%q : tensor<1x1x16x512xf32>)
      outs(%q, %q, %q : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>)
      -> tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>
  return %r#0, %r#1, %r#2 : tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>, tensor<1x1x16x512xf32>
}
