//===- AttentionSpec.cpp - An attention described on the command line ----===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "attn/Execution/AttentionSpec.h"

#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/Fa2Resources.h"
#include "attn/Analysis/TileSizes.h"
#include "attn/Dialect/Attn/IR/Attn.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::attn;

double mlir::attn::alibiSlope(int64_t head, int64_t heads) {
  return std::exp2(-8.0 * static_cast<double>(head + 1) /
                   static_cast<double>(heads));
}

static FailureOr<Type> parseElementType(MLIRContext *context, StringRef name) {
  Builder b(context);
  if (name == "f16")
    return b.getF16Type();
  if (name == "bf16")
    return b.getBF16Type();
  if (name == "f32")
    return b.getF32Type();
  return failure();
}

/// score + slope(h) * (k - q - (Sk - Sq)), with slope(h) computed in IR.
static void buildAlibiRegion(OpBuilder &b, Location loc, AttentionOp op,
                             const AttentionSpec &spec) {
  Region &region = op.getScore();
  Block *block = b.createBlock(&region);
  Type f32 = b.getF32Type(), index = b.getIndexType();
  for (Type type : {f32, index, index, index, index})
    block->addArgument(type, loc);
  b.setInsertionPointToStart(block);
  auto toF32 = [&](Value value) -> Value {
    Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
    return arith::SIToFPOp::create(b, loc, f32, i64);
  };
  Value head = block->getArgument(2), row = block->getArgument(3),
        key = block->getArgument(4);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value exponent = arith::MulFOp::create(
      b, loc, toF32(arith::AddIOp::create(b, loc, head, one)),
      arith::ConstantOp::create(
          b, loc,
          b.getF32FloatAttr(-8.0 / static_cast<double>(spec.queryHeads))));
  Value slope = math::Exp2Op::create(b, loc, exponent);
  Value shift =
      arith::ConstantIndexOp::create(b, loc, spec.keyLen - spec.queryLen);
  Value distance = arith::SubIOp::create(
      b, loc, arith::SubIOp::create(b, loc, key, row), shift);
  Value bias = arith::MulFOp::create(b, loc, slope, toF32(distance));
  Value score = arith::AddFOp::create(b, loc, block->getArgument(0), bias);
  YieldOp::create(b, loc, score);
}

std::vector<std::vector<int64_t>>
mlir::attn::operandShapes(const AttentionSpec &spec, AttentionLengths lengths) {
  auto [batch, queryLen, keyLen] = lengths;
  auto blocks = [](int64_t length, int64_t block) {
    return ShapedType::isDynamic(length)
               ? length
               : static_cast<int64_t>(llvm::divideCeil(length, block));
  };
  std::vector<std::vector<int64_t>> shapes{
      {batch, spec.queryHeads, queryLen, spec.headDim},
      {batch, spec.kvHeads, keyLen, spec.headDim},
      {batch, spec.kvHeads, keyLen, spec.valueDim}};
  if (spec.mask != MaskKind::None)
    shapes.push_back({spec.maskPerSequence ? batch : 1,
                      spec.maskPerHead ? spec.queryHeads : 1, queryLen,
                      keyLen});
  if (spec.blockMask)
    shapes.push_back({spec.blockMaskPerSequence ? batch : 1,
                      spec.blockMaskPerHead ? spec.queryHeads : 1,
                      blocks(queryLen, spec.blockMask->first),
                      blocks(keyLen, spec.blockMask->second)});
  if (spec.keyLengths)
    shapes.push_back({batch});
  shapes.push_back({batch, spec.queryHeads, queryLen, spec.valueDim});
  if (spec.withLse)
    shapes.push_back({batch, spec.queryHeads, queryLen});
  return shapes;
}

