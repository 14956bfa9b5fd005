// attn-launch --validate (and every bundle load) refuses bundles whose PTX is
// empty, not PTX, truncated or lacks the manifest's kernel, and manifests that
// give a kernel no dynamic shared memory; integers up to 2^63 - 1 that
// attn-compile writes are read exactly. All of these used to pass --validate.
// The manifest is checked against its PTX (lib/Runtime/BundleCheck.h): each
// kernel's parameters against its entry's, its block against the entry's
// .maxntid and its tiles' warps, its dynamic shared memory against what its
// tiles stage, its grid and workspaces against its schedule (split-KV's
// splits, Lean's persistent CTAs). Each mutation below used to pass
// --validate and reach the driver.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s -o %t/good --split-kv=false
// RUN: attn-launch --validate %t/good | FileCheck %s --check-prefix=VALID
// VALID: 6 kernel(s), manifest valid
//
// RUN: cp -r %t/good %t/empty && : > %t/empty/kernels.ptx
// RUN: not attn-launch --validate %t/empty 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: attn-launch: error: {{.*}}empty/kernels.ptx is not PTX (no .version and .target directives)
// RUN: cp -r %t/good %t/garbage && head -c 4096 %attn_plugin > %t/garbage/kernels.ptx
// RUN: not attn-launch --validate %t/garbage 2>&1 | FileCheck %s --check-prefix=GARBAGE
// GARBAGE: attn-launch: error: {{.*}}garbage/kernels.ptx is not PTX
// RUN: cp -r %t/good %t/renamed && sed -i 's/f_attention0/g_attention0/' %t/renamed/kernels.ptx
// RUN: not attn-launch --validate %t/renamed 2>&1 | FileCheck %s --check-prefix=NO-KERNEL
// NO-KERNEL: attn-launch: error: {{.*}}renamed/kernels.ptx defines no kernel f_attention0 (the manifest's kernel); was it written with this manifest by attn-compile?
// RUN: cp -r %t/good %t/no-smem && sed -i 's/"dynamic_shared_memory": [0-9]*/"dynamic_shared_memory": 0/' %t/no-smem/manifest.json
// RUN: not attn-launch --validate %t/no-smem 2>&1 | FileCheck %s --check-prefix=NO-SMEM
// NO-SMEM: attn-launch: error: {{.*}}no-smem/manifest.json: manifest: kernels[0].dynamic_shared_memory: must be at least 1
// RUN: cp -r %t/good %t/aligned && sed -i 's/"alignment": 16/"alignment": 4611686018427387904/' %t/aligned/manifest.json
// RUN: attn-launch --validate %t/aligned | FileCheck %s --check-prefix=VALID
// RUN: cp -r %t/good %t/big && %python -c "import json, sys; m = json.load(open(sys.argv[1])); m['kernels'][0]['params'][0]['shape'][0] = 2**53 + 1; json.dump(m, open(sys.argv[1], 'w'))" %t/big/manifest.json
// RUN: not attn-launch --validate %t/big 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: attn-launch: error: {{.*}}big/manifest.json: manifest: kernels[0].params[0].shape: with its strides spans more than 2^48 bytes (256 TiB), more than any machine addresses
//
// The mutations edit one kernel's manifest entry: %{edit} MANIFEST KERNEL
// PYTHON runs PYTHON with `k` the kernel's entry.
// DEFINE: %{edit} = %python -c "import json, sys; p, name, code = sys.argv[1:]; m = json.load(open(p)); k = next(k for k in m['kernels'] if k['name'] == name); exec(code); json.dump(m, open(p, 'w'))"
//
// A parameter dropped from the manifest: LSE, the block_mask, a split-KV
// workspace (the kernel still reads it: it would read the next pointer, or
// past the end of the parameters).
// RUN: cp -r %t/good %t/no-lse && %{edit} %t/no-lse/manifest.json lse_attention0 "k['params'].pop()"
// RUN: not attn-launch --validate %t/no-lse 2>&1 | FileCheck %s --check-prefix=NO-LSE
// NO-LSE: attn-launch: error: {{.*}}no-lse/manifest.json: kernel lse_attention0: the manifest gives it 4 parameters (4 tensors, 0 workspaces, 0 scalars, 0 tensor maps: 4 x ptr), its entry in {{.*}}no-lse/kernels.ptx (line {{[0-9]+}}) takes 5 (5 x ptr); the runtime passes the tensors' and workspaces' pointers, then the scalars, each as 64 bits, then the tensor maps, 128 bytes each
// RUN: cp -r %t/good %t/no-block-mask && %{edit} %t/no-block-mask/manifest.json sparse_attention0 "k['params'].pop()"
// RUN: not attn-launch --validate %t/no-block-mask 2>&1 | FileCheck %s --check-prefix=NO-BLOCK-MASK
// NO-BLOCK-MASK: attn-launch: error: {{.*}}no-block-mask/manifest.json: kernel sparse_attention0: the manifest gives it 4 parameters (4 tensors, 0 workspaces, 0 scalars, 0 tensor maps: 4 x ptr), its entry in {{.*}}no-block-mask/kernels.ptx (line {{[0-9]+}}) takes 5 (5 x ptr)
// RUN: cp -r %t/good %t/no-workspace && %{edit} %t/no-workspace/manifest.json split_attention0 "k['workspaces'].pop()"
// RUN: not attn-launch --validate %t/no-workspace 2>&1 | FileCheck %s --check-prefix=NO-WORKSPACE
// NO-WORKSPACE: attn-launch: error: {{.*}}no-workspace/manifest.json: kernel split_attention0: the manifest gives it 6 parameters (4 tensors, 2 workspaces, 0 scalars, 0 tensor maps: 6 x ptr), its entry in {{.*}}no-workspace/kernels.ptx (line {{[0-9]+}}) takes 7 (7 x ptr)
// A PTX parameter the runtime cannot pass as 64 bits.
// RUN: cp -r %t/good %t/b32 && sed -i 's/\.param \.u64 \.ptr \.align 1 lse_attention0_param_4/.param .b32 lse_attention0_param_4/' %t/b32/kernels.ptx
// RUN: not attn-launch --validate %t/b32 2>&1 | FileCheck %s --check-prefix=B32
// B32: attn-launch: error: {{.*}}b32/manifest.json: kernel lse_attention0: the manifest gives it 5 parameters (5 tensors, 0 workspaces, 0 scalars, 0 tensor maps: 5 x ptr), its entry in {{.*}}b32/kernels.ptx (line {{[0-9]+}}) takes 5 (4 x ptr, 1 x b32)
//
// A block of other threads than the kernel was compiled for (.maxntid) and
// its tiles' warps lay out.
// RUN: cp -r %t/good %t/block32 && %{edit} %t/block32/manifest.json wide_attention0 "k['block'] = [32, 1, 1]"
// RUN: not attn-launch --validate %t/block32 2>&1 | FileCheck %s --check-prefix=BLOCK32
// BLOCK32: attn-launch: error: {{.*}}block32/manifest.json: kernel wide_attention0: block [32, 1, 1] is not the 256, 1, 1 threads its entry in {{.*}}block32/kernels.ptx was compiled for (.maxntid)
// RUN: cp -r %t/good %t/warps && %{edit} %t/warps/manifest.json wide_attention0 "k['tiles']['warps'] = 4" && sed -i 's/^\.maxntid 256, 1, 1$/.maxntid 128, 1, 1/' %t/warps/kernels.ptx
// RUN: not attn-launch --validate %t/warps 2>&1 | FileCheck %s --check-prefix=WARPS
// WARPS: attn-launch: error: {{.*}}warps/manifest.json: kernel wide_attention0: block [256, 1, 1] is not the 128, 1, 1 threads its entry in {{.*}}warps/kernels.ptx was compiled for (.maxntid)
// RUN: cp -r %t/good %t/tiles && %{edit} %t/tiles/manifest.json wide_attention0 "k['tiles']['warps'] = 4"
// RUN: not attn-launch --validate %t/tiles 2>&1 | FileCheck %s --check-prefix=TILES
// TILES: attn-launch: error: {{.*}}tiles/manifest.json: kernel wide_attention0: block [256, 1, 1] has 256 threads, its tiles' 4 warps 128
//
// Dynamic shared memory below what the tiles stage, or above any GPU's.
// RUN: cp -r %t/good %t/smem1 && %{edit} %t/smem1/manifest.json f_attention0 "k['dynamic_shared_memory'] = 1"
// RUN: not attn-launch --validate %t/smem1 2>&1 | FileCheck %s --check-prefix=SMEM1
// SMEM1: attn-launch: error: {{.*}}smem1/manifest.json: kernel f_attention0: dynamic_shared_memory 1 is less than the 49152 bytes its tiles stage (a 128-row Q block and 2 x 64-row K and V tiles, rows of D = 64 and Dv = 64 padded to 64 and 64, 2-byte elements)
// RUN: cp -r %t/good %t/smem-big && %{edit} %t/smem-big/manifest.json wide_attention0 "k['dynamic_shared_memory'] = 2**40"
// RUN: not attn-launch --validate %t/smem-big 2>&1 | FileCheck %s --check-prefix=SMEM-BIG
// SMEM-BIG: attn-launch: error: {{.*}}smem-big/manifest.json: kernel wide_attention0: dynamic_shared_memory 1099511627776 exceeds 232448 bytes (227 KiB), the most any GPU gives a block
//
// Split-KV's grid z is Hq / p x splits (2 x 4 here: the default tiles pack
// the 4 query heads of a key/value head, p = 4); Lean's grid is the CTAs its
// workspaces were sized for.
// RUN: cp -r %t/good %t/z1 && %{edit} %t/z1/manifest.json split_attention0 "k['grid'][2] = 1"
// RUN: not attn-launch --validate %t/z1 2>&1 | FileCheck %s --check-prefix=Z1
// Z1: attn-launch: error: {{.*}}z1/manifest.json: kernel split_attention0: grid z 1 is not its 2 tiled heads (Hq 8 / packed_heads 4) times a split count; its grid must be FlashAttention-2's (ceil(p Sq / block_m), B, Hq / p x splits) with block_m 64 and p (packed_heads) 4
// RUN: cp -r %t/good %t/z8 && %{edit} %t/z8/manifest.json split_attention0 "k['grid'][2] = 2"
// RUN: not attn-launch --validate %t/z8 2>&1 | FileCheck %s --check-prefix=Z8
// Z8: attn-launch: error: {{.*}}z8/manifest.json: kernel split_attention0: grid z 2 gives 2 tiled heads 1 split each, but the kernel has workspaces, which only split-KV's (2 splits or more) and Lean's kernels have
// RUN: cp -r %t/good %t/lean-grid && %{edit} %t/lean-grid/manifest.json lean_attention0 "k['grid'][0] = 16"
// RUN: not attn-launch --validate %t/lean-grid 2>&1 | FileCheck %s --check-prefix=LEAN-GRID
// LEAN-GRID: attn-launch: error: {{.*}}lean-grid/manifest.json: kernel lean_attention0: a persistent grid of 16 CTAs, but its workspaces are for 8 (flags: 32 bytes, 4 a CTA): a Lean kernel runs on the CTAs it was compiled for
//
// PTX cut inside the last kernel's body.
// RUN: cp -r %t/good %t/truncated && %python -c "import sys; p = sys.argv[1]; t = open(p).read(); open(p, 'w').write(t[:t.rindex('ret;')])" %t/truncated/kernels.ptx
// RUN: not attn-launch --validate %t/truncated 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// TRUNCATED: attn-launch: error: {{.*}}truncated/kernels.ptx: ends inside the body of kernel sparse_attention0 opened at line {{[0-9]+}}: the file is truncated or not whole PTX

