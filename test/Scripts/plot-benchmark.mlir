// benchmarks/plot_benchmark.py draws either CSV of the GPU check (the header
// says which) and refuses others. (Not MLIR: lit runs .mlir files.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %attn_src_root/benchmarks/plot_benchmark.py %attn_src_root/docs/data/h100-2026-11-22-benchmark.csv %t/prefill.png | FileCheck %s --check-prefix=PREFILL
// RUN: %python %attn_src_root/benchmarks/plot_benchmark.py %S/Inputs/decode-layout.csv %t/decode.png | FileCheck %s --check-prefix=DECODE
// RUN: %python -c "import sys; from matplotlib.image import imread; print(*(imread(p).shape[:2] for p in sys.argv[1:]))" %t/prefill.png %t/decode.png | FileCheck %s --check-prefix=SIZE
// RUN: printf 'a,b\n1,2\n' > %t/other.csv
// RUN: not %python %attn_src_root/benchmarks/plot_benchmark.py %t/other.csv %t/other.png 2>&1 | FileCheck %s --check-prefix=OTHER
// PREFILL: plot: {{.*}}prefill.png
// DECODE: plot: {{.*}}decode.png
// Four panels in a row; a row per head ratio, two columns for the most
// batches of one (the other's unused panel hidden).
// SIZE: (396, 1760) (792, 924)
// OTHER: is neither a benchmark.csv nor a decode.csv (columns a, b)
