// Bad input never crashes attn-opt: each case ends in a diagnostic and a
// non-zero exit (`not` fails the test on a crash, which exits by a signal).
// RUN: not attn-opt %S/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not attn-opt %S/Inputs/wrong-types.mlir 2>&1 | FileCheck %s --check-prefix=TYPES
// RUN: not attn-opt %S/Inputs/garbage.mlir 2>&1 | FileCheck %s --check-prefix=GARBAGE
// RUN: not attn-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not attn-opt %S/Inputs/unknown-attr.mlir 2>&1 | FileCheck %s --check-prefix=ATTR
// RUN: head -c 300 %S/../../Dialect/Attn/ops.mlir | not attn-opt 2>&1 | FileCheck %s --check-prefix=CUT

// TRUNCATED: truncated.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// TYPES: wrong-types.mlir:{{[0-9]+}}:{{[0-9]+}}: error: use of value '%k' expects different type than prior uses: 'tensor<1x2x16x64xf16>' vs 'tensor<1x2x16x64xf32>'
// GARBAGE: garbage.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// MISSING: attn-opt: error: cannot read {{.*}}does-not-exist.mlir: No such file or directory
// ATTR: unknown-attr.mlir:{{[0-9]+}}:{{[0-9]+}}: error: duplicate or unknown struct parameter name: parts
// CUT: <stdin>:{{[0-9]+}}:{{[0-9]+}}: error:
