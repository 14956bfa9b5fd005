// Sources that would crash or stall MLIR's own parser (stock mlir-opt too)
// are refused before parsing by attn-opt, attn-run and attn-compile: nesting
// 10,000 levels deep overflowed the stack (segfault), and a literal of a
// million digits took minutes. Strings are not limited (dense hex blobs).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "print('module attributes {test.x = ' + '[' * 10000 + '1' + ']' * 10000 + '} {}')" > %t/nested.mlir
// RUN: %python -c "print('module {' * 10000 + '}' * 10000)" > %t/modules.mlir
// RUN: %python -c "print('module attributes {test.x = ' + '9' * 1000000 + ' : i64} {}')" > %t/digits.mlir
// RUN: %python -c "print('module attributes {test.x = \"' + '[' * 10000 + '\"} {}')" > %t/string.mlir
// RUN: not attn-opt %t/nested.mlir 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not attn-opt %t/modules.mlir 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not attn-run %t/nested.mlir 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: not attn-compile %t/modules.mlir -o %t/bundle 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: error: cannot parse {{.*}}.mlir: line 1: brackets nested more than 1000 levels deep, which would overflow MLIR's recursive parser
// RUN: not attn-opt %t/digits.mlir 2>&1 | FileCheck %s --check-prefix=DIGITS
// DIGITS: attn-opt: error: cannot parse {{.*}}digits.mlir: line 1: a number of more than 4096 digits, which MLIR's parser would take minutes over
// RUN: attn-opt %t/string.mlir | FileCheck %s --check-prefix=STRING
// STRING: test.x = "{{\[+}}"
// RUN: not attn-opt /dev/zero 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: attn-opt: error: cannot read /dev/zero: it is a character device, not a regular file
// A linalg integer list that does not parse: MLIR 22's linalg.broadcast
// parser then uses a null attribute and segfaults (found by attn-fuzz-mlir;
// stock mlir-opt crashes too). Well-formed lists still parse.
// RUN: %python -c "print('func.func @f(%%a: tensor<4xf32>, %%b: tensor<2x4xf32>) -> tensor<2x4xf32> {\n  %%r = linalg.broadcast ins(%%a : tensor<4xf32>) outs(%%b : tensor<2x4xf32>) dimensions = [1x8]\n  return %%r : tensor<2x4xf32>\n}')" > %t/list.mlir
// RUN: not attn-opt %t/list.mlir 2>&1 | FileCheck %s --check-prefix=LIST
// LIST: attn-opt: error: cannot parse {{.*}}list.mlir: line 2: a 'dimensions' or 'permutation' list that is not integers in [...], on which MLIR 22's linalg parsers crash
// RUN: sed 's/\[1x8\]/[0]/' %t/list.mlir | attn-opt - | FileCheck %s --check-prefix=GOOD
// GOOD: linalg.broadcast ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<2x4xf32>) dimensions = [0]
