// K and V by tensor copies (kvTensorCopiesUnfit): in the wgmma loops
// thread 0 issues each copy group's cp.async.bulk.tensor boxes (64
// columns by block_n keys of the K or V tensor map, which the kernel takes
// after its other parameters) and the bytes they bring on the mbarrier of
// the group's stage; every thread waits for the phase by its parity. The
// mbarriers, after the tiles in shared memory, live for a key/value range.
// Q comes by a tensor copy too (a box of block_m rows of its map, on an
// mbarrier of its own after the stages'), but with GQA packing or in a
// persistent kernel. The targets of the decode and block-mask cases leave
// no room for the warp roles' empty mbarriers (16 bytes past the full
// ones), so thread 0 issues the copies between the step's barrier and its
// wait (warp-roles.mlir has the producer warpgroup).
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize | FileCheck %s

// A decode of 4 blocks of 64 keys in 2 stages: Q (8 KiB), 2 K and 2 V tiles
// (8 KiB each), then 2 mbarriers and Q's.
// CHECK-LABEL: gpu.func @decode_attention0(
// CHECK-SAME: %{{[a-z0-9]+}}: memref<1x8x64x64xf16>, %arg4: !llvm.ptr, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: !llvm.ptr) kernel
// CHECK-SAME: dynamic_shared_memory = 40984 : i64
// CHECK-NOT: producer_warps
// CHECK-SAME: tensor_maps = [{box = array<i64: 64, 64, 1, 1>, name = "k_map", param = 1 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "v_map", param = 2 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "o_map", param = 3 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "q_map", param = 0 : i64, swizzle = 128 : i64}]
// Thread 0 initialises Q's mbarrier (at byte 40976), makes the init visible
// to the copy engine and copies Q's 64 x 64 tile (8 KiB, one box).
// CHECK: %[[THREAD:.+]] = gpu.thread_id x
// CHECK: %[[SHARED:.+]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[AT0:.+]] = arith.addi %[[SHARED]], %c40960
// CHECK: arith.cmpi eq, %[[THREAD]], %c0
// CHECK: arith.addi %[[SHARED]], %c40976
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg7, %{{.+}}, box[%c0_i32,
// Thread 0 initialises the stages' mbarriers (one arrival a phase: its own).
// CHECK: arith.cmpi eq, %[[THREAD]], %c0
// CHECK: arith.index_castui %[[AT0]]
// CHECK-NEXT: %[[BARRIER0:.+]] = llvm.inttoptr
// CHECK-NEXT: nvvm.mbarrier.init %[[BARRIER0]], %c1_i32
// CHECK: arith.addi %[[SHARED]], %c40968
// CHECK: nvvm.mbarrier.init
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// Group 0 is K of block 0 alone (8 KiB), into K's stage 0 at byte 8192:
// the box at column 0, key 0, the head (ctaid.z) and batch (ctaid.y).
// CHECK: arith.cmpi eq, %[[THREAD]], %c0
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c8192_i32
// CHECK: arith.addi %[[SHARED]], %c8192
// CHECK: llvm.addrspacecast %{{.+}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg4, %{{.+}}, box[%c0_i32, %c0_i32, %{{.+}}, %{{.+}}]
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// Every thread waits for Q after a barrier (which orders thread 0's init
// before the wait; no proxy fence: the copy engine wrote Q); then step 0's
// barrier, group 1 (K of block 1, V of block 0: 16 KiB) is issued, and
// every thread waits for group 0: stage 0's phase 0.
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg4, %{{.+}}, box[%c0_i32, %c64_i32,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg5, %{{.+}}, box[%c0_i32, %c0_i32,
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK: nvvm.wgmma.fence.aligned
// Steps 1 to 3: group r + 1 where it exists (r + 1 <= 4), each copy only
// where its block does, then the wait for group r: stage r % 2, parity
// (r / 2) % 2.
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg4,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg5,
// CHECK: arith.divui %{{.+}}, %c2
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: scf.yield
// The last step (P V of block 3) issues nothing and waits for group 4:
// stage 0's phase 2.
// CHECK: gpu.barrier
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK: nvvm.wgmma.fence.aligned
// After the range's last wait, thread 0 invalidates the stages' mbarriers;
// every thread waits for Q once more (at once here: a range without blocks
// would not have waited for it before O's epilogue reuses its tile).
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.inval
// CHECK: nvvm.mbarrier.inval
// CHECK-NOT: nvvm.mbarrier.inval
// CHECK: gpu.barrier
// CHECK-NEXT: arith.addi %[[SHARED]], %c40976
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 40984, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @decode(%q: tensor<1x8x64x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x64x64xf16>) -> tensor<1x8x64x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x64x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x64x64xf16>
    return %r : tensor<1x8x64x64xf16>
  }
}

// -----

// With per-sequence key lengths the tiles come by tensor copies as well
// (from a producer warpgroup here, 41008 bytes: the tiles' 40960, two
// full and two empty mbarriers, Q's and the issuing thread's). In the
// overlapped loop the producer's groups go straight to the full
// mbarriers (it initialises none of its own in its loop), and the
// consumers zero V's keys past the sequence's end in the last step, 16
// bytes a store, a consumer thread every 2048 bytes, fence the zeros for
// the async proxy and meet at their barrier before the last P V. No
// cp.async.
// CHECK-LABEL: gpu.func @ragged_attention0(
// CHECK-SAME: dynamic_shared_memory = 41008 : i64
// CHECK-SAME: name = "k_map"
// CHECK-SAME: name = "v_map"
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: scf.for
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c2048 {
// CHECK: llvm.store {{.+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @ragged(%q: tensor<3x8x64x64xf16>, %k: tensor<3x8x256x64xf16>, %lengths: tensor<3xi32>, %o: tensor<3x8x64x64xf16>) -> tensor<3x8x64x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<3x8x64x64xf16>, tensor<3x8x256x64xf16>, tensor<3x8x256x64xf16>)
        key_lengths(%lengths : tensor<3xi32>)
        outs(%o : tensor<3x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<3x8x64x64xf16>
    return %r : tensor<3x8x64x64xf16>
  }
}

// -----

// In the sequential loop (a block mask keeps it) the copy group that holds
// a sequence's end takes a detour instead: the issuing thread initialises
// an mbarrier of its own (the sixth), lands the group's copies on it and
// waits for them, zeroes K's and V's keys past the end (16 bytes a store),
// fences the zeros for the async proxy, invalidates its mbarrier and only
// then arrives on the stage's full one. Other groups go straight to the
// full mbarrier.
// CHECK-LABEL: gpu.func @ragged_blocks_attention0(
// CHECK-SAME: dynamic_shared_memory = 41008 : i64
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.mbarrier.init [[OWN:%.+]], %c1_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.arrive.expect_tx [[OWN]]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.+}}, [[OWN]], box
// CHECK: nvvm.mbarrier.try_wait.parity [[OWN]], %c0_i32
// CHECK: llvm.store {{.+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>
// CHECK-NEXT: nvvm.mbarrier.inval [[OWN]]
// CHECK-NEXT: nvvm.mbarrier.arrive [[FULL:%.+]] :
// CHECK: } else {
// CHECK: nvvm.mbarrier.arrive.expect_tx [[FULL]]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @ragged_blocks(%q: tensor<3x8x64x64xf16>, %k: tensor<3x8x256x64xf16>, %lengths: tensor<3xi32>, %bm: tensor<3x8x1x4xi8>, %o: tensor<3x8x64x64xf16>) -> tensor<3x8x64x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<3x8x64x64xf16>, tensor<3x8x256x64xf16>, tensor<3x8x256x64xf16>)
        block_mask(%bm : tensor<3x8x1x4xi8> blocks [64, 64]) key_lengths(%lengths : tensor<3xi32>)
        outs(%o : tensor<3x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<3x8x64x64xf16>
    return %r : tensor<3x8x64x64xf16>
  }
}

