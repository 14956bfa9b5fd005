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

// -----

// With an sm_90a target, the GPU kernel's tiles and matrix unit: wgmma up to
// D = 192, mma.sync above (gradWgmmaUnfit); on wgmma its tiles by tensor
// copies, but with rows wider than 128 (dV and dK in a walk each) or key
// lengths (gradTensorCopiesUnfit).
// CHECK: remark: gradient of B=1 Hq=2 Hkv=2 (MHA) Sq=256 Sk=256 D=128 Dv=128 bf16
// CHECK: tiles: 64 query rows x 128 keys (FlashAttention-2's backward default)
// CHECK-NEXT: GPU kernel: a CTA per key/value block and per query block of 64 rows, the other side streamed past them 32 rows a step, 4 warps on wgmma, tiles by tensor copies issued by thread 0 (the streamed ones in 2 stages){{$}}
// CHECK: remark: gradient of B=1 Hq=2 Hkv=2 (MHA) Sq=256 Sk=256 D=256 Dv=256 bf16
// CHECK: GPU kernel: a CTA per key/value block and per query block of 64 rows, the other side streamed past them 32 rows a step, 4 warps on mma.sync (the backward kernel's rows (max(D, Dv) = 256) are wider than wgmma's 192: its dK or dV accumulators leave too few registers (ptxas spilled)){{$}}
// CHECK: remark: gradient of B=1 Hq=2 Hkv=2 (MHA) Sq=256 Sk=256 D=160 Dv=160 bf16
// CHECK: GPU kernel: {{.*}} 4 warps on wgmma, tiles by cp.async (dV and dK in a walk each (max(D, Dv) = 160): with the stages' addresses ptxas serialised their wgmma){{$}}
// CHECK: remark: gradient of B=2 Hq=2 Hkv=2 (MHA) Sq=256 Sk=256 D=64 Dv=64 bf16
// CHECK: GPU kernel: {{.*}} 4 warps on wgmma, tiles by tensor copies issued by thread 0 (the streamed ones in 2 stages; the keys past a sequence's length zeroed in shared memory by the issuing thread){{$}}
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @hopper(%q: tensor<1x2x256x128xbf16>, %l: tensor<1x2x256xf32>) -> (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>)
        out(%q, %l : tensor<1x2x256x128xbf16>, tensor<1x2x256xf32>) grad(%q : tensor<1x2x256x128xbf16>)
        outs(%q, %q, %q : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>
  }
  func.func @wide(%q: tensor<1x2x256x256xbf16>, %l: tensor<1x2x256xf32>) -> (tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>)
        out(%q, %l : tensor<1x2x256x256xbf16>, tensor<1x2x256xf32>) grad(%q : tensor<1x2x256x256xbf16>)
        outs(%q, %q, %q : tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>) -> tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>, tensor<1x2x256x256xbf16>
  }
  func.func @two_walks(%q: tensor<1x2x256x160xbf16>, %l: tensor<1x2x256xf32>) -> (tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>)
        out(%q, %l : tensor<1x2x256x160xbf16>, tensor<1x2x256xf32>) grad(%q : tensor<1x2x256x160xbf16>)
        outs(%q, %q, %q : tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>) -> tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>
    return %r#0, %r#1, %r#2 : tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>, tensor<1x2x256x160xbf16>
  }
  func.func @lengths(%q: tensor<2x2x256x64xbf16>, %l: tensor<2x2x256xf32>, %n: tensor<2xi32>) -> (tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>) {
    %r:3 = attn.attention_grad ins(%q, %q, %q : tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>)
        out(%q, %l : tensor<2x2x256x64xbf16>, tensor<2x2x256xf32>) grad(%q : tensor<2x2x256x64xbf16>)
        key_lengths(%n : tensor<2xi32>)
        outs(%q, %q, %q : tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>) -> tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>
    return %r#0, %r#1, %r#2 : tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>, tensor<2x2x256x64xbf16>
  }
}
