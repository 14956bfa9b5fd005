//===- WarpgroupMma.cpp - wgmma.mma_async as IR ---------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include <string>

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::wgmmaDescriptor(ImplicitLocOpBuilder &b, Value address,
                                  int64_t leadingBytes, int64_t strideBytes) {
  // Bits 0-13: address[17:4]; 16-29: leading byte offset >> 4; 32-45: stride
  // byte offset >> 4; 49-51: base offset 0 (atoms 1024-byte aligned); 62-63:
  // the layout, 1 for the 128-byte swizzle.
  Type i64 = b.getI64Type();
  auto constant = [&](int64_t value) {
    return arith::ConstantIntOp::create(b, i64, value);
  };
  Value start = arith::ShRUIOp::create(
      b,
      arith::AndIOp::create(b, arith::IndexCastUIOp::create(b, i64, address),
                            constant(0x3ffff)),
      constant(4));
  int64_t fields = ((leadingBytes >> 4) & 0x3fff) << 16 |
                   ((strideBytes >> 4) & 0x3fff) << 32 | int64_t(1) << 62;
  return arith::OrIOp::create(b, start, constant(fields));
}

Value mlir::attn::advanceDescriptor(ImplicitLocOpBuilder &b, Value descriptor,
                                    int64_t bytes) {
  assert(bytes % 16 == 0 && "descriptors address 16-byte units");
  if (bytes == 0)
    return descriptor;
  // Shared addresses stay below 2^18, so the start field does not carry.
  return arith::AddIOp::create(
      b, descriptor,
      arith::ConstantIntOp::create(b, b.getI64Type(), bytes >> 4));
}

SmallVector<Value> mlir::attn::wgmma(ImplicitLocOpBuilder &b, Type element,
                                     int64_t n, ArrayRef<Value> accumulators,
                                     Value aDescriptor,
                                     ArrayRef<Value> aRegisters,
                                     Value bDescriptor, bool transposeB) {
  assert((accumulators.empty() || 2 * int64_t(accumulators.size()) == n) &&
         n % 8 == 0 && n >= 8 && n <= 256 && "wgmma's N is 8..256 by 8");
  assert((aDescriptor || aRegisters.size() == 4) && "A: a descriptor or 4 "
                                                    "registers");
  int64_t results = n / 2;
  bool accumulate = !accumulators.empty();
  std::string type = element.isF16() ? "f16" : "bf16";
  // $0..$(results - 1): D; then A (a descriptor, or four registers), B's
  // descriptor, scale-d; then D's inputs, tied to the outputs. Without
  // accumulators scale-d is 0: D = A B.
  std::string constraints, operandsText;
  SmallVector<Value> operands;
  for (int64_t r = 0; r < results; ++r) {
    constraints += (r ? ",=f" : "=f");
    operandsText += (r ? ", $" : "$") + std::to_string(r);
  }
  int64_t next = results;
  std::string aText;
  if (aDescriptor) {
    constraints += ",l";
    operands.push_back(aDescriptor);
    aText = "$" + std::to_string(next++);
  } else {
    aText = "{";
    for (auto [i, reg] : llvm::enumerate(aRegisters)) {
      constraints += ",r";
      operands.push_back(reg);
      aText += (i ? ", $" : "$") + std::to_string(next++);
    }
    aText += "}";
  }
  constraints += ",l";
  operands.push_back(bDescriptor);
  std::string bText = "$" + std::to_string(next++);
  // scale-d, a predicate set from an immediate inside the block: a register
  // for it would be an instruction defining a wgmma input after the
  // wgmma.fence, for which ptxas serialises every wgmma of the kernel.
  std::string scaleText = accumulate ? "1" : "0";
  for (int64_t r = 0; r < int64_t(accumulators.size()); ++r) {
    constraints += "," + std::to_string(r);
    operands.push_back(accumulators[r]);
  }
  // scale-d is a predicate operand; imm-scale-a and -b are 1 (no negation);
  // imm-trans-a (descriptor A only) 0: A is K-major.
  std::string immediates = aDescriptor ? ", 1, 1, 0, " : ", 1, 1, ";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + scaleText +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + "k16.f32." + type + "." + type + " {" +
                     operandsText + "}, " + aText + ", " + bText + ", p" +
                     immediates + (transposeB ? "1" : "0") + ";\n}";
  Type f32 = b.getF32Type();
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(results, f32));
  auto asmOp = LLVM::InlineAsmOp::create(
      b, structType, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  SmallVector<Value> d;
  for (int64_t r = 0; r < results; ++r)
    d.push_back(LLVM::ExtractValueOp::create(b, asmOp.getRes(), r));
  return d;
}

SmallVector<Value> mlir::attn::fenceOperands(ImplicitLocOpBuilder &b,
                                             ArrayRef<Value> registers) {
  if (registers.empty())
    return {};
  // Outputs "=f" or "=r", each tied to its input ("0", "1", ...).
  std::string outputs, inputs;
  SmallVector<Type> types;
  for (auto [i, reg] : llvm::enumerate(registers)) {
    outputs +=
        std::string(i ? "," : "") + (reg.getType().isF32() ? "=f" : "=r");
    inputs += "," + std::to_string(i);
    types.push_back(reg.getType());
  }
  auto asmOp = LLVM::InlineAsmOp::create(
      b, LLVM::LLVMStructType::getLiteral(b.getContext(), types), registers, "",
      outputs + inputs, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
  SmallVector<Value> fenced;
  for (size_t i = 0; i < registers.size(); ++i)
    fenced.push_back(LLVM::ExtractValueOp::create(b, asmOp.getRes(), i));
  return fenced;
}

void mlir::attn::wgmmaFence(ImplicitLocOpBuilder &b) {
  NVVM::WgmmaFenceAlignedOp::create(b);
}

void mlir::attn::wgmmaCommit(ImplicitLocOpBuilder &b) {
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
}

void mlir::attn::wgmmaWait(ImplicitLocOpBuilder &b, int64_t pending,
                           ValueRange aRegisters) {
  NVVM::WgmmaWaitGroupSyncOp::create(b, b.getI64IntegerAttr(pending));
  if (aRegisters.empty())
    return;
  std::string constraints;
  for (size_t i = 0; i < aRegisters.size(); ++i)
    constraints += i ? ",r" : "r";
  LLVM::InlineAsmOp::create(
      b, TypeRange(), aRegisters, "", constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

void mlir::attn::fenceProxyAsyncShared(ImplicitLocOpBuilder &b) {
  NVVM::FenceProxyOp::create(
      b, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}
