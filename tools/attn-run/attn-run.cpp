//===- attn-run.cpp - Compile, run and check one attention ----------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-run takes the attentions of a .mlir module, or one attention described
// by options, compiles each in-process and runs it on seeded random or .npy
// inputs: on the CPU (attn-to-cpu, MLIR's ExecutionEngine), checked against
// the float64 reference; or with --device=gpu on a GPU (attn-to-ptx, a kernel
// bundle run by libattnrt), checked against the f32 GPU reference. It prints
// the schedule, the times and the errors, and exits non-zero when a check
// fails or the input is bad.
//
//===----------------------------------------------------------------------===//

#include "AttentionOperands.h"
#include "BackwardRun.h"
#include "CpuTiming.h"
#include "DistributedRun.h"
#include "GpuRun.h"
#include "ReferenceCheck.h"

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/AttentionSummary.h"
#include "attn/Analysis/BlockMaskDerivation.h"
#include "attn/Analysis/IntegerArith.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Analysis/WorkAssignment.h"
#include "attn/Conversion/AttnToNVGPU/KernelName.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Execution/AttentionSpec.h"
#include "attn/Execution/CpuExecutable.h"
#include "attn/Execution/ScoreRegionFunction.h"
#include "attn/Support/Npy.h"
#include "attn/Support/SourceInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;
using namespace mlir::attn;
namespace cl = llvm::cl;
namespace gpucheck = ::attn::gpucheck;

namespace {

cl::OptionCategory specCategory(
    "The attention, when no module is given (the defaults describe one)");
cl::OptionCategory runCategory("Compiling, running and checking");

cl::opt<std::string> inputFilename(
    cl::Positional, cl::desc("[module.mlir]: run every attn.attention in it"),
    cl::init(""), cl::cat(runCategory));

cl::opt<int64_t> batch("batch", cl::desc("Batch size B"), cl::init(1),
                       cl::cat(specCategory));
cl::opt<int64_t> heads("heads", cl::desc("Query heads Hq"), cl::init(8),
                       cl::cat(specCategory));
cl::opt<int64_t> kvHeads("kv-heads",
                         cl::desc("Key/value heads Hkv (default: Hq)"),
                         cl::cat(specCategory));
cl::opt<int64_t> queryLen("seq-q", cl::desc("Query length Sq"), cl::init(128),
                          cl::cat(specCategory));
cl::opt<int64_t> keyLen("seq-k", cl::desc("Key/value length Sk (default: Sq)"),
                        cl::cat(specCategory));
cl::opt<int64_t> headDim("head-dim", cl::desc("Head dimension D"), cl::init(64),
                         cl::cat(specCategory));
cl::opt<int64_t> valueDim("value-dim",
                          cl::desc("Value head dimension Dv (default: D)"),
                          cl::cat(specCategory));
cl::opt<std::string> dtype("dtype", cl::desc("Q, K, V element type: f32, f16, bf16"),
                           cl::init("f32"), cl::cat(specCategory));
cl::opt<std::string> outDtype("out-dtype",
                              cl::desc("O element type (default: --dtype)"),
                              cl::cat(specCategory));
cl::opt<bool> causal("causal", cl::desc("Causal, bottom-right aligned"),
                     cl::cat(specCategory));
cl::list<int64_t> window("window", cl::desc("Sliding window: left,right"),
                         cl::CommaSeparated, cl::cat(specCategory));
cl::opt<float> scale("scale", cl::desc("Score scale (default: 1/sqrt(D))"),
                     cl::cat(specCategory));
cl::opt<float> softcap("softcap", cl::desc("Softcap: c * tanh(s / c)"),
                       cl::cat(specCategory));
cl::opt<MaskKind> mask(
    "mask", cl::desc("A mask operand [B, 1, Sq, Sk]"), cl::init(MaskKind::None),
    cl::values(clEnumValN(MaskKind::None, "none", "no mask"),
               clEnumValN(MaskKind::Boolean, "bool", "i1: false hides a key"),
               clEnumValN(MaskKind::Additive, "additive",
                          "f32, added to the scores")),
    cl::cat(specCategory));
cl::list<int64_t> blockMask(
    "block-mask",
    cl::desc("A block mask of rows,keys blocks [B, Hq, ceil(Sq / rows), "
             "ceil(Sk / keys)]: random empty, partial and full blocks"),
    cl::CommaSeparated, cl::cat(specCategory));
cl::opt<bool> alibi("alibi",
                    cl::desc("ALiBi bias through the score region"),
                    cl::cat(specCategory));
cl::opt<bool> backward(
    "backward",
    cl::desc("Also run the gradient (attn.attention_grad) on a seeded random "
             "dO and check dQ, dK and dV against the float64 reference "
             "gradient (CPU; implies --lse)"),
    cl::init(false), cl::cat(runCategory));
cl::opt<bool> maskGrad(
    "mask-grad",
    cl::desc("With --backward: also the gradient of the additive mask "
             "(attn.attention_grad's dMask), checked like dQ, dK and dV"),
    cl::init(false), cl::cat(runCategory));
cl::opt<int64_t> gradSplits(
    "grad-splits",
    cl::desc("With --backward: cut each (batch, key/value head)'s key/value "
             "blocks into this many pieces, each with its own dQ copy"),
    cl::init(1), cl::cat(runCategory));
cl::opt<bool> withLse("lse", cl::desc("Also write the log-sum-exp"),
                      cl::cat(specCategory));
cl::opt<int64_t> packedHeads(
    "packed-heads",
    cl::desc("GQA packing: tiles hold the rows of this many query heads that "
             "share a key/value head (#attn.fa2's packed_heads)"),
    cl::init(1), cl::cat(specCategory));
cl::opt<int64_t> splits("splits",
                        cl::desc("Split the KV range into this many partials "
                                 "(flash-decoding) and merge them"),
                        cl::init(1), cl::cat(specCategory));
cl::opt<int64_t> lean("lean",
                      cl::desc("Lean attention (stream-K) over this many "
                               "CTAs, partials merged by each tile's host"),
                      cl::init(0), cl::cat(specCategory));
cl::list<int64_t> attention2d(
    "attention2d",
    cl::desc("ATTENTION2D over a grid of q_parts,kv_parts MPI ranks (run "
             "under mpirun -n q_parts*kv_parts)"),
    cl::CommaSeparated, cl::cat(specCategory));
cl::opt<int64_t> ring("ring",
                      cl::desc("Ring attention over this many MPI ranks (run "
                               "under mpirun -n N)"),
                      cl::init(0), cl::cat(specCategory));
cl::opt<bool> zigzag("zigzag",
                     cl::desc("Zig-zag shards for --attention2d and --ring "
                              "(balanced causal work)"),
                     cl::cat(specCategory));

cl::opt<int64_t> blockM("block-m",
                        cl::desc("Query rows per tile (default: the op's tiles, "
                                 "else FlashAttention-2's)"),
                        cl::init(0), cl::cat(runCategory));
cl::opt<int64_t> blockN("block-n",
                        cl::desc("Keys per tile (default: the op's tiles, "
                                 "else FlashAttention-2's)"),
                        cl::init(0), cl::cat(runCategory));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"),
                       cl::init(1), cl::cat(runCategory));
