// The kernel plan attn-select-schedule prints is a contract: attn-compile of
// the printed IR, with no options, gives the same kernels as attn-compile of
// the source with its defaults (split-KV on), on wgmma and mma.sync, for a
// prefill, a split decode, a GQA-packed decode and a block-sparse prefill.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s -o %t/source
// RUN: attn-opt %s --attn-select-schedule=split-kv=true -o %t/planned.mlir
// RUN: FileCheck %s --input-file=%t/planned.mlir
// RUN: attn-compile %t/planned.mlir -o %t/planned
// RUN: diff %t/source/kernels.ptx %t/planned/kernels.ptx
// The same on an A100's target, where every kernel is mma.sync.
// RUN: sed -e 's/"sm_90a", sms = 132/"sm_80", sms = 108/' -e 's/232448, smem_per_sm = 233472/166912, smem_per_sm = 167936/' %s > %t/sm80.mlir
// RUN: attn-compile %t/sm80.mlir -o %t/source-sm80
// RUN: attn-opt %t/sm80.mlir --attn-select-schedule=split-kv=true -o %t/planned-sm80.mlir
// RUN: FileCheck %s --input-file=%t/planned-sm80.mlir --check-prefix=SM80
// RUN: attn-compile %t/planned-sm80.mlir -o %t/planned-sm80
// RUN: diff %t/source-sm80/kernels.ptx %t/planned-sm80/kernels.ptx
// SM80-COUNT-4: kernel = #attn.kernel<unit = mma_sync, kv = cp_async, q = cp_async, roles = none, loop = sequential, o = lanes>
// A plan made for wgmma is not silently compiled for a chip without it.
// RUN: not attn-compile %t/planned.mlir --chip=sm_80 -o %t/refused 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: error: attn-to-nvgpu: the op's #attn.kernel says unit = wgmma, and matrix-unit=mma-sync asks for the other (attn-to-ptx asks for mma-sync on a chip without wgmma): compile for the chip the plan was made for, drop the option, or edit the plan's unit

// CHECK-LABEL: func.func @prefill
// CHECK: kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = ping_pong, o = tensor, producer_registers = 24, consumer_registers = 240, entry_registers = 168>
// CHECK-LABEL: func.func @decode
// CHECK: kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = overlapped, o = tensor, producer_registers = 24, consumer_registers = 232, entry_registers = 128>, partition = #attn.split_kv
// CHECK-LABEL: func.func @decode_gqa
// CHECK: kernel = #attn.kernel<unit = wgmma, kv = tensor, q = cp_async, roles = {{.*}}, o = lanes{{.*}}packed_heads = 4
// A document mask over constant sequence ids: attn-derive-block-mask will
// attach a block mask, so the loop is planned sequential.
// CHECK-LABEL: func.func @documents
// CHECK: kernel = #attn.kernel<unit = wgmma, kv = tensor, q = tensor, roles = producer, loop = sequential, o = tensor

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @prefill(%q: tensor<2x16x2048x64xf16>, %o: tensor<2x16x2048x64xf16>) -> tensor<2x16x2048x64xf16> {
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x2048x64xf16>, tensor<2x16x2048x64xf16>, tensor<2x16x2048x64xf16>)
        outs(%o : tensor<2x16x2048x64xf16>) {causal} -> tensor<2x16x2048x64xf16>
    return %r : tensor<2x16x2048x64xf16>
  }
  func.func @decode(%q: tensor<1x4x1x128xbf16>, %k: tensor<1x4x8192x128xbf16>, %o: tensor<1x4x1x128xbf16>) -> tensor<1x4x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x4x1x128xbf16>, tensor<1x4x8192x128xbf16>, tensor<1x4x8192x128xbf16>)
        outs(%o : tensor<1x4x1x128xbf16>) -> tensor<1x4x1x128xbf16>
    return %r : tensor<1x4x1x128xbf16>
  }
  func.func @decode_gqa(%q: tensor<1x16x1x128xbf16>, %k: tensor<1x4x2048x128xbf16>, %o: tensor<1x16x1x128xbf16>) -> tensor<1x16x1x128xbf16> {
    %r = attn.attention ins(%q, %k, %k : tensor<1x16x1x128xbf16>, tensor<1x4x2048x128xbf16>, tensor<1x4x2048x128xbf16>)
        outs(%o : tensor<1x16x1x128xbf16>) -> tensor<1x16x1x128xbf16>
    return %r : tensor<1x16x1x128xbf16>
  }
  func.func @documents(%q: tensor<2x16x1024x64xf16>, %o: tensor<2x16x1024x64xf16>) -> tensor<2x16x1024x64xf16> {
    %ids = arith.constant dense<[0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]> : tensor<16xindex>
    %r = attn.attention ins(%q, %q, %q : tensor<2x16x1024x64xf16>, tensor<2x16x1024x64xf16>, tensor<2x16x1024x64xf16>)
        outs(%o : tensor<2x16x1024x64xf16>) -> tensor<2x16x1024x64xf16>
        score {
        ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
          %c64 = arith.constant 64 : index
          %ib = arith.divui %i, %c64 : index
          %jb = arith.divui %j, %c64 : index
          %di = tensor.extract %ids[%ib] : tensor<16xindex>
          %dj = tensor.extract %ids[%jb] : tensor<16xindex>
          %same = arith.cmpi eq, %di, %dj : index
          %ninf = arith.constant 0xFF800000 : f32
          %r = arith.select %same, %s, %ninf : f32
          attn.yield %r : f32
        }
    return %r : tensor<2x16x1024x64xf16>
  }
}
