// Every head dimension FlashAttention-2 runs (multiples of 8 up to 256)
// and D != Dv assemble with ptxas for sm_80 and sm_90a without spilling,
// causal and with an ALiBi score region, with the tiles attn-select-schedule
// chooses for an sm_80-class target. Shared-memory rows are padded to 64
// elements (the swizzle of D = 64), the k steps of S = Q K^T to 16 (zero
// columns); lengths of 1000 leave tails of rows and keys. Also: a window
// with grouped-query heads in f16, D = 64 in 128 x 48 tiles with 8 warps
// (the 32 rows a cp.async round copies do not divide 48), and a causal,
// softcapped, ALiBi, block-sparse D = 96 attention.
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log
// The bundle's manifest records D and Dv as the operands' shapes.
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/sm80/manifest.json

// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized

// COMPILE: 26 kernel(s)
// CHECK-DAG: Compiling entry function 'd8_causal_attention0'
// CHECK-DAG: Compiling entry function 'd8_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd32_causal_attention0'
// CHECK-DAG: Compiling entry function 'd32_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd40_causal_attention0'
// CHECK-DAG: Compiling entry function 'd40_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd48_causal_attention0'
// CHECK-DAG: Compiling entry function 'd48_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd80_causal_attention0'
// CHECK-DAG: Compiling entry function 'd80_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd96_causal_attention0'
// CHECK-DAG: Compiling entry function 'd96_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd112_causal_attention0'
// CHECK-DAG: Compiling entry function 'd112_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd160_causal_attention0'
// CHECK-DAG: Compiling entry function 'd160_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd192_causal_attention0'
// CHECK-DAG: Compiling entry function 'd192_alibi_attention0'
// CHECK-DAG: Compiling entry function 'd224_causal_attention0'
// CHECK-DAG: Compiling entry function 'd224_alibi_attention0'
// CHECK-DAG: Compiling entry function 'mla_d192_dv128_attention0'
// CHECK-DAG: Compiling entry function 'd64_dv128_attention0'
// CHECK-DAG: Compiling entry function 'd128_dv64_attention0'
// CHECK-DAG: Compiling entry function 'd80_window_gqa_f16_attention0'
// CHECK-DAG: Compiling entry function 'd64_block_n48_attention0'
// CHECK-DAG: Compiling entry function 'd96_causal_softcap_alibi_sparse_attention0'
// MANIFEST: "name": "mla_d192_dv128_attention0"
// MANIFEST: "name": "V"
// MANIFEST-NEXT: "shape": [
// MANIFEST-NEXT: 2,
// MANIFEST-NEXT: 4,
// MANIFEST-NEXT: 1000,
// MANIFEST-NEXT: 128

