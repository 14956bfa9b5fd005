// The named pipelines check their options before adding a pass: chips the
// kernels cannot run on aborted in instruction selection ("Cannot select:
// intrinsic ... cp.async") or segfaulted (an empty chip), in attn-opt and
// through the plugin in stock mlir-opt.
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_75 2>&1 | FileCheck %s --check-prefix=OLD
// RUN: not %mlir_opt --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin %s --pass-pipeline='builtin.module(attn-to-ptx{chip=sm_70})' 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: error: attn-to-ptx: the kernels use sm_80 instructions (mma.sync m16n8k16, cp.async): sm_{{75|70}} is too old; use sm_80 or newer
// RUN: not attn-opt %s '--attn-to-ptx=chip=' 2>&1 | FileCheck %s --check-prefix=NOT-A-CHIP
// RUN: not attn-opt %s --attn-to-ptx=chip=gfx90a 2>&1 | FileCheck %s --check-prefix=NOT-A-CHIP
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_80a 2>&1 | FileCheck %s --check-prefix=NOT-A-CHIP
// NOT-A-CHIP: error: attn-to-ptx: chip must name an NVPTX architecture such as sm_80 or sm_90a, got "{{(gfx90a|sm_80a)?}}"
// RUN: not attn-opt %s '--attn-to-ptx=chip=sm_90a features=+garbage' 2>&1 | FileCheck %s --check-prefix=FEATURES
// FEATURES: error: attn-to-ptx: features must be PTX versions such as +ptx80 or +ptx83, got "+garbage"
// RUN: not attn-opt %s --attn-to-cpu=block-m=-16 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: attn-to-cpu: block-m and block-n must be from 0 (the default) to 4096, got -16 and 0
// RUN: not attn-opt %s --attn-to-cpu=block-n=4611686018427387904 2>&1 | FileCheck %s --check-prefix=HUGE-BLOCK
// HUGE-BLOCK: error: attn-to-cpu: block-m and block-n must be from 0 (the default) to 4096, got 0 and 4611686018427387904
// RUN: attn-opt %s '--attn-to-ptx=chip=sm_90a features=+ptx80' | FileCheck %s --check-prefix=GOOD
// GOOD: gpu.binary

func.func @f(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o0 = tensor.empty() : tensor<1x2x64x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      outs(%o0 : tensor<1x2x64x64xbf16>) {causal} -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}