// -----

// The sequential wgmma loop (a block mask keeps it) takes its tiles by
// tensor copies too: Q's wait before the loop, then group n (K and V of
// block n, 16 KiB) from thread 0 after the step's barrier into stage n % 2,
// then the wait for block n's group, and no second barrier before the
// products.
// CHECK-LABEL: gpu.func @sparse_attention0(
// CHECK-NOT: producer_warps
// CHECK-SAME: tensor_maps = [{box = array<i64: 64, 64, 1, 1>, name = "k_map"
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg5, %{{.+}}, box[%c0_i32, %c0_i32,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg6, %{{.+}}, box[%c0_i32, %c0_i32,
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32,
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg5,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg6,
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.inval
// CHECK: nvvm.mbarrier.inval
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 40984, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @sparse(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x256x64xf16>, %blocks: tensor<1x1x2x4xi8>, %o: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x128x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        block_mask(%blocks : tensor<1x1x2x4xi8> blocks [64, 64])
        outs(%o : tensor<1x8x128x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x128x64xf16>
    return %r : tensor<1x8x128x64xf16>
  }
}

// -----

// The mma.sync body (two m16 tiles a warp: no warpgroup product) keeps
// cp.async: its tiles keep whole rows, not the boxes' 64-column blocks.
// CHECK-LABEL: gpu.func @two_tiles_attention0(
// CHECK-NOT: tensor_maps
// CHECK-NOT: mbarrier
// CHECK: nvgpu.device_async_copy %arg1
// CHECK-NOT: mbarrier
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @two_tiles(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x128x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x128x64xf16>)
        {tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x128x64xf16>
    return %r : tensor<1x8x128x64xf16>
  }
}