module attributes {attn.target = #attn.target<chip = "sm_80", sms = 108,
    smem_per_block = 166912, smem_per_sm = 167936, regs_per_sm = 65536, regs_per_thread = 255>} {
  func.func @d8_causal(%q: tensor<2x4x1000x8xbf16>, %k: tensor<2x4x1000x8xbf16>, %v: tensor<2x4x1000x8xbf16>, %o: tensor<2x4x1000x8xbf16>) -> tensor<2x4x1000x8xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x8xbf16>, tensor<2x4x1000x8xbf16>, tensor<2x4x1000x8xbf16>)
        outs(%o : tensor<2x4x1000x8xbf16>) {causal} -> tensor<2x4x1000x8xbf16>
    return %r : tensor<2x4x1000x8xbf16>
  }

  func.func @d8_alibi(%q: tensor<2x4x1000x8xbf16>, %k: tensor<2x4x1000x8xbf16>, %v: tensor<2x4x1000x8xbf16>, %o: tensor<2x4x1000x8xbf16>) -> tensor<2x4x1000x8xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x8xbf16>, tensor<2x4x1000x8xbf16>, tensor<2x4x1000x8xbf16>)
        outs(%o : tensor<2x4x1000x8xbf16>) {causal} -> tensor<2x4x1000x8xbf16> score {
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
    return %r : tensor<2x4x1000x8xbf16>
  }

  func.func @d32_causal(%q: tensor<2x4x1000x32xbf16>, %k: tensor<2x4x1000x32xbf16>, %v: tensor<2x4x1000x32xbf16>, %o: tensor<2x4x1000x32xbf16>) -> tensor<2x4x1000x32xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x32xbf16>, tensor<2x4x1000x32xbf16>, tensor<2x4x1000x32xbf16>)
        outs(%o : tensor<2x4x1000x32xbf16>) {causal} -> tensor<2x4x1000x32xbf16>
    return %r : tensor<2x4x1000x32xbf16>
  }

  func.func @d32_alibi(%q: tensor<2x4x1000x32xbf16>, %k: tensor<2x4x1000x32xbf16>, %v: tensor<2x4x1000x32xbf16>, %o: tensor<2x4x1000x32xbf16>) -> tensor<2x4x1000x32xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x32xbf16>, tensor<2x4x1000x32xbf16>, tensor<2x4x1000x32xbf16>)
        outs(%o : tensor<2x4x1000x32xbf16>) {causal} -> tensor<2x4x1000x32xbf16> score {
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
    return %r : tensor<2x4x1000x32xbf16>
  }

  func.func @d40_causal(%q: tensor<2x4x1000x40xbf16>, %k: tensor<2x4x1000x40xbf16>, %v: tensor<2x4x1000x40xbf16>, %o: tensor<2x4x1000x40xbf16>) -> tensor<2x4x1000x40xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x40xbf16>, tensor<2x4x1000x40xbf16>, tensor<2x4x1000x40xbf16>)
        outs(%o : tensor<2x4x1000x40xbf16>) {causal} -> tensor<2x4x1000x40xbf16>
    return %r : tensor<2x4x1000x40xbf16>
  }

  func.func @d40_alibi(%q: tensor<2x4x1000x40xbf16>, %k: tensor<2x4x1000x40xbf16>, %v: tensor<2x4x1000x40xbf16>, %o: tensor<2x4x1000x40xbf16>) -> tensor<2x4x1000x40xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x40xbf16>, tensor<2x4x1000x40xbf16>, tensor<2x4x1000x40xbf16>)
        outs(%o : tensor<2x4x1000x40xbf16>) {causal} -> tensor<2x4x1000x40xbf16> score {
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
    return %r : tensor<2x4x1000x40xbf16>
  }

  func.func @d48_causal(%q: tensor<2x4x1000x48xbf16>, %k: tensor<2x4x1000x48xbf16>, %v: tensor<2x4x1000x48xbf16>, %o: tensor<2x4x1000x48xbf16>) -> tensor<2x4x1000x48xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x48xbf16>, tensor<2x4x1000x48xbf16>, tensor<2x4x1000x48xbf16>)
        outs(%o : tensor<2x4x1000x48xbf16>) {causal} -> tensor<2x4x1000x48xbf16>
    return %r : tensor<2x4x1000x48xbf16>
  }

  func.func @d48_alibi(%q: tensor<2x4x1000x48xbf16>, %k: tensor<2x4x1000x48xbf16>, %v: tensor<2x4x1000x48xbf16>, %o: tensor<2x4x1000x48xbf16>) -> tensor<2x4x1000x48xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x48xbf16>, tensor<2x4x1000x48xbf16>, tensor<2x4x1000x48xbf16>)
        outs(%o : tensor<2x4x1000x48xbf16>) {causal} -> tensor<2x4x1000x48xbf16> score {
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
    return %r : tensor<2x4x1000x48xbf16>
  }

  func.func @d80_causal(%q: tensor<2x4x1000x80xbf16>, %k: tensor<2x4x1000x80xbf16>, %v: tensor<2x4x1000x80xbf16>, %o: tensor<2x4x1000x80xbf16>) -> tensor<2x4x1000x80xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x80xbf16>, tensor<2x4x1000x80xbf16>, tensor<2x4x1000x80xbf16>)
        outs(%o : tensor<2x4x1000x80xbf16>) {causal} -> tensor<2x4x1000x80xbf16>
    return %r : tensor<2x4x1000x80xbf16>
  }

  func.func @d80_alibi(%q: tensor<2x4x1000x80xbf16>, %k: tensor<2x4x1000x80xbf16>, %v: tensor<2x4x1000x80xbf16>, %o: tensor<2x4x1000x80xbf16>) -> tensor<2x4x1000x80xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x80xbf16>, tensor<2x4x1000x80xbf16>, tensor<2x4x1000x80xbf16>)
        outs(%o : tensor<2x4x1000x80xbf16>) {causal} -> tensor<2x4x1000x80xbf16> score {
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
    return %r : tensor<2x4x1000x80xbf16>
  }

  func.func @d96_causal(%q: tensor<2x4x1000x96xbf16>, %k: tensor<2x4x1000x96xbf16>, %v: tensor<2x4x1000x96xbf16>, %o: tensor<2x4x1000x96xbf16>) -> tensor<2x4x1000x96xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x96xbf16>, tensor<2x4x1000x96xbf16>, tensor<2x4x1000x96xbf16>)
        outs(%o : tensor<2x4x1000x96xbf16>) {causal} -> tensor<2x4x1000x96xbf16>
    return %r : tensor<2x4x1000x96xbf16>
  }

  func.func @d96_alibi(%q: tensor<2x4x1000x96xbf16>, %k: tensor<2x4x1000x96xbf16>, %v: tensor<2x4x1000x96xbf16>, %o: tensor<2x4x1000x96xbf16>) -> tensor<2x4x1000x96xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x96xbf16>, tensor<2x4x1000x96xbf16>, tensor<2x4x1000x96xbf16>)
        outs(%o : tensor<2x4x1000x96xbf16>) {causal} -> tensor<2x4x1000x96xbf16> score {
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
    return %r : tensor<2x4x1000x96xbf16>
  }

  func.func @d112_causal(%q: tensor<2x4x1000x112xbf16>, %k: tensor<2x4x1000x112xbf16>, %v: tensor<2x4x1000x112xbf16>, %o: tensor<2x4x1000x112xbf16>) -> tensor<2x4x1000x112xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x112xbf16>, tensor<2x4x1000x112xbf16>, tensor<2x4x1000x112xbf16>)
        outs(%o : tensor<2x4x1000x112xbf16>) {causal} -> tensor<2x4x1000x112xbf16>
    return %r : tensor<2x4x1000x112xbf16>
  }

  func.func @d112_alibi(%q: tensor<2x4x1000x112xbf16>, %k: tensor<2x4x1000x112xbf16>, %v: tensor<2x4x1000x112xbf16>, %o: tensor<2x4x1000x112xbf16>) -> tensor<2x4x1000x112xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x112xbf16>, tensor<2x4x1000x112xbf16>, tensor<2x4x1000x112xbf16>)
        outs(%o : tensor<2x4x1000x112xbf16>) {causal} -> tensor<2x4x1000x112xbf16> score {
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
    return %r : tensor<2x4x1000x112xbf16>
  }

  func.func @d160_causal(%q: tensor<2x4x1000x160xbf16>, %k: tensor<2x4x1000x160xbf16>, %v: tensor<2x4x1000x160xbf16>, %o: tensor<2x4x1000x160xbf16>) -> tensor<2x4x1000x160xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x160xbf16>, tensor<2x4x1000x160xbf16>, tensor<2x4x1000x160xbf16>)
        outs(%o : tensor<2x4x1000x160xbf16>) {causal} -> tensor<2x4x1000x160xbf16>
    return %r : tensor<2x4x1000x160xbf16>
  }

  func.func @d160_alibi(%q: tensor<2x4x1000x160xbf16>, %k: tensor<2x4x1000x160xbf16>, %v: tensor<2x4x1000x160xbf16>, %o: tensor<2x4x1000x160xbf16>) -> tensor<2x4x1000x160xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x160xbf16>, tensor<2x4x1000x160xbf16>, tensor<2x4x1000x160xbf16>)
        outs(%o : tensor<2x4x1000x160xbf16>) {causal} -> tensor<2x4x1000x160xbf16> score {
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
    return %r : tensor<2x4x1000x160xbf16>
  }

  func.func @d192_causal(%q: tensor<2x4x1000x192xbf16>, %k: tensor<2x4x1000x192xbf16>, %v: tensor<2x4x1000x192xbf16>, %o: tensor<2x4x1000x192xbf16>) -> tensor<2x4x1000x192xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x192xbf16>, tensor<2x4x1000x192xbf16>, tensor<2x4x1000x192xbf16>)
        outs(%o : tensor<2x4x1000x192xbf16>) {causal} -> tensor<2x4x1000x192xbf16>
    return %r : tensor<2x4x1000x192xbf16>
  }

  func.func @d192_alibi(%q: tensor<2x4x1000x192xbf16>, %k: tensor<2x4x1000x192xbf16>, %v: tensor<2x4x1000x192xbf16>, %o: tensor<2x4x1000x192xbf16>) -> tensor<2x4x1000x192xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x192xbf16>, tensor<2x4x1000x192xbf16>, tensor<2x4x1000x192xbf16>)
        outs(%o : tensor<2x4x1000x192xbf16>) {causal} -> tensor<2x4x1000x192xbf16> score {
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
    return %r : tensor<2x4x1000x192xbf16>
  }

  func.func @d224_causal(%q: tensor<2x4x1000x224xbf16>, %k: tensor<2x4x1000x224xbf16>, %v: tensor<2x4x1000x224xbf16>, %o: tensor<2x4x1000x224xbf16>) -> tensor<2x4x1000x224xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x224xbf16>, tensor<2x4x1000x224xbf16>, tensor<2x4x1000x224xbf16>)
        outs(%o : tensor<2x4x1000x224xbf16>) {causal} -> tensor<2x4x1000x224xbf16>
    return %r : tensor<2x4x1000x224xbf16>
  }

  func.func @d224_alibi(%q: tensor<2x4x1000x224xbf16>, %k: tensor<2x4x1000x224xbf16>, %v: tensor<2x4x1000x224xbf16>, %o: tensor<2x4x1000x224xbf16>) -> tensor<2x4x1000x224xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x224xbf16>, tensor<2x4x1000x224xbf16>, tensor<2x4x1000x224xbf16>)
        outs(%o : tensor<2x4x1000x224xbf16>) {causal} -> tensor<2x4x1000x224xbf16> score {
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
    return %r : tensor<2x4x1000x224xbf16>
  }

  func.func @mla_d192_dv128(%q: tensor<2x4x1000x192xbf16>, %k: tensor<2x4x1000x192xbf16>, %v: tensor<2x4x1000x128xbf16>, %o: tensor<2x4x1000x128xbf16>) -> tensor<2x4x1000x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x192xbf16>, tensor<2x4x1000x192xbf16>, tensor<2x4x1000x128xbf16>)
        outs(%o : tensor<2x4x1000x128xbf16>) {causal} -> tensor<2x4x1000x128xbf16>
    return %r : tensor<2x4x1000x128xbf16>
  }

  func.func @d64_dv128(%q: tensor<2x4x1000x64xbf16>, %k: tensor<2x4x1000x64xbf16>, %v: tensor<2x4x1000x128xbf16>, %o: tensor<2x4x1000x128xbf16>) -> tensor<2x4x1000x128xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x128xbf16>)
        outs(%o : tensor<2x4x1000x128xbf16>) {causal} -> tensor<2x4x1000x128xbf16>
    return %r : tensor<2x4x1000x128xbf16>
  }

  func.func @d128_dv64(%q: tensor<2x4x1000x128xbf16>, %k: tensor<2x4x1000x128xbf16>, %v: tensor<2x4x1000x64xbf16>, %o: tensor<2x4x1000x64xbf16>) -> tensor<2x4x1000x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16>, tensor<2x4x1000x64xbf16>)
        outs(%o : tensor<2x4x1000x64xbf16>) {causal} -> tensor<2x4x1000x64xbf16> score {
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
    return %r : tensor<2x4x1000x64xbf16>
  }

  func.func @d80_window_gqa_f16(%q: tensor<2x8x1000x80xf16>, %k: tensor<2x2x1000x80xf16>, %v: tensor<2x2x1000x80xf16>, %o: tensor<2x8x1000x80xf16>) -> tensor<2x8x1000x80xf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x8x1000x80xf16>, tensor<2x2x1000x80xf16>, tensor<2x2x1000x80xf16>)
        outs(%o : tensor<2x8x1000x80xf16>) {window = array<i64: 256, 0>} -> tensor<2x8x1000x80xf16>
    return %r : tensor<2x8x1000x80xf16>
  }

  func.func @d64_block_n48(%q: tensor<2x4x1000x64xbf16>, %k: tensor<2x4x1000x64xbf16>, %v: tensor<2x4x1000x64xbf16>, %o: tensor<2x4x1000x64xbf16>) -> tensor<2x4x1000x64xbf16> {
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>, tensor<2x4x1000x64xbf16>)
        outs(%o : tensor<2x4x1000x64xbf16>) {tiles = #attn.fa2<block_m = 128, block_n = 48, warps = 8, stages = 1>} -> tensor<2x4x1000x64xbf16>
    return %r : tensor<2x4x1000x64xbf16>
  }

  func.func @d96_causal_softcap_alibi_sparse(%q: tensor<2x4x1000x96xbf16>, %k: tensor<2x4x1000x96xbf16>, %v: tensor<2x4x1000x96xbf16>, %o: tensor<2x4x1000x96xbf16>) -> tensor<2x4x1000x96xbf16> {
    %blocks = arith.constant dense<[[[[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0, 0, 0], [0, 1, 1, 1, 0, 0, 0, 0], [2, 2, 0, 1, 1, 0, 0, 0], [2, 0, 2, 1, 0, 1, 0, 0], [0, 2, 2, 0, 1, 1, 1, 0], [2, 2, 0, 2, 2, 0, 1, 1]]]]> : tensor<1x1x8x8xi8>
    %r = attn.attention ins(%q, %k, %v : tensor<2x4x1000x96xbf16>, tensor<2x4x1000x96xbf16>, tensor<2x4x1000x96xbf16>)
        block_mask(%blocks : tensor<1x1x8x8xi8> blocks [128, 128])
        outs(%o : tensor<2x4x1000x96xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x4x1000x96xbf16> score {
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
    return %r : tensor<2x4x1000x96xbf16>
  }
}
