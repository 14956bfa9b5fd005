//===- Passes.td - attn-mlir distribution passes -----------*- tablegen -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DISTRIBUTION_PASSES_TD
#define ATTN_DISTRIBUTION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnDistribute : Pass<"attn-distribute", "::mlir::ModuleOp"> {
  let summary = "Turn ATTENTION2D and ring attentions into the program of one rank";
  let description = [{
    Rewrites every `attn.attention` whose `partition` is
    `#attn.attention2d<q_parts = R, kv_parts = C>` or `#attn.ring<devices = P>`
    into the SPMD program of one rank of a `shard.grid` (`@attn_grid_R_C`,
    `@attn_grid_P`, created private when missing), as the attributes'
    descriptions lay out:

    - the function's Q, K, V arguments (and O, LSE destinations that are
      arguments) become the rank's shards of `ceil(S / P)` tokens, padded at
      the end of the sequence, and its returned O (and LSE) the rank's shard
      of the result. Rows of O at padding positions are unspecified.
    - ATTENTION2D: `shard.all_gather` of the query shards over the grid row
      and of the key/value shards over the grid column, one `attn.attention`
      with a `frame` (the chunk pair's positions in the whole attention, so
      causal and window masks and the score region see absolute positions,
      and padding keys are hidden), then `shard.all_to_all` of the f32 partial
      (O, LSE) over the row and `attn.merge`: the reduce-scatter whose
      reduction is the log-sum-exp merge.
    - Ring: `P` steps of a framed `attn.attention` against the key/value shard
      the rank holds, merged into a running f32 result with `attn.merge`,
      the shard passed on with `shard.shift` (rotate) between steps.

    The attention must sit in a `func.func` with Q, K, V as arguments that
    have no other use, destinations that are arguments or `tensor.empty`,
    results that are only returned, static sizes and no mask operand; else
    the pass fails with an error naming what is missing.

    Example (2 x 2 grid, S = 4096 queries and keys):

    ```mlir
    func.func @f(%q: tensor<1x8x4096x64xf32>, %k: tensor<1x8x4096x64xf32>,
                 %v: tensor<1x8x4096x64xf32>, %o: tensor<1x8x4096x64xf32>)
        -> tensor<1x8x4096x64xf32> {
      %r = attn.attention ins(%q, %k, %v : ...) outs(%o : ...)
          {causal, partition = #attn.attention2d<q_parts = 2, kv_parts = 2>}
          -> tensor<1x8x4096x64xf32>
      return %r : tensor<1x8x4096x64xf32>
    }
    ```

    becomes a function of `tensor<1x8x1024x64xf32>` shards that gathers
    `tensor<1x8x2048x64xf32>` chunks, computes their framed attention and
    merges the row's partials.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::shard::ShardDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnLowerCollectives : Pass<"attn-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Lower shard.all_gather, all_to_all and shift to libattnmpi calls";
  let description = [{
    MLIR 22's `convert-shard-to-mpi` lowers `shard.all_reduce` and the
    process indices but not the collectives distributed attention needs. This
    pass lowers them, on tensors, to calls into libattnmpi (see
    `attn/MpiRuntime/attnmpi.h`), leaving the rest to `convert-shard-to-mpi`:

    - `shard.all_gather`: `attnmpi_all_gather` into a `[n, ...]` buffer, then a
      transpose that puts the group dimension next to `gather_axis` and a
      collapse into it;
    - `shard.all_to_all`: the input cut along `split_axis` into `n` pieces laid
      out contiguously, `attnmpi_all_to_all`, then the pieces concatenated
      along `concat_axis` as for the all-gather;
    - `shard.shift` with `rotate`: `attnmpi_shift`.

    Buffers cross as `bufferization.to_buffer` of the input (contiguous,
    read-only) and a `memref.alloc` that becomes the result through
    `bufferization.to_tensor`; the calls take their addresses. Grids must be
    static with at most 3 axes. The module gets
    `dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">` unless it names
    an implementation, so that the `mpi` dialect lowers to MPICH's ABI.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::DLTIDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // ATTN_DISTRIBUTION_PASSES_TD
