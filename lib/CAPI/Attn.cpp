//===- Attn.cpp - The C API of attn-mlir ----------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn-c/Attn.h"

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Execution/AttentionSpec.h"
#include "attn/Execution/CpuExecutable.h"
#include "attn/Pipelines/KernelBundle.h"
#include "attn/Pipelines/Pipelines.h"
#include "attn/Support/SizeLimits.h"
#include "attn/Support/SourceInput.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <tuple>

using namespace mlir;
using namespace mlir::attn;

namespace {

char *copyString(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

void setError(char **error, const std::string &message) {
  if (error)
    *error = copyString(message);
}

/// A context that knows the attn dialect, every upstream dialect, extension
/// and translation, with the passes and pipelines registered (once).
std::unique_ptr<MLIRContext> makeContext() {
  static std::once_flag registered;
  std::call_once(registered, [] {
    registerAllPasses();
    registerAllAttnPassesAndPipelines();
  });
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<AttnDialect>();
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadDialect<AttnDialect>();
  return context;
}

/// Collects the diagnostics of a scope as text.
class DiagnosticText {
public:
  explicit DiagnosticText(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
            os << file.getLine() << ":" << file.getColumn() << ": ";
          os << diag.str() << "\n";
          return success();
        }) {}
  std::string str() const { return text; }

private:
  std::string text;
  llvm::raw_string_ostream os{text};
  ScopedDiagnosticHandler handler;
};

/// The largest size a spec may give: the verifier's 2^48-byte bound takes
/// the rest, but products of sizes must not overflow before it.
constexpr int64_t kMaxSpecSize = int64_t(1) << 62;

/// Whether a mask operand `name` of leading sizes (batch, heads) has a slice
/// per sequence and per query head (sizes B and Hq) or broadcasts (size 1).
/// Size 1 broadcasts also when B or Hq is 1, so that the choice does not
/// depend on the batch of a run-time-length attention's example.
llvm::Error readLeadingSizes(const AttnAttentionSpec &in, const char *name,
                             int64_t batch, int64_t heads, bool &perSequence,
                             bool &perHead) {
  for (auto [size, full, dim, symbol, per] :
       {std::tuple(batch, in.batch, "batch", "B", &perSequence),
        std::tuple(heads, in.query_heads, "heads", "Hq", &perHead)}) {
    if (size != full && size != 1)
      return llvm::createStringError(
          llvm::formatv("{0}_{1} must be {2} ({3}) or 1, got {4}", name, dim,
                        symbol, full, size)
              .str());
    *per = size != 1;
  }
  return llvm::Error::success();
}

/// Why a C spec is not an attention's, field by field, or success.
llvm::Error checkSpec(const AttnAttentionSpec &in) {
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(message.str());
  };
  std::vector<std::pair<const char *, int64_t>> sizes{
      {"batch", in.batch},        {"query_heads", in.query_heads},
      {"kv_heads", in.kv_heads},  {"query_len", in.query_len},
      {"key_len", in.key_len},    {"head_dim", in.head_dim},
      {"value_dim", in.value_dim}};
  if (in.block_rows > 0)
    sizes.insert(sizes.end(),
                 {{"block_rows", in.block_rows}, {"block_keys", in.block_keys}});
  for (auto [name, value] : sizes)
    if (value < 1 || value > kMaxSpecSize)
      return error(llvm::formatv("{0} must be from 1 to 2^62, got {1}", name,
                                 value));
  if (in.query_heads % in.kv_heads)
    return error(
        llvm::formatv("query_heads ({0}) must be a multiple of kv_heads "
                      "({1})",
                      in.query_heads, in.kv_heads));
  for (auto [name, type] : {std::pair("dtype", in.dtype),
                            std::pair("out_dtype", in.out_dtype)})
    if (type && !llvm::is_contained({"f32", "f16", "bf16"}, StringRef(type)))
      return error(llvm::formatv("{0} must be f32, f16 or bf16, got '{1}'",
                                 name, type));
  if (!in.dtype)
    return error("dtype must be f32, f16 or bf16, got none");
  if (in.has_scale && (!std::isfinite(in.scale) || in.scale <= 0))
    return error(llvm::formatv("scale must be positive and finite, got {0}",
                               in.scale));
  if (in.has_softcap && (!std::isfinite(in.softcap) || in.softcap <= 0))
    return error(llvm::formatv("softcap must be positive and finite, got {0}",
                               in.softcap));
  if (in.has_window && (in.window_left < 0 || in.window_right < 0))
    return error(llvm::formatv("window sides must not be negative, got ({0}, "
                               "{1})",
                               in.window_left, in.window_right));
  return llvm::Error::success();
}

