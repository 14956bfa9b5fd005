//===- DistributedRun.h - One rank of a distributed attention ---*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-run under mpirun: every rank compiles the same attention into its
// rank's program (attn-distribute), cuts its shards out of the same seeded
// global inputs, runs, and rank 0 gathers O and LSE and checks them against
// the float64 reference. Bytes sent are counted by libattnmpi and set against
// DistributedLayout's model.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_DISTRIBUTEDRUN_H
#define ATTN_RUN_DISTRIBUTEDRUN_H

#include "AttentionOperands.h"
#include "ReferenceCheck.h"

#include "attn/Pipelines/Pipelines.h"

namespace mlir::attn {

struct AttentionProblem;
class AttentionOp;

/// Whether `op` is distributed over ranks (#attn.attention2d, #attn.ring).
bool isDistributed(AttentionOp op);

/// MPI for the whole run: initialised once, finalised at exit.
class MpiSession {
public:
  MpiSession(int &argc, char **&argv);
  ~MpiSession();
  int rank() const { return rankIndex; }
  int size() const { return worldSize; }
  /// Ends every rank: the other ranks may be waiting in a collective.
  [[noreturn]] void abort(int code);
  /// Whether the error being returned is returned by every rank at the same
  /// point (they can all exit normally, their messages flushed) rather than
  /// by this one alone (the others must be aborted).
  bool failsTogether() const { return allFail; }
  void setFailsTogether() { allFail = true; }

private:
  int rankIndex = 0, worldSize = 1;
  bool allFail = false;
};

/// Compiles and runs this rank's part of `op` on its shards of `operands`
/// (the global tensors, the same on every rank); on rank 0 the gathered O
/// and LSE end up in `operands` and are checked unless `check` is false.
/// Returns whether every rank passed (the same answer on every rank).
llvm::Expected<bool> runDistributed(MpiSession &mpi, AttentionOp op,
                                    const AttentionProblem &problem,
                                    AttentionOperands &operands,
                                    const AttnToCPUOptions &pipelineOptions,
                                    const CheckOptions &checkOptions,
                                    bool check, unsigned repeat);

} // namespace mlir::attn

#endif // ATTN_RUN_DISTRIBUTEDRUN_H
