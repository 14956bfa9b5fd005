// FlashAttention-3's warp roles (warpRolesUnfit): with tensor copies, a
// producer warpgroup after the consumer warps issues every copy group of a
// key/value range, each once the consumers have released its stages (an
// "empty" mbarrier a stage, one arrival per consumer thread); the consumers
// wait for the "full" mbarrier of a group's stage and compute. The skeleton
// is built once per role, in a branch each; CTA barriers both roles pass
// are barrier.sync without .aligned, the consumers' own barriers a named
// barrier.
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize | FileCheck %s

// A decode of 4 blocks of 64 keys on one consumer warpgroup: its 40 KiB of
// tiles let two CTAs share an SM with a consumer keeping the registers the
// overlap needs (planWgmmaBody), so the kernel starts at 128 registers a
// thread (.maxnreg), the producer keeps 24 and the consumers take 232; the
// full mbarriers at 40960, the empty ones at 40976, Q's at 40992.
// CHECK-LABEL: gpu.func @decode_attention0(
// CHECK-SAME: block = array<i64: 256, 1, 1>, dynamic_shared_memory = 41000 : i64
// CHECK-SAME: producer_warps = 4 : i64
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// CHECK: %[[THREAD:.+]] = gpu.thread_id x
// CHECK-NEXT: %[[PRODUCER:.+]] = arith.cmpi uge, %[[THREAD]], %c128
// CHECK-NEXT: scf.if %[[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 24
// The producer's first thread (thread 128) initialises the mbarriers of the
// range; a CTA barrier of both roles follows.
// CHECK: arith.cmpi eq, %{{.+}}, %c128
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.+}}, %c128_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"(%c0_i32)
// Groups 0 to 4 (the overlapped loop: K of block g, V of block g - 1), each
// after the wait for phase g / 2 - 1 of stage g % 2's empty mbarrier
// (parity (g / 2 + 1) % 2).
// CHECK: arith.cmpi eq, %{{.+}}, %c128
// CHECK: scf.for %[[G:.+]] = %c0 to %c5 step %c1 {
// CHECK: %[[ROUND:.+]] = arith.divui %[[G]], %c2
// CHECK-NEXT: %[[NEXT:.+]] = arith.addi %[[ROUND]], %c1
// CHECK-NEXT: %[[PARITY:.+]] = arith.remui %[[NEXT]], %c2
// CHECK-NEXT: %[[P32:.+]] = arith.index_castui %[[PARITY]] : index to i32
// CHECK: arith.addi %{{.+}}, %c2
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %[[P32]], %c10000000_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg4,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg5,
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"(%c0_i32)
// CHECK: nvvm.mbarrier.inval
// CHECK: nvvm.mbarrier.inval
// CHECK: nvvm.mbarrier.inval
// CHECK: nvvm.mbarrier.inval
// CHECK-NOT: nvvm.wgmma
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// The consumers' thread 0 initialises Q's mbarrier and copies Q (one box
// of Q's map, 8 KiB); the consumers pass the CTA barrier after the inits,
// meet at their named barrier (which orders Q's init before their wait),
// wait for Q, and wait for group 0 without a barrier a step; each step
// ends with every consumer thread's arrival on the empty mbarrier of the
// group's stage.
// CHECK: arith.cmpi eq, %{{.+}}, %c0
// CHECK: nvvm.mbarrier.init %{{.+}}, %c1_i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg7,
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"(%c0_i32)
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3> -> i64
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.mbarrier.arrive
// CHECK-NEXT: scf.yield
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive
// After the range, the CTA barrier the producer's invalidation waits for;
// then Q's wait once more (after the consumers' barrier: a range without
// blocks would not have waited before O's epilogue reuses its tile), and
// the epilogue's barriers are the consumers'.
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"(%c0_i32)
// CHECK-NOT: nvvm.mbarrier.inval
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.+}}, %c0_i32, %c10000000_i32
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @decode(%q: tensor<1x8x64x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x64x64xf16>) -> tensor<1x8x64x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x64x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x64x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x64x64xf16>
    return %r : tensor<1x8x64x64xf16>
  }
}

// -----

