// Debian's own mlir-opt (not attn-opt) loads the attn plugin as a dialect
// plugin and as a pass plugin, round-trips attn ops and runs attn passes.
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_plugin | %mlir_opt --load-dialect-plugin=%attn_plugin | FileCheck %s
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_plugin --canonicalize | FileCheck %s --check-prefix=CANON
// Passes of a pass plugin are named through --pass-pipeline: plain pass flags
// are parsed before the plugin loads.
// RUN: %mlir_opt %s --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(attn-print-plan)" --mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN
// The distribution layer through the plugin: one rank's program, its
// collectives as libattnmpi calls and its rank through MLIR's own
// shard-to-mpi.
// RUN: %mlir_opt %attn_src_root/examples/distributed-prefill.mlir --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin --pass-pipeline="builtin.module(attn-to-cpu)" | FileCheck %s --check-prefix=DISTRIBUTED
// DISTRIBUTED-DAG: llvm.call @MPI_Comm_rank
// DISTRIBUTED-DAG: llvm.call @attnmpi_all_gather
// DISTRIBUTED-DAG: llvm.call @attnmpi_all_to_all
// DISTRIBUTED-DAG: llvm.call @attnmpi_shift
// Without the plugin, stock mlir-opt does not know the dialect.
// RUN: not %mlir_opt %s 2>&1 | FileCheck %s --check-prefix=NOPLUGIN

// CHECK-LABEL: func.func @decode
// CHECK: attn.attention ins({{.*}}) outs({{.*}}) {causal} -> tensor<1x8x1x64xf16>, tensor<1x8x1xf32>
// CHECK: attn.merge
// CANON-NOT: attn.merge
// CANON: tensor.collapse_shape
// PLAN: remark: attention B=1 Hq=8 Hkv=2 (GQA 4:1) Sq=1 Sk=512 D=64 Dv=64 f16 causal +lse
// NOPLUGIN: Dialect `attn' not found for custom op 'attn.attention'
func.func @decode(%q: tensor<1x8x1x64xf16>, %k: tensor<1x2x512x64xf16>, %o: tensor<1x8x1x64xf16>,
                  %l: tensor<1x8x1xf32>, %po: tensor<1x8x64xf32>, %pl: tensor<1x8xf32>,
                  %m: tensor<8x64xf32>) -> (tensor<1x8x1x64xf16>, tensor<8x64xf32>) {
  %r:2 = attn.attention ins(%q, %k, %k : tensor<1x8x1x64xf16>, tensor<1x2x512x64xf16>, tensor<1x2x512x64xf16>)
      outs(%o, %l : tensor<1x8x1x64xf16>, tensor<1x8x1xf32>) {causal} -> tensor<1x8x1x64xf16>, tensor<1x8x1xf32>
  %s = attn.merge ins(%po, %pl : tensor<1x8x64xf32>, tensor<1x8xf32>) outs(%m : tensor<8x64xf32>) dim = 0 -> tensor<8x64xf32>
  return %r#0, %s : tensor<1x8x1x64xf16>, tensor<8x64xf32>
}