cl::opt<std::string> qNpy("q-npy", cl::desc("Read Q from this .npy file"),
                          cl::cat(runCategory));
cl::opt<std::string> kNpy("k-npy", cl::desc("Read K from this .npy file"),
                          cl::cat(runCategory));
cl::opt<std::string> vNpy("v-npy", cl::desc("Read V from this .npy file"),
                          cl::cat(runCategory));
cl::opt<std::string> maskNpy("mask-npy",
                             cl::desc("Read the mask from this .npy file"),
                             cl::cat(runCategory));
cl::opt<std::string>
    blockMaskNpy("block-mask-npy",
                 cl::desc("Read the block mask from this .npy file (int8: 0 "
                          "empty, 1 partial, 2 full)"),
                 cl::cat(runCategory));
cl::list<int64_t> keyLengths(
    "key-lengths",
    cl::desc("Per-sequence key counts L0,L1,... (one per batch, each 0 to "
             "Sk): sequence b attends to its first Lb keys (a key_lengths "
             "operand; without a module, this adds one)"),
    cl::CommaSeparated, cl::cat(runCategory));
cl::opt<std::string>
    keyLengthsNpy("key-lengths-npy",
                  cl::desc("Read the key lengths from this .npy file (int32)"),
                  cl::cat(runCategory));
cl::opt<std::string> oNpy("o-npy", cl::desc("Write O to this .npy file"),
                          cl::cat(runCategory));
cl::opt<std::string> lseNpy("lse-npy", cl::desc("Write LSE to this .npy file"),
                            cl::cat(runCategory));
cl::opt<bool> noCheck("no-check", cl::desc("Do not compare with the reference"),
                      cl::cat(runCategory));
cl::opt<std::string> writeReference(
    "write-reference",
    cl::desc("Write the module's attention's inputs and the float64 "
             "reference's outputs as a reference case into this directory: "
             "attn-launch checks the attn-compile bundle of the same module "
             "against it, on a GPU machine without LLVM (docs/runtime.md)"),
    cl::value_desc("dir"), cl::cat(runCategory));
// Text, so that an empty or malformed value is an error rather than 0.
cl::opt<std::string> tolerance(
    "tolerance",
    cl::desc("Relative L2 error allowed (default: 1e-5 for f32; twice a naive "
             "attention's for f16/bf16)"),
    cl::cat(runCategory));
/// The most runs --repeat times: a median needs far fewer, and more would
/// keep a large attention running for hours.
constexpr unsigned kMaxRepeat = 1000;
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Runs to time, 1 to 1000 (the median is "
                                  "reported; on the GPU, CUDA-event timed "
                                  "launches after a warm-up)"),
                         cl::init(1), cl::cat(runCategory));

