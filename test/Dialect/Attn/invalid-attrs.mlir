// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One test per verifier message of the target and schedule attributes and of
// the `attn.target` dialect attribute.

// expected-error @+1 {{chip must name an NVPTX architecture such as "sm_80" or "sm_90a", got "gfx90a"}}
module attributes {attn.target = #attn.target<chip = "gfx90a", sms = 104, smem_per_block = 65536, smem_per_sm = 65536, regs_per_sm = 65536, regs_per_thread = 255>} {}

// -----

// expected-error @+1 {{sms must be positive, got 0}}
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 0, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {}

// -----

// expected-error @+1 {{shared memory sizes must be positive, got smem_per_block = 0, smem_per_sm = 167936}}
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 0, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {}

// -----

// expected-error @+1 {{smem_per_block (232448) cannot exceed smem_per_sm (167936)}}
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 232448, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {}

// -----

// expected-error @+1 {{register counts must be positive, got regs_per_sm = 65536, regs_per_thread = -1}}
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = -1>} {}

// -----

// expected-error @+1 {{regs_per_thread (255) cannot exceed regs_per_sm (128)}}
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 128, regs_per_thread = 255>} {}

// -----

// expected-error @+1 {{warps must be a power of two from 1 to 16, got 3}}
module attributes {test.tiles = #attn.fa2<block_m = 96, block_n = 64, warps = 3, stages = 2>} {}

// -----

// expected-error @+1 {{block_m must be a positive multiple of 16 * warps = 64 (each warp owns a multiple of 16 query rows), got 96}}
module attributes {test.tiles = #attn.fa2<block_m = 96, block_n = 64, warps = 4, stages = 2>} {}

// -----

// expected-error @+1 {{block_n must be a positive multiple of 16, got 40}}
module attributes {test.tiles = #attn.fa2<block_m = 128, block_n = 40, warps = 4, stages = 2>} {}

// -----

// expected-error @+1 {{stages must be from 1 to 16, got 0}}
module attributes {test.tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 0>} {}

// -----

// expected-error @+1 {{packed_heads must be from 1 to 4096, got 0}}
module attributes {test.tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2, packed_heads = 0>} {}

// -----

// expected-error @+1 {{splits must be at least 1, got 0}}
module attributes {test.partition = #attn.split_kv<splits = 0>} {}

// -----

// expected-error @+1 {{ctas must be at least 1, got -4}}
module attributes {test.partition = #attn.lean<ctas = -4>} {}

// -----

// expected-error @+1 {{q_parts and kv_parts must be at least 1, got 2 x 0}}
module attributes {test.partition = #attn.attention2d<q_parts = 2, kv_parts = 0>} {}

// -----

// expected-error @+1 {{unknown attn dialect attribute 'attn.tiles'; known: 'attn.target', 'attn.cluster', 'attn.launch'}}
module attributes {attn.tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 4, stages = 2>} {}

// -----

// expected-error @+1 {{'attn.target' must be an #attn.target, got "sm_90"}}
module attributes {attn.target = "sm_90"} {}

// -----

// expected-error @+1 {{'attn.target' may only be placed on a builtin.module}}
func.func @f() attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  return
}

// -----

// A missing parameter is a parse error.
// expected-error @+1 {{expected ','}}
module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108, smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536>} {}

// -----

// expected-error @+1 {{devices must be at least 1, got 0}}
module attributes {test.partition = #attn.ring<devices = 0>} {}

// -----

// expected-error @+1 {{ranks and ranks_per_node must be at least 1, got 0 and 8}}
module attributes {test.cluster = #attn.cluster<ranks = 0>} {}

// -----

// expected-error @+1 {{'attn.cluster' must be an #attn.cluster, got #attn.ring<devices = 2>}}
module attributes {attn.cluster = #attn.ring<devices = 2>} {}

// -----

// expected-error @+1 {{'attn.target' must be an #attn.target, got #attn.cluster<ranks = 2>}}
module attributes {attn.target = #attn.cluster<ranks = 2>} {}

// -----

// attn.launch's tensor maps: each names a tensor parameter and gives a box
// of its rank, every size 1 to 256, and a swizzle of 0, 32, 64 or 128.
// expected-error @+1 {{'attn.launch' must be {grid}}
module attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>], param_names = ["K"], scalars = [], tensor_maps = [{name = "k_map", param = 0 : i64, box = array<i64: 64, 64, 1>, swizzle = 128 : i64}]}} {}

// -----

// expected-error @+1 {{tensor_maps = [{name, param = i, box = array<i64: ...> (a size 1 to 256 per dimension), swizzle = 0, 32, 64 or 128}]}}
module attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>], param_names = ["K"], scalars = [], tensor_maps = [{name = "k_map", param = 0 : i64, box = array<i64: 64, 512, 1, 1>, swizzle = 128 : i64}]}} {}

// -----

// expected-error @+1 {{tensor_maps = [{name}}
module attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>], param_names = ["K"], scalars = [], tensor_maps = [{name = "k_map", param = 0 : i64, box = array<i64: 64, 64, 1, 1>, swizzle = 96 : i64}]}} {}

