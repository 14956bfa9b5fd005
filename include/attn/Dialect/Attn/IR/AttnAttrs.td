//===- AttnAttrs.td - Target and schedule attributes -------*- tablegen -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/EnumAttr.td"

class Attn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Target
//===----------------------------------------------------------------------===//

def Attn_TargetAttr : Attn_Attr<"Target", "target"> {
  let summary = "The GPU a module is compiled for, and the limits schedules must fit";
  let description = [{
    Describes the GPU that schedule selection and code generation target:
    its architecture (`chip`, an NVPTX SM name such as `sm_80`, `sm_90` or
    `sm_90a`), the number of streaming multiprocessors, the shared memory a
    single block may use (the opt-in maximum), the shared memory and 32-bit
    registers of one SM, and the most registers one thread may hold.

    It is attached to a module as the dialect attribute `attn.target`.
    Counts (`sms`, `smem_per_sm`, `regs_per_sm`) are at most 2^31 - 1.

    Example (an H100 SXM):

    ```mlir
    module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
        smem_per_block = 232448, smem_per_sm = 233472,
        regs_per_sm = 65536, regs_per_thread = 255>} {
    }
    ```
  }];
  let parameters = (ins
    StringRefParameter<"NVPTX architecture, e.g. sm_80, sm_90a">:$chip,
    "int64_t":$sms,
    "int64_t":$smem_per_block,
    "int64_t":$smem_per_sm,
    "int64_t":$regs_per_sm,
    "int64_t":$regs_per_thread
  );
  let extraClassDeclaration = [{
    /// The compute capability encoded in `chip`, e.g. 90 for "sm_90a".
    int64_t getComputeCapability() const;
    /// Whether `chip` names an architecture-specific variant ("sm_90a").
    bool isArchSpecific() const;
  }];
}

def Attn_ClusterAttr : Attn_Attr<"Cluster", "cluster"> {
  let summary = "The ranks an attention may be distributed over and the links between them";
  let description = [{
    Describes the ranks (devices, MPI processes) a module's attentions may be
    distributed over, for schedule selection: `ranks` in all, in nodes of
    `ranks_per_node` consecutive ranks; each rank's link bandwidth (GB/s,
    each way) and latency (ns) inside a node and across nodes. The defaults
    describe H100 SXM nodes: 8 GPUs on NVLink 4 (450 GB/s, 3 us assumed per
    message) and one 400 Gb/s InfiniBand NDR port per GPU (50 GB/s, 6 us
    assumed) across nodes.

    It is attached to a module as the dialect attribute `attn.cluster`.
    `attn-select-schedule` then gives every attention that can be
    distributed the cheapest of ring attention and ATTENTION2D on each
    `R x C = ranks` grid by the communication time the traffic model
    predicts on these links (zig-zag shards when causal), and
    `attn-print-plan` reports the candidates.

    ```mlir
    module attributes {attn.cluster = #attn.cluster<ranks = 16>} {}
    module attributes {attn.cluster = #attn.cluster<ranks = 64,
        ranks_per_node = 1, network_gbps = 50>} {}
    ```
  }];
  let parameters = (ins
    "int64_t":$ranks,
    DefaultValuedParameter<"int64_t", "8">:$ranks_per_node,
    DefaultValuedParameter<"int64_t", "450">:$node_gbps,
    DefaultValuedParameter<"int64_t", "3000">:$node_latency_ns,
    DefaultValuedParameter<"int64_t", "50">:$network_gbps,
    DefaultValuedParameter<"int64_t", "6000">:$network_latency_ns
  );
}

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