enum class DeviceKind { Cpu, Gpu, Emulator, Auto };
cl::opt<DeviceKind> device(
    "device", cl::desc("Where to run"), cl::init(DeviceKind::Cpu),
    cl::values(clEnumValN(DeviceKind::Cpu, "cpu", "the CPU (attn-to-cpu)"),
               clEnumValN(DeviceKind::Gpu, "gpu",
                          "a GPU (attn-to-ptx and libattnrt)"),
               clEnumValN(DeviceKind::Emulator, "emulator",
                          "the PTX emulator, as a GPU (libattnrt over "
                          "ATTNRT_LIBCUDA=emulator; docs/emulator.md)"),
               clEnumValN(DeviceKind::Auto, "auto",
                          "the GPU if there is one, else the CPU")),
    cl::cat(runCategory));
cl::opt<int> gpuOrdinal("gpu-ordinal", cl::desc("CUDA device to run on"),
                        cl::init(0), cl::cat(runCategory));
cl::opt<double> peakTflops(
    "peak-tflops",
    cl::desc("The GPU's measured matmul peak, to report timings against"),
    cl::init(0), cl::cat(runCategory));

/// Options that describe the attention, which a module describes instead.
const cl::Option *specOptions[] = {&batch,
                                   &heads,
                                   &kvHeads,
                                   &queryLen,
                                   &keyLen,
                                   &headDim,
                                   &valueDim,
                                   &dtype,
                                   &outDtype,
                                   &causal,
                                   std::addressof(window),
                                   &scale,
                                   &softcap,
                                   &mask,
                                   std::addressof(blockMask),
                                   &alibi,
                                   &withLse,
                                   &packedHeads,
                                   &splits,
                                   &lean,
                                   std::addressof(attention2d),
                                   &ring,
                                   &zigzag};

/// MPI, when the run has a distributed attention.
std::unique_ptr<MpiSession> mpi;
/// Whether this process prints the report: the only one, or MPI rank 0.
bool reports() { return !mpi || mpi->rank() == 0; }

/// Prints "attn-run: error: <message>" and returns the exit code.
int fail(const llvm::Twine &message) {
  llvm::outs().flush();
  // One write, so that the messages of several MPI ranks sharing the stream
  // do not interleave within a line.
  std::string text;
  llvm::raw_string_ostream os(text);
  os.enable_colors(llvm::errs().has_colors());
  llvm::WithColor::error(os, "attn-run") << message << "\n";
  llvm::errs() << os.str();
  return 1;
}

/// Reads the shape and element type of the .npy input at `path`, which
/// must be [B, H, S, D].
llvm::Expected<NpyArray> readInputHeader(StringRef path, StringRef operand) {
  NpyArray array;
  if (NpyError error = readTensorNpy(path.str(), array); !error.empty())
    return llvm::createStringError(error);
  if (array.shape.size() != 4)
    return llvm::createStringError(
        llvm::formatv("{0}: {1} must have 4 dimensions [B, H, S, D], got {2}",
                      path, operand, array.shape.size())
            .str());
  return array;
}

/// Sizes and the element type from the .npy inputs, where the options leave
/// them out: Q gives B, Hq, Sq, D and the element type; K gives Hkv, Sk (and
/// D); V gives Dv. Options that are given win; a file that disagrees with
/// them is refused when it is read.
llvm::Error takeShapesFromNpy(AttentionSpec &spec) {
  auto take = [](const cl::opt<int64_t> &option, int64_t &field,
                 int64_t value) {
    if (!option.getNumOccurrences())
      field = value;
  };
  if (!qNpy.empty()) {
    llvm::Expected<NpyArray> q = readInputHeader(qNpy, "Q");
    if (!q)
      return q.takeError();
    take(batch, spec.batch, q->shape[0]);
    take(heads, spec.queryHeads, q->shape[1]);
    take(queryLen, spec.queryLen, q->shape[2]);
    take(headDim, spec.headDim, q->shape[3]);
    if (!dtype.getNumOccurrences()) {
      switch (q->elementType) {
      case NpyElementType::F16:
        spec.inputType = "f16";
        break;
      case NpyElementType::BF16:
        spec.inputType = "bf16";
        break;
      case NpyElementType::F32:
        spec.inputType = "f32";
        break;
      default:
        return llvm::createStringError(
            qNpy + ": Q must hold f16, bf16 or f32 values (convert it, or "
                   "give --dtype)");
      }
    }
  }
  // What K and V default to once Q is known.
  spec.kvHeads = kvHeads.getNumOccurrences() ? kvHeads : spec.queryHeads;
  spec.keyLen = keyLen.getNumOccurrences() ? keyLen : spec.queryLen;
  spec.valueDim = valueDim.getNumOccurrences() ? valueDim : spec.headDim;
  if (!kNpy.empty()) {
    llvm::Expected<NpyArray> k = readInputHeader(kNpy, "K");
    if (!k)
      return k.takeError();
    take(kvHeads, spec.kvHeads, k->shape[1]);
    take(keyLen, spec.keyLen, k->shape[2]);
    if (qNpy.empty())
      take(headDim, spec.headDim, k->shape[3]);
  }
  if (!vNpy.empty()) {
    llvm::Expected<NpyArray> v = readInputHeader(vNpy, "V");
    if (!v)
      return v.takeError();
    take(valueDim, spec.valueDim, v->shape[3]);
  }
  return llvm::Error::success();
}

