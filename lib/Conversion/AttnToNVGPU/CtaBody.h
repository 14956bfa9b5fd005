//===- CtaBody.h - What one CTA of an attention kernel computes -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// The interface between the kernel skeletons (KernelSkeletons.cpp), which map
// a schedule's work onto CTAs, and the CTA body, which computes an output
// tile's attention over a range of key/value blocks with a target's matrix
// instructions. The skeletons see the body's state only through this
// interface, so a body that restructures the loop (FlashAttention-3's
// warp-specialised pipeline) plugs into every skeleton unchanged. The first
// body is Fa2CtaBody (FlashAttention-2's loop on mma.sync or wgmma, and
// FlashAttention-3's overlapped loop on wgmma).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVGPU_CTABODY_H
#define ATTN_LIB_CONVERSION_ATTNTONVGPU_CTABODY_H

#include "attn/Analysis/AttentionProblem.h"
#include "attn/Analysis/Fa2Defaults.h"
#include "attn/Analysis/MaskGeometry.h"
#include "attn/Analysis/MatrixUnit.h"
#include "attn/Transforms/IndexArith.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <memory>

namespace mlir::attn {

constexpr int64_t kWarpSize = 32;
/// Elements of a 16-byte chunk of 16-bit values: one cp.async, one row of an
/// ldmatrix 8x8 matrix.
constexpr int64_t kChunk = 8;
/// Columns of a block of a shared-memory tile: 64 16-bit elements, one
/// 128-byte row of the swizzle (CtaPrimitives::tileIndex).
constexpr int64_t kBlockColumns = 64;

/// Everything the kernel is specialised for.
struct KernelShape {
  /// Batch, Sq and Sk are ShapedType::kDynamic when the kernel takes them at
  /// run time (KernelLengths).
  AttentionProblem problem;
  Type element;
  int64_t blockM, blockN, warps;
  /// Shared-memory buffers of K and V (of the backward kernel's streamed
  /// tiles): 1, or 2 to load the next block while the current one is
  /// computed.
  int64_t stages;
  float scaleLog2;
  /// Score modification, in natural units before the masks: the softcap,
  /// then the op's score region (scalar arith and math operations, checked
  /// by attn-to-nvgpu), each when present.
  float scale = 1.0f;
  std::optional<float> softcap;
  Region *scoreRegion = nullptr;
  /// The block mask's blocks (Bq rows, Bk keys), which the tiles nest in;
  /// 0 without a block mask. Empty blocks are skipped, full ones read no
  /// mask operand.
  int64_t blockMaskRows = 0, blockMaskKeys = 0;
  /// A constant block mask's values ([B or 1, Hq or 1, Nq, Nk] i8, a table
  /// in the kernel's module); null when the kernel takes its block mask as
  /// the block_mask parameter (run-time values and lengths).
  DenseElementsAttr blockMaskValues;
  /// The mask operand's element type: i1 (a boolean mask) or a float (an
  /// additive one); null without a mask operand.
  Type maskElement;
  bool withLse;
  /// Per-sequence key lengths (key_lengths): each CTA's Sk is its
  /// sequence's.
  bool keyLengths = false;
  /// Lean attention's persistent CTAs; 0 for FlashAttention-2's grid.
  int64_t leanCtas = 0;
  /// Split-KV's pieces of each output tile's key/value blocks; 1 for
  /// FlashAttention-2's grid.
  int64_t splits = 1;
  /// The kernel's plan (#attn.kernel: the op's, or planKernel's,
  /// KernelPlan.h); the accessors below read it, so the kernel is built from
  /// the decisions the IR states and from nothing else.
  KernelAttr kernel;

  /// The matrix instructions of the CTA body's two products.
  MatrixUnit matrixUnit() const { return kernel.getUnit(); }
  /// With wgmma: whether each block's softmax runs beside the previous
  /// block's P V, or the products are waited for in turn as on mma.sync.
  bool overlapSoftmax() const { return kernel.overlapped(); }
  /// With wgmma: whether K and V come by tensor copies into stages that an
  /// mbarrier each guards, or by cp.async from every thread. The kernel
  /// then takes a tensor map of K and one of V (kernelTensorMaps,
  /// KernelAbi.h); the backward kernel, whose tiles all come so, maps of Q,
  /// K, V and dO (gradKernelTensorMaps).
  bool tensorCopies() const { return kernel.tensorCopies(); }
  /// With tensor copies: the producer warpgroup's warps (kProducerWarps,
  /// after the `warps` consumer warps), 0 when every warp computes; and the
  /// registers setmaxnreg gives each role.
  int64_t producerWarps() const {
    return kernel.warpRoles() ? kProducerWarps : 0;
  }
  WarpRoleRegisters roleRegisters() const {
    return {kernel.getEntryRegisters(), kernel.getProducerRegisters(),
            kernel.getConsumerRegisters()};
  }
  /// With warp roles and the overlapped loop: whether the two consumer
  /// warpgroups take turns at issuing a step's products.
  bool pingPong() const { return kernel.pingPong(); }
  /// With wgmma: whether O goes from its shared-memory tile to global
  /// memory by tensor stores, through a tensor map of O
  /// (kernelTensorMaps), or by every lane's 16-byte stores.
  bool outputTensorStore() const { return kernel.outputTensorStore(); }
  /// With tensor copies: whether Q comes by one tensor copy that thread 0
  /// issues, completing on an mbarrier of its own after the stages' (a
  /// persistent CTA initialises it again for each of its tiles), through a
  /// tensor map of Q (kernelTensorMaps), or by every consumer thread's
  /// cp.async.
  bool queryTensorCopy() const { return kernel.queryTensorCopy(); }
  /// The CTAs of a persistent kernel each SM of the target must hold at
  /// once (ceil(leanCtas / SMs)), which ptxas is held to (.minnctapersm); 0
  /// when not held.
  int64_t residentCtasPerSm() const { return kernel.getMinCtasPerSm(); }

