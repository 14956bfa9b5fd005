// attn-run --backward: what it cannot run ends in one clear message and a
// non-zero exit.
// RUN: not attn-run --backward %s 2>&1 | FileCheck %s --check-prefix=NO-LSE
// NO-LSE: attn-run: error: --backward needs the attention's LSE: give it an LSE destination (--lse)
// RUN: not attn-run --backward %S/Inputs/region-without-derivative.mlir 2>&1 | FileCheck %s --check-prefix=REGION
// REGION: attn-run: error: lowering with attn-to-cpu failed:
// REGION-NEXT: {{.*}}region-without-derivative.mlir:{{.*}}: attn-decompose-grad: the score region uses the score in 'math.erf', which has no derivative rule
// RUN: not attn-run --backward --heads=2 --seq-q=16 --head-dim=16 --grad-splits=0 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not attn-run --backward --heads=2 --seq-q=16 --head-dim=16 --grad-splits=17 2>&1 | FileCheck %s --check-prefix=SPLITS
// SPLITS: attn-run: error: --grad-splits must be from 1 to Sk = 16 (a piece holds at least one key/value block), got
// RUN: not attn-run --backward --heads=2 --seq-q=16 --head-dim=16 --device=emulator 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: error: {{.*}}--backward runs the gradient on the CPU, of an attention on one device; drop --device or the distribution
// RUN: not attn-run --backward --heads=4 --seq-q=16 --head-dim=16 --attention2d=2,1 2>&1 | FileCheck %s --check-prefix=DEVICE

func.func @no_lse(%q: tensor<1x2x16x16xf32>, %o: tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32> {
  %r = attn.attention ins(%q, %q, %q : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>)
      outs(%o : tensor<1x2x16x16xf32>) -> tensor<1x2x16x16xf32>
  return %r : tensor<1x2x16x16xf32>
}
