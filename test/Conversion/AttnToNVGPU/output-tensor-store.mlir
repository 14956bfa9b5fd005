// O by tensor stores (rowTileTensorMapUnfit, FlashAttention-3's epilogue):
// a wgmma kernel takes a tensor map of O after K's and V's, a box a
// 64-column block of the block_m-row tile; after the lanes have written O
// into the tile (and LSE as before), each makes its writes visible to the
// async proxy, the consumers meet at named barrier 1, and thread 0 stores
// the tile's blocks, commits them as one bulk group and waits until they
// have read the tile. The 16-byte stores of every lane are gone. Rows past
// Sq and columns past Dv are outside O's map, which the store clips (the
// emulator checks: test/Integration/Emulator/mutations.mlir and the
// emulator check's configurations).
// RUN: attn-opt %s --split-input-file --attn-to-nvgpu --canonicalize | FileCheck %s

// Two consumer warpgroups (128 rows), Dv = 96: two boxes, at column 0 and,
// 128 rows x 128 bytes on in shared memory, at column 64.
// CHECK-LABEL: gpu.func @prefill_attention0(
// CHECK-SAME: %arg3: memref<1x8x200x96xbf16>, %arg4: !llvm.ptr, %arg5: !llvm.ptr, %arg6: !llvm.ptr, %arg7: !llvm.ptr) kernel
// CHECK-SAME: {box = array<i64: 64, 128, 1, 1>, name = "o_map", param = 3 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 128, 1, 1>, name = "q_map", param = 0 : i64, swizzle = 128 : i64}]
// CHECK: %[[SHARED:.+]] = memref.extract_aligned_pointer_as_index
// The last element pair of O into the tile, then the epilogue.
// CHECK-COUNT-24: vector.store %{{.+}}, %view[%{{.+}}, %{{.+}}] : memref<256x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: arith.cmpi eq, %{{.+}}, %c0 : index
// CHECK-NEXT: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %arg6, %{{.+}}, box[%c0_i32, %[[ROW:.+]], %{{.+}}, %{{.+}}]
// CHECK: arith.addi %[[SHARED]], %c16384 : index
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %arg6, %{{.+}}, box[%c64_i32,
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NOT: vector.store %{{.+}}, %arg3
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @prefill(%q: tensor<1x8x200x128xbf16>, %v: tensor<1x8x200x96xbf16>, %o: tensor<1x8x200x96xbf16>) -> tensor<1x8x200x96xbf16> {
    %r = attn.attention ins(%q, %q, %v : tensor<1x8x200x128xbf16>, tensor<1x8x200x128xbf16>, tensor<1x8x200x96xbf16>)
        outs(%o : tensor<1x8x200x96xbf16>) {causal} -> tensor<1x8x200x96xbf16>
    return %r : tensor<1x8x200x96xbf16>
  }
}

// -----

// Per-sequence key lengths change nothing for O (their tensor copies of K
// and V zero the keys past a sequence's end: tensor-copies.mlir): its map
// after K's and V's, then the tensor store of the epilogue.
// CHECK-LABEL: gpu.func @ragged_attention0(
// CHECK-SAME: tensor_maps = [{box = array<i64: 64, 64, 1, 1>, name = "k_map", param = 1 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "v_map", param = 2 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64, 1, 1>, name = "o_map", param = 3 : i64, swizzle = 128 : i64}
// CHECK-NOT: nvgpu.device_async_copy %arg1
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
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

// GQA packing puts two query heads in the tile's rows: no box of O covers
// them, so every lane stores its 16-byte chunks, each to its row's head.
// CHECK-LABEL: gpu.func @packed_attention0(
// CHECK-NOT: o_map
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: vector.store %{{.+}}, %arg3
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @packed(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x4x512x128xbf16>, %o: tensor<1x8x1x128xbf16>) -> tensor<1x8x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x1x128xbf16>, tensor<1x4x512x128xbf16>, tensor<1x4x512x128xbf16>)
        outs(%o : tensor<1x8x1x128xbf16>)
        {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 2>} -> tensor<1x8x1x128xbf16>
    return %r : tensor<1x8x1x128xbf16>
  }
}

// -----

// The mma.sync body keeps whole rows in shared memory, not the map's
// blocks: every lane stores its chunks.
// CHECK-LABEL: gpu.func @two_tiles_attention0(
// CHECK-NOT: tensor_maps
// CHECK: vector.store %{{.+}}, %arg3
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: gpu.return
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @two_tiles(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x256x64xf16>, %o: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x8x128x64xf16>, tensor<1x8x256x64xf16>, tensor<1x8x256x64xf16>)
        outs(%o : tensor<1x8x128x64xf16>)
        {tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>} -> tensor<1x8x128x64xf16>
    return %r : tensor<1x8x128x64xf16>
  }
}
