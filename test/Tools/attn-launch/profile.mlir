// attn-launch --profile on the PTX emulator: each kernel's dynamic
// instructions by class and its memory traffic. A 128 x 64 attention in two
// CTAs of 64 x 64 tiles, counted by hand:
//
// - sm_90a (wgmma, a producer warpgroup, tensor copies): per CTA one box of
//   Q (8 KiB), a box of K and one of V per key block (2 x 2 x 8 KiB), and
//   one box of O out (8 KiB): 10 boxes in, 80 KiB, and 2 out, 16 KiB; wgmma
//   reads per key block S = Q K^T's A and B (4 k-steps of 64 x 16 each, 16
//   KiB) and P V's B (4 of 16 x 64, 8 KiB; P is in registers): 2 CTAs x 2
//   blocks x 24 KiB = 96 KiB. No global request: the copies are not
//   requests.
// - mma.sync (cp.async): every byte by the lanes' 16-byte requests of 16
//   sectors each; with two stages the loop copies the range's last block
//   again (every iteration waits for as many groups), so 3 K and V blocks a
//   CTA: 2 x (8 + 3 x 16 + 8) KiB = 128 KiB, 256 requests. No tensor copies.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s -o %t/wgmma --split-kv=false > /dev/null
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/wgmma --profile | FileCheck %s --check-prefix=WGMMA
// RUN: attn-compile %s -o %t/mma-sync --split-kv=false --matrix-unit=mma-sync > /dev/null
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/mma-sync --profile | FileCheck %s --check-prefix=MMA-SYNC
// WGMMA: profile {{[0-9]+}} thread instructions; warp instructions: {{.*}} mma 128 {{.*}}; global: 0 requests, 0.00 sectors each; tensor copies: 10 in (80.0 KiB), 2 out (16.0 KiB); wgmma: 96.0 KiB of shared operands{{$}}
// MMA-SYNC: profile {{[0-9]+}} thread instructions; warp instructions: {{.*}} mma 1024 {{.*}}; global: 256 requests, 16.00 sectors each{{$}}
module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132, smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @small(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16> {
  %o0 = tensor.empty() : tensor<1x1x128x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      outs(%o0 : tensor<1x1x128x64xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}
}