// -----

// attn.launch's producer warps: a whole warpgroup or several.
// expected-error @+1 {{and producer_warps = a positive multiple of 4 and kernel = #attn.kernel<...>, got}}
module attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 160, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>], param_names = ["K"], scalars = [], producer_warps = 1 : i64}} {}

// -----

// expected-error @+1 {{'attn.launch' must be {grid}}
module attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>], param_names = ["K"], scalars = [], producer_warps = 0 : i64}} {}

// -----

// #attn.kernel: what mma.sync kernels do without.
// expected-error @+1 {{unit = mma_sync takes kv = cp_async, q = cp_async, roles = none, loop = sequential and o = lanes}}
module attributes {test.kernel = #attn.kernel<unit = mma_sync, kv = tensor, q = cp_async, roles = none, loop = sequential, o = lanes>} {}

// -----

// expected-error @+1 {{q = tensor needs kv = tensor}}
module attributes {test.kernel = #attn.kernel<unit = wgmma, kv = cp_async, q = tensor, roles = none, loop = sequential, o = lanes>} {}

// -----

// expected-error @+1 {{roles = producer needs kv = tensor}}
module attributes {test.kernel = #attn.kernel<unit = wgmma, kv = cp_async, q = cp_async, roles = producer, loop = sequential, o = lanes>} {}

// -----

// expected-error @+1 {{loop = ping_pong needs roles = producer}}
module attributes {test.kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = ping_pong, o = tensor>} {}

// -----

// expected-error @+1 {{producer_registers, consumer_registers and entry_registers need roles = producer}}
module attributes {test.kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = none, loop = overlapped, o = tensor, consumer_registers = 240>} {}

// -----

// expected-error @+1 {{each a multiple of 8 from 24 to 256 (setmaxnreg's range), got 24, 240 and 0}}
module attributes {test.kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240>} {}

// -----

// expected-error @+1 {{got 20, 240 and 168}}
module attributes {test.kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 20, consumer_registers = 240, entry_registers = 168>} {}

// -----

// expected-error @+1 {{min_ctas_per_sm must be from 0 to 32, got 33}}
module attributes {test.kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes, min_ctas_per_sm = 33>} {}

// -----

// expected-error @+2 {{expected ::mlir::attn::MatrixUnit to be one of: mma_sync, wgmma}}
// expected-error @+1 {{failed to parse Attn_KernelAttr parameter 'unit'}}
module attributes {test.kernel = #attn.kernel<unit = tcgen05, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>} {}

// -----

// attn.launch's kernel: the plan the kernel was built from.
// expected-error @+1 {{and kernel = #attn.kernel<...>, got}}
module attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>], param_names = ["K"], scalars = [], kernel = "wgmma"}} {}
