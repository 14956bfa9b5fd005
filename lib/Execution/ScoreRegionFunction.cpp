//===- ScoreRegionFunction.cpp - An attention's score region, alone -------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/ScoreRegionFunction.h"

#include "HostJit.h"

#include "attn/Dialect/Attn/IR/Attn.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::attn;

static constexpr llvm::StringLiteral kFunctionName = "attn_score";

ScoreRegionFunction::~ScoreRegionFunction() = default;

ATTN_CALLS_JIT_CODE double ScoreRegionFunction::operator()(double score,
                                                           int64_t b, int64_t h,
                                                           int64_t q,
                                                           int64_t k) const {
  if (widenedFunction)
    return widenedFunction(score, b, h, q, k);
  return function(static_cast<float>(score), b, h, q, k);
}

/// Makes every f32 of `func` an f64: arguments, results and constants,
/// tensors of f32 (a region's tables) included.
static LogicalResult widenToF64(func::FuncOp func) {
  Builder b(func.getContext());
  Type f32 = b.getF32Type(), f64 = b.getF64Type();
  auto widen = [&](Value value) {
    if (value.getType() == f32)
      value.setType(f64);
    else if (auto tensor = dyn_cast<RankedTensorType>(value.getType());
             tensor && tensor.getElementType() == f32)
      value.setType(tensor.clone(f64));
  };
  for (BlockArgument arg : func.getArguments())
    widen(arg);
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      widen(result);
    auto constant = dyn_cast<arith::ConstantOp>(op);
    if (!constant)
      return;
    if (auto value = dyn_cast<FloatAttr>(constant.getValue());
        value && value.getType() == f32)
      constant.setValueAttr(b.getF64FloatAttr(value.getValueAsDouble()));
    if (auto values = dyn_cast<DenseFPElementsAttr>(constant.getValue());
        values && values.getElementType() == f32)
      constant.setValueAttr(values.mapValues(f64, [](const APFloat &value) {
        bool losesInfo;
        APFloat wide = value;
        wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                     &losesInfo);
        return wide.bitcastToAPInt();
      }));
  });
  func.setType(
      b.getFunctionType(func.front().getArgumentTypes(), {f64}));
  return verify(func);
}

/// `func @attn_score(f32, index, index, index, index) -> f32`: the region's
/// operations on the function's arguments, returning what it yields.
static llvm::Expected<OwningOpRef<ModuleOp>> buildScoreModule(AttentionOp op) {
  OpBuilder b(op.getContext());
  Location loc = op.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  Block &region = op.getScore().front();
  auto func = func::FuncOp::create(
      b, loc, kFunctionName,
      b.getFunctionType(region.getArgumentTypes(), {b.getF32Type()}));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  if (llvm::Error err = cloneCapturedConstants(
          op.getScore(), b, mapping,
          "the reference evaluates the score region alone"))
    return std::move(err);
  func::ReturnOp::create(
      b, loc,
      inlineScoreRegion(b, op.getScore(), entry->getArguments(), mapping));
  return module;
}

llvm::Expected<std::unique_ptr<ScoreRegionFunction>>
ScoreRegionFunction::compile(AttentionOp op, bool widened) {
  assert(op.hasScoreModifier() && "the op has a score region");
  MLIRContext *context = op.getContext();
  prepareHostJit(context);
  std::unique_ptr<ScoreRegionFunction> result(new ScoreRegionFunction());
  llvm::Expected<OwningOpRef<ModuleOp>> module = buildScoreModule(op);
  if (!module)
    return module.takeError();
  result->module = std::move(*module);
  {
    DiagnosticCapture diagnostics(context);
    if (widened &&
        failed(widenToF64(*result->module->getOps<func::FuncOp>().begin())))
      return diagnostics.error("the score region cannot be evaluated in f64");
    // attn-to-cpu lowers whatever the region may hold (arith, math, tensor
    // constants, scf) the way the attention's own lowering does.
    PassManager pm(context);
    buildAttnToCPUPipeline(pm, AttnToCPUOptions());
    if (failed(pm.run(*result->module)))
      return diagnostics.error("lowering the score region failed");
  }
  auto engine = createHostEngine(*result->module);
  if (!engine)
    return engine.takeError();
  result->engine = std::move(*engine);
  // `index` is i64 in the LLVM lowering of this machine's data layout.
  auto address = result->engine->lookup(kFunctionName);
  if (!address)
    return address.takeError();
  if (widened)
    result->widenedFunction = reinterpret_cast<double (*)(
        double, int64_t, int64_t, int64_t, int64_t)>(*address);
  else
    result->function =
        reinterpret_cast<float (*)(float, int64_t, int64_t, int64_t,
                                   int64_t)>(*address);
  return result;
}