/// The attention the C spec describes.
llvm::Expected<AttentionSpec> toAttentionSpec(const AttnAttentionSpec &in) {
  if (llvm::Error err = checkSpec(in))
    return std::move(err);
  AttentionSpec spec;
  spec.batch = in.batch;
  spec.queryHeads = in.query_heads;
  spec.kvHeads = in.kv_heads;
  spec.queryLen = in.query_len;
  spec.keyLen = in.key_len;
  spec.headDim = in.head_dim;
  spec.valueDim = in.value_dim;
  spec.runTimeLengths = in.run_time_lengths;
  spec.inputType = in.dtype;
  spec.outType = in.out_dtype ? in.out_dtype : in.dtype;
  spec.causal = in.causal;
  if (in.has_window)
    spec.window = {in.window_left, in.window_right};
  if (in.has_scale)
    spec.scale = in.scale;
  if (in.has_softcap)
    spec.softcap = in.softcap;
  spec.withLse = in.with_lse;
  spec.keyLengths = in.key_lengths;
  if (in.mask_dtype) {
    std::string type = in.mask_dtype;
    if (!llvm::is_contained({"i1", "f16", "bf16", "f32"}, type))
      return llvm::createStringError("mask_dtype must be i1, f16, bf16 or "
                                     "f32, got '" +
                                     type + "'");
    spec.mask = type == "i1" ? MaskKind::Boolean : MaskKind::Additive;
    if (spec.mask == MaskKind::Additive)
      spec.additiveMaskType = type;
    if (llvm::Error err =
            readLeadingSizes(in, "mask", in.mask_batch, in.mask_heads,
                             spec.maskPerSequence, spec.maskPerHead))
      return std::move(err);
  }
  if (in.block_rows > 0) {
    spec.blockMask = {in.block_rows, in.block_keys};
    if (llvm::Error err = readLeadingSizes(
            in, "block_mask", in.block_mask_batch, in.block_mask_heads,
            spec.blockMaskPerSequence, spec.blockMaskPerHead))
      return std::move(err);
  }
  return spec;
}

/// Builds the attention of `spec` into `module` and verifies it.
llvm::Expected<AttentionOp> buildVerifiedAttention(ModuleOp module,
                                                   const AttentionSpec &spec) {
  DiagnosticText diagnostics(module.getContext());
  llvm::Expected<AttentionOp> op = buildAttention(module, spec);
  if (!op)
    return op.takeError();
  if (failed(verify(module)))
    return llvm::createStringError("invalid attention:\n" + diagnostics.str());
  return op;
}

} // namespace

/// A compiled attention, or the gradient of one.
struct AttnCpuAttention {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<CpuExecutable> executable;
  AttentionSpec spec;
};
struct AttnCpuAttentionGrad : AttnCpuAttention {
  bool maskGrad = false;
};