/// The two values of a comma-separated pair option, when given; `usage` is
/// the error when it has another count ("--window takes ...").
llvm::Error readPair(const cl::list<int64_t> &option, const char *usage,
                     std::optional<std::pair<int64_t, int64_t>> &pair) {
  if (!option.getNumOccurrences())
    return llvm::Error::success();
  if (option.size() != 2)
    return llvm::createStringError(usage);
  pair = {option[0], option[1]};
  return llvm::Error::success();
}

llvm::Expected<AttentionSpec> specFromOptions() {
  AttentionSpec spec;
  spec.batch = batch;
  spec.queryHeads = heads;
  spec.queryLen = queryLen;
  spec.headDim = headDim;
  spec.inputType = dtype;
  if (llvm::Error err = takeShapesFromNpy(spec))
    return std::move(err);
  spec.outType = outDtype.getNumOccurrences() ? outDtype : spec.inputType;
  spec.causal = causal;
  if (llvm::Error err = readPair(
          window, "--window takes two sizes, left,right (e.g. --window=128,0)",
          spec.window))
    return std::move(err);
  if (scale.getNumOccurrences())
    spec.scale = scale;
  if (softcap.getNumOccurrences())
    spec.softcap = softcap;
  spec.mask = mask;
  if (llvm::Error err = readPair(blockMask,
                                 "--block-mask takes the block's rows and "
                                 "keys (e.g. --block-mask=64,64)",
                                 spec.blockMask))
    return std::move(err);
  spec.keyLengths = keyLengths.getNumOccurrences() || !keyLengthsNpy.empty();
  spec.alibi = alibi;
  spec.withLse = withLse || backward;
  spec.packedHeads = packedHeads;
  spec.splits = splits;
  spec.leanCtas = lean;
  if (llvm::Error err = readPair(attention2d,
                                 "--attention2d takes two part counts, "
                                 "q_parts,kv_parts (e.g. --attention2d=2,2)",
                                 spec.attention2d))
    return std::move(err);
  spec.ringDevices = ring;
  spec.zigzag = zigzag;
  return spec;
}

/// The reference's view of the score region attn-run built for --alibi.
reference::ScoreModifier alibiModifier(const AttentionSpec &spec) {
  return [heads = spec.queryHeads, shift = spec.keyLen - spec.queryLen](
             double score, int64_t, int64_t head, int64_t row, int64_t key) {
    return score + alibiSlope(head, heads) *
                       static_cast<double>(key - row - shift);
  };
}

/// "block mask: 16x16 blocks, 3 empty, 5 partial, 1 full of 9".
std::string describeBlockMask(AttentionOp op, const Operand &blocks) {
  int64_t empty = 0, full = 0;
  for (double value : blocks.values) {
    empty += value == BlockMaskValue::kEmpty;
    full += value == BlockMaskValue::kFull;
  }
  auto [rows, keys] = *op.getBlockMaskBlock();
  int64_t total = blocks.values.size();
  return llvm::formatv("block mask: {0}x{1} blocks, {2} empty, {3} partial, "
                       "{4} full of {5}",
                       rows, keys, empty, total - empty - full, full, total);
}

std::string describeSchedule(AttentionOp op, AttentionProblem problem) {
  TargetAttr target = getEnclosingTarget(op);
  std::string why;
  FailureOr<TileChoice> choice =
      chooseTiles(op, {TileTarget::Cpu, blockM, blockN, target}, why);
  if (failed(choice))
    return "no tiling applies (pin one with --block-m and --block-n)";
  const Fa2Tiling &tiles = choice->tiling;
  problem.packedHeads = tiles.packedHeads;
  std::string origin;
  if (blockM && blockN)
    origin = "--block-m/--block-n";
  else if (choice->fromOp)
    origin = "the op's tiles";
  else
    origin = describeDefaultTiling(op, target);
  if ((blockM || blockN) && !(blockM && blockN))
    origin += " with --block-m/--block-n";
  TiledWork work = countTiledWork(problem, tiles.blockM, tiles.blockN);
  std::string text = llvm::formatv(
      "tiles {0}x{1} ({2}); per (batch, {3}) {4} query blocks, {5} of {6} "
      "key blocks visited, {7} with an element mask",
      tiles.blockM, tiles.blockN, origin, problem.tiledHeadName(),
      work.queryBlocks, work.visitedBlocks, work.denseBlocks,
      work.maskedBlocks);
  if (std::optional<DerivedBlockMask> derived =
          deriveBlockMask(op, tiles.blockM, tiles.blockN))
    text += llvm::formatv(
        "; the IR proves {0} of {1} blocks empty and {2} full (a block mask "
        "is attached)",
        derived->emptyBlocks, derived->values.size(), derived->fullBlocks);
  if (auto splitKV = dyn_cast_or_null<SplitKVAttr>(op.getPartitionAttr()))
    text += llvm::formatv("; split-KV into {0} partials merged with attn.merge",
                          splitKV.getSplits());
  if (auto leanAttr = dyn_cast_or_null<LeanAttr>(op.getPartitionAttr())) {
    IntegerArith a;
    int64_t batchHeads = problem.batch * problem.tiledHeads();
    LeanWork<IntegerArith> lean = LeanWork<IntegerArith>::create(
        a, problem.geometry(), tiles.blockM, tiles.blockN, work.queryBlocks,
        batchHeads, leanAttr.getCtas());
    LeanAssignment<IntegerArith> &assignment = lean.assignment;
    int64_t leanTiles = assignment.leanTiles;
    int64_t maxBlocks =
        *llvm::max_element(problem.kvBlockCounts(tiles.blockM, tiles.blockN));
    text += llvm::formatv(
        "; Lean over {0} CTAs: {1} LeanTiles, {2} per CTA, {3} partial "
        "slots per output tile merged with attn.merge",
        leanAttr.getCtas(), leanTiles,
        assignment.hi == leanAttr.getCtas()
            ? llvm::formatv("{0}", assignment.perCta).str()
            : llvm::formatv("{0}-{1}", assignment.perCta - 1, assignment.perCta)
                  .str(),
        assignment.slots(maxBlocks));
  }
  return text;
}

/// Takes --key-lengths into the key lengths operand and checks its values:
/// one per sequence, each from 0 to Sk (lowerings would clamp the others).
llvm::Error setKeyLengths(AttentionOp op, AttentionOperands &operands) {
  Operand *lengths = operands.keyLengths();
  if (!lengths) {
    if (keyLengths.getNumOccurrences())
      return llvm::createStringError(
          "--key-lengths given, but the attention has no key lengths");
    return llvm::Error::success();
  }
  if (keyLengths.getNumOccurrences()) {
    if (!keyLengthsNpy.empty())
      return llvm::createStringError(
          "give the key lengths once: --key-lengths or --key-lengths-npy");
    if (static_cast<int64_t>(keyLengths.size()) != lengths->buffer.shape[0])
      return llvm::createStringError(
          llvm::formatv("--key-lengths gives {0} lengths for a batch of {1}",
                        keyLengths.size(), lengths->buffer.shape[0]));
  }
  // Checked as integers: a double does not hold every int64 (2^63 - 1
  // rounds to 2^63, which no int64 holds).
  std::vector<int64_t> values =
      keyLengths.getNumOccurrences()
          ? std::vector<int64_t>(keyLengths.begin(), keyLengths.end())
          : std::vector<int64_t>(lengths->values.begin(),
                                 lengths->values.end());
  int64_t keys = op.getKey().getType().getDimSize(2);
  for (auto [b, length] : llvm::enumerate(values))
    if (length < 0 || length > keys)
      return llvm::createStringError(
          llvm::formatv("key length {0} of sequence {1} is outside [0, {2}] "
                        "(Sk, the keys K and V hold)",
                        length, b, keys));
  lengths->assign(std::vector<double>(values.begin(), values.end()));
  if (reports()) {
    llvm::outs() << "  key lengths:";
    for (double length : lengths->values)
      llvm::outs() << " " << static_cast<int64_t>(length);
    llvm::outs() << "\n";
  }
  return llvm::Error::success();
}

llvm::Expected<bool> runOnCpu(AttentionOp op, const AttentionProblem &problem,
                              AttentionOperands &operands,
                              const CheckOptions &checkOptions);
llvm::Expected<bool> runOnGpu(GpuRunner &gpu, AttentionOp op,
                              AttentionOperands &operands,
                              const CheckOptions &checkOptions);
/// Checks the forward run's outputs against the reference (and writes
/// --write-reference's case); whether they passed.
llvm::Expected<bool> checkForward(AttentionOp op, AttentionOperands &operands,
                                  const CheckOptions &checkOptions);

/// Writes the outputs the .npy options name.
llvm::Error saveOutputs(AttentionOperands &operands) {
  if (!oNpy.empty())
    if (llvm::Error err = operands.save(operands.out(), oNpy))
      return err;
  if (!lseNpy.empty())
    if (llvm::Error err = operands.save(*operands.lse(), lseNpy))
      return err;
  return llvm::Error::success();
}

