//===- MmaSyncUnit.cpp - The products on mma.sync -------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// Which lane holds which element of the A, B and C fragments and which row
// each lane addresses in an ldmatrix are FragmentLayout's formulas
// (unit-tested against the PTX ISA).
//
//===----------------------------------------------------------------------===//

#include "ProductUnit.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::attn;

Value MmaSyncUnit::ldmatrix(Value tile, Value row0, Value laneRow,
                            Value laneChunk, int64_t col0, int64_t numTiles,
                            bool transpose) {
  // Only the mma.sync products load fragments: their tiles keep whole rows.
  Value row = add(row0, laneRow);
  Value col = swizzledColumn(col0 / kChunk, laneChunk, lanePhase);
  return nvgpu::LdMatrixOp::create(b, VectorType::get({numTiles, 2}, s.element),
                                   tile, ValueRange{row, col}, transpose,
                                   static_cast<uint32_t>(numTiles));
}

Value MmaSyncUnit::loadA(Value tile, Value row0, int64_t col0) {
  // Lanes 0-15 address rows 0-15 at col0, lanes 16-31 the same rows at
  // col0 + 8: matrices a0a1 | a2a3 | a4a5 | a6a7.
  return ldmatrix(tile, row0, laneRow16, laneHalf16, col0, 4, false);
}

Value MmaSyncUnit::loadB(Value tile, Value row0, int64_t col0) {
  // K stored [key][d]: lanes 0-7 address keys row0..+7 at d = col0, lanes
  // 8-15 the same keys at col0 + 8 (lanes 16-31 repeat; x2 ignores them).
  return ldmatrix(tile, row0, laneRow8, laneHalf8, col0, 2, false);
}

Value MmaSyncUnit::loadBTransposed(Value tile, Value row0, int64_t col0) {
  // V stored [key][d]: lanes 0-15 address keys row0..+15 at d = col0; the
  // transposed x2 load hands lane l keys 2t, 2t+1 (+8) of column g.
  return ldmatrix(tile, row0, vRow, vChunk, col0, 2, true);
}

Value MmaSyncUnit::mma(Value a, Value bFrag, Value c) {
  if (s.element.isF16())
    return nvgpu::MmaSyncOp::create(b, a, bFrag, c,
                                    ArrayRef<int64_t>{16, 8, 16});
  SmallVector<Value> accumulators = elementsOf(c);
  auto structType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  Value d = NVVM::MmaOp::create(
      b, structType, packedRegisters(a), packedRegisters(bFrag), accumulators,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> elements;
  for (int64_t i = 0; i < 4; ++i)
    elements.push_back(LLVM::ExtractValueOp::create(b, d, i));
  return fragmentsOf(elements).front();
}

SmallVector<SmallVector<SmallVector<Value>>>
MmaSyncUnit::rowProducts(ArrayRef<RowProduct> products) {
  // Each product for all of the warp's m16 tiles at once: each B fragment
  // is loaded once and serves every m16 tile.
  SmallVector<SmallVector<SmallVector<Value>>> results;
  for (const RowProduct &product : products)
    results.push_back(
        rowProduct(product.rows, product.streamed.view, product.columns));
  return results;
}

SmallVector<SmallVector<Value>>
MmaSyncUnit::rowProduct(Value rowTile, Value streamTile, int64_t columns) {
  int64_t mTiles = s.mTiles(), nTiles = s.blockN / 8,
          kSteps = llvm::divideCeil(columns, 16);
  SmallVector<SmallVector<Value>> products(
      mTiles, SmallVector<Value>(nTiles, zeroFragment()));
  for (int64_t ks = 0; ks < kSteps; ++ks) {
    SmallVector<Value> aFrags;
    for (int64_t mt = 0; mt < mTiles; ++mt)
      aFrags.push_back(loadA(rowTile, add(warpRow, index(mt * 16)), ks * 16));
    for (int64_t nt = 0; nt < nTiles; ++nt) {
      Value bFrag = loadB(streamTile, index(nt * 8), ks * 16);
      for (int64_t mt = 0; mt < mTiles; ++mt)
        products[mt][nt] = mma(aFrags[mt], bFrag, products[mt][nt]);
    }
  }
  return products;
}

void MmaSyncUnit::accumulate(SmallVector<Value> &acc,
                             ArrayRef<SmallVector<Value>> aFrags,
                             SharedTile streamed, int64_t width) {
  Value streamTile = streamed.view;
  int64_t mTiles = s.mTiles(), kSlices = s.blockN / 16, oTiles = width / 8;
  for (int64_t kk = 0; kk < kSlices; ++kk)
    for (int64_t ot = 0; ot < oTiles; ++ot) {
      Value bFrag = loadBTransposed(streamTile, index(kk * 16), ot * 8);
      for (int64_t mt = 0; mt < mTiles; ++mt) {
        Value &fragment = acc[mt * oTiles + ot];
        fragment = mma(aFrags[mt][kk], bFrag, fragment);
      }
    }
}
