//===- CpuExecutable.cpp - Compile and run one attention on the CPU -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/CpuExecutable.h"

#include "HostJit.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Distribution/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;

static constexpr llvm::StringLiteral kEntryName = "attn_entry";

int64_t HostBuffer::numElements() const {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

CpuExecutable::~CpuExecutable() = default;

static constexpr llvm::StringLiteral kBodyName = "attn_body";

/// Builds `func @attn_body(tensors...) -> results` around a clone of `op`:
/// its operands become the arguments, in order, and its results are
/// returned; the constants its score region uses from outside are cloned
/// into the function. A distributed attention rewrites this function into one
/// rank's program before the entry is built around it.
static llvm::Expected<OwningOpRef<ModuleOp>> buildBodyModule(Operation *op) {
  MLIRContext *context = op->getContext();
  OpBuilder b(context);
  Location loc = op->getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(
      b, loc, kBodyName,
      b.getFunctionType(op->getOperandTypes(), op->getResultTypes()));
  func.setPrivate();
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  if (llvm::Error err = cloneCapturedConstants(
          op->getRegion(0), b, mapping, "each attention is compiled alone"))
    return std::move(err);
  // Operands are replaced by position, not through an IRMapping of values:
  // an op that reads one value as Q, K and V still gets three arguments.
  Operation *clone = b.clone(*op, mapping);
  clone->setOperands(entry->getArguments());
  func::ReturnOp::create(b, loc, clone->getResults());
  return module;
}

/// Adds `func @attn_entry(memrefs...)`, which calls @attn_body on its
/// arguments and writes the results into the destination arguments (the
/// last `numResults`).
static void addEntry(ModuleOp module, unsigned numResults) {
  auto body = module.lookupSymbol<func::FuncOp>(kBodyName);
  OpBuilder b(module.getContext());
  Location loc = body.getLoc();
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> argTypes;
  for (Type type : body.getArgumentTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    argTypes.push_back(
        MemRefType::get(tensor.getShape(), tensor.getElementType()));
  }
  auto func = func::FuncOp::create(b, loc, kEntryName,
                                   b.getFunctionType(argTypes, {}));
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), b.getUnitAttr());
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> tensors;
  for (auto [type, arg] :
       llvm::zip(body.getArgumentTypes(), entry->getArguments()))
    tensors.push_back(bufferization::ToTensorOp::create(
        b, loc, type, arg, /*restrict=*/true, /*writable=*/true));
  auto call = func::CallOp::create(b, loc, body, tensors);
  unsigned firstOut = entry->getNumArguments() - numResults;
  for (auto [index, result] : llvm::enumerate(call.getResults())) {
    auto materialize = bufferization::MaterializeInDestinationOp::create(
        b, loc, result, entry->getArgument(firstOut + index));
    materialize.setRestrict(true);
    materialize.setWritable(true);
  }
  func::ReturnOp::create(b, loc);
}

llvm::Expected<std::unique_ptr<CpuExecutable>>
CpuExecutable::compile(Operation *op, const AttnToCPUOptions &options) {
  assert((isa<AttentionOp, AttentionGradOp>(op)) && "compiles an attention");
  MLIRContext *context = op->getContext();
  prepareHostJit(context);
  std::unique_ptr<CpuExecutable> executable(new CpuExecutable());
  llvm::Expected<OwningOpRef<ModuleOp>> module = buildBodyModule(op);
  if (!module)
    return module.takeError();
  executable->module = std::move(*module);
  {
    DiagnosticCapture diagnostics(context);
    // A distributed attention's function becomes one rank's program first:
    // the entry then takes that rank's shards.
    PassManager distribute(context);
    distribute.addPass(createAttnDistribute());
    if (failed(distribute.run(*executable->module)))
      return diagnostics.error("attn-distribute failed");
    addEntry(*executable->module, op->getNumResults());
    auto body = executable->module->lookupSymbol<func::FuncOp>(kBodyName);
    for (Type type : body.getArgumentTypes())
      executable->argumentTypes.push_back(cast<RankedTensorType>(type));

    PassManager pm(context);
    pm.addPass(createInlinerPass());
    pm.addPass(createSymbolDCEPass());
    buildAttnToCPUPipeline(pm, options);
    if (failed(pm.run(*executable->module)))
      return diagnostics.error("lowering with attn-to-cpu failed");
  }
  // The MPI implementation has been chosen; the JIT's translation does not
  // know the data-layout description that chose it.
  (*executable->module)->removeAttr(DLTIDialect::kMapAttrName);

  auto engine = createHostEngine(*executable->module);
  if (!engine)
    return engine.takeError();
  executable->engine = std::move(*engine);
  // Looking the entry up generates its machine code now, not in the first
  // run.
  auto entry = executable->engine->lookupPacked(
      (llvm::Twine("_mlir_ciface_") + kEntryName).str());
  if (!entry)
    return entry.takeError();
  executable->entry = *entry;
  return executable;
}