/// Compiles, runs and checks `op` on the GPU if one is given, else on the
/// CPU; returns whether it passed. Errors are bad input or a failure to
/// compile or run.
llvm::Expected<bool> runAttention(AttentionOp op, llvm::StringRef label,
                                  CheckOptions checkOptions, GpuRunner *gpu) {
  std::optional<AttentionProblem> problem = AttentionProblem::fromOp(op);
  if (!problem)
    return llvm::createStringError(label +
                                   ": attn-run needs static sizes");
  // The reference evaluates a module's score region through the region's
  // body compiled alone.
  if (!noCheck && op.hasScoreModifier() && !checkOptions.scoreModifier) {
    llvm::Expected<std::shared_ptr<ScoreRegionFunction>> region =
        ScoreRegionFunction::compile(op);
    if (!region)
      return llvm::createStringError(label + ": " +
                                     llvm::toString(region.takeError()));
    checkOptions.scoreModifier = [region = *region](double score, int64_t b,
                                                    int64_t h, int64_t q,
                                                    int64_t k) {
      return (*region)(score, b, h, q, k);
    };
    if (backward) {
      // The reference differentiates the region by differences, in f64.
      llvm::Expected<std::shared_ptr<ScoreRegionFunction>> widened =
          ScoreRegionFunction::compile(op, /*widened=*/true);
      if (!widened)
        return llvm::createStringError(
            label + ": --backward: " + llvm::toString(widened.takeError()));
      checkOptions.scoreModifierDerivative = reference::centralDifference(
          [region = *widened](double score, int64_t b, int64_t h, int64_t q,
                              int64_t k) {
            return (*region)(score, b, h, q, k);
          });
    }
  }
  if (reports())
    llvm::outs() << label << ": " << summarizeAttention(op, *problem) << "\n";

  llvm::Expected<AttentionOperands> operands =
      AttentionOperands::create(op, seed);
  if (!operands)
    return operands.takeError();
  std::pair<cl::opt<std::string> *, Operand *> inputs[] = {
      {&qNpy, &operands->query()},
      {&kNpy, &operands->key()},
      {&vNpy, &operands->value()},
      {&maskNpy, operands->mask()},
      {&blockMaskNpy, operands->blockMask()},
      {&keyLengthsNpy, operands->keyLengths()}};
  for (auto [option, operand] : inputs) {
    if (option->empty())
      continue;
    if (!operand)
      return llvm::createStringError("--" + option->ArgStr +
                                     " given, but the attention has no " +
                                     (option == &blockMaskNpy    ? "block mask"
                                      : option == &keyLengthsNpy ? "key lengths"
                                                                 : "mask"));
    if (llvm::Error err = operands->load(*operand, *option))
      return std::move(err);
  }
  if (llvm::Error err = setKeyLengths(op, *operands))
    return std::move(err);
  if (Operand *blocks = operands->blockMask(); blocks && reports())
    llvm::outs() << "  " << describeBlockMask(op, *blocks) << "\n";
  if (!lseNpy.empty() && !operands->lse())
    return llvm::createStringError(
        "--lse-npy given, but the attention writes no LSE (add --lse)");
  if (maskGrad && !backward)
    return llvm::createStringError("--mask-grad needs --backward");
  if (backward && (gpu || isDistributed(op)))
    return llvm::createStringError(
        label + ": --backward runs the gradient on the CPU, of an attention "
                "on one device; drop --device or the distribution");
  if (isDistributed(op)) {
    if (gpu)
      return llvm::createStringError(
          label + ": distributed attentions run on the CPU ranks of an MPI "
                  "job; drop --device");
    if (!writeReference.empty())
      return llvm::createStringError(
          label + ": a reference case checks one GPU kernel, and distributed "
                  "attentions compile to none; drop --write-reference");
    AttnToCPUOptions pipelineOptions;
    pipelineOptions.blockM = blockM;
    pipelineOptions.blockN = blockN;
    llvm::Expected<bool> passed =
        runDistributed(*mpi, op, *problem, *operands, pipelineOptions,
                       checkOptions, !noCheck, repeat);
    if (passed && reports())
      if (llvm::Error err = saveOutputs(*operands))
        return std::move(err);
    return passed;
  }
  if (gpu)
    return runOnGpu(*gpu, op, *operands, checkOptions);
  return runOnCpu(op, *problem, *operands, checkOptions);
}

llvm::Expected<bool> runOnGpu(GpuRunner &gpu, AttentionOp op,
                              AttentionOperands &operands,
                              const CheckOptions &checkOptions) {
  // The GPU reference cannot evaluate a score region or know a block mask:
  // the kernel runs on attn-run's own inputs and the float64 reference
  // checks it on the CPU.
  bool checkOnCpu = !noCheck && (op.hasScoreModifier() || op.getBlockMask());
  gpucheck::CheckOptions options;
  options.seed = seed;
  options.check = !noCheck && !checkOnCpu;
  options.tolerance = checkOptions.tolerance;
  options.bench = repeat > 1;
  options.iterations = repeat;
  options.peakTflops = peakTflops;
  bool given[3] = {checkOnCpu || !qNpy.empty(), checkOnCpu || !kNpy.empty(),
                   checkOnCpu || !vNpy.empty()};
  gpucheck::KernelReport report;
  double compileSeconds = 0;
  if (llvm::Error err =
          gpu.run(op, operands, given, options, report, compileSeconds))
    return std::move(err);
  llvm::outs() << llvm::formatv("  compile {0:F3} s (attn-to-ptx), ",
                                compileSeconds);
  llvm::outs().flush();
  gpucheck::printReport(report, stdout);
  std::fflush(stdout);
  if (llvm::Error err = saveOutputs(operands))
    return std::move(err);
  if (noCheck)
    llvm::outs() << "  check: skipped (--no-check)\n";
  if (!checkOnCpu || !report.passed())
    return report.passed();
  return checkAndReport(op, operands, checkOptions);
}

