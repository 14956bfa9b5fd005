// The backward kernel (attn.attention_grad) assembles with ptxas for sm_80
// and sm_90a without spilling at every head dimension it takes (multiples of
// 8 up to 256; above 128 a key/value CTA takes dV and dK in a walk each),
// Dv != D, causal, windowed and softcapped, with grouped-query
// heads, per-sequence key lengths, boolean and additive mask operands, block
// masks (a parameter, or a constant table), score regions (the region and
// its derivative inlined) and FlashAttention's backward test lengths. The
// module's target is sm_90a: its kernels compute on wgmma up to D = 192 and
// on mma.sync at D = 256 (gradWgmmaUnfit), the sm_80 ones on mma.sync; on
// wgmma their tiles come by tensor copies up to max(D, Dv) = 128, by
// cp.async otherwise (gradTensorCopiesUnfit). With key lengths, thread 0
// zeroes the keys past a sequence's end of the streamed K and V block that
// holds it (16-byte stores of zeros), fences them for the async proxy and
// only then arrives on the stage's mbarrier (copyZeroingTails).
// REQUIRES: ptxas
// RUN: rm -rf %t && attn-compile %s -o %t/sm80 --chip=sm_80 | FileCheck %s --check-prefix=COMPILE
// RUN: attn-compile %s -o %t/sm90a --chip=sm_90a | FileCheck %s --check-prefix=COMPILE
// RUN: %ptxas -arch=sm_80 -v %t/sm80/kernels.ptx -o %t/sm80.cubin > %t/sm80.log 2>&1
// RUN: %ptxas -arch=sm_90a -v %t/sm90a/kernels.ptx -o %t/sm90a.cubin > %t/sm90a.log 2>&1
// RUN: FileCheck %s --input-file=%t/sm80.log
// RUN: FileCheck %s --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm80.log
// RUN: FileCheck %s --check-prefix=NOSPILL --input-file=%t/sm90a.log
// RUN: FileCheck %s --check-prefix=UNIT --input-file=%t/sm90a/kernels.ptx
// The manifest marks the kernels (version 10).
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file=%t/sm80/manifest.json

// NOSPILL-NOT: {{[1-9][0-9]*}} bytes stack frame
// NOSPILL-NOT: {{[1-9][0-9]*}} bytes spill
// NOSPILL-NOT: wgmma.mma_async instructions are serialized

// COMPILE: 19 kernel(s)
// CHECK-DAG: Compiling entry function 'd32_causal_attention_grad0'
// CHECK-DAG: Compiling entry function 'd40_attention_grad0'
// CHECK-DAG: Compiling entry function 'd64_gqa_window_attention_grad0'
// CHECK-DAG: Compiling entry function 'd80_softcap_attention_grad0'
// CHECK-DAG: Compiling entry function 'd96_causal_attention_grad0'
// CHECK-DAG: Compiling entry function 'd128_causal_softcap_attention_grad0'
// CHECK-DAG: Compiling entry function 'd64_dv128_attention_grad0'
// CHECK-DAG: Compiling entry function 'd160_window_attention_grad0'
// CHECK-DAG: Compiling entry function 'd192_dv128_causal_attention_grad0'
// CHECK-DAG: Compiling entry function 'd256_gqa_softcap_attention_grad0'
// CHECK-DAG: Compiling entry function 'd128_gqa_causal_lengths_attention_grad0'
// CHECK-DAG: Compiling entry function 'd256_window_lengths_attention_grad0'
// CHECK-DAG: Compiling entry function 'd128_causal_softcap_additive_lengths_attention_grad0'
// CHECK-DAG: Compiling entry function 'd256_gqa_bool_mask_attention_grad0'
// CHECK-DAG: Compiling entry function 'd96_window_additive_f32_attention_grad0'
// CHECK-DAG: Compiling entry function 'd128_blocks_additive_lengths_attention_grad0'
// CHECK-DAG: Compiling entry function 'd256_constant_blocks_attention_grad0'
// CHECK-DAG: Compiling entry function 'd128_region_alibi_attention_grad0'
// CHECK-DAG: Compiling entry function 'd256_region_lengths_attention_grad0'