  bool modifiesScores() const { return softcap || scoreRegion; }
  bool warpSpecialised() const { return producerWarps() != 0; }
  bool hasBlockMask() const { return blockMaskRows != 0; }
  /// Whether the block mask is the kernel's block_mask parameter.
  bool blockMaskParameter() const { return hasBlockMask() && !blockMaskValues; }
  /// The block's threads, and those of the warps that compute (the tiles'
  /// warps).
  int64_t threads() const { return kWarpSize * (warps + producerWarps()); }
  int64_t consumerThreads() const { return kWarpSize * warps; }
  /// m16 tiles each warp owns.
  int64_t mTiles() const { return blockM / (16 * warps); }
  /// Query blocks per (batch, tiled head); with static lengths only.
  int64_t queryBlocks() const { return problem.queryBlocks(blockM); }
  Fa2Tiling tiling() const {
    return {blockM, blockN, warps, stages, problem.packedHeads};
  }
  /// Elements of a shared-memory row of Q and K, of V, and of the Q tile,
  /// which also stages the O block (fa2SharedRowElements: D and Dv padded
  /// to 64).
  int64_t keyRow() const { return fa2SharedRowElements(problem.headDim); }
  int64_t valueRow() const { return fa2SharedRowElements(problem.valueDim); }
  int64_t queryRow() const { return std::max(keyRow(), valueRow()); }
  /// Bytes of dynamic shared memory: the Q block and `stages` K and V
  /// tiles, then the mbarriers (wgmmaSharedBytes; the "full" ones at
  /// tileBytes()).
  int64_t tileBytes() const {
    return fa2SharedMemoryBytes(tiling(), problem.headDim, problem.valueDim,
                                /*elementBytes=*/2);
  }
  int64_t sharedBytes() const {
    return wgmmaSharedBytes(tileBytes(), stages, tensorCopies(),
                            warpSpecialised(), keyLengths);
  }
  /// Whether some score needs an element mask (causal, window, or a tail of
  /// keys past Sk in the last block, which a run-time Sk or a sequence's key
  /// length may have).
  bool needsElementMask() const {
    return problem.masksByPosition() || keyLengths ||
           ShapedType::isDynamic(problem.keyLen) ||
           problem.keyLen % blockN != 0;
  }
};

/// The lengths the kernel computes with, as values of its entry block:
/// constants when the attention's are static, else read from the kernel's
/// arguments; with key lengths, keyLen is the CTA's sequence's.
struct KernelLengths {
  Value batch, queryLen, keyLen;
};

/// The tensors the CTA body reads key/value block by block, as memrefs: K
/// and V, and when the attention has them the mask operand ([B or 1, Hq or
/// 1, Sq, Sk]) and the block mask parameter ([B or 1, Hq or 1, Nq, Nk] i8;
/// null for a constant block mask, which the body reads from its table).
struct KeyValueOperands {
  Value k, v, mask, blockMask;
  /// With tensor copies (KernelShape::tensorCopies), the generic addresses
  /// of K's and V's tensor maps (kernelTensorMaps' boxes).
  Value kMap, vMap;
};

/// Where storeOutput writes: O, LSE when the kernel returns it, and with
/// KernelShape::outputTensorStore the generic address of O's tensor map.
struct OutputOperands {
  Value o, lse, oMap;
};

/// Whether a CTA body can inline `op` of a score region: a scalar arith
/// operation, one of the math operations it lowers to the hardware's
/// approximations (tanh, exp, exp2, log, log2, absf, sqrt), a constant
/// tensor, or a tensor.extract from one (a table in the kernel's global
/// memory).
bool isInlinableScoreOp(Operation &op);

/// The running attention of the rows of one output tile, as a body holds it
/// (its registers, in its own layout). The skeletons carry it from one of
/// the body's calls to the next without looking inside.
struct CtaState {
  SmallVector<Value> values;
  /// Whether the state's row sums are whole rows' (mergePartials') or each
  /// thread's share of its rows' (initialState's and runKvRange's, which
  /// leave the reduction to the epilogue).
  bool wholeRowSums = false;
};

/// What one CTA computes, for every schedule's kernel skeleton: the
/// FlashAttention-2 forward over a range of key/value blocks of an output
/// tile, its epilogues (O and LSE, or a normalised partial), and the
/// log-sum-exp merge of partials from the schedule's workspace. `b` inserts
/// into the kernel body. The workspace layout is the skeletons' (KernelAbi:
/// a slot's partial O is [block_m, Dv] f32, its LSE [block_m] f32, rows as
/// the output tile's), so partials written by one CTA are merged by another.
class CtaBody {
public:
  virtual ~CtaBody() = default;