/// Writes --write-reference's case: the inputs `op` ran on, the reference's
/// outputs and the tolerances of `verdict`.
llvm::Error writeReferenceCase(AttentionOp op, AttentionOperands &operands,
                               const ReferenceVerdict &verdict) {
  gpucheck::ReferenceCase reference;
  reference.kernel = getAttentionKernelName(op);
  reference.query = operands.query().toNpy();
  reference.key = operands.key().toNpy();
  reference.value = operands.value().toNpy();
  if (Operand *mask = operands.mask())
    reference.mask = mask->toNpy();
  if (Operand *blocks = operands.blockMaskParameter())
    reference.blockMask = blocks->toNpy();
  if (Operand *lengths = operands.keyLengths())
    reference.keyLengths = lengths->toNpy();
  reference.out =
      referenceOutput(operands.out(), verdict.exact.out, verdict.checks[0]);
  if (Operand *lse = operands.lse())
    reference.lse = referenceOutput(*lse, verdict.exact.lse, verdict.checks[1]);
  if (std::string error =
          gpucheck::writeReferenceCase(writeReference, reference);
      !error.empty())
    return llvm::createStringError(error);
  llvm::outs() << "  reference case: " << writeReference << " (kernel "
               << reference.kernel << ")\n";
  return llvm::Error::success();
}

llvm::Expected<bool> runOnCpu(AttentionOp op, const AttentionProblem &problem,
                              AttentionOperands &operands,
                              const CheckOptions &checkOptions) {
  llvm::outs() << "  schedule: " << describeSchedule(op, problem) << "\n";
  AttnToCPUOptions pipelineOptions;
  pipelineOptions.blockM = blockM;
  pipelineOptions.blockN = blockN;
  llvm::Expected<TimedCompile> compiled =
      timeCompile([&] { return CpuExecutable::compile(op, pipelineOptions); });
  if (!compiled)
    return compiled.takeError();
  llvm::Expected<std::string> timing = timeRuns(
      compiled->seconds, repeat, problem.nominalForwardFlops(),
      [&] { return compiled->executable->run(operands.buffers()); });
  if (!timing)
    return timing.takeError();
  llvm::outs() << "  " << *timing << "\n";

  if (llvm::Error err = saveOutputs(operands))
    return std::move(err);

  llvm::Expected<bool> passed = checkForward(op, operands, checkOptions);
  if (!passed || !backward)
    return passed;
  BackwardOptions options;
  options.blockM = blockM;
  options.blockN = blockN;
  options.seed = seed;
  options.splits = gradSplits;
  options.maskGrad = maskGrad;
  options.check = !noCheck;
  options.repeat = repeat;
  options.forwardFlops = problem.nominalForwardFlops();
  options.writeReference = writeReference;
  llvm::Expected<bool> backwardPassed =
      runBackwardOnCpu(op, operands, options, checkOptions);
  if (!backwardPassed)
    return backwardPassed.takeError();
  return *passed && *backwardPassed;
}