llvm::Expected<AttentionOp>
mlir::attn::buildAttention(ModuleOp module, const AttentionSpec &spec) {
  MLIRContext *context = module.getContext();
  context->loadDialect<AttnDialect, arith::ArithDialect, func::FuncDialect,
                       math::MathDialect>();
  auto error = [](const llvm::Twine &message) {
    return llvm::createStringError(message.str());
  };
  FailureOr<Type> inputType = parseElementType(context, spec.inputType);
  if (failed(inputType))
    return error("unsupported input type '" + spec.inputType +
                 "' (expected f16, bf16 or f32)");
  FailureOr<Type> outType = parseElementType(context, spec.outType);
  if (failed(outType))
    return error("unsupported output type '" + spec.outType +
                 "' (expected f16, bf16 or f32)");
  for (auto [name, value] :
       {std::pair<const char *, int64_t>{"batch", spec.batch},
        {"heads", spec.queryHeads},
        {"kv-heads", spec.kvHeads},
        {"seq-q", spec.queryLen},
        {"seq-k", spec.keyLen},
        {"head-dim", spec.headDim},
        {"value-dim", spec.valueDim}})
    if (value < 1)
      return error(llvm::formatv("{0} must be positive, got {1}", name, value));
  if (spec.splits < 1)
    return error(llvm::formatv("splits must be positive, got {0}", spec.splits));
  if (spec.packedHeads < 1)
    return error(llvm::formatv("packed heads must be positive, got {0}",
                               spec.packedHeads));
  if (spec.leanCtas < 0)
    return error(
        llvm::formatv("lean CTAs must be positive, got {0}", spec.leanCtas));
  if (spec.ringDevices < 0)
    return error(llvm::formatv("ring devices must be positive, got {0}",
                               spec.ringDevices));
  if (spec.attention2d &&
      (spec.attention2d->first < 1 || spec.attention2d->second < 1))
    return error(llvm::formatv("attention2d parts must be positive, got {0} x "
                               "{1}",
                               spec.attention2d->first,
                               spec.attention2d->second));
  int partitions = (spec.splits > 1) + (spec.leanCtas > 0) +
                   spec.attention2d.has_value() + (spec.ringDevices > 0);
  if (partitions > 1)
    return error("choose one partition: split-KV (splits), Lean (lean), "
                 "ATTENTION2D (attention2d) or ring (ring)");
  if (spec.zigzag && !spec.attention2d && !spec.ringDevices)
    return error("zigzag shards a distributed attention: add attention2d or "
                 "ring");

  Location loc = UnknownLoc::get(context);
  OpBuilder b(context);
  b.setInsertionPointToEnd(module.getBody());
  if (spec.blockMask &&
      (spec.blockMask->first < 1 || spec.blockMask->second < 1))
    return error(llvm::formatv("block mask blocks must be positive, got {0} x "
                               "{1}",
                               spec.blockMask->first, spec.blockMask->second));
  if (spec.runTimeLengths && spec.alibi)
    return error("ALiBi's score region needs static lengths");
  Type maskType = b.getI1Type();
  if (spec.mask == MaskKind::Additive) {
    FailureOr<Type> additive = parseElementType(context, spec.additiveMaskType);
    if (failed(additive))
      return error("unsupported additive mask type '" + spec.additiveMaskType +
                   "' (expected f16, bf16 or f32)");
    maskType = *additive;
  }
  // Element types in operandShapes' order.
  Type f32 = b.getF32Type();
  SmallVector<Type> elementTypes{*inputType, *inputType, *inputType};
  if (spec.mask != MaskKind::None)
    elementTypes.push_back(maskType);
  if (spec.blockMask)
    elementTypes.push_back(b.getI8Type());
  if (spec.keyLengths)
    elementTypes.push_back(b.getI32Type());
  elementTypes.push_back(*outType);
  if (spec.withLse)
    elementTypes.push_back(f32);
  int64_t dynamic = ShapedType::kDynamic;
  AttentionLengths lengths =
      spec.runTimeLengths
          ? AttentionLengths{dynamic, dynamic, dynamic}
          : AttentionLengths{spec.batch, spec.queryLen, spec.keyLen};
  SmallVector<Type> argTypes;
  for (auto [shape, type] :
       llvm::zip_equal(operandShapes(spec, lengths), elementTypes))
    argTypes.push_back(RankedTensorType::get(shape, type));
  unsigned numOutputs = spec.withLse ? 2 : 1;
  ArrayRef<Type> resultTypes = ArrayRef<Type>(argTypes).take_back(numOutputs);

  auto func = func::FuncOp::create(b, loc, "attention",
                                   b.getFunctionType(argTypes, resultTypes));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ValueRange args = entry->getArguments();
  Value mask = spec.mask != MaskKind::None ? args[3] : Value();
  ValueRange outputs = args.take_back(numOutputs);
  auto op = AttentionOp::create(b, loc, args[0], args[1], args[2], mask,
                                outputs[0],
                                spec.withLse ? outputs[1] : Value());
  if (spec.blockMask) {
    op.getBlockMaskMutable().assign(args[3 + (spec.mask != MaskKind::None)]);
    op.setBlockMaskSize(
        ArrayRef<int64_t>{spec.blockMask->first, spec.blockMask->second});
  }
  if (spec.keyLengths)
    op.getKeyLengthsMutable().assign(
        args[3 + (spec.mask != MaskKind::None) + spec.blockMask.has_value()]);
  if (spec.scale)
    op.setScaleAttr(b.getF32FloatAttr(*spec.scale));
  if (spec.causal)
    op.setCausal(true);
  if (spec.window)
    op.setWindow(ArrayRef<int64_t>{spec.window->first, spec.window->second});
  if (spec.softcap)
    op.setSoftcapAttr(b.getF32FloatAttr(*spec.softcap));
  if (spec.alibi) {
    OpBuilder::InsertionGuard guard(b);
    buildAlibiRegion(b, loc, op, spec);
  }
  func::ReturnOp::create(b, loc, op.getResults());

  // What the verifiers say is the error.
  std::string message;
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    message += diag.str();
    return success();
  });
  // The partition's counts are checked as the parser checks them (the op's
  // verifier runs no attribute's): a count past kMaxCount would size
  // schedules whose products of it overflow.
  auto emitError = [&] { return mlir::emitError(loc); };
  Attribute partition;
  if (spec.splits > 1)
    partition = SplitKVAttr::getChecked(emitError, context, spec.splits);
  else if (spec.leanCtas)
    partition = LeanAttr::getChecked(emitError, context, spec.leanCtas);
  else if (spec.attention2d)
    partition = Attention2DAttr::getChecked(emitError, context,
                                            spec.attention2d->first,
                                            spec.attention2d->second,
                                            spec.zigzag);
  else if (spec.ringDevices)
    partition =
        RingAttr::getChecked(emitError, context, spec.ringDevices, spec.zigzag);
  if (!message.empty())
    return error(message);
  if (partition)
    op.setPartitionAttr(partition);
  // The spec may still describe an invalid attention (e.g. Hq not a multiple
  // of Hkv, or operands past 2^48 bytes): the verifier says why, before
  // choosing tiles computes with its sizes.
  if (failed(mlir::verify(op)))
    return error(message);
  if (spec.packedHeads > 1) {
    // The tiles every pass would choose, with the packing asked for, which
    // must divide the query heads per key/value head.
    std::string why;
    FailureOr<TileChoice> choice =
        chooseTiles(op, {TileTarget::Gpu, 0, 0, getEnclosingTarget(op)}, why);
    if (failed(choice))
      return error("packed heads need tiles: " + why);
    choice->tiling.packedHeads = spec.packedHeads;
    op.setTilesAttr(fa2TilesAttrOf(context, choice->tiling));
    if (failed(mlir::verify(op)))
      return error(message);
  }
  return op;
}