def Attn_Fa2TilesAttr : Attn_Attr<"Fa2Tiles", "fa2"> {
  let summary = "FlashAttention-2 tiling: block sizes, warps and pipeline stages";
  let description = [{
    The FlashAttention-2 forward schedule of one thread block (CTA): it owns
    `block_m` query rows of one (batch, head) and loops over the key/value
    range in blocks of `block_n` keys. Its `warps` split the query rows
    (split-Q): each warp owns `block_m / warps` rows, a multiple of 16 so that
    it maps onto m16n8k16 tensor-core fragments. K and V tiles are staged in
    shared memory through a pipeline of `stages` buffers.

    GQA packing: with `packed_heads = p` (default 1), the rows a CTA owns
    come from `p` query heads that share a key/value head, head after head:
    the tiles of an attention with Hq query heads and Sq queries run over
    `p * Sq` rows of `Hq / p` heads, row `r` of tiled head `t` being query
    `r mod Sq` of head `t * p + r / Sq`. Each K and V block a CTA loads then
    serves `p` heads instead of one, and a decode step (Sq = 1) fills a
    64-row block with `p` useful rows instead of one. `p` must divide the
    group size Hq / Hkv; the attention must have no mask operand, block
    mask or frame (their rows are a head's rows). Masks by position and the
    score region see each row's own head and query (the op's verifier and
    the decomposition; FlashAttention-3's PackGQA packs the same rows).

    Constraints: `block_m` is a positive multiple of `16 * warps`; `block_n`
    a positive multiple of 16; both at most 4096 (a 4096 x 4096 f32 score
    tile is already 64 MiB; no target runs a larger one); `warps` a power of
    two from 1 to 16; `stages` from 1 to 16; `packed_heads` from 1 to 4096.

    ```mlir
    #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>
    #attn.fa2<block_m = 64, block_n = 128, warps = 4, stages = 2, packed_heads = 4>
    ```
  }];
  let parameters = (ins
    "int64_t":$block_m,
    "int64_t":$block_n,
    "int64_t":$warps,
    "int64_t":$stages,
    DefaultValuedParameter<"int64_t", "1">:$packed_heads
  );
  let extraClassDeclaration = [{
    /// The largest block_m and block_n, and the most stages.
    static constexpr int64_t kMaxBlock = 4096;
    static constexpr int64_t kMaxStages = 16;

    /// Query rows owned by each warp.
    int64_t getRowsPerWarp() const { return getBlockM() / getWarps(); }
  }];
}

//===----------------------------------------------------------------------===//
// The GPU kernel of an attention
//===----------------------------------------------------------------------===//

class Attn_KernelEnum<string name, string summary, list<I32EnumAttrCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MatrixUnit : Attn_KernelEnum<"MatrixUnit",
    "the matrix instructions of a kernel's two products", [
  I32EnumAttrCase<"MmaSync", 0, "mma_sync">,
  I32EnumAttrCase<"Wgmma", 1, "wgmma">]>;

def Attn_TileCopy : Attn_KernelEnum<"TileCopy",
    "how a tile comes from global to shared memory", [
  I32EnumAttrCase<"CpAsync", 0, "cp_async">,
  I32EnumAttrCase<"Tensor", 1, "tensor">]>;

def Attn_WarpRoles : Attn_KernelEnum<"WarpRoles",
    "whether a kernel's warps all compute or a producer warpgroup copies", [
  I32EnumAttrCase<"NoRoles", 0, "none">,
  I32EnumAttrCase<"Producer", 1, "producer">]>;

def Attn_KernelLoop : Attn_KernelEnum<"KernelLoop",
    "the form of a kernel's loop over key/value blocks", [
  I32EnumAttrCase<"Sequential", 0, "sequential">,
  I32EnumAttrCase<"Overlapped", 1, "overlapped">,
  I32EnumAttrCase<"PingPong", 2, "ping_pong">]>;

def Attn_OutputStore : Attn_KernelEnum<"OutputStore",
    "how O goes from shared to global memory", [
  I32EnumAttrCase<"Lanes", 0, "lanes">,
  I32EnumAttrCase<"Tensor", 1, "tensor">]>;

def Attn_KernelAttr : Attn_Attr<"Kernel", "kernel"> {
  let summary = "The GPU kernel of an attention: every decision beyond its tiles and partition";
  let description = [{
    What `attn-to-nvgpu` builds for an `attn.attention` besides its `tiles`
    (`#attn.fa2`: block sizes, warps, stages, GQA packing) and its
    `partition` (split count, Lean's CTAs). `attn-select-schedule` writes it
    for a module with an `#attn.target`; every later pass and the plan
    report read it and decide nothing again. A user may edit or write it:
    `attn-to-nvgpu` builds what it says or refuses it with the reason (a
    unit the chip lacks, tensor copies that do not fit shared memory, a
    ping-pong without two consumer warpgroups), never something else.

    - `unit`: `mma_sync` (a warp's m16n8k16 products, sm_80 and later) or
      `wgmma` (a warpgroup's m64nNk16 products, sm_90a).
    - `kv`: how K and V tiles arrive: `cp_async` from every thread, or
      `tensor` copies (`cp.async.bulk.tensor`) into `stages` buffers that an
      mbarrier each guards (wgmma only).
    - `q`: how the Q tile arrives: `cp_async`, or one `tensor` copy (needs
      `kv = tensor`).
    - `roles`: `none` (every warp computes; with tensor copies thread 0
      issues them) or `producer` (FlashAttention-3's warp specialisation: a
      producer warpgroup after the tiles' warps issues the copies; needs
      `kv = tensor`).
    - `loop`: `sequential` (FlashAttention-2's loop), `overlapped` (each
      block's softmax beside the previous block's P V; wgmma only) or
      `ping_pong` (overlapped, and the two consumer warpgroups take turns at
      the products; needs `roles = producer`).
    - `o`: how O leaves: `lanes` (every lane's 16-byte stores) or `tensor`
      stores (wgmma only).
    - `producer_registers`, `consumer_registers`, `entry_registers`: with
      `roles = producer`, what `setmaxnreg` gives a producer and a consumer
      thread and the kernel's `.maxnreg` at entry; all three or none (0:
      nothing moves). Multiples of 8 from 24 to 256.
    - `min_ctas_per_sm`: the CTAs an SM ptxas is held to (`.minnctapersm`;
      a persistent Lean kernel's CTAs must all be resident); 0: not held.

    ```mlir
    #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none,
                 loop = sequential, o = lanes>
    #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer,
                 loop = ping_pong, o = tensor, producer_registers = 24,
                 consumer_registers = 240, entry_registers = 168>
    ```
  }];
  let parameters = (ins
    EnumParameter<Attn_MatrixUnit>:$unit,
    EnumParameter<Attn_TileCopy>:$kv,
    EnumParameter<Attn_TileCopy>:$q,
    EnumParameter<Attn_WarpRoles>:$roles,
    EnumParameter<Attn_KernelLoop>:$loop,
    EnumParameter<Attn_OutputStore>:$o,
    DefaultValuedParameter<"int64_t", "0">:$producer_registers,
    DefaultValuedParameter<"int64_t", "0">:$consumer_registers,
    DefaultValuedParameter<"int64_t", "0">:$entry_registers,
    DefaultValuedParameter<"int64_t", "0">:$min_ctas_per_sm
  );
  let extraClassDeclaration = [{
    bool tensorCopies() const { return getKv() == TileCopy::Tensor; }
    bool queryTensorCopy() const { return getQ() == TileCopy::Tensor; }
    bool warpRoles() const { return getRoles() == WarpRoles::Producer; }
    bool overlapped() const { return getLoop() != KernelLoop::Sequential; }
    bool pingPong() const { return getLoop() == KernelLoop::PingPong; }
    bool outputTensorStore() const { return getO() == OutputStore::Tensor; }
    bool reallocatesRegisters() const { return getEntryRegisters() != 0; }
  }];
}

def Attn_SplitKVAttr : Attn_Attr<"SplitKV", "split_kv"> {
  let summary = "Split-KV (flash-decoding): the key/value range cut into `splits` parts";
  let description = [{
    Each of the `splits` parts covers a contiguous range of key/value blocks
    and produces a partial (O, LSE) state in f32; `attn.merge` combines them.
    A part whose range is empty or fully masked produces LSE = -inf.
    `splits` is from 1 to 2^31 - 1 (CUDA's largest grid dimension), and
    attn-partition-kv refuses more splits than the attention has key/value
    blocks.

    ```mlir
    #attn.split_kv<splits = 8>
    ```
  }];
  let parameters = (ins "int64_t":$splits);
}

def Attn_LeanAttr : Attn_Attr<"Lean", "lean"> {
  let summary = "Lean attention: stream-K over a fixed set of persistent CTAs";
  let description = [{
    The (output tile x key/value block) iteration space is laid out linearly
    and divided evenly over `ctas` persistent thread blocks, which must all be
    resident at once. The CTA computing the first block of an output tile
    (its host) merges the partials of the other CTAs that share the tile.
    `ctas` is from 1 to 2^31 - 1.

    ```mlir
    #attn.lean<ctas = 264>
    ```
  }];
  let parameters = (ins "int64_t":$ctas);
}

def Attn_Attention2DAttr : Attn_Attr<"Attention2D", "attention2d"> {
  let summary = "ATTENTION2D: queries and keys/values both partitioned over a device grid";
  let description = [{
    The `P = q_parts x kv_parts` ranks form a grid of `q_parts` rows and
    `kv_parts` columns (rank `r` is at row `r / kv_parts`, column
    `r % kv_parts`). `attn-distribute` turns the attention into the program
    of one rank, which holds a shard of `ceil(S / P)` tokens of Q, K, V, O
    and LSE (the last shards padded at the end when `P` does not divide the
    length):

    - Q, O and LSE shards in row-major rank order: rank `(i, j)` holds query
      shard `i * kv_parts + j`, so row `i` holds the contiguous query chunk
      `i`;
    - K and V shards in column-major rank order: rank `(i, j)` holds
      key/value shard `j * q_parts + i`, so column `j` holds the contiguous
      key/value chunk `j`.

    Rank `(i, j)` all-gathers query chunk `i` over its row and key/value
    chunk `j` over its column, computes the partial (O, LSE) of that chunk
    pair (masks and score region on the positions of the whole attention),
    and an all-to-all over the row followed by `attn.merge` leaves it the
    merged rows of its own query shard: the reduce-scatter with the
    log-sum-exp merge as the reduction.

    `zigzag = true` balances causal work: the queries are cut into
    `2 q_parts` blocks and query chunk `i` is blocks `i` and
    `2 q_parts - 1 - i`; the keys into `2 kv_parts` blocks and key/value
    chunk `j` is blocks `j` and `2 kv_parts - 1 - j`. A rank's shard is its
    piece of each of the two blocks (`2 ceil(S / 2P)` tokens, the first half
    from the earlier block). With `q_parts = kv_parts` and `Sq = Sk`, every
    rank then computes the same number of causal scores, where the
    contiguous layout leaves the ranks above the diagonal idle.

    ```mlir
    #attn.attention2d<q_parts = 2, kv_parts = 3>
    #attn.attention2d<q_parts = 4, kv_parts = 4, zigzag = true>
    ```
  }];
  let parameters = (ins "int64_t":$q_parts, "int64_t":$kv_parts,
                        DefaultValuedParameter<"bool", "false">:$zigzag);
  let extraClassDeclaration = [{
    int64_t getNumDevices() const { return getQParts() * getKvParts(); }
  }];
}

def Attn_RingAttr : Attn_Attr<"Ring", "ring"> {
  let summary = "Ring attention: key/value shards passed around a ring of ranks";
  let description = [{
    The `devices` ranks form a ring; rank `r` holds shard `r` of Q, K, V, O
    and LSE (`ceil(S / P)` tokens each, the last shards padded at the end).
    In step `t = 0 .. P - 1` rank `r` computes the partial (O, LSE) of its
    queries against the key/value shard `(r - t) mod P` it holds, merges it
    into its running result, and (except in the last step) passes that shard
    to rank `r + 1` and receives the next from rank `r - 1`. The baseline
    ATTENTION2D is compared with.

    `zigzag = true` balances causal work: Q, K and V are cut into `2P`
    blocks and rank `r` holds blocks `r` and `2P - 1 - r` (`2 ceil(S / 2P)`
    tokens, the first half from block `r`).

    ```mlir
    #attn.ring<devices = 4>
    #attn.ring<devices = 8, zigzag = true>
    ```
  }];
  let parameters = (ins "int64_t":$devices,
                        DefaultValuedParameter<"bool", "false">:$zigzag);
}

/// The work partitions an `attn.attention` accepts in its `partition` attribute.
def Attn_PartitionAttr : AnyAttrOf<[Attn_SplitKVAttr, Attn_LeanAttr,
                                    Attn_Attention2DAttr, Attn_RingAttr]>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
