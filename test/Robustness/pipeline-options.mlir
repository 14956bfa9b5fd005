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
// Chips LLVM's NVPTX back end does not know aborted in instruction selection
// ("Cannot select"); a PTX version too old for the chip stopped in an LLVM
// ERROR; one LLVM does not know was ignored with a warning. LLVM's own tables
// decide which chips and versions it knows.
// RUN: not attn-opt %s --attn-to-ptx=chip=sm_999 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not attn-opt %s '--pass-pipeline=builtin.module(attn-to-ptx{chip=sm_1000})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not %mlir_opt --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin %s --pass-pipeline='builtin.module(attn-to-ptx{chip=sm_999})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: attn-to-ptx: chip sm_{{999|1000}} is not an NVPTX architecture that LLVM 22 knows; the kernels can be compiled for sm_80, sm_86, {{.*}}, sm_90, sm_90a, sm_100, sm_100a, {{.*}}, sm_120a
// RUN: not attn-opt %s '--pass-pipeline=builtin.module(attn-to-ptx{features=+ptx60})' 2>&1 | FileCheck %s --check-prefix=PTX60
// PTX60: error: attn-to-ptx: features: PTX 6.0 (+ptx60) is too old for sm_80: it needs PTX 7.0 or newer (+ptx70); leave features empty for the chip's minimum
// With several versions the newest counts, as in LLVM.
// RUN: not attn-opt %s '--pass-pipeline=builtin.module(attn-to-ptx{chip=sm_90a features=+ptx78})' 2>&1 | FileCheck %s --check-prefix=PTX78
// RUN: not attn-opt %s '--attn-to-ptx=chip=sm_90a features=+ptx60,+ptx78' 2>&1 | FileCheck %s --check-prefix=PTX78
// PTX78: error: attn-to-ptx: features: PTX 7.8 (+ptx78) is too old for sm_90a: it needs PTX 8.0 or newer (+ptx80); leave features empty for the chip's minimum
// RUN: not attn-opt %s '--pass-pipeline=builtin.module(attn-to-ptx{chip=sm_100a features=+ptx80})' 2>&1 | FileCheck %s --check-prefix=PTX80
// RUN: not %mlir_opt --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin %s --pass-pipeline='builtin.module(attn-to-ptx{chip=sm_100a features=+ptx80})' 2>&1 | FileCheck %s --check-prefix=PTX80
// PTX80: error: attn-to-ptx: features: PTX 8.0 (+ptx80) is too old for sm_100a: it needs PTX 8.6 or newer (+ptx86); leave features empty for the chip's minimum
// RUN: not attn-opt %s '--attn-to-ptx=chip=sm_90a features=+ptx99' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-PTX
// RUN: not attn-opt %s '--attn-to-ptx=chip=sm_90a features=+ptx80,+ptx79' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-PTX
// UNKNOWN-PTX: error: attn-to-ptx: features: +ptx{{99|79}} is not a PTX version that LLVM 22 knows; it knows +ptx70, {{.*}}, +ptx78, +ptx80, {{.*}}, +ptx90
// RUN: attn-opt %s '--attn-to-ptx=chip=sm_90a features=+ptx80' | FileCheck %s --check-prefix=GOOD
// RUN: attn-opt %s '--attn-to-ptx=chip=sm_100a features=+ptx60,+ptx86' | FileCheck %s --check-prefix=GOOD-100A
// GOOD: gpu.binary
// GOOD-SAME: .version 8.0
// GOOD-SAME: .target sm_90a
// GOOD-100A: gpu.binary
// GOOD-100A-SAME: .version 8.6
// GOOD-100A-SAME: .target sm_100a

func.func @f(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  %o0 = tensor.empty() : tensor<1x2x64x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      outs(%o0 : tensor<1x2x64x64xbf16>) {causal} -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}