// MANIFEST-DAG: "version": 10
// MANIFEST-DAG: "gradient": true

// UNIT-LABEL: .entry d32_causal_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d40_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d64_gqa_window_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d80_softcap_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d96_causal_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d128_causal_softcap_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d64_dv128_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d160_window_attention_grad0(
// UNIT-NOT: cp.async.bulk.tensor
// UNIT: cp.async.cg.shared.global
// UNIT-NOT: cp.async.bulk.tensor
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d192_dv128_causal_attention_grad0(
// UNIT-NOT: cp.async.bulk.tensor
// UNIT: cp.async.cg.shared.global
// UNIT-NOT: cp.async.bulk.tensor
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d256_gqa_softcap_attention_grad0(
// UNIT-NOT: wgmma.mma_async
// UNIT: mma.sync.aligned.m16n8k16
// UNIT-NOT: wgmma.mma_async
// UNIT-LABEL: .entry d128_gqa_causal_lengths_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: st.shared.v4.b32 {{.*}}, {0, 0, 0, 0};
// UNIT: fence.proxy.async.shared::cta;
// UNIT-NEXT: mbarrier.inval.shared.b64
// UNIT-NEXT: mbarrier.arrive.shared.b64
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d256_window_lengths_attention_grad0(
// UNIT-NOT: wgmma.mma_async
// UNIT: mma.sync.aligned.m16n8k16
// UNIT-NOT: wgmma.mma_async
// UNIT-LABEL: .entry d128_causal_softcap_additive_lengths_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: st.shared.v4.b32 {{.*}}, {0, 0, 0, 0};
// UNIT: fence.proxy.async.shared::cta;
// UNIT-NEXT: mbarrier.inval.shared.b64
// UNIT-NEXT: mbarrier.arrive.shared.b64
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d256_gqa_bool_mask_attention_grad0(
// UNIT-NOT: wgmma.mma_async
// UNIT: mma.sync.aligned.m16n8k16
// UNIT-NOT: wgmma.mma_async
// UNIT-LABEL: .entry d96_window_additive_f32_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: st.shared.v4.b32 {{.*}}, {0, 0, 0, 0};
// UNIT: fence.proxy.async.shared::cta;
// UNIT-NEXT: mbarrier.inval.shared.b64
// UNIT-NEXT: mbarrier.arrive.shared.b64
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d128_blocks_additive_lengths_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: st.shared.v4.b32 {{.*}}, {0, 0, 0, 0};
// UNIT: fence.proxy.async.shared::cta;
// UNIT-NEXT: mbarrier.inval.shared.b64
// UNIT-NEXT: mbarrier.arrive.shared.b64
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d256_constant_blocks_attention_grad0(
// UNIT-NOT: wgmma.mma_async
// UNIT: mma.sync.aligned.m16n8k16
// UNIT-NOT: wgmma.mma_async
// UNIT-LABEL: .entry d128_region_alibi_attention_grad0(
// UNIT: cp.async.bulk.tensor.4d.shared::cluster.global
// UNIT: wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k16.f32
// UNIT-LABEL: .entry d256_region_lengths_attention_grad0(
// UNIT-NOT: wgmma.mma_async
// UNIT: mma.sync.aligned.m16n8k16
// UNIT-NOT: wgmma.mma_async

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {

func.func @d32_causal(%q: tensor<1x2x113x32xbf16>, %k: tensor<1x1x203x32xbf16>, %v: tensor<1x1x203x32xbf16>, %o: tensor<1x2x113x32xbf16>, %lse: tensor<1x2x113xf32>, %do: tensor<1x2x113x32xbf16>)
    -> (tensor<1x2x113x32xbf16>, tensor<1x1x203x32xbf16>, tensor<1x1x203x32xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x113x32xbf16>, tensor<1x1x203x32xbf16>, tensor<1x1x203x32xbf16>)
      out(%o, %lse : tensor<1x2x113x32xbf16>, tensor<1x2x113xf32>) grad(%do : tensor<1x2x113x32xbf16>)
      outs(%q, %k, %v : tensor<1x2x113x32xbf16>, tensor<1x1x203x32xbf16>, tensor<1x1x203x32xbf16>) {causal} -> tensor<1x2x113x32xbf16>, tensor<1x1x203x32xbf16>, tensor<1x1x203x32xbf16>
  return %dq, %dk, %dv : tensor<1x2x113x32xbf16>, tensor<1x1x203x32xbf16>, tensor<1x1x203x32xbf16>
}

func.func @d40(%q: tensor<1x2x128x40xf16>, %k: tensor<1x2x217x40xf16>, %v: tensor<1x2x217x40xf16>, %o: tensor<1x2x128x40xf16>, %lse: tensor<1x2x128xf32>, %do: tensor<1x2x128x40xf16>)
    -> (tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x40xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x40xf16>)
      out(%o, %lse : tensor<1x2x128x40xf16>, tensor<1x2x128xf32>) grad(%do : tensor<1x2x128x40xf16>)
      outs(%q, %k, %v : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x40xf16>) {} -> tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x40xf16>
  return %dq, %dk, %dv : tensor<1x2x128x40xf16>, tensor<1x2x217x40xf16>, tensor<1x2x217x40xf16>
}

func.func @d64_gqa_window(%q: tensor<2x8x256x64xbf16>, %k: tensor<2x1x512x64xbf16>, %v: tensor<2x1x512x64xbf16>, %o: tensor<2x8x256x64xbf16>, %lse: tensor<2x8x256xf32>, %do: tensor<2x8x256x64xbf16>)
    -> (tensor<2x8x256x64xbf16>, tensor<2x1x512x64xbf16>, tensor<2x1x512x64xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<2x8x256x64xbf16>, tensor<2x1x512x64xbf16>, tensor<2x1x512x64xbf16>)
      out(%o, %lse : tensor<2x8x256x64xbf16>, tensor<2x8x256xf32>) grad(%do : tensor<2x8x256x64xbf16>)
      outs(%q, %k, %v : tensor<2x8x256x64xbf16>, tensor<2x1x512x64xbf16>, tensor<2x1x512x64xbf16>) {window = array<i64: 100, 0>} -> tensor<2x8x256x64xbf16>, tensor<2x1x512x64xbf16>, tensor<2x1x512x64xbf16>
  return %dq, %dk, %dv : tensor<2x8x256x64xbf16>, tensor<2x1x512x64xbf16>, tensor<2x1x512x64xbf16>
}

func.func @d80_softcap(%q: tensor<1x2x108x80xf16>, %k: tensor<1x2x256x80xf16>, %v: tensor<1x2x256x80xf16>, %o: tensor<1x2x108x80xf16>, %lse: tensor<1x2x108xf32>, %do: tensor<1x2x108x80xf16>)
    -> (tensor<1x2x108x80xf16>, tensor<1x2x256x80xf16>, tensor<1x2x256x80xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x108x80xf16>, tensor<1x2x256x80xf16>, tensor<1x2x256x80xf16>)
      out(%o, %lse : tensor<1x2x108x80xf16>, tensor<1x2x108xf32>) grad(%do : tensor<1x2x108x80xf16>)
      outs(%q, %k, %v : tensor<1x2x108x80xf16>, tensor<1x2x256x80xf16>, tensor<1x2x256x80xf16>) {softcap = 30.0 : f32} -> tensor<1x2x108x80xf16>, tensor<1x2x256x80xf16>, tensor<1x2x256x80xf16>
  return %dq, %dk, %dv : tensor<1x2x108x80xf16>, tensor<1x2x256x80xf16>, tensor<1x2x256x80xf16>
}

func.func @d96_causal(%q: tensor<1x4x1x96xbf16>, %k: tensor<1x2x239x96xbf16>, %v: tensor<1x2x239x96xbf16>, %o: tensor<1x4x1x96xbf16>, %lse: tensor<1x4x1xf32>, %do: tensor<1x4x1x96xbf16>)
    -> (tensor<1x4x1x96xbf16>, tensor<1x2x239x96xbf16>, tensor<1x2x239x96xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x4x1x96xbf16>, tensor<1x2x239x96xbf16>, tensor<1x2x239x96xbf16>)
      out(%o, %lse : tensor<1x4x1x96xbf16>, tensor<1x4x1xf32>) grad(%do : tensor<1x4x1x96xbf16>)
      outs(%q, %k, %v : tensor<1x4x1x96xbf16>, tensor<1x2x239x96xbf16>, tensor<1x2x239x96xbf16>) {causal} -> tensor<1x4x1x96xbf16>, tensor<1x2x239x96xbf16>, tensor<1x2x239x96xbf16>
  return %dq, %dk, %dv : tensor<1x4x1x96xbf16>, tensor<1x2x239x96xbf16>, tensor<1x2x239x96xbf16>
}

func.func @d128_causal_softcap(%q: tensor<1x2x239x128xbf16>, %k: tensor<1x2x1x128xbf16>, %v: tensor<1x2x1x128xbf16>, %o: tensor<1x2x239x128xbf16>, %lse: tensor<1x2x239xf32>, %do: tensor<1x2x239x128xbf16>)
    -> (tensor<1x2x239x128xbf16>, tensor<1x2x1x128xbf16>, tensor<1x2x1x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x239x128xbf16>, tensor<1x2x1x128xbf16>, tensor<1x2x1x128xbf16>)
      out(%o, %lse : tensor<1x2x239x128xbf16>, tensor<1x2x239xf32>) grad(%do : tensor<1x2x239x128xbf16>)
      outs(%q, %k, %v : tensor<1x2x239x128xbf16>, tensor<1x2x1x128xbf16>, tensor<1x2x1x128xbf16>) {causal, softcap = 50.0 : f32} -> tensor<1x2x239x128xbf16>, tensor<1x2x1x128xbf16>, tensor<1x2x1x128xbf16>
  return %dq, %dk, %dv : tensor<1x2x239x128xbf16>, tensor<1x2x1x128xbf16>, tensor<1x2x1x128xbf16>
}

