// RUN: attn-opt %s --attn-select-schedule --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-print-plan --split-input-file --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN

// On an #attn.cluster, attn-select-schedule gives an attention without a
// partition the distribution whose communication the traffic model predicts
// fastest, zig-zag when causal.

// 16 ranks in two nodes of 8: grid rows (consecutive ranks) stay on NVLink,
// so MHA takes 2 x 8 (Q, gathered over the rows, crosses no node; only the
// 2-member columns cross InfiniBand).
// CHECK-LABEL: func.func @mha_two_nodes
// CHECK: partition = #attn.attention2d<q_parts = 2, kv_parts = 8, zigzag = true>
// PLAN: on 16 ranks (8 per node), predicted communication per run:
// PLAN-NEXT: #attn.attention2d<q_parts = 2, kv_parts = 8, zigzag = true>: {{.*}} sent per rank, {{.*}} us
module attributes {attn.cluster = #attn.cluster<ranks = 16>} {
  func.func @mha_two_nodes(%q: tensor<1x32x65536x128xbf16>, %o: tensor<1x32x65536x128xbf16>) -> tensor<1x32x65536x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x32x65536x128xbf16>, tensor<1x32x65536x128xbf16>, tensor<1x32x65536x128xbf16>)
        outs(%o : tensor<1x32x65536x128xbf16>) {causal} -> tensor<1x32x65536x128xbf16>
    return %r : tensor<1x32x65536x128xbf16>
  }
}

// -----

// 64 ranks, one per node (every link is InfiniBand): MHA takes the square
// grid; GQA 4:1, whose Q is four times K, gathers Q over fewer ranks (16 x 4).
// CHECK-LABEL: func.func @mha_64
// CHECK: partition = #attn.attention2d<q_parts = 8, kv_parts = 8, zigzag = true>
// CHECK-LABEL: func.func @gqa_64
// CHECK: partition = #attn.attention2d<q_parts = 16, kv_parts = 4, zigzag = true>
module attributes {attn.cluster = #attn.cluster<ranks = 64, ranks_per_node = 1>} {
  func.func @mha_64(%q: tensor<1x32x65536x128xbf16>, %o: tensor<1x32x65536x128xbf16>) -> tensor<1x32x65536x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x32x65536x128xbf16>, tensor<1x32x65536x128xbf16>, tensor<1x32x65536x128xbf16>)
        outs(%o : tensor<1x32x65536x128xbf16>) {causal} -> tensor<1x32x65536x128xbf16>
    return %r : tensor<1x32x65536x128xbf16>
  }
  func.func @gqa_64(%q: tensor<1x32x8192x128xbf16>, %k: tensor<1x8x8192x128xbf16>, %o: tensor<1x32x8192x128xbf16>) -> tensor<1x32x8192x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x32x8192x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        outs(%o : tensor<1x32x8192x128xbf16>) {causal} -> tensor<1x32x8192x128xbf16>
    return %r : tensor<1x32x8192x128xbf16>
  }
}

// -----

// 6 ranks in one node: MHA takes a non-square grid (3 x 2); GQA 4:1 takes the
// ring (its K and V are a quarter of Q, and ATTENTION2D's f32 partials weigh
// twice bf16). Not causal: contiguous shards.
// CHECK-LABEL: func.func @mha_6
// CHECK: partition = #attn.attention2d<q_parts = 3, kv_parts = 2>
// CHECK-LABEL: func.func @gqa_6
// CHECK: partition = #attn.ring<devices = 6>
// PLAN: on 6 ranks (8 per node), predicted communication per run:
// PLAN-NEXT: #attn.attention2d<q_parts = 3, kv_parts = 2>
// PLAN: on 6 ranks (8 per node), predicted communication per run:
// PLAN-NEXT: #attn.ring<devices = 6>: 26.7 MiB sent per rank
module attributes {attn.cluster = #attn.cluster<ranks = 6>} {
  func.func @mha_6(%q: tensor<1x32x65536x128xbf16>, %o: tensor<1x32x65536x128xbf16>) -> tensor<1x32x65536x128xbf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x32x65536x128xbf16>, tensor<1x32x65536x128xbf16>, tensor<1x32x65536x128xbf16>)
        outs(%o : tensor<1x32x65536x128xbf16>) -> tensor<1x32x65536x128xbf16>
    return %r : tensor<1x32x65536x128xbf16>
  }
  func.func @gqa_6(%q: tensor<1x32x8192x128xbf16>, %k: tensor<1x8x8192x128xbf16>, %o: tensor<1x32x8192x128xbf16>) -> tensor<1x32x8192x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x32x8192x128xbf16>, tensor<1x8x8192x128xbf16>, tensor<1x8x8192x128xbf16>)
        outs(%o : tensor<1x32x8192x128xbf16>) -> tensor<1x32x8192x128xbf16>
    return %r : tensor<1x32x8192x128xbf16>
  }
}

// -----

// A pinned partition is kept (the plan marks it among the candidates); a
// mask operand is not distributed, with a warning.
// CHECK-LABEL: func.func @pinned
// CHECK: partition = #attn.ring<devices = 4>
// CHECK-LABEL: func.func @masked
// CHECK-NOT: partition
// PLAN: #attn.ring<devices = 4>: {{.*}} (pinned)
module attributes {attn.cluster = #attn.cluster<ranks = 4>} {
  func.func @pinned(%q: tensor<1x4x1024x64xf16>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        outs(%o : tensor<1x4x1024x64xf16>) {partition = #attn.ring<devices = 4>} -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
  func.func @masked(%q: tensor<1x4x1024x64xf16>, %m: tensor<1x1x1024x1024xi1>, %o: tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16> {
    // expected-warning @+1 {{not distributed over the 4 ranks of the cluster: a mask operand is not distributed}}
    %r = attn.attention ins(%q, %q, %q : tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>, tensor<1x4x1024x64xf16>)
        mask(%m : tensor<1x1x1024x1024xi1>) outs(%o : tensor<1x4x1024x64xf16>) -> tensor<1x4x1024x64xf16>
    return %r : tensor<1x4x1024x64xf16>
  }
}