func.func @f(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>)
      outs(%o0 : tensor<1x2x128x64xbf16>) {causal} -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}

// LSE (a fifth parameter), 8 warps (D = 128), split-KV (4 splits of each of
// 8 query heads), Lean (8 persistent CTAs), a block_mask parameter.
func.func @lse(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>, %o0: tensor<1x2x128x64xbf16>, %l0: tensor<1x2x128xf32>) -> (tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {
  %o, %l = attn.attention ins(%q, %k, %v : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>)
      outs(%o0, %l0 : tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>) {causal} -> tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
  return %o, %l : tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>
}

func.func @wide(%q: tensor<1x2x256x128xbf16>, %o0: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
  %o = attn.attention ins(%q, %q, %q : tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>)
      outs(%o0 : tensor<1x2x256x128xbf16>) {causal} -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

func.func @split(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x512x64xbf16>, %v: tensor<1x2x512x64xbf16>, %o0: tensor<1x8x1x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.attention ins(%q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>)
      outs(%o0 : tensor<1x8x1x64xbf16>) {partition = #attn.split_kv<splits = 4>} -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}

func.func @lean(%q: tensor<1x8x1x64xbf16>, %k: tensor<1x2x512x64xbf16>, %v: tensor<1x2x512x64xbf16>, %o0: tensor<1x8x1x64xbf16>) -> tensor<1x8x1x64xbf16> {
  %o = attn.attention ins(%q, %k, %v : tensor<1x8x1x64xbf16>, tensor<1x2x512x64xbf16>, tensor<1x2x512x64xbf16>)
      outs(%o0 : tensor<1x8x1x64xbf16>) {partition = #attn.lean<ctas = 8>} -> tensor<1x8x1x64xbf16>
  return %o : tensor<1x8x1x64xbf16>
}

func.func @sparse(%q: tensor<1x2x128x64xbf16>, %bm: tensor<1x2x1x2xi8>, %o0: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o = attn.attention ins(%q, %q, %q : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>)
      block_mask(%bm : tensor<1x2x1x2xi8> blocks [128, 64]) outs(%o0 : tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
