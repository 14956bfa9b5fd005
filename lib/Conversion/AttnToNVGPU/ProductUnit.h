//===- ProductUnit.h - The matrix instructions of the products -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The product unit, one component of the forward and the backward CTA
// bodies: the two forms of product every attention kernel computes, on the
// matrix instructions of the kernel's plan (#attn.kernel's `unit`):
//   - rows x streamed^T, both operands in shared memory (S = Q K^T; the
//     backward's S, S^T, dP and dP^T);
//   - acc + A B, A the lanes' registers, B a streamed tile (O += P V; the
//     backward's dV += P^T dO, dK += dS^T Q, dQ += dS K).
// MmaSyncUnit (MmaSyncUnit.cpp) computes them with ldmatrix and mma.sync
// m16n8k16, a warp's m16 tiles at a time; WgmmaUnit (WgmmaUnit.cpp) with
// warpgroup MMA (sm_90a), a warpgroup's 64 rows at a time, its operands read
// through matrix descriptors. Both give C fragments in mma.sync's layout,
// which a wgmma accumulator's registers are, so the softmax step, the
// epilogue and the backward's gradients do not know which unit ran. A new
// unit (tcgen05, FP8) is a new class here and a file of its own.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_PRODUCTUNIT_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_PRODUCTUNIT_H

#include "CtaPrimitives.h"

#include <memory>

namespace mlir::attn {

class ProductUnit {
public:
  virtual ~ProductUnit() = default;

  /// The operand that rowProducts reads the warp's rows of `tile` (s.blockM
  /// rows in shared memory) through: mma.sync's view (from warpRow), or
  /// wgmma's descriptor of the warpgroup's 64 rows.
  virtual Value rowsOperand(SharedTile tile) = 0;

  /// rows x streamed^T over the first `columns` columns of both: the warp's
  /// m16 tiles of `rows` (rowsOperand) times the s.blockN rows of
  /// `streamed`.
  struct RowProduct {
    Value rows;
    SharedTile streamed;
    int64_t columns;
  };
  /// `products`, each as [mTiles][blockN / 8] C fragments, all issued
  /// before any is waited for.
  virtual SmallVector<SmallVector<SmallVector<Value>>>
  rowProducts(ArrayRef<RowProduct> products) = 0;

  /// acc ([mTiles][width / 8] C fragments) += aFrags ([mTiles][blockN / 16]
  /// A fragments) times the s.blockN rows of `streamed` (`width` columns),
  /// waited for.
  virtual void accumulate(SmallVector<Value> &acc,
                          ArrayRef<SmallVector<Value>> aFrags,
                          SharedTile streamed, int64_t width) = 0;

  /// What a thread does after its cp.async copies have landed and before
  /// the barrier that makes them every thread's, so that the unit reads
  /// them: nothing for ldmatrix, a proxy fence for wgmma, which reads
  /// shared memory through the async proxy.
  virtual void copiesLanded() = 0;
};

/// mma.sync m16n8k16 (sm_80 and later), operands by ldmatrix.
class MmaSyncUnit final : public ProductUnit, CtaPrimitives {
public:
  explicit MmaSyncUnit(const CtaPrimitives &cta) : CtaPrimitives(cta) {}
  Value rowsOperand(SharedTile tile) override { return tile.view; }
  SmallVector<SmallVector<SmallVector<Value>>>
  rowProducts(ArrayRef<RowProduct> products) override;
  void accumulate(SmallVector<Value> &acc, ArrayRef<SmallVector<Value>> aFrags,
                  SharedTile streamed, int64_t width) override;
  void copiesLanded() override {}

private:
  /// One product of rowProducts: `rowTile`'s m16 tiles from warpRow.
  SmallVector<SmallVector<Value>> rowProduct(Value rowTile, Value streamTile,
                                             int64_t columns);
  /// ldmatrix.x`numTiles` of the 8x8 matrices whose rows lane l addresses
  /// at row `row0 + laneRow`, 16-byte chunk `col0 / 8 + laneChunk` (tiles
  /// that keep whole rows: CtaPrimitives::tileIndex).
  Value ldmatrix(Value tile, Value row0, Value laneRow, Value laneChunk,
                 int64_t col0, int64_t numTiles, bool transpose);
  /// Per-lane ldmatrix operands of m16n8k16: A (16 rows x 16 columns at
  /// col0 of rows row0...), B from a tile stored [n][k] (8 rows at row0),
  /// and B from a tile stored [k][n] (16 rows at row0, 8 columns at col0,
  /// loaded transposed).
  Value loadA(Value tile, Value row0, int64_t col0);
  Value loadB(Value tile, Value row0, int64_t col0);
  Value loadBTransposed(Value tile, Value row0, int64_t col0);
  /// D = A B + C, m16n8k16. nvgpu.mma.sync for f16; for bf16, whose
  /// nvgpu lowering cannot name the PTX type, nvvm.mma.sync on the packed
  /// 32-bit registers.
  Value mma(Value a, Value bFrag, Value c);
};

/// Warpgroup MMA (sm_90a): each product issued and committed as one group
/// after a wgmma.fence, its registers the product's until a wait. Besides
/// the waited-for forms of ProductUnit, the issued ones, which the
/// overlapped loop interleaves with the softmax (FlashAttention-3's
/// section 3.2).
class WgmmaUnit final : public ProductUnit, CtaPrimitives {
public:
  explicit WgmmaUnit(const CtaPrimitives &cta) : CtaPrimitives(cta) {}
  Value rowsOperand(SharedTile tile) override;
  SmallVector<SmallVector<SmallVector<Value>>>
  rowProducts(ArrayRef<RowProduct> products) override;
  void accumulate(SmallVector<Value> &acc, ArrayRef<SmallVector<Value>> aFrags,
                  SharedTile streamed, int64_t width) override;
  void copiesLanded() override;

  /// rows x streamed^T issued, not waited for: the lane's 64 x blockN
  /// accumulators (WarpgroupMma.h).
  SmallVector<Value> issueRowProduct(const RowProduct &product);
  /// The register inputs of acc + A B: the accumulators `d` and the A
  /// registers of `aFrags` (the A fragments of the warp's m16 tile),
  /// fenced (fenceOperands): built before the wgmma.fence of the products
  /// that read them.
  struct StreamOperands {
    SmallVector<Value> d, a;
  };
  StreamOperands streamOperands(ArrayRef<Value> d, ValueRange aFrags);
  /// `operands.d` (64 x `width` accumulators) + A B issued (after a
  /// wgmma.fence with `fence`), not waited for: A the registers
  /// `operands.a` (four a k16 slice), B the s.blockN rows of the tile at
  /// `streamOffset`, MN-major.
  SmallVector<Value> issueStreamProduct(const StreamOperands &operands,
                                        Value streamOffset, int64_t width,
                                        bool fence);

private:
  /// The K-major descriptor of the rows of a blocked tile from byte
  /// `byteOffset` of the dynamic shared memory.
  Value rowsDescriptor(Value byteOffset);
};

/// The product unit `unit` (the kernel plan's, KernelShape::matrixUnit) of
/// the CTA that `cta` set up.
std::unique_ptr<ProductUnit> createProductUnit(const CtaPrimitives &cta,
                                               MatrixUnit unit);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_PRODUCTUNIT_H