namespace {
/// The layout of a ranked memref descriptor as the LLVM lowering passes it.
template <int Rank>
struct MemRefDescriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

/// Owns the descriptors of one call, whatever their ranks.
class Descriptors {
public:
  void add(const BufferView &buffer) {
    switch (buffer.shape.size()) {
    case 1:
      pointers.push_back(
          fill(std::make_unique<MemRefDescriptor<1>>(), buffer, rank1));
      break;
    case 3:
      pointers.push_back(fill(std::make_unique<MemRefDescriptor<3>>(), buffer,
                              rank3));
      break;
    case 4:
      pointers.push_back(fill(std::make_unique<MemRefDescriptor<4>>(), buffer,
                              rank4));
      break;
    default:
      llvm_unreachable("attention operands have rank 1 (key lengths), 3 or 4");
    }
  }
  /// The packed arguments: for each argument, the address of its value (a
  /// pointer to the descriptor).
  SmallVector<void *> packed() {
    SmallVector<void *> args;
    for (void *&pointer : pointers)
      args.push_back(&pointer);
    return args;
  }

private:
  template <int Rank>
  static void *fill(std::unique_ptr<MemRefDescriptor<Rank>> descriptor,
                    const BufferView &buffer,
                    std::vector<std::unique_ptr<MemRefDescriptor<Rank>>> &owner) {
    descriptor->allocated = descriptor->aligned = buffer.data;
    descriptor->offset = 0;
    int64_t stride = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      descriptor->sizes[d] = buffer.shape[d];
      descriptor->strides[d] = stride;
      stride *= buffer.shape[d];
    }
    owner.push_back(std::move(descriptor));
    return owner.back().get();
  }

  std::vector<std::unique_ptr<MemRefDescriptor<1>>> rank1;
  std::vector<std::unique_ptr<MemRefDescriptor<3>>> rank3;
  std::vector<std::unique_ptr<MemRefDescriptor<4>>> rank4;
  SmallVector<void *> pointers;
};
} // namespace

/// Bytes per element of `type` in memory as the LLVM lowering lays it out.
static int64_t storageBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

llvm::Error CpuExecutable::run(std::vector<HostBuffer *> buffers) {
  std::vector<BufferView> views;
  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    if (static_cast<int64_t>(buffer->bytes.size()) !=
        buffer->numElements() * buffer->elementBytes)
      return llvm::createStringError(
          llvm::formatv("buffer #{0} does not hold its shape", index).str());
    views.push_back({buffer->shape, buffer->elementBytes, buffer->bytes.data()});
  }
  return run(views);
}

ATTN_CALLS_JIT_CODE llvm::Error
CpuExecutable::run(llvm::ArrayRef<BufferView> buffers) {
  if (buffers.size() != argumentTypes.size())
    return llvm::createStringError(
        llvm::formatv("expected {0} buffers, got {1}", argumentTypes.size(),
                      buffers.size())
            .str());
  Descriptors descriptors;
  for (auto [index, pair] : llvm::enumerate(llvm::zip(buffers, argumentTypes))) {
    auto [buffer, type] = pair;
    auto fits = [](int64_t size, int64_t typeSize) {
      return ShapedType::isDynamic(typeSize) ? size >= 0 : size == typeSize;
    };
    if (buffer.shape.size() != type.getShape().size() ||
        !llvm::all_of(llvm::zip_equal(buffer.shape, type.getShape()),
                      [&](auto pair) {
                        return fits(std::get<0>(pair), std::get<1>(pair));
                      }) ||
        buffer.elementBytes != storageBytes(type.getElementType()))
      return llvm::createStringError(
          llvm::formatv("buffer #{0} does not match the argument type", index)
              .str());
    descriptors.add(buffer);
  }
  SmallVector<void *> args = descriptors.packed();
  entry(args.data());
  return llvm::Error::success();
}