// Two consumer warpgroups (128 x 128, 8 warps): 384 threads, 168 registers
// a thread at entry (.maxnreg), the producer down to 24, the consumers up
// to 240 (FlashAttention-3's numbers); 256 consumer threads arrive on each
// empty mbarrier. The warpgroups take turns at the products (the
// ping-pong): warpgroup w's turn is named barrier 2 + w over both
// warpgroups' 256 threads; warpgroup 0 opens by arriving on its own turn,
// each step issues between the sync on its turn and the arrival on the
// other's, and warpgroup 0 closes by taking warpgroup 1's last turn.
// CHECK-LABEL: gpu.func @prefill_attention0(
// CHECK-SAME: block = array<i64: 384, 1, 1>
// CHECK-SAME: producer_warps = 4 : i64
// CHECK-SAME: nvvm.maxnreg = 168 : i32
// CHECK: arith.cmpi uge, %{{.+}}, %c256
// CHECK-NEXT: scf.if
// CHECK-NEXT: nvvm.setmaxregister decrease 24
// CHECK: nvvm.mbarrier.init %{{.+}}, %c256_i32
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 240
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.+}}, %arg7, %{{.+}}, box[%c64_i32,
// CHECK-NEXT: }
// CHECK-NEXT: %[[WG:.+]] = arith.divui %{{.+}}, %c4 : index
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"
// CHECK-NEXT: %[[FIRST:.+]] = arith.cmpi eq, %[[WG]], %c0 : index
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[W32:.+]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: %[[OWN:.+]] = arith.addi %[[W32]], %c2_i32 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[OWN]] number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: %[[T32:.+]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: %[[TURN:.+]] = arith.addi %[[T32]], %c2_i32 : i32
// CHECK-NEXT: nvvm.barrier id = %[[TURN]] number_of_threads = %c256_i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[OTHER:.+]] = arith.subi %c1, %[[WG]] : index
// CHECK-NEXT: %[[O32:.+]] = arith.index_castui %[[OTHER]] : index to i32
// CHECK-NEXT: %[[PASS:.+]] = arith.addi %[[O32]], %c2_i32 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[PASS]] number_of_threads = %c256_i32
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The last step, then warpgroup 0 takes the last turn.
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.arrive
// CHECK-NEXT: %[[LAST:.+]] = arith.cmpi eq, %[[WG]], %c0 : index
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: %[[C32:.+]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: %[[CLOSE:.+]] = arith.addi %[[C32]], %c2_i32 : i32
// CHECK-NEXT: nvvm.barrier id = %[[CLOSE]] number_of_threads = %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.all"
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @prefill(%q: tensor<1x8x256x128xbf16>, %k: tensor<1x8x256x128xbf16>, %o: tensor<1x8x256x128xbf16>) -> tensor<1x8x256x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x256x128xbf16>, tensor<1x8x256x128xbf16>, tensor<1x8x256x128xbf16>)
        outs(%o : tensor<1x8x256x128xbf16>)
        {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>} -> tensor<1x8x256x128xbf16>
    return %r : tensor<1x8x256x128xbf16>
  }
}

// -----

// The sequential loop (a block mask) with warp roles: the consumers'
// step has no barrier and ends, whether the block was skipped or not, with
// the arrival on the empty mbarrier of its stage; no turns (they pair with
// the overlapped loop).
// CHECK-LABEL: gpu.func @sparse_attention0(
// CHECK-SAME: producer_warps = 4 : i64
// CHECK: scf.if
// The producer: groups 0 to blocks - 1, K and V of block g each.
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.+}}, %c16384_i32
// CHECK: } else {
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: scf.for
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.if
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.mbarrier.arrive %{{.+}} : !llvm.ptr<3> -> i64
// CHECK-NEXT: scf.yield
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @sparse(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x256x64xf16>, %blocks: tensor<1x1x2x4xi8>, %o: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x128x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        block_mask(%blocks : tensor<1x1x2x4xi8> blocks [64, 64])
        outs(%o : tensor<1x8x128x64xf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x128x64xf16>
    return %r : tensor<1x8x128x64xf16>
  }
}

// -----

// Split-KV: the skeleton's barriers, built once per role, are barrier.sync
// without .aligned, and its vote on the last piece barrier.red.or.
// CHECK-LABEL: gpu.func @split_attention0(
// CHECK-SAME: producer_warps = 4 : i64
// CHECK: scf.if
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.red.or.all"(%c0_i32, %{{.+}}) : (i32, i1) -> i1
// CHECK: } else {
// CHECK: llvm.call_intrinsic "llvm.nvvm.barrier.cta.red.or.all"(%c0_i32, %{{.+}}) : (i32, i1) -> i1
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @split(%q: tensor<1x8x1x64xf16>, %k: tensor<1x8x1024x64xf16>, %o: tensor<1x8x1x64xf16>) -> tensor<1x8x1x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x1x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>)
        outs(%o : tensor<1x8x1x64xf16>)
        {partition = #attn.split_kv<splits = 4>, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x1x64xf16>
    return %r : tensor<1x8x1x64xf16>
  }
}
