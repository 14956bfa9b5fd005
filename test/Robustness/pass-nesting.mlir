// The named pipelines and the module passes, nested under an op they do not
// run on, end in a diagnostic and a non-zero exit (they aborted in the pass
// manager), in attn-opt and through the plugin in stock mlir-opt.
// RUN: not attn-opt %s --pass-pipeline='builtin.module(func.func(attn-to-cpu))' 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not attn-opt %s --pass-pipeline='builtin.module(func.func(attn-to-ptx{chip=sm_90a}))' 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not attn-opt %s --pass-pipeline='any(attn-to-cpu)' 2>&1 | FileCheck %s --check-prefix=ANY
// RUN: not attn-opt %s --pass-pipeline='builtin.module(func.func(attn-select-schedule))' 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not %mlir_opt --load-dialect-plugin=%attn_plugin --load-pass-plugin=%attn_plugin %s --pass-pipeline='builtin.module(func.func(attn-to-cpu))' 2>&1 | FileCheck %s --check-prefix=CPU

// CPU: error: attn-to-cpu runs on a builtin.module, not nested in 'func.func': use --pass-pipeline='builtin.module(attn-to-cpu)'
// PTX: error: attn-to-ptx runs on a builtin.module, not nested in 'func.func': use --pass-pipeline='builtin.module(attn-to-ptx)'
// ANY: error: attn-to-cpu runs on a builtin.module, not nested in 'any'
// PASS: error: Can't add pass 'AttnSelectSchedule' restricted to 'builtin.module' on a PassManager intended to run on 'func.func'

func.func @f(%q: tensor<1x2x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32> {
  %o0 = tensor.empty() : tensor<1x2x16x64xf32>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>)
      outs(%o0 : tensor<1x2x16x64xf32>) -> tensor<1x2x16x64xf32>
  return %o : tensor<1x2x16x64xf32>
}
