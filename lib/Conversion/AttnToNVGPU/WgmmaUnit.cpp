//===- WgmmaUnit.cpp - The products on warpgroup MMA ----------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "ProductUnit.h"
#include "TensorCopy.h"
#include "WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::attn;

SmallVector<Value> WgmmaUnit::issueRowProduct(const RowProduct &product) {
  Value rowsDescriptor = product.rows;
  int64_t columns = product.columns;
  // k step ks at 32 bytes into 64-column block ks / 4 of each tile.
  Value streamDescriptor = this->rowsDescriptor(product.streamed.offset);
  wgmmaFence(b);
  SmallVector<Value> d;
  int64_t kSteps = llvm::divideCeil(columns, 16);
  for (int64_t ks = 0; ks < kSteps; ++ks) {
    int64_t block = ks * 16 / kBlockColumns, within = ks % 4 * 32;
    d = wgmma(b, s.element, s.blockN, d,
              advanceDescriptor(b, rowsDescriptor,
                                block * s.blockM * kSwizzleRowBytes + within),
              {},
              advanceDescriptor(b, streamDescriptor,
                                block * s.blockN * kSwizzleRowBytes + within),
              /*transposeB=*/false);
  }
  wgmmaCommit(b);
  return d;
}

SmallVector<Value> WgmmaUnit::issueStreamProduct(const StreamOperands &operands,
                                                 Value streamOffset,
                                                 int64_t width, bool fence) {
  ArrayRef<Value> aRegisters = operands.a;
  // MN-major: 8 streamed rows a 1024-byte atom (the stride), the next 64
  // columns one block further (the leading offset); k slice kk at row 16 kk.
  Value streamDescriptor = wgmmaDescriptor(
      b, add(sharedAddress, streamOffset),
      /*leadingBytes=*/s.blockN * kSwizzleRowBytes, kSwizzleAtomBytes);
  if (fence)
    wgmmaFence(b);
  SmallVector<Value> d(operands.d);
  for (int64_t kk = 0; kk < s.blockN / 16; ++kk)
    d = wgmma(
        b, s.element, width, d, Value(), aRegisters.slice(4 * kk, 4),
        advanceDescriptor(b, streamDescriptor, kk * 16 * kSwizzleRowBytes),
        /*transposeB=*/true);
  wgmmaCommit(b);
  return d;
}

Value WgmmaUnit::rowsDescriptor(Value byteOffset) {
  return wgmmaDescriptor(b, add(sharedAddress, byteOffset),
                         /*leadingBytes=*/16, kSwizzleAtomBytes);
}

WgmmaUnit::StreamOperands WgmmaUnit::streamOperands(ArrayRef<Value> d,
                                                    ValueRange aFrags) {
  SmallVector<Value> a;
  for (Value fragment : aFrags)
    llvm::append_range(a, packedRegisters(fragment));
  return {fenceOperands(b, d), fenceOperands(b, a)};
}

void WgmmaUnit::accumulate(SmallVector<Value> &acc,
                           ArrayRef<SmallVector<Value>> aFrags,
                           SharedTile streamed, int64_t width) {
  StreamOperands operands = streamOperands(elementsOf(acc), aFrags.front());
  SmallVector<Value> d =
      issueStreamProduct(operands, streamed.offset, width, /*fence=*/true);
  wgmmaWait(b, 0, operands.a);
  acc = fragmentsOf(d);
}

SmallVector<SmallVector<SmallVector<Value>>>
WgmmaUnit::rowProducts(ArrayRef<RowProduct> products) {
  // Every product in flight at once, waited for together.
  SmallVector<SmallVector<Value>> issued;
  for (const RowProduct &product : products)
    issued.push_back(issueRowProduct(product));
  wgmmaWait(b, 0);
  SmallVector<SmallVector<SmallVector<Value>>> results;
  for (ArrayRef<Value> d : issued)
    results.push_back({fragmentsOf(d)});
  return results;
}

Value WgmmaUnit::rowsOperand(SharedTile tile) {
  // With more than one consumer warpgroup, the warpgroup's 64 rows.
  Value offset = tile.offset;
  if (s.blockM > 64) {
    Value warpgroupRows =
        mul(arith::DivUIOp::create(b, warp, index(4)), index(64));
    Value rowsOffset = mul(warpgroupRows, index(kSwizzleRowBytes));
    offset =
        isConstantIntValue(offset, 0) ? rowsOffset : add(offset, rowsOffset);
  }
  return rowsDescriptor(offset);
}

void WgmmaUnit::copiesLanded() { fenceProxyAsyncShared(b); }
