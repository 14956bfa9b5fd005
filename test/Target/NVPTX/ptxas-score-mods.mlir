// Kernels that modify scores (softcap, an ALiBi score region with a math op,
// both with a window and grouped-query heads) assemble with ptxas for sm_80
// and sm_90a without spilling, D in {64, 128, 256}, with the tiles
// attn-select-schedule chooses when the register estimate counts the
// modification (kScoreModificationRegisters): the calibration of that
// estimate. Lengths of 1000 leave a tail of keys, so the element mask runs
// too. A prefix-LM mask and a document mask over constant ids (a table in
// global memory) carry the block mask attn-derive-block-mask proves, whose
// empty blocks the kernels skip.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log
// No libdevice: tanh, exp2 and the division are the hardware's.
// RUN: FileCheck %s --check-prefix=PTX --input-file=%t/sm80/kernels.ptx

// COMPILE: 11 kernel(s)
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized
// CHECK-DAG: Compiling entry function 'd64_softcap_attention0'
// CHECK-DAG: Compiling entry function 'd64_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd64_both_attention0'
// CHECK-DAG: Compiling entry function 'd128_softcap_attention0'
// CHECK-DAG: Compiling entry function 'd128_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd128_both_attention0'
// CHECK-DAG: Compiling entry function 'd256_softcap_attention0'
// CHECK-DAG: Compiling entry function 'd256_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd256_both_attention0'
// CHECK-DAG: Compiling entry function 'prefix_lm_attention0'
// CHECK-DAG: Compiling entry function 'documents_attention0'
// PTX-NOT: __nv_
// PTX-NOT: .extern
// PTX: rcp.approx.ftz.f32