func.func @d64_dv128(%q: tensor<1x2x200x64xf16>, %k: tensor<1x1x300x64xf16>, %v: tensor<1x1x300x128xf16>, %o: tensor<1x2x200x128xf16>, %lse: tensor<1x2x200xf32>, %do: tensor<1x2x200x128xf16>)
    -> (tensor<1x2x200x64xf16>, tensor<1x1x300x64xf16>, tensor<1x1x300x128xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x200x64xf16>, tensor<1x1x300x64xf16>, tensor<1x1x300x128xf16>)
      out(%o, %lse : tensor<1x2x200x128xf16>, tensor<1x2x200xf32>) grad(%do : tensor<1x2x200x128xf16>)
      outs(%q, %k, %v : tensor<1x2x200x64xf16>, tensor<1x1x300x64xf16>, tensor<1x1x300x128xf16>) {causal} -> tensor<1x2x200x64xf16>, tensor<1x1x300x64xf16>, tensor<1x1x300x128xf16>
  return %dq, %dk, %dv : tensor<1x2x200x64xf16>, tensor<1x1x300x64xf16>, tensor<1x1x300x128xf16>
}

func.func @d160_window(%q: tensor<1x2x1024x160xf16>, %k: tensor<1x2x1023x160xf16>, %v: tensor<1x2x1023x160xf16>, %o: tensor<1x2x1024x160xf16>, %lse: tensor<1x2x1024xf32>, %do: tensor<1x2x1024x160xf16>)
    -> (tensor<1x2x1024x160xf16>, tensor<1x2x1023x160xf16>, tensor<1x2x1023x160xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x1024x160xf16>, tensor<1x2x1023x160xf16>, tensor<1x2x1023x160xf16>)
      out(%o, %lse : tensor<1x2x1024x160xf16>, tensor<1x2x1024xf32>) grad(%do : tensor<1x2x1024x160xf16>)
      outs(%q, %k, %v : tensor<1x2x1024x160xf16>, tensor<1x2x1023x160xf16>, tensor<1x2x1023x160xf16>) {window = array<i64: 128, 0>} -> tensor<1x2x1024x160xf16>, tensor<1x2x1023x160xf16>, tensor<1x2x1023x160xf16>
  return %dq, %dk, %dv : tensor<1x2x1024x160xf16>, tensor<1x2x1023x160xf16>, tensor<1x2x1023x160xf16>
}

