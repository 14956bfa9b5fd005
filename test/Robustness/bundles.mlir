// attn-launch --validate (and every bundle load) refuses bundles whose PTX is
// empty, not PTX, or lacks the manifest's kernel, and manifests that give a
// kernel no dynamic shared memory; integers up to 2^63 - 1 that attn-compile
// writes are read exactly. All of these used to pass --validate.
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-compile %s -o %t/good
// RUN: attn-launch --validate %t/good | FileCheck %s --check-prefix=VALID
// VALID: 1 kernel(s), manifest valid
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

func.func @f(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>, %v: tensor<1x2x128x64xbf16>) -> tensor<1x2x128x64xbf16> {
  %o0 = tensor.empty() : tensor<1x2x128x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>)
      outs(%o0 : tensor<1x2x128x64xbf16>) {causal} -> tensor<1x2x128x64xbf16>
  return %o : tensor<1x2x128x64xbf16>
}
