// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-opt %s --attn-print-plan="svg-dir=%t" --split-input-file --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=GRID < %t/causal-0.svg
// Causal 64 x 64 in 16 x 16 tiles: 4 query blocks, 10 of 16 blocks visited,
// 4 of them (the diagonal) with the element mask (+1: the legend's swatch).
// RUN: grep -c 'fill="#4e79a7"' %t/causal-0.svg | FileCheck %s --check-prefix=VISITED
// RUN: grep -c 'fill-opacity="0.55"' %t/causal-0.svg | FileCheck %s --check-prefix=MASKED
// RUN: grep -c 'fill="#f2f2f2"' %t/causal-0.svg | FileCheck %s --check-prefix=SKIPPED
// RUN: FileCheck %s --check-prefix=LEAN < %t/lean-0.svg
// RUN: FileCheck %s --check-prefix=RANKS < %t/zigzag-0.svg
// The shipped document-mask example: the blocks its region proves empty are
// drawn as skipped by the block mask (172 of 256; 86 of them are blocks the
// causal loop still steps through, drawn outlined, +1 the legend).
// RUN: attn-opt %attn_src_root/examples/document-mask.mlir --attn-print-plan="svg-dir=%t" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=DOCS-REMARK
// RUN: grep -c 'fill="#fff4e0"' %t/packed_documents-0.svg | FileCheck %s --check-prefix=DOCS-EMPTY
// RUN: FileCheck %s --check-prefix=DOCS-LEGEND < %t/packed_documents-0.svg
// DOCS-REMARK: block mask the IR proves: 172 of 256 blocks empty (their work skipped), 0 full
// DOCS-EMPTY: {{^87$}}
// DOCS-LEGEND: skipped (empty in the block mask)
// A directory that cannot be written is an error.
// RUN: not attn-opt %s --attn-print-plan="svg-dir=%t/missing/dir" --split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERROR

// REMARK: schedule picture: {{.*}}causal-0.svg
// REMARK: schedule picture: {{.*}}lean-0.svg
// REMARK: schedule picture: {{.*}}zigzag-0.svg
// GRID: <svg xmlns="http://www.w3.org/2000/svg"
// GRID: @causal: B=1 Hq=1 Hkv=1 (MHA) Sq=64 Sk=64 D=16 Dv=16 f32 causal
// GRID: FlashAttention-2: one CTA per row
// GRID: >m0</text>
// GRID: >m3</text>
// GRID: columns: key/value blocks of 16 keys (4 in all); rows: output tiles of 16 queries
// VISITED: 12
// MASKED: 5
// SKIPPED: 7
// LEAN: Lean attention: colour and number = the CTA (of 3) computing the block
// LEAN: >b0 h0 m0</text>
// LEAN: stroke="black" stroke-width="1.5"
// LEAN: >b0 h1 m0</text>
// RANKS: ATTENTION2D on a 2x2 grid (zig-zag shards)
// RANKS-DAG: >0,0</text>
// RANKS-DAG: >0,1</text>
// RANKS-DAG: >1,0</text>
// RANKS-DAG: >1,1</text>
// RANKS: <polygon
// ERROR: error: cannot write the schedule picture {{.*}}missing/dir/causal-0.svg

func.func @causal(%q: tensor<1x1x64x16xf32>, %o: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>)
      outs(%o : tensor<1x1x64x16xf32>) {causal, tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>} -> tensor<1x1x64x16xf32>
  return %r : tensor<1x1x64x16xf32>
}

// -----

func.func @lean(%q: tensor<1x2x1x16xf32>, %k: tensor<1x2x256x16xf32>, %o: tensor<1x2x1x16xf32>) -> tensor<1x2x1x16xf32> {
  %r = attn.attention ins(%q, %k, %k : tensor<1x2x1x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>)
      outs(%o : tensor<1x2x1x16xf32>) {tiles = #attn.fa2<block_m = 16, block_n = 32, warps = 1, stages = 1>, partition = #attn.lean<ctas = 3>} -> tensor<1x2x1x16xf32>
  return %r : tensor<1x2x1x16xf32>
}

// -----

func.func @zigzag(%q: tensor<1x1x64x16xf32>, %o: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>)
      outs(%o : tensor<1x1x64x16xf32>) {causal, partition = #attn.attention2d<q_parts = 2, kv_parts = 2, zigzag = true>} -> tensor<1x1x64x16xf32>
  return %r : tensor<1x1x64x16xf32>
}