func.func @d192_dv128_causal(%q: tensor<1x2x1023x192xbf16>, %k: tensor<1x1x1024x192xbf16>, %v: tensor<1x1x1024x128xbf16>, %o: tensor<1x2x1023x128xbf16>, %lse: tensor<1x2x1023xf32>, %do: tensor<1x2x1023x128xbf16>)
    -> (tensor<1x2x1023x192xbf16>, tensor<1x1x1024x192xbf16>, tensor<1x1x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x1023x192xbf16>, tensor<1x1x1024x192xbf16>, tensor<1x1x1024x128xbf16>)
      out(%o, %lse : tensor<1x2x1023x128xbf16>, tensor<1x2x1023xf32>) grad(%do : tensor<1x2x1023x128xbf16>)
      outs(%q, %k, %v : tensor<1x2x1023x192xbf16>, tensor<1x1x1024x192xbf16>, tensor<1x1x1024x128xbf16>) {causal} -> tensor<1x2x1023x192xbf16>, tensor<1x1x1024x192xbf16>, tensor<1x1x1024x128xbf16>
  return %dq, %dk, %dv : tensor<1x2x1023x192xbf16>, tensor<1x1x1024x192xbf16>, tensor<1x1x1024x128xbf16>
}

func.func @d256_gqa_softcap(%q: tensor<1x8x1x256xbf16>, %k: tensor<1x1x239x256xbf16>, %v: tensor<1x1x239x256xbf16>, %o: tensor<1x8x1x256xbf16>, %lse: tensor<1x8x1xf32>, %do: tensor<1x8x1x256xbf16>)
    -> (tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>)
      out(%o, %lse : tensor<1x8x1x256xbf16>, tensor<1x8x1xf32>) grad(%do : tensor<1x8x1x256xbf16>)
      outs(%q, %k, %v : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>) {softcap = 30.0 : f32} -> tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>
  return %dq, %dk, %dv : tensor<1x8x1x256xbf16>, tensor<1x1x239x256xbf16>, tensor<1x1x239x256xbf16>
}