AttentionGradOp mlir::attn::buildAttentionGrad(AttentionOp forward,
                                               int64_t pieces,
                                               bool deterministic,
                                               bool maskGrad) {
  assert(forward.getLse() && !forward.hasFrame() &&
         "the gradient needs the forward's LSE and no frame");
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  SmallVector<Value> inits{forward.getQuery(), forward.getKey(),
                           forward.getValue()};
  if (maskGrad)
    inits.push_back(forward.getMask());
  auto grad = AttentionGradOp::create(b, forward.getLoc(), forward,
                                      forward.getOut(), forward.getLse(),
                                      /*gradOut=*/forward.getOut(), inits);
  if (pieces > 1)
    grad.setPartitionAttr(SplitKVAttr::get(forward.getContext(), pieces));
  grad.setDeterministic(deterministic);
  return grad;
}

llvm::Expected<AttentionGradOp>
mlir::attn::buildAttentionGradFunction(ModuleOp module,
                                       const AttentionSpec &spec) {
  AttentionSpec withLse = spec;
  withLse.withLse = true;
  llvm::Expected<AttentionOp> forward = buildAttention(module, withLse);
  if (!forward)
    return forward.takeError();
  // The forward's function with the forward taken out: its O and LSE
  // arguments (the forward's destinations) are the forward's results given,
  // dO is appended, and the gradient is returned.
  auto func = (*forward)->getParentOfType<func::FuncOp>();
  func.setSymName("attention_grad");
  Value out = forward->getOut();
  if (failed(func.insertArgument(func.getNumArguments(), out.getType(), {},
                                 forward->getLoc())))
    return llvm::createStringError("cannot add dO to the gradient's function");
  AttentionGradOp grad = buildAttentionGrad(*forward, /*pieces=*/1,
                                            /*deterministic=*/true,
                                            /*maskGrad=*/false);
  grad.getGradOutMutable().assign(func.getArguments().back());
  Operation *terminator = func.getBody().front().getTerminator();
  terminator->setOperands(grad.getResults());
  forward->replaceAllUsesWith(forward->getOutputs());
  forward->erase();
  func.setFunctionType(FunctionType::get(
      module.getContext(), func.getArgumentTypes(), grad.getResultTypes()));
  return grad;
}
