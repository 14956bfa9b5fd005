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

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

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

/// The attention the C spec describes.
AttentionSpec toAttentionSpec(const AttnAttentionSpec &in) {
  AttentionSpec spec;
  spec.batch = in.batch;
  spec.heads = in.heads;
  spec.kvHeads = in.kv_heads;
  spec.seqQ = in.seq_q;
  spec.seqK = in.seq_k;
  spec.headDim = in.head_dim;
  spec.valueDim = in.value_dim;
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

struct AttnCpuAttention {
  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::unique_ptr<CpuExecutable> executable;
  AttentionSpec spec;
};

extern "C" {

AttnCpuAttentionRef attnCpuAttentionCompile(const AttnAttentionSpec *in,
                                            char **error) {
  if (!in || !in->dtype) {
    setError(error, "no attention spec given");
    return nullptr;
  }
  auto attention = std::make_unique<AttnCpuAttention>();
  attention->context = makeContext();
  attention->spec = toAttentionSpec(*in);
  attention->module =
      ModuleOp::create(UnknownLoc::get(attention->context.get()));
  llvm::Expected<AttentionOp> op =
      buildVerifiedAttention(*attention->module, attention->spec);
  if (!op) {
    setError(error, llvm::toString(op.takeError()));
    return nullptr;
  }
  llvm::Expected<std::unique_ptr<CpuExecutable>> executable =
      CpuExecutable::compile(*op, AttnToCPUOptions());
  if (!executable) {
    setError(error, llvm::toString(executable.takeError()));
    return nullptr;
  }
  attention->executable = std::move(*executable);
  return attention.release();
}

bool attnCpuAttentionRun(AttnCpuAttentionRef attention, const void *q,
                         const void *k, const void *v,
                         const int32_t *keyLengths, void *o, float *lse,
                         char **error) {
  if (!attention || !q || !k || !v || !o || (attention->spec.withLse && !lse) ||
      attention->spec.keyLengths != (keyLengths != nullptr)) {
    setError(error, "a buffer is missing (LSE is required when the spec "
                    "has with_lse, key lengths exactly when it has "
                    "key_lengths)");
    return false;
  }
  const AttentionSpec &spec = attention->spec;
  // The entry's arguments in order: Q, K, V, [key lengths], O, [LSE].
  std::vector<HostBuffer> buffers;
  for (RankedTensorType type : attention->executable->getArgumentTypes()) {
    HostBuffer buffer;
    buffer.shape.assign(type.getShape().begin(), type.getShape().end());
    buffer.elementBytes =
        std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    buffer.bytes.resize(buffer.numElements() * buffer.elementBytes);
    buffers.push_back(std::move(buffer));
  }
  SmallVector<const void *> inputs{q, k, v};
  if (keyLengths)
    inputs.push_back(keyLengths);
  for (auto [i, input] : llvm::enumerate(inputs))
    std::memcpy(buffers[i].bytes.data(), input, buffers[i].bytes.size());
  size_t out = inputs.size();
  std::vector<HostBuffer *> pointers;
  for (HostBuffer &buffer : buffers)
    pointers.push_back(&buffer);
  if (llvm::Error err = attention->executable->run(pointers)) {
    setError(error, llvm::toString(std::move(err)));
    return false;
  }
  std::memcpy(o, buffers[out].bytes.data(), buffers[out].bytes.size());
  if (spec.withLse)
    std::memcpy(lse, buffers[out + 1].bytes.data(),
                buffers[out + 1].bytes.size());
  return true;
}

void attnCpuAttentionDestroy(AttnCpuAttentionRef attention) {
  delete attention;
}

bool attnGpuAttentionCompile(const AttnAttentionSpec *in,
                             const AttnGpuTarget *target, char **manifest,
                             char **ptx, char **error) {
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
  if (target->sms <= 0 || target->smem_per_block <= 0) {
    setError(error, "the target needs a positive SM count and shared memory "
                    "per block");
    return false;
  }
  std::unique_ptr<MLIRContext> context = makeContext();
  MLIRContext *ctx = context.get();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  (*module)->setAttr(
      AttnDialect::getTargetAttrName(),
      TargetAttr::get(ctx, target->chip, target->sms, target->smem_per_block,
                      target->smem_per_block + kReservedSharedBytesPerCta,
                      kRegistersPerSm, kMaxRegistersPerThread));
  llvm::Expected<AttentionOp> op =
      buildVerifiedAttention(*module, toAttentionSpec(*in));
  if (!op) {
    setError(error, llvm::toString(op.takeError()));
    return false;
  }
  DiagnosticText diagnostics(ctx);
  KernelBundle bundle;
  if (failed(compileKernelBundle(*module, options, bundle))) {
    setError(error, "cannot compile the attention for " + options.chip + ":\n" +
                        diagnostics.str());
    return false;
  }
  *manifest = copyString(bundle.manifestJson);
  *ptx = copyString(bundle.ptx);
  return true;
}

char *attnRunPipeline(const char *moduleText, const char *pipeline,
                      char **error) {
  if (!moduleText || !pipeline) {
    setError(error, "no module or pipeline given");
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