func.func @d128_gqa_causal_lengths(%q: tensor<4x8x512x128xbf16>, %k: tensor<4x2x1024x128xbf16>, %o: tensor<4x8x512x128xbf16>, %lse: tensor<4x8x512xf32>, %n: tensor<4xi32>)
    -> (tensor<4x8x512x128xbf16>, tensor<4x2x1024x128xbf16>, tensor<4x2x1024x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<4x8x512x128xbf16>, tensor<4x2x1024x128xbf16>, tensor<4x2x1024x128xbf16>)
      out(%o, %lse : tensor<4x8x512x128xbf16>, tensor<4x8x512xf32>) grad(%o : tensor<4x8x512x128xbf16>)
      key_lengths(%n : tensor<4xi32>)
      outs(%q, %k, %k : tensor<4x8x512x128xbf16>, tensor<4x2x1024x128xbf16>, tensor<4x2x1024x128xbf16>) {causal} -> tensor<4x8x512x128xbf16>, tensor<4x2x1024x128xbf16>, tensor<4x2x1024x128xbf16>
  return %dq, %dk, %dv : tensor<4x8x512x128xbf16>, tensor<4x2x1024x128xbf16>, tensor<4x2x1024x128xbf16>
}

func.func @d256_window_lengths(%q: tensor<2x2x300x256xf16>, %k: tensor<2x2x700x256xf16>, %o: tensor<2x2x300x256xf16>, %lse: tensor<2x2x300xf32>, %n: tensor<2xi32>)
    -> (tensor<2x2x300x256xf16>, tensor<2x2x700x256xf16>, tensor<2x2x700x256xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<2x2x300x256xf16>, tensor<2x2x700x256xf16>, tensor<2x2x700x256xf16>)
      out(%o, %lse : tensor<2x2x300x256xf16>, tensor<2x2x300xf32>) grad(%o : tensor<2x2x300x256xf16>)
      key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %k : tensor<2x2x300x256xf16>, tensor<2x2x700x256xf16>, tensor<2x2x700x256xf16>) {window = array<i64: 64, 0>} -> tensor<2x2x300x256xf16>, tensor<2x2x700x256xf16>, tensor<2x2x700x256xf16>
  return %dq, %dk, %dv : tensor<2x2x300x256xf16>, tensor<2x2x700x256xf16>, tensor<2x2x700x256xf16>
}