module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @d64_softcap(%q: tensor<2x8x1000x64xbf16>, %k: tensor<2x8x1000x64xbf16>, %v: tensor<2x8x1000x64xbf16>, %o: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>, tensor<2x8x1000x64xbf16>) outs(%o : tensor<2x8x1000x64xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x64xbf16>
    return %r : tensor<2x8x1000x64xbf16>
  }
  func.func @d64_alibi(%q: tensor<2x8x1000x64xf16>, %k: tensor<2x8x1000x64xf16>, %v: tensor<2x8x1000x64xf16>, %o: tensor<2x8x1000x64xf16>) -> tensor<2x8x1000x64xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x64xf16>, tensor<2x8x1000x64xf16>, tensor<2x8x1000x64xf16>) outs(%o : tensor<2x8x1000x64xf16>) {causal} -> tensor<2x8x1000x64xf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
    }
    return %r : tensor<2x8x1000x64xf16>
  }
  func.func @d64_both(%q: tensor<2x8x1000x64xbf16>, %k: tensor<2x2x1000x64xbf16>, %v: tensor<2x2x1000x64xbf16>, %o: tensor<2x8x1000x64xbf16>) -> tensor<2x8x1000x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>) outs(%o : tensor<2x8x1000x64xbf16>) {window = array<i64: 256, 0>, softcap = 50.0 : f32} -> tensor<2x8x1000x64xbf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
    }
    return %r : tensor<2x8x1000x64xbf16>
  }
  func.func @d128_softcap(%q: tensor<2x8x1000x128xbf16>, %k: tensor<2x8x1000x128xbf16>, %v: tensor<2x8x1000x128xbf16>, %o: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>, tensor<2x8x1000x128xbf16>) outs(%o : tensor<2x8x1000x128xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x128xbf16>
    return %r : tensor<2x8x1000x128xbf16>
  }
  func.func @d128_alibi(%q: tensor<2x8x1000x128xf16>, %k: tensor<2x8x1000x128xf16>, %v: tensor<2x8x1000x128xf16>, %o: tensor<2x8x1000x128xf16>) -> tensor<2x8x1000x128xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x128xf16>, tensor<2x8x1000x128xf16>, tensor<2x8x1000x128xf16>) outs(%o : tensor<2x8x1000x128xf16>) {causal} -> tensor<2x8x1000x128xf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
    }
    return %r : tensor<2x8x1000x128xf16>
  }
  func.func @d128_both(%q: tensor<2x8x1000x128xbf16>, %k: tensor<2x2x1000x128xbf16>, %v: tensor<2x2x1000x128xbf16>, %o: tensor<2x8x1000x128xbf16>) -> tensor<2x8x1000x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>) outs(%o : tensor<2x8x1000x128xbf16>) {window = array<i64: 256, 0>, softcap = 50.0 : f32} -> tensor<2x8x1000x128xbf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
    }
    return %r : tensor<2x8x1000x128xbf16>
  }
  func.func @d256_softcap(%q: tensor<2x8x1000x256xbf16>, %k: tensor<2x8x1000x256xbf16>, %v: tensor<2x8x1000x256xbf16>, %o: tensor<2x8x1000x256xbf16>) -> tensor<2x8x1000x256xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x256xbf16>, tensor<2x8x1000x256xbf16>, tensor<2x8x1000x256xbf16>) outs(%o : tensor<2x8x1000x256xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x8x1000x256xbf16>
    return %r : tensor<2x8x1000x256xbf16>
  }
  func.func @d256_alibi(%q: tensor<2x8x1000x256xf16>, %k: tensor<2x8x1000x256xf16>, %v: tensor<2x8x1000x256xf16>, %o: tensor<2x8x1000x256xf16>) -> tensor<2x8x1000x256xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x256xf16>, tensor<2x8x1000x256xf16>, tensor<2x8x1000x256xf16>) outs(%o : tensor<2x8x1000x256xf16>) {causal} -> tensor<2x8x1000x256xf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
    }
    return %r : tensor<2x8x1000x256xf16>
  }
  func.func @d256_both(%q: tensor<2x8x1000x256xbf16>, %k: tensor<2x2x1000x256xbf16>, %v: tensor<2x2x1000x256xbf16>, %o: tensor<2x8x1000x256xbf16>) -> tensor<2x8x1000x256xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x256xbf16>, tensor<2x2x1000x256xbf16>, tensor<2x2x1000x256xbf16>) outs(%o : tensor<2x8x1000x256xbf16>) {window = array<i64: 256, 0>, softcap = 50.0 : f32} -> tensor<2x8x1000x256xbf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %hi = arith.index_cast %h : index to i32
        %hf = arith.sitofp %hi : i32 to f32
        %c = arith.constant -1.0 : f32
        %e = arith.mulf %hf, %c : f32
        %slope = math.exp2 %e : f32
        %bias = arith.mulf %df, %slope : f32
        %r = arith.addf %s, %bias : f32
        attn.yield %r : f32
    }
    return %r : tensor<2x8x1000x256xbf16>
  }
  func.func @prefix_lm(%q: tensor<1x4x1024x128xbf16>, %k: tensor<1x4x1024x128xbf16>, %v: tensor<1x4x1024x128xbf16>, %o0: tensor<1x4x1024x128xbf16>) -> tensor<1x4x1024x128xbf16> {
    %o = attn.attention ins(%q, %k, %v : tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>, tensor<1x4x1024x128xbf16>)
        outs(%o0 : tensor<1x4x1024x128xbf16>) -> tensor<1x4x1024x128xbf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %prefix = arith.constant 256 : index
        %in_prefix = arith.cmpi ult, %j, %prefix : index
        %causal = arith.cmpi ule, %j, %i : index
        %visible = arith.ori %in_prefix, %causal : i1
        %ninf = arith.constant 0xFF800000 : f32
        %r = arith.select %visible, %s, %ninf : f32
        attn.yield %r : f32
    }
    return %o : tensor<1x4x1024x128xbf16>
  }
  func.func @documents(%q: tensor<1x4x512x64xf16>, %k: tensor<1x4x512x64xf16>, %v: tensor<1x4x512x64xf16>, %o0: tensor<1x4x512x64xf16>) -> tensor<1x4x512x64xf16> {
    %docs = arith.constant dense<[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7]> : tensor<512xi32>
    %o = attn.attention ins(%q, %k, %v : tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>, tensor<1x4x512x64xf16>)
        outs(%o0 : tensor<1x4x512x64xf16>) {causal} -> tensor<1x4x512x64xf16> score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %di = tensor.extract %docs[%i] : tensor<512xi32>
        %dj = tensor.extract %docs[%j] : tensor<512xi32>
        %same = arith.cmpi eq, %di, %dj : i32
        %ninf = arith.constant 0xFF800000 : f32
        %r = arith.select %same, %s, %ninf : f32
        attn.yield %r : f32
    }
    return %o : tensor<1x4x512x64xf16>
  }
}