namespace {

/// Compiles the attention of `in` into `compiled`, or (`gradient`) its
/// gradient, with the mask's when `maskGrad`; sets *error and returns false
/// on failure.
bool compileCpu(const AttnAttentionSpec *in, bool gradient, bool maskGrad,
                bool deterministic, AttnCpuAttention &compiled, char **error) {
  if (!in) {
    setError(error, "no attention spec given");
    return false;
  }
  compiled.context = makeContext();
  llvm::Expected<AttentionSpec> spec = toAttentionSpec(*in);
  if (!spec) {
    setError(error, llvm::toString(spec.takeError()));
    return false;
  }
  compiled.spec = std::move(*spec);
  // The gradient reads the forward's LSE.
  if (gradient)
    compiled.spec.withLse = true;
  compiled.module = ModuleOp::create(UnknownLoc::get(compiled.context.get()));
  llvm::Expected<AttentionOp> op =
      buildVerifiedAttention(*compiled.module, compiled.spec);
  if (!op) {
    setError(error, llvm::toString(op.takeError()));
    return false;
  }
  Operation *target = *op;
  if (maskGrad && compiled.spec.mask != MaskKind::Additive) {
    setError(error, "mask_grad: the gradient of a mask is that of an "
                    "additive mask, and the spec has none");
    return false;
  }
  if (gradient) {
    DiagnosticText diagnostics(compiled.context.get());
    target = buildAttentionGrad(*op, /*pieces=*/1, deterministic, maskGrad);
    if (failed(verify(target))) {
      setError(error, "invalid gradient:\n" + diagnostics.str());
      return false;
    }
  }
  llvm::Expected<std::unique_ptr<CpuExecutable>> executable =
      CpuExecutable::compile(target, AttnToCPUOptions());
  if (!executable) {
    setError(error, llvm::toString(executable.takeError()));
    return false;
  }
  compiled.executable = std::move(*executable);
  return true;
}

/// The lengths of a run of `spec`: `lengths` when given (and allowed), else
/// the spec's; sets *error when they are not valid for it.
std::optional<AttentionLengths>
runLengths(const AttentionSpec &spec, const AttnAttentionLengths *lengths,
           char **error) {
  AttentionLengths run{spec.batch, spec.queryLen, spec.keyLen};
  if (!lengths) {
    if (!spec.runTimeLengths)
      return run;
    setError(error, "the attention was compiled with run_time_lengths: give "
                    "the run's lengths");
    return std::nullopt;
  }
  AttentionLengths given{lengths->batch, lengths->query_len, lengths->key_len};
  for (auto [name, value] :
       {std::pair("batch", given.batch), std::pair("query_len", given.queryLen),
        std::pair("key_len", given.keyLen)})
    if (value < 1 || value > kMaxSpecSize) {
      setError(error, llvm::formatv("the run's {0} must be from 1 to 2^62, "
                                    "got {1}",
                                    name, value));
      return std::nullopt;
    }
  if (!spec.runTimeLengths &&
      std::tie(given.batch, given.queryLen, given.keyLen) !=
          std::tie(run.batch, run.queryLen, run.keyLen)) {
    setError(error, llvm::formatv("the attention was compiled for B = {0}, "
                                  "Sq = {1}, Sk = {2} (no run_time_lengths), "
                                  "not B = {3}, Sq = {4}, Sk = {5}",
                                  run.batch, run.queryLen, run.keyLen,
                                  given.batch, given.queryLen, given.keyLen));
    return std::nullopt;
  }
  return given;
}

/// Whether the optional inputs given are exactly those `spec` has.
bool optionalInputsMatch(const AttentionSpec &spec, const void *mask,
                         const int8_t *blockMask, const int32_t *keyLengths) {
  return (spec.mask != MaskKind::None) == !!mask &&
         spec.blockMask.has_value() == !!blockMask &&
         spec.keyLengths == !!keyLengths;
}

/// Runs `compiled` on `data`, the entry's arguments in order, whose shapes
/// are `shapes`.
bool runCpu(AttnCpuAttention &compiled,
            const std::vector<std::vector<int64_t>> &shapes,
            ArrayRef<void *> data, char **error) {
  std::vector<BufferView> views;
  for (auto [shape, type, pointer] : llvm::zip_equal(
           shapes, compiled.executable->getArgumentTypes(), data)) {
    int64_t elementBytes =
        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    if (!checkedTensorBytes(shape, elementBytes)) {
      setError(error, llvm::formatv("an operand of shape [{0:$[, ]}] holds "
                                    "more than 2^48 bytes",
                                    llvm::make_range(shape.begin(),
                                                     shape.end())));
      return false;
    }
    views.push_back({shape, elementBytes, pointer});
  }
  if (llvm::Error err = compiled.executable->run(views)) {
    setError(error, llvm::toString(std::move(err)));
    return false;
  }
  return true;
}

/// The kernel bundle of `in`'s attention, or (`gradient`) of its gradient,
/// for `target`, as attnGpuAttentionCompile and attnGpuAttentionGradCompile
/// return it.
bool compileGpu(const AttnAttentionSpec *in, const AttnGpuTarget *target,
                bool gradient, char **manifest, char **ptx, char **error) {
  if (!in || !in->dtype || !target || !target->chip || !manifest || !ptx) {
    setError(error, "no attention spec, target or output given");
    return false;
  }
  AttnToPTXOptions options;
  options.chip = target->chip;
  if (std::string invalid = options.validate(); !invalid.empty()) {
    setError(error, invalid);
    return false;
  }
  if (in->run_time_lengths) {
    setError(error, "run_time_lengths: kernel bundles of this API have static "
                    "lengths");
    return false;
  }
  if (target->sms <= 0 || target->smem_per_block <= 0) {
    setError(error, "the target needs a positive SM count and shared memory "
                    "per block");
    return false;
  }
  // The SM's shared memory: the block's and the bytes the driver reserves
  // per block.
  std::optional<int64_t> smemPerSm =
      checkedAdd(target->smem_per_block, kReservedSharedBytesPerCta);
  if (!smemPerSm) {
    setError(error, llvm::formatv("the target's smem_per_block ({0}) and the "
                                  "{1} bytes reserved per block overflow",
                                  target->smem_per_block,
                                  kReservedSharedBytesPerCta));
    return false;
  }
  std::unique_ptr<MLIRContext> context = makeContext();
  MLIRContext *ctx = context.get();
  DiagnosticText diagnostics(ctx);
  // Checked as the parser checks an #attn.target (no verifier of the module
  // runs an attribute's): the schedules multiply its counts, which must be
  // at most kMaxCount.
  Location loc = UnknownLoc::get(ctx);
  auto targetAttr = TargetAttr::getChecked(
      [&] { return emitError(loc); }, ctx, StringRef(target->chip), target->sms,
      target->smem_per_block, *smemPerSm, kRegistersPerSm,
      kMaxRegistersPerThread);
  if (!targetAttr) {
    setError(error, llvm::formatv("invalid target (smem_per_sm is "
                                  "smem_per_block + {0}):\n{1}",
                                  kReservedSharedBytesPerCta,
                                  diagnostics.str()));
    return false;
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(AttnDialect::getTargetAttrName(), targetAttr);
  llvm::Expected<AttentionSpec> spec = toAttentionSpec(*in);
  if (!spec) {
    setError(error, llvm::toString(spec.takeError()));
    return false;
  }
  if (gradient) {
    llvm::Expected<AttentionGradOp> grad =
        buildAttentionGradFunction(*module, *spec);
    if (!grad) {
      setError(error, llvm::toString(grad.takeError()));
      return false;
    }
    if (failed(verify(*module))) {
      setError(error, "invalid gradient:\n" + diagnostics.str());
      return false;
    }
  } else if (llvm::Expected<AttentionOp> op =
                 buildVerifiedAttention(*module, *spec);
             !op) {
    setError(error, llvm::toString(op.takeError()));
    return false;
  }
  KernelBundle bundle;
  if (failed(compileKernelBundle(*module, options, bundle))) {
    setError(error, std::string("cannot compile the ") +
                        (gradient ? "gradient of the attention" : "attention") +
                        " for " + options.chip + ":\n" + diagnostics.str());
    return false;
  }
  *manifest = copyString(bundle.manifestJson);
  *ptx = copyString(bundle.ptx);
  return true;
}

} // namespace

extern "C" {

bool attnAttentionSpecCheck(const AttnAttentionSpec *in, char **error) {
  if (!in) {
    setError(error, "no attention spec given");
    return false;
  }
  if (llvm::Error err = checkSpec(*in)) {
    setError(error, llvm::toString(std::move(err)));
    return false;
  }
  return true;
}

AttnCpuAttentionRef attnCpuAttentionCompile(const AttnAttentionSpec *in,
                                            char **error) {
  auto attention = std::make_unique<AttnCpuAttention>();
  if (!compileCpu(in, /*gradient=*/false, /*maskGrad=*/false,
                  /*deterministic=*/false, *attention, error))
    return nullptr;
  return attention.release();
}

bool attnCpuAttentionRun(AttnCpuAttentionRef attention,
                         const AttnAttentionLengths *lengths, const void *q,
                         const void *k, const void *v, const void *mask,
                         const int8_t *blockMask, const int32_t *keyLengths,
                         void *o, float *lse, char **error) {
  if (!attention || !q || !k || !v || !o) {
    setError(error, "a buffer is missing (Q, K, V and O are required)");
    return false;
  }
  const AttentionSpec &spec = attention->spec;
  if ((spec.withLse && !lse) ||
      !optionalInputsMatch(spec, mask, blockMask, keyLengths)) {
    setError(error, "a buffer is missing or extra (LSE is required when the "
                    "spec has with_lse; the mask, block mask and key lengths "
                    "are given exactly when it has them)");
    return false;
  }
  std::optional<AttentionLengths> run = runLengths(spec, lengths, error);
  if (!run)
    return false;
  // The entry's arguments in order: Q, K, V, [mask], [block mask], [key
  // lengths], O, [LSE], used in place.
  SmallVector<void *> data{const_cast<void *>(q), const_cast<void *>(k),
                           const_cast<void *>(v)};
  if (mask)
    data.push_back(const_cast<void *>(mask));
  if (blockMask)
    data.push_back(const_cast<int8_t *>(blockMask));
  if (keyLengths)
    data.push_back(const_cast<int32_t *>(keyLengths));
  data.push_back(o);
  if (spec.withLse)
    data.push_back(lse);
  return runCpu(*attention, operandShapes(spec, *run), data, error);
}

void attnCpuAttentionDestroy(AttnCpuAttentionRef attention) {
  delete attention;
}

AttnCpuAttentionGradRef attnCpuAttentionGradCompile(
    const AttnAttentionSpec *in, bool maskGrad, bool deterministic,
    char **error) {
  auto grad = std::make_unique<AttnCpuAttentionGrad>();
  grad->maskGrad = maskGrad;
  if (!compileCpu(in, /*gradient=*/true, maskGrad, deterministic, *grad,
                  error))
    return nullptr;
  return grad.release();
}

bool attnCpuAttentionGradRun(AttnCpuAttentionGradRef grad,
                             const AttnAttentionLengths *lengths,
                             const void *q, const void *k, const void *v,
                             const void *o, const float *lse,
                             const void *gradOut, const void *mask,
                             const int8_t *blockMask,
                             const int32_t *keyLengths, void *dq, void *dk,
                             void *dv, void *dmask, char **error) {
  if (!grad || !q || !k || !v || !o || !lse || !gradOut || !dq || !dk ||
      !dv) {
    setError(error, "a buffer is missing (Q, K, V, O, LSE, dO, dQ, dK and dV "
                    "are required)");
    return false;
  }
  const AttentionSpec &spec = grad->spec;
  if (!optionalInputsMatch(spec, mask, blockMask, keyLengths) ||
      grad->maskGrad != !!dmask) {
    setError(error, "a buffer is missing or extra (the mask, block mask and "
                    "key lengths are given exactly when the spec has them, "
                    "dmask exactly when compiled with mask_grad)");
    return false;
  }
  std::optional<AttentionLengths> run = runLengths(spec, lengths, error);
  if (!run)
    return false;
  // The mask's gradient keeps dS, f32 [B, Hq, Sq, Sk], which the verifier
  // bounds only where the lengths are static: of run-time lengths, its size
  // is the run's, and would wrap in the compiled code.
  if (grad->maskGrad &&
      !checkedTensorBytes(std::array{run->batch, spec.queryHeads,
                                     run->queryLen, run->keyLen},
                          4)) {
    setError(error, llvm::formatv("dMask's f32 scores [B, Hq, Sq, Sk] = [{0}, "
                                  "{1}, {2}, {3}] hold more than 2^48 bytes",
                                  run->batch, spec.queryHeads, run->queryLen,
                                  run->keyLen));
    return false;
  }
  // The forward's operand shapes: Q, K, V, [mask], [block mask], [key
  // lengths], O, LSE.
  std::vector<std::vector<int64_t>> forward = operandShapes(spec, *run);
  const std::vector<int64_t> &qShape = forward[0], &kShape = forward[1],
                             &vShape = forward[2];
  const std::vector<int64_t> &oShape = forward[forward.size() - 2],
                             &lseShape = forward.back();
  // The gradient entry's arguments in order: Q, K, V, O, LSE, dO, [mask],
  // [block mask], [key lengths], dQ, dK, dV.
  std::vector<std::vector<int64_t>> shapes{qShape, kShape,   vShape,
                                           oShape, lseShape, oShape};
  SmallVector<void *> data{const_cast<void *>(q),   const_cast<void *>(k),
                           const_cast<void *>(v),   const_cast<void *>(o),
                           const_cast<float *>(lse), const_cast<void *>(gradOut)};
  size_t optional = 3;
  for (const void *input : {mask, static_cast<const void *>(blockMask),
                            static_cast<const void *>(keyLengths)})
    if (input) {
      shapes.push_back(forward[optional++]);
      data.push_back(const_cast<void *>(input));
    }
  shapes.insert(shapes.end(), {qShape, kShape, vShape});
  data.append({dq, dk, dv});
  if (dmask) {
    shapes.push_back(forward[3]);
    data.push_back(dmask);
  }
  return runCpu(*grad, shapes, data, error);
}

void attnCpuAttentionGradDestroy(AttnCpuAttentionGradRef grad) { delete grad; }

bool attnGpuAttentionCompile(const AttnAttentionSpec *in,
                             const AttnGpuTarget *target, char **manifest,
                             char **ptx, char **error) {
  return compileGpu(in, target, /*gradient=*/false, manifest, ptx, error);
}

bool attnGpuAttentionGradCompile(const AttnAttentionSpec *in,
                                 const AttnGpuTarget *target, char **manifest,
                                 char **ptx, char **error) {
  return compileGpu(in, target, /*gradient=*/true, manifest, ptx, error);
}

char *attnRunPipeline(const char *moduleText, const char *pipeline,
                      char **error) {
  if (!moduleText || !pipeline) {
    setError(error, "no module or pipeline given");
    return nullptr;
  }
  for (auto [name, text] :
       {std::pair("module", moduleText), std::pair("pipeline", pipeline)})
    if (std::string problem = checkSourceText(text); !problem.empty()) {
      setError(error, std::string("cannot parse the ") + name + ": " + problem);
      return nullptr;
    }
  std::unique_ptr<MLIRContext> context = makeContext();
  DiagnosticText diagnostics(context.get());
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(moduleText, context.get());
  if (!module) {
    setError(error, "cannot parse the module:\n" + diagnostics.str());
    return nullptr;
  }
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  FailureOr<OpPassManager> parsed = parsePassPipeline(pipeline, errorStream);
  if (failed(parsed)) {
    setError(error, "bad pass pipeline: " + parseErrors);
    return nullptr;
  }
  PassManager pm(context.get(), parsed->getOpAnchorName());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  if (failed(pm.run(*module))) {
    setError(error, "the pipeline failed:\n" + diagnostics.str());
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return copyString(text);
}

void attnStringFree(char *string) { std::free(string); }

} // extern "C"