  /// Per-thread values and shared memory, at the kernel's entry: first,
  /// before the other calls.
  virtual void setUp(const KernelLengths &lengths) = 0;

  /// The masking geometry of the attention's tiled rows, as IR, with the
  /// lengths setUp was given.
  virtual MaskGeometry<IndexArith> geometry() = 0;

  /// Starts loading tiled rows [row0, row0 + block_m) of tiled head `head`
  /// of Q[batch] (a head's rows without GQA packing; MaskGeometry.h), by
  /// Q's tensor map `qMap` where the kernel has one; returns what
  /// runKvRange waits on.
  virtual Value loadQueryBlock(Value q, Value qMap, Value batch, Value head,
                               Value row0) = 0;

  /// The state before any key: O = 0, m = -inf, l = 0 (storeOutput gives
  /// O = 0 and LSE = -inf for it).
  virtual CtaState initialState() = 0;

  /// The FlashAttention-2 loop over key/value blocks [blockBegin, blockEnd)
  /// of (batch, kvHead) for the `rows` tiled rows of the query block at row0
  /// of tiled head `head` (loaded by loadQueryBlock as `query`), reading
  /// `kv`: with the score modification of the shape, the block mask's empty
  /// blocks skipped, the mask operand applied outside its full blocks, and
  /// MaskGeometry's element masks on the blocks that straddle a mask
  /// boundary. No copy is in flight afterwards.
  virtual CtaState runKvRange(const KeyValueOperands &kv, Value query,
                              Value batch, Value head, Value kvHead, Value row0,
                              Value rows, Value blockBegin, Value blockEnd) = 0;

  /// O = acc / l into the tiled rows row0... of tiled head `head` of
  /// O[batch] (rows below p Sq) in the element type, and LSE = (m + log2 l)
  /// ln 2 when `out.lse` is given; rows that saw no key get 0 and -inf.
  virtual void storeOutput(const CtaState &state, const OutputOperands &out,
                           Value batch, Value head, Value row0) = 0;

  /// Writes the normalised partial of `state` (the output tile whose first
  /// tiled row is `row0`) into workspace slot `slot`: O / l into
  /// partialO[slot] and its LSE into partialLse[slot], for the tile's rows
  /// that are query rows only (a decode tile holds few).
  virtual void storePartial(const CtaState &state, Value partialO,
                            Value partialLse, Value slot, Value row0) = 0;

  /// The log-sum-exp merge of this CTA's partial (`state`, first) with the
  /// partials in workspace slots first..last (inclusive), in slot order, as
  /// a state for storeOutput, for the query rows of the tile at `row0` (the
  /// other rows keep `state`'s values, which storeOutput does not write).
  /// Deterministic: the order is fixed, whoever finished first.
  virtual CtaState mergePartials(const CtaState &state, Value partialO,
                                 Value partialLse, Value first, Value last,
                                 Value row0) = 0;

  /// Between two output tiles of one CTA (a persistent kernel's pieces):
  /// waits until the previous tile's epilogue is done with the shared memory
  /// the next tile's query block is loaded into.
  virtual void finishTile() = 0;
};

/// Which warps of the CTA a body is built for (WarpRoles.h): all of them,
/// or, in a warp-specialised kernel, the producer warpgroup (whose body
/// issues each range's tensor copies and leaves the rest to the consumers)
/// or the consumer warps.
enum class WarpRole { All, Producer, Consumer };

/// The CTA body for `shape` and `role`: Fa2CtaBody, the only one yet, its
/// products on the shape's matrix unit.
std::unique_ptr<CtaBody> createCtaBody(ImplicitLocOpBuilder &b,
                                       const KernelShape &shape, WarpRole role);

} // namespace mlir::attn

#endif // ATTN_LIB_CONVERSION_ATTNTONVGPU_CTABODY_H
