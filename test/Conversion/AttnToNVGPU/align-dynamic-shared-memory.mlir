// attn-align-dynamic-shared-memory raises the alignment of the global that
// convert-gpu-to-nvvm makes for gpu.dynamic_shared_memory to 1024 bytes (the
// 128-byte swizzle's atoms), keeps a larger one, and leaves other globals.
// RUN: attn-opt %s --pass-pipeline='builtin.module(gpu.module(attn-align-dynamic-shared-memory))' | FileCheck %s

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @larger() {addr_space = 3 : i32, alignment = 4096 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @global_array() {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @larger() {addr_space = 3 : i32, alignment = 4096 : i64} : !llvm.array<0 x i8>
    llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
    llvm.mlir.global internal @global_array() {addr_space = 1 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  }
}
