// RUN: attn-opt %s --attn-to-nvgpu --canonicalize --cse | FileCheck %s

// A 300-query causal GQA prefill in bf16 with the tiles pinned: 64 x 64, 2
// warps, so each warp owns 32 query rows (two m16 tiles).
func.func @prefill(%q: tensor<1x8x300x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                   %v: tensor<1x2x300x64xbf16>, %o: tensor<1x8x300x64xbf16>,
                   %l: tensor<1x8x300xf32>) -> (tensor<1x8x300x64xbf16>, tensor<1x8x300xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<1x8x300x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>)
      outs(%o, %l : tensor<1x8x300x64xbf16>, tensor<1x8x300xf32>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 2, stages = 1>}
      -> tensor<1x8x300x64xbf16>, tensor<1x8x300xf32>
  return %r#0, %r#1 : tensor<1x8x300x64xbf16>, tensor<1x8x300xf32>
}

// The host function is left alone; the kernel goes to a gpu.module.
// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @prefill
// CHECK:   attn.attention
// CHECK: gpu.module @attn_kernels
// Bare parameters in operand order, launch data for the bundle: grid
// (ceil(300 / 64), B, Hq), 64 threads, Q + K + V tiles of 64 x 64 bf16.
// CHECK: gpu.func @prefill_attention0(%[[Q:.+]]: memref<1x8x300x64xbf16>, %[[K:.+]]: memref<1x2x300x64xbf16>, %[[V:.+]]: memref<1x2x300x64xbf16>, %[[O:.+]]: memref<1x8x300x64xbf16>, %[[LSE:.+]]: memref<1x8x300xf32>) kernel
// CHECK-SAME: attn.launch = {attention = {causal = true, scale = 1.250000e-01 : f32}, block = array<i64: 64, 1, 1>, dynamic_shared_memory = 24576 : i64, grid = array<i64: 5, 1, 8>, kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>, param_names = ["Q", "K", "V", "O", "LSE"], params = [memref<1x8x300x64xbf16>, memref<1x2x300x64xbf16>, memref<1x2x300x64xbf16>, memref<1x8x300x64xbf16>, memref<1x8x300xf32>], scalars = [], tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 2, stages = 1>}
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK-DAG: %[[QB:.+]] = gpu.block_id  x
// CHECK-DAG: %[[B:.+]] = gpu.block_id  y
// CHECK-DAG: %[[H:.+]] = gpu.block_id  z
// CHECK-DAG: %[[TID:.+]] = gpu.thread_id  x
// Split-Q: warp w = tid / 32 owns rows [32 w, 32 w + 32) of the query block.
// CHECK-DAG: %[[WARP:.+]] = arith.divui %[[TID]], %c32 : index
// CHECK-DAG: %[[WARPROW:.+]] = arith.muli %[[WARP]], %c32 : index
// GQA: query head h reads key/value head h / 4.
// CHECK-DAG: %[[KVH:.+]] = arith.divui %[[H]], %c4 : index
// Q, K and V tiles in dynamic shared memory.
// CHECK-DAG: %[[SMEM:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[QT:.+]] = memref.view %[[SMEM]][%c0{{.*}}][] : {{.*}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// The Q block is staged once with cp.async (16-byte chunks, zero-filled past
// Sq, XOR-swizzled columns, computed per thread at the entry).
// CHECK-DAG: arith.xori
// CHECK: nvgpu.device_async_copy %[[Q]][%[[B]], %[[H]], %{{.+}}, %{{.+}}], %[[QT]][%{{.+}}, %{{.+}}], 8, %{{.+}} {bypassL1}
// Causal block skipping: the KV loop ends at the query block's last
// visible key block.
// CHECK: %[[LAST:.+]] = arith.ceildivui %{{.+}}, %c64 : index
// CHECK: %[[END:.+]] = arith.select %{{.+}}, %[[LAST]], %c0 : index
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK: scf.for %{{.+}} = %c0 to %[[END]] step %c1 iter_args(
// CHECK:   gpu.barrier
// One stage (as pinned): this block's K and V tiles right after Q.
// CHECK-DAG:   %[[KT:.+]] = memref.view %[[SMEM]][%c8192{{.*}}][] : {{.*}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK-DAG:   %[[VT:.+]] = memref.view %[[SMEM]][%c16384{{.*}}][] : {{.*}} to memref<64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:   nvgpu.device_async_copy %[[K]][%[[B]], %[[KVH]], %{{.+}}, %{{.+}}], %[[KT]]
// CHECK:   nvgpu.device_async_copy %[[V]][%[[B]], %[[KVH]], %{{.+}}, %{{.+}}], %[[VT]]
// CHECK:   nvgpu.device_async_wait
// CHECK:   gpu.barrier
// S = Q K^T on tensor cores: A from Q, B from K, both by ldmatrix.
// CHECK:   nvgpu.ldmatrix %[[QT]][%{{.+}}, %{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<64x64xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK:   nvgpu.ldmatrix %[[KT]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = false} : memref<64x64xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// bf16 operands go to nvvm.mma.sync as packed 32-bit registers.
// CHECK:   nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// Row max over the quad of lanes that share a row.
// CHECK:   gpu.shuffle  xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK:   gpu.shuffle  xor %{{.+}}, %c2_i32, %c32_i32 : f32
// CHECK:   llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// P stays in registers: S's accumulators, rounded to bf16 and packed in
// pairs, form the A fragment of P V; V is read transposed.
// CHECK:   arith.truncf %{{.+}} : f32 to bf16
// CHECK:   vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK:   nvgpu.ldmatrix %[[VT]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = true}
// CHECK:   nvvm.mma.sync
// CHECK:   scf.yield
// After the loop: l summed over the quad, one division; each warp puts its
// rows of O (rounded to bf16) into its own rows of the Q tile, LSE is
// written by one lane of each quad for rows inside Sq, and after a barrier
// the lanes copy 16-byte chunks of O to global memory for rows inside Sq.
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: vector.store %{{.+}}, %[[QT]][%{{.+}}, %{{.+}}] : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<2xbf16>
// CHECK: scf.if
// CHECK:   llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// CHECK:   memref.store %{{.+}}, %[[LSE]][%[[B]], %[[H]], %{{.+}}] : memref<1x8x300xf32>
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK:   %[[CHUNK:.+]] = vector.load %[[QT]][%{{.+}}, %{{.+}}] : memref<64x64xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK:   vector.store %[[CHUNK]], %[[O]][%[[B]], %[[H]], %{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<1x8x300x64xbf16>, vector<8xbf16>
// CHECK: gpu.return

// Default tiles for D = 128 (128 x 128, 8 warps: 128 x 64 with 4 warps needs
// more registers than a thread has) with two shared-memory stages (160 KiB):
// the first K and V tiles are in flight before the loop;
// each iteration issues the next block into the other stage and waits for
// all but that group; nothing is in flight when the kernel ends. f16 uses
// nvgpu.mma.sync directly.
// RUN: attn-opt %s --attn-to-nvgpu --split-input-file 2>&1 | FileCheck %s --check-prefix=F16
// F16-LABEL: gpu.func @decode_attention0
// F16-SAME: dynamic_shared_memory = 163840 : i64
// F16-SAME: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
// F16: nvgpu.device_async_wait %{{.+}} {numGroups = 1 : i32}
// F16: scf.for
// F16:   arith.remui %{{.+}}, %c2{{.*}} : index
// F16:   arith.minui
// F16:   nvgpu.device_async_wait %{{.+}} {numGroups = 1 : i32}
// F16:   nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// F16: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// -----
func.func @decode(%q: tensor<2x4x1x128xf16>, %k: tensor<2x4x500x128xf16>,
                  %v: tensor<2x4x500x128xf16>, %o: tensor<2x4x1x128xf16>) -> tensor<2x4x1x128xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<2x4x1x128xf16>, tensor<2x4x500x128xf16>, tensor<2x4x500x128xf16>)
      outs(%o : tensor<2x4x1x128xf16>) -> tensor<2x4x1x128xf16>
  return %r : tensor<2x4x1x128xf16>
}

// -----
// A pinned pipeline of more stages keeps stages - 1 blocks in flight: the
// prologue issues blocks 0 .. stages - 2 (clamped to the last block), each
// iteration issues block n + stages - 1 into the stage before block n's
// (selected: the last after the first) and waits until at most stages - 1
// groups are pending. Four stages of
// 128 x 128 tiles at D = 64 take 144 KiB; at D = 128 (288 KiB) the kernel
// takes the most that fit sm_80's 163 KiB without a target: two.
// RUN: attn-opt %s --attn-to-nvgpu --split-input-file 2>&1 | FileCheck %s --check-prefix=STAGES
// STAGES-LABEL: gpu.func @four_stages_attention0
// STAGES-SAME: dynamic_shared_memory = 147456 : i64
// STAGES-SAME: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4>
// STAGES-COUNT-3: arith.minui
// STAGES: nvgpu.device_async_wait %{{.+}} {numGroups = 3 : i32}
// STAGES: scf.for
// STAGES:   arith.remui %{{.+}}, %c4{{.*}} : index
// STAGES:   arith.select
// STAGES:   arith.minui
// STAGES:   nvgpu.device_async_wait %{{.+}} {numGroups = 3 : i32}
// STAGES: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// STAGES-LABEL: gpu.func @too_many_stages_attention0
// STAGES-SAME: dynamic_shared_memory = 163840 : i64
// STAGES-SAME: tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 2>
func.func @four_stages(%q: tensor<1x4x1000x64xf16>, %k: tensor<1x4x1000x64xf16>,
                       %v: tensor<1x4x1000x64xf16>, %o: tensor<1x4x1000x64xf16>) -> tensor<1x4x1000x64xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x1000x64xf16>, tensor<1x4x1000x64xf16>, tensor<1x4x1000x64xf16>)
      outs(%o : tensor<1x4x1000x64xf16>)
      {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4>} -> tensor<1x4x1000x64xf16>
  return %r : tensor<1x4x1000x64xf16>
}

// -----
func.func @too_many_stages(%q: tensor<1x4x1000x128xf16>, %k: tensor<1x4x1000x128xf16>,
                           %v: tensor<1x4x1000x128xf16>, %o: tensor<1x4x1000x128xf16>) -> tensor<1x4x1000x128xf16> {
  %r = attn.attention ins(%q, %k, %v : tensor<1x4x1000x128xf16>, tensor<1x4x1000x128xf16>, tensor<1x4x1000x128xf16>)
      outs(%o : tensor<1x4x1000x128xf16>)
      {tiles = #attn.fa2<block_m = 128, block_n = 128, warps = 8, stages = 4>} -> tensor<1x4x1000x128xf16>
  return %r : tensor<1x4x1000x128xf16>
}
