// attn-tensor-map-parameters passes a kernel's tensor maps by value: the
// last arguments, one per entry of its attn.launch's tensor_maps, become
// 128-byte, 64-byte aligned by-value grid constants (NVPTX then declares
// `.param .align 64 .b8 NAME[128]` and takes their address with
// cvta.param); the other arguments and functions without tensor maps are
// left as they are.
// RUN: attn-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(gpu.module(attn-tensor-map-parameters))' | FileCheck %s

// CHECK-LABEL: llvm.func @two_maps(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-LABEL: llvm.func @no_maps(
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr)
// CHECK-NOT: byval
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @two_maps(%k: !llvm.ptr, %n: i64, %kMap: !llvm.ptr, %vMap: !llvm.ptr) attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>, memref<1x1x64x64xbf16>], param_names = ["K", "V"], scalars = [], tensor_maps = [{name = "k_map", param = 0 : i64, box = array<i64: 64, 64, 1, 1>, swizzle = 128 : i64}, {name = "v_map", param = 1 : i64, box = array<i64: 64, 64, 1, 1>, swizzle = 128 : i64}]}, nvvm.kernel} {
      llvm.return
    }
    llvm.func @no_maps(%k: !llvm.ptr) attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>, memref<1x1x64x64xbf16>], param_names = ["K", "V"], scalars = []}, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{attn-tensor-map-parameters: argument 1 holds a tensor map and is not a pointer but 'i64'}}
    llvm.func @scalar_last(%k: !llvm.ptr, %n: i64) attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>, memref<1x1x64x64xbf16>], param_names = ["K", "V"], scalars = [], tensor_maps = [{name = "k_map", param = 0 : i64, box = array<i64: 64, 64, 1, 1>, swizzle = 128 : i64}]}, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // expected-error @+1 {{attn-tensor-map-parameters: 2 tensor maps, 1 arguments}}
    llvm.func @too_few(%k: !llvm.ptr) attributes {attn.launch = {grid = array<i64: 1, 1, 1>, block = array<i64: 128, 1, 1>, dynamic_shared_memory = 0 : i64, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>, attention = {}, params = [memref<1x1x64x64xbf16>, memref<1x1x64x64xbf16>], param_names = ["K", "V"], scalars = [], tensor_maps = [{name = "k_map", param = 0 : i64, box = array<i64: 64, 64, 1, 1>, swizzle = 128 : i64}, {name = "v_map", param = 1 : i64, box = array<i64: 64, 64, 1, 1>, swizzle = 128 : i64}]}, nvvm.kernel} {
      llvm.return
    }
  }
}