func.func @d128_causal_softcap_additive_lengths(%q: tensor<2x4x256x128xbf16>, %k: tensor<2x2x512x128xbf16>, %v: tensor<2x2x512x128xbf16>, %o: tensor<2x4x256x128xbf16>, %lse: tensor<2x4x256xf32>, %do: tensor<2x4x256x128xbf16>, %m: tensor<2x1x256x512xbf16>, %n: tensor<2xi32>)
    -> (tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>)
      out(%o, %lse : tensor<2x4x256x128xbf16>, tensor<2x4x256xf32>) grad(%do : tensor<2x4x256x128xbf16>)
      mask(%m : tensor<2x1x256x512xbf16>)
      key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %v : tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>) {causal, softcap = 30.0 : f32} -> tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>
  return %dq, %dk, %dv : tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>
}

func.func @d256_gqa_bool_mask(%q: tensor<1x8x239x256xf16>, %k: tensor<1x1x239x256xf16>, %v: tensor<1x1x239x256xf16>, %o: tensor<1x8x239x256xf16>, %lse: tensor<1x8x239xf32>, %do: tensor<1x8x239x256xf16>, %m: tensor<1x8x239x239xi1>)
    -> (tensor<1x8x239x256xf16>, tensor<1x1x239x256xf16>, tensor<1x1x239x256xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x8x239x256xf16>, tensor<1x1x239x256xf16>, tensor<1x1x239x256xf16>)
      out(%o, %lse : tensor<1x8x239x256xf16>, tensor<1x8x239xf32>) grad(%do : tensor<1x8x239x256xf16>)
      mask(%m : tensor<1x8x239x239xi1>)
      outs(%q, %k, %v : tensor<1x8x239x256xf16>, tensor<1x1x239x256xf16>, tensor<1x1x239x256xf16>) {softcap = 50.0 : f32} -> tensor<1x8x239x256xf16>, tensor<1x1x239x256xf16>, tensor<1x1x239x256xf16>
  return %dq, %dk, %dv : tensor<1x8x239x256xf16>, tensor<1x1x239x256xf16>, tensor<1x1x239x256xf16>
}

func.func @d96_window_additive_f32(%q: tensor<1x2x108x96xbf16>, %k: tensor<1x2x256x96xbf16>, %v: tensor<1x2x256x96xbf16>, %o: tensor<1x2x108x96xbf16>, %lse: tensor<1x2x108xf32>, %do: tensor<1x2x108x96xbf16>, %m: tensor<1x2x108x256xf32>, %n: tensor<1xi32>)
    -> (tensor<1x2x108x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %v : tensor<1x2x108x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>)
      out(%o, %lse : tensor<1x2x108x96xbf16>, tensor<1x2x108xf32>) grad(%do : tensor<1x2x108x96xbf16>)
      mask(%m : tensor<1x2x108x256xf32>)
      key_lengths(%n : tensor<1xi32>)
      outs(%q, %k, %v : tensor<1x2x108x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>) {window = array<i64: 64, 8>} -> tensor<1x2x108x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>
  return %dq, %dk, %dv : tensor<1x2x108x96xbf16>, tensor<1x2x256x96xbf16>, tensor<1x2x256x96xbf16>
}

func.func @d128_blocks_additive_lengths(%q: tensor<2x4x256x128xbf16>, %k: tensor<2x2x512x128xbf16>, %o: tensor<2x4x256x128xbf16>, %lse: tensor<2x4x256xf32>, %m: tensor<2x1x256x512xf32>, %bm: tensor<2x4x2x4xi8>, %n: tensor<2xi32>)
    -> (tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>)
      out(%o, %lse : tensor<2x4x256x128xbf16>, tensor<2x4x256xf32>) grad(%o : tensor<2x4x256x128xbf16>)
      mask(%m : tensor<2x1x256x512xf32>) block_mask(%bm : tensor<2x4x2x4xi8> blocks [128, 128])
      key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %k : tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>) {causal, softcap = 30.0 : f32}
      -> tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>
  return %dq, %dk, %dv : tensor<2x4x256x128xbf16>, tensor<2x2x512x128xbf16>, tensor<2x2x512x128xbf16>
}