llvm::Expected<bool> checkForward(AttentionOp op, AttentionOperands &operands,
                                  const CheckOptions &checkOptions) {
  if (noCheck) {
    llvm::outs() << "  check: skipped (--no-check)\n";
    return true;
  }
  // With --backward, the case is the gradient's (runBackwardOnCpu).
  if (writeReference.empty() || backward)
    return checkAndReport(op, operands, checkOptions);
  // The case is written whatever the CPU's verdict: it holds the
  // reference's outputs, not the CPU kernel's.
  llvm::Expected<ReferenceVerdict> verdict =
      checkAgainstReference(op, operands, checkOptions);
  if (!verdict)
    return verdict.takeError();
  bool passed = reportChecks(verdict->checks);
  if (llvm::Error err = writeReferenceCase(op, operands, *verdict))
    return std::move(err);
  return passed;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&specCategory, &runCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: compile attentions with attn-to-cpu, run them and check them "
      "against a float64 reference\n");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // --device=gpu serialises its gpu.module to PTX through LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  registry.insert<AttnDialect>();
  MLIRContext context(registry);
  context.loadDialect<AttnDialect, func::FuncDialect>();

  OwningOpRef<ModuleOp> module;
  CheckOptions checkOptions;
  if (tolerance.getNumOccurrences()) {
    double value;
    if (tolerance.empty() || !llvm::to_float(tolerance.getValue(), value) ||
        !(value >= 0))
      return fail("--tolerance must be a non-negative number, got '" +
                  tolerance + "'");
    checkOptions.tolerance = value;
  }
  if (writeReference.getNumOccurrences()) {
    if (writeReference.empty())
      return fail("--write-reference needs a directory");
    if (inputFilename.empty())
      return fail("--write-reference writes the case of a module's attention "
                  "(attn-compile the same module for the GPU): give the "
                  "module");
    if (noCheck)
      return fail("--write-reference writes the reference's outputs: drop "
                  "--no-check");
    if (device != DeviceKind::Cpu)
      return fail("--write-reference computes the reference on the CPU: drop "
                  "--device");
  }
  if (repeat < 1 || repeat > kMaxRepeat)
    return fail(llvm::formatv("--repeat must be from 1 to {0}, got {1}",
                              kMaxRepeat, repeat.getValue())
                    .str());
  if (!inputFilename.empty()) {
    for (const cl::Option *option : specOptions)
      if (option->getNumOccurrences())
        return fail("--" + option->ArgStr +
                    " describes the attention, which the module " +
                    inputFilename + " already does");
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> source =
        readSource(inputFilename);
    if (!source)
      return fail(llvm::toString(source.takeError()));
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(*source), llvm::SMLoc());
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
  } else {
    llvm::Expected<AttentionSpec> spec = specFromOptions();
    if (!spec)
      return fail(llvm::toString(spec.takeError()));
    module = ModuleOp::create(UnknownLoc::get(&context));
    llvm::Expected<AttentionOp> op = buildAttention(*module, *spec);
    if (!op)
      return fail(llvm::toString(op.takeError()));
    if (spec->alibi)
      checkOptions.scoreModifier = alibiModifier(*spec);
      // ALiBi adds a bias that does not depend on the score.
      checkOptions.scoreModifierDerivative = [](double, int64_t, int64_t,
                                                int64_t, int64_t) {
        return 1.0;
      };
  }

  SmallVector<std::pair<AttentionOp, std::string>> attentions;
  module->walk([&](AttentionOp op) {
    auto func = op->getParentOfType<func::FuncOp>();
    attentions.push_back(
        {op, func ? ("@" + func.getSymName()).str() : std::string("attention")});
  });
  if (attentions.empty())
    return fail("no attn.attention in " + inputFilename);
  bool perOperandFiles = !qNpy.empty() || !kNpy.empty() || !vNpy.empty() ||
                         !maskNpy.empty() || !blockMaskNpy.empty() ||
                         !keyLengthsNpy.empty() ||
                         keyLengths.getNumOccurrences() || !oNpy.empty() ||
                         !lseNpy.empty() || !writeReference.empty();
  if (perOperandFiles && attentions.size() > 1)
    return fail(llvm::formatv("the .npy options and --write-reference name "
                              "the operands of one attention, but the module "
                              "has {0}",
                              attentions.size())
                    .str());

  std::unique_ptr<GpuRunner> gpu;
  if (device != DeviceKind::Cpu) {
    // libattnrt opens the driver ATTNRT_LIBCUDA names on first use.
    if (device == DeviceKind::Emulator)
      setenv("ATTNRT_LIBCUDA", "emulator", 1);
    attnrt::Status status;
    gpu = GpuRunner::open(gpuOrdinal, status);
    bool noGpu = status.code == ATTNRT_ERROR_NO_DRIVER ||
                 status.code == ATTNRT_ERROR_NO_DEVICE;
    if (!gpu && !(device == DeviceKind::Auto && noGpu))
      return fail(status.message);
    if (gpu)
      llvm::outs() << "device: " << gpu->describeDevice() << "\n";
    else
      llvm::outs() << "device: the CPU (no GPU: " << status.message << ")\n";
  }

  if (llvm::any_of(attentions,
                   [](auto &entry) { return isDistributed(entry.first); }))
    mpi = std::make_unique<MpiSession>(argc, argv);

  bool allPassed = true;
  for (auto &[op, label] : attentions) {
    llvm::Expected<bool> passed =
        runAttention(op, label, checkOptions, gpu.get());
    if (!passed) {
      int code = fail((mpi ? llvm::formatv("rank {0}: ", mpi->rank()).str()
                           : std::string()) +
                      llvm::toString(passed.takeError()));
      // The other ranks may wait in a collective for this one.
      if (mpi && mpi->size() > 1 && !mpi->failsTogether())
        mpi->abort(code);
      return code;
    }
    allPassed &= *passed;
  }
  if (mpi)
    llvm::outs() << llvm::formatv("rank {0} of {1}: ", mpi->rank(),
                                  mpi->size());
  llvm::outs() << (allPassed ? "PASS\n" : "FAIL\n");
  return allPassed ? 0 : 1;
}
