//===- DistributedRun.cpp - Run one rank of a distributed attention -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "DistributedRun.h"

#include "attn/Analysis/DistributedLayout.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Execution/CpuExecutable.h"
#include "attn/MpiRuntime/attnmpi.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::isDistributed(AttentionOp op) {
  return DistributedLayout::of(op.getPartitionAttr()).has_value();
}

MpiSession::MpiSession(int &argc, char **&argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rankIndex);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::abort(int code) {
  llvm::outs().flush();
  llvm::errs().flush();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

namespace {

/// A buffer of shape [d0, d1, S, (d3)] (every attention operand) as d0 * d1
/// runs of S rows.
struct Rows {
  HostBuffer &buffer;
  int64_t runs() const { return buffer.shape[0] * buffer.shape[1]; }
  int64_t length() const { return buffer.shape[2]; }
  int64_t rowBytes() const {
    return (buffer.shape.size() == 4 ? buffer.shape[3] : 1) *
           buffer.elementBytes;
  }
  uint8_t *row(int64_t run, int64_t index) {
    return buffer.bytes.data() + (run * length() + index) * rowBytes();
  }
};

/// Copies the token runs of a shard out of every (batch, head) of `global`
/// into `shard`; rows past the end of `global` (padding) become zeros.
void cutShard(HostBuffer &global, ArrayRef<TokenRun> runs, HostBuffer &shard) {
  Rows from{global}, to{shard};
  std::memset(shard.bytes.data(), 0, shard.bytes.size());
  for (int64_t head = 0; head < to.runs(); ++head)
    for (const TokenRun &run : runs)
      for (int64_t index = 0; index < run.length; ++index)
        if (run.globalStart + index < from.length())
          std::memcpy(to.row(head, run.localStart + index),
                      from.row(head, run.globalStart + index), to.rowBytes());
}

/// The inverse of cutShard for the rows that exist in `global`.
void placeShard(const uint8_t *shardBytes, HostBuffer &shardShape,
                ArrayRef<TokenRun> runs, HostBuffer &global) {
  Rows from{shardShape}, to{global};
  for (int64_t head = 0; head < from.runs(); ++head)
    for (const TokenRun &run : runs)
      for (int64_t index = 0; index < run.length; ++index) {
        int64_t target = run.globalStart + index;
        if (target >= to.length())
          continue;
        std::memcpy(to.row(head, target),
                    shardBytes +
                        (head * from.length() + run.localStart + index) *
                            from.rowBytes(),
                    from.rowBytes());
      }
}

HostBuffer shardOf(const HostBuffer &global, int64_t length) {
  HostBuffer shard;
  shard.shape = global.shape;
  shard.shape[2] = length;
  shard.elementBytes = global.elementBytes;
  shard.bytes.assign(shard.numElements() * shard.elementBytes, 0);
  return shard;
}

/// The scores of one (batch, head) that `rank` computes (query-key pairs the
/// masks leave visible): its query chunk against its key/value chunk for
/// ATTENTION2D, its query shard against every key for a ring.
int64_t visibleScores(const DistributedLayout &layout,
                      const AttentionProblem &problem, int64_t rank) {
  SmallVector<TokenRun> queries, keys;
  if (layout.ring) {
    queries = layout.queryRuns(rank, problem.queryLen);
    keys.push_back({0, 0, problem.keyLen});
  } else {
    queries = layout.queryChunkRuns(rank / layout.cols, problem.queryLen);
    keys = layout.keyChunkRuns(rank % layout.cols, problem.keyLen);
  }
  int64_t scores = 0;
  for (const TokenRun &run : queries)
    for (int64_t q = run.globalStart;
         q < std::min(run.globalStart + run.length, problem.queryLen); ++q) {
      IndexRange visible = problem.visibleKeys(q);
      for (const TokenRun &keyRun : keys) {
        int64_t begin = std::max(visible.begin, keyRun.globalStart);
        int64_t end = std::min(
            {visible.end, keyRun.globalStart + keyRun.length, problem.keyLen});
        scores += std::max<int64_t>(0, end - begin);
      }
    }
  return scores;
}

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

} // namespace

llvm::Expected<bool> mlir::attn::runDistributed(
    MpiSession &mpi, AttentionOp op, const AttentionProblem &problem,
    AttentionOperands &operands, const AttnToCPUOptions &pipelineOptions,
    const CheckOptions &checkOptions, bool check, unsigned repeat) {
  DistributedLayout layout = *DistributedLayout::of(op.getPartitionAttr());
  int rank = mpi.rank();
  bool leader = rank == 0;
  // Every rank sees the same sizes: they fail here together.
  if (mpi.size() != layout.devices()) {
    mpi.setFailsTogether();
    return llvm::createStringError(llvm::formatv(
        "the attention is distributed over {0} ranks ({1}) but mpirun started "
        "{2}: run it with mpirun -n {0}",
        layout.devices(),
        layout.ring
            ? llvm::formatv("a ring of {0}", layout.devices()).str()
            : llvm::formatv("a {0}x{1} grid", layout.rows, layout.cols).str(),
        mpi.size()));
  }
  int64_t queryShardLen = layout.shardLength(problem.queryLen);
  int64_t keyShardLen = layout.shardLength(problem.keyLen);
  if (leader)
    llvm::outs() << llvm::formatv(
        "  distribution: {0} over {1} ranks, shards of {2} query and {3} "
        "key/value tokens{4}\n",
        layout.ring ? "ring attention"
                    : llvm::formatv("ATTENTION2D on a {0}x{1} grid",
                                    layout.rows, layout.cols)
                          .str(),
        layout.devices(), queryShardLen, keyShardLen,
        problem.queryLen % layout.devices() || problem.keyLen % layout.devices()
            ? " (the last padded)"
            : "");
  if (leader) {
    int64_t least = std::numeric_limits<int64_t>::max(), most = 0, total = 0;
    for (int64_t other = 0; other < layout.devices(); ++other) {
      int64_t scores = visibleScores(layout, problem, other);
      least = std::min(least, scores);
      most = std::max(most, scores);
      total += scores;
    }
    llvm::outs() << llvm::formatv(
        "  work per rank: {0} to {1} visible scores per (batch, head), the "
        "busiest {2:F2} x the mean{3}\n",
        least, most, most * layout.devices() / std::max(1.0, double(total)),
        layout.zigzag ? " (zig-zag shards)" : "");
  }

  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<CpuExecutable>> executable =
      CpuExecutable::compile(op, pipelineOptions);
  // Whether every rank compiled: if one did not, all stop here together.
  int failedHere = executable ? 0 : 1, anyFailed = 0;
  MPI_Allreduce(&failedHere, &anyFailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyFailed) {
    mpi.setFailsTogether();
    if (!executable)
      return executable.takeError();
    return llvm::createStringError("another rank failed to compile");
  }
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  // This rank's shards, in the entry's argument order: Q, K, V, O, [LSE].
  std::vector<Operand> &globals = operands.all();
  std::vector<HostBuffer> shards;
  for (Operand &operand : globals) {
    bool isKey = &operand == &operands.key() || &operand == &operands.value();
    int64_t length = operand.buffer.shape[2];
    shards.push_back(
        shardOf(operand.buffer, isKey ? keyShardLen : queryShardLen));
    cutShard(operand.buffer,
             isKey ? layout.keyRuns(rank, length)
                   : layout.queryRuns(rank, length),
             shards.back());
  }
  std::vector<HostBuffer *> buffers;
  for (HostBuffer &shard : shards)
    buffers.push_back(&shard);
  ArrayRef<RankedTensorType> types = (*executable)->getArgumentTypes();
  for (auto [buffer, type] : llvm::zip(buffers, types))
    if (ArrayRef<int64_t>(buffer->shape) != type.getShape())
      return llvm::createStringError(
          "the compiled rank program takes shards of another shape than the "
          "layout gives (attn-distribute and DistributedLayout disagree)");

  std::vector<double> runSeconds;
  int64_t sent = 0;
  for (unsigned i = 0; i < std::max(1u, repeat); ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    attnmpi_reset_bytes_sent();
    double begin = MPI_Wtime();
    if (llvm::Error err = (*executable)->run(buffers))
      return std::move(err);
    MPI_Barrier(MPI_COMM_WORLD);
    runSeconds.push_back(MPI_Wtime() - begin);
    sent = attnmpi_bytes_sent();
  }

  // Bytes per rank against the model.
  std::vector<int64_t> allSent(mpi.size());
  MPI_Gather(&sent, 1, MPI_INT64_T, allSent.data(), 1, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  int64_t elementBytes = std::max<int64_t>(
      1, op.getQuery().getType().getElementTypeBitWidth() / 8);
  int64_t model = layout.bytesSent(problem, elementBytes);
  bool bytesMatch =
      llvm::all_of(allSent, [&](int64_t b) { return b == model; });
  if (leader) {
    llvm::outs() << llvm::formatv(
        "  compile {0:F3} s; run {1:F3} ms ({2} of {3}, wall time between "
        "barriers)\n",
        compileSeconds, medianOf(runSeconds) * 1e3,
        runSeconds.size() == 1 ? "one run" : "median", runSeconds.size());
    llvm::outs() << "  bytes sent per rank:";
    for (int64_t bytes : allSent)
      llvm::outs() << " " << bytes;
    llvm::outs() << llvm::formatv(" (model {0}: {1})\n", model,
                                  bytesMatch ? "exact" : "MISMATCH");
  }

  // Rank 0 puts every rank's O and LSE shard in place.
  unsigned numOutputs = operands.lse() ? 2 : 1;
  for (unsigned out = 0; out < numOutputs; ++out) {
    HostBuffer &shard = shards[shards.size() - numOutputs + out];
    Operand &global = globals[globals.size() - numOutputs + out];
    int64_t shardBytes = shard.bytes.size();
    if (shardBytes > std::numeric_limits<int>::max())
      return llvm::createStringError(
          "an output shard is too large for one MPI_Gather");
    std::vector<uint8_t> gathered(leader ? shardBytes * mpi.size() : 0);
    MPI_Gather(shard.bytes.data(), static_cast<int>(shardBytes), MPI_BYTE,
               gathered.data(), static_cast<int>(shardBytes), MPI_BYTE, 0,
               MPI_COMM_WORLD);
    if (leader)
      for (int from = 0; from < mpi.size(); ++from)
        placeShard(gathered.data() + from * shardBytes, shard,
                   layout.queryRuns(from, global.buffer.shape[2]),
                   global.buffer);
  }

  int passed = bytesMatch;
  if (leader && check) {
    llvm::Expected<bool> checked = checkAndReport(op, operands, checkOptions);
    if (!checked)
      return checked.takeError();
    passed &= *checked;
  } else if (leader) {
    llvm::outs() << "  check: skipped (--no-check)\n";
  }
  llvm::outs().flush();
  MPI_Bcast(&passed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return passed != 0;
}