func.func @d256_constant_blocks(%q: tensor<1x2x256x256xf16>, %k: tensor<1x2x256x256xf16>, %o: tensor<1x2x256x256xf16>, %lse: tensor<1x2x256xf32>, %m: tensor<1x2x256x256xi1>)
    -> (tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>) {
  %bm = arith.constant dense<[[[[2, 0, 1, 1], [1, 2, 0, 2], [0, 1, 2, 1], [2, 2, 1, 0]]]]> : tensor<1x1x4x4xi8>
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>)
      out(%o, %lse : tensor<1x2x256x256xf16>, tensor<1x2x256xf32>) grad(%o : tensor<1x2x256x256xf16>)
      mask(%m : tensor<1x2x256x256xi1>) block_mask(%bm : tensor<1x1x4x4xi8> blocks [64, 64])
      outs(%q, %k, %k : tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>) {window = array<i64: 100, 20>}
      -> tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>
  return %dq, %dk, %dv : tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>, tensor<1x2x256x256xf16>
}

func.func @d128_region_alibi(%q: tensor<1x8x512x128xbf16>, %k: tensor<1x2x512x128xbf16>, %o: tensor<1x8x512x128xbf16>, %lse: tensor<1x8x512xf32>)
    -> (tensor<1x8x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<1x8x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>)
      out(%o, %lse : tensor<1x8x512x128xbf16>, tensor<1x8x512xf32>) grad(%o : tensor<1x8x512x128xbf16>)
      outs(%q, %k, %k : tensor<1x8x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>) {causal}
      -> tensor<1x8x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 4.0 : f32
        %inv = arith.constant 0.25 : f32
        %sc = arith.mulf %s, %inv : f32
        %t = math.tanh %sc : f32
        %capped = arith.mulf %t, %cap : f32
        %slopes = arith.constant dense<[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]> : tensor<8xf32>
        %slope = tensor.extract %slopes[%h] : tensor<8xf32>
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %r = arith.addf %capped, %bias : f32
        attn.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<1x8x512x128xbf16>, tensor<1x2x512x128xbf16>, tensor<1x2x512x128xbf16>
}

func.func @d256_region_lengths(%q: tensor<2x8x200x256xf16>, %k: tensor<2x8x300x256xf16>, %o: tensor<2x8x200x256xf16>, %lse: tensor<2x8x200xf32>, %n: tensor<2xi32>)
    -> (tensor<2x8x200x256xf16>, tensor<2x8x300x256xf16>, tensor<2x8x300x256xf16>) {
  %dq, %dk, %dv = attn.attention_grad ins(%q, %k, %k : tensor<2x8x200x256xf16>, tensor<2x8x300x256xf16>, tensor<2x8x300x256xf16>)
      out(%o, %lse : tensor<2x8x200x256xf16>, tensor<2x8x200xf32>) grad(%o : tensor<2x8x200x256xf16>)
      key_lengths(%n : tensor<2xi32>)
      outs(%q, %k, %k : tensor<2x8x200x256xf16>, tensor<2x8x300x256xf16>, tensor<2x8x300x256xf16>) {window = array<i64: 64, 0>, softcap = 30.0 : f32}
      -> tensor<2x8x200x256xf16>, tensor<2x8x300x256xf16>, tensor<2x8x300x256xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 4.0 : f32
        %inv = arith.constant 0.25 : f32
        %sc = arith.mulf %s, %inv : f32
        %t = math.tanh %sc : f32
        %capped = arith.mulf %t, %cap : f32
        %slopes = arith.constant dense<[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]> : tensor<8xf32>
        %slope = tensor.extract %slopes[%h] : tensor<8xf32>
        %d = arith.subi %j, %i : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %bias = arith.mulf %slope, %df : f32
        %r = arith.addf %capped, %bias : f32
        attn.yield %r : f32
      }
  return %dq, %dk, %dv : tensor<2x8x200x256xf16>, tensor<2x8x300x256xf16>, tensor<2x8x300x256xf16>
}

}
