#!/usr/bin/env bash
# Runs the unit tests and the lit suite under AddressSanitizer and
# UndefinedBehaviorSanitizer (docs/reliability.md, "Sanitizers and fuzzing").
# Builds what they need in build-sanitize/ (scripts/build-sanitize.sh: Clang
# 22, ASan + UBSan, the same build the fuzz targets use), then runs
#   1. AttnUnitTests, AttnRuntimeTests and AttnPtxEmulatorTests (GoogleTest;
#      the runtime's against its fake CUDA driver; the PTX emulator's, which
#      runs whatever PTX a bundle holds);
#   2. lit on build-sanitize/test: every test, with the sanitized attn-opt,
#      attn-run, attn-compile and attn-launch, except
#        Plugin/   Debian's mlir-opt loading AttnPlugin.so: an uninstrumented
#                  executable cannot load an instrumented library (the
#                  __asan_* symbols it needs come with the executable);
#        Install/  installs build-sanitize/ and builds a consumer against it
#                  without the sanitizer flags, then loads the plugin and the
#                  Python module into uninstrumented mlir-opt and python3:
#                  the same reason.
#        Robustness/pass-nesting.mlir, Robustness/pipeline-options.mlir
#                  some of their RUN lines load AttnPlugin.so into Debian's
#                  mlir-opt: the same reason.
#      The JIT tests (attn-run, Integration/CPU) and the MPI tests (mpirun of
#      the sanitized attn-run) run: only the project's code is instrumented,
#      the JIT-compiled kernels and MPICH are not.
# Any sanitizer report aborts its process, which fails the test.
# Usage: scripts/sanitize.sh [lit options...]   (e.g. --filter=Transforms)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${ATTN_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
source "$root/scripts/sanitizer-env.sh"

"$root/scripts/build-sanitize.sh" AttnUnitTests AttnRuntimeTests AttnPtxEmulatorTests \
  attn-opt attn-run attn-compile attn-launch attnrt-launch-overhead attn-doc \
  AttnPlugin  # Robustness/bundles.mlir reads its bytes as a garbage PTX file

failed=()
echo "== AttnUnitTests =="
"$build/bin/AttnUnitTests" --gtest_brief=1 || failed+=(AttnUnitTests)
echo "== AttnRuntimeTests =="
"$build/bin/AttnRuntimeTests" --gtest_brief=1 || failed+=(AttnRuntimeTests)
echo "== AttnPtxEmulatorTests =="
"$build/bin/AttnPtxEmulatorTests" --gtest_brief=1 || failed+=(AttnPtxEmulatorTests)

echo "== lit (sanitized tools; without the tests that load AttnPlugin.so) =="
lit="$(command -v lit || echo /usr/lib/llvm-22/bin/lit)"
"$lit" -sv \
  --filter-out='^ATTN :: (Plugin/|Install/|Robustness/(pass-nesting|pipeline-options)\.mlir)' \
  "$@" "$build/test" ||
  failed+=(lit)

if [ ${#failed[@]} -gt 0 ]; then
  echo "sanitize.sh: FAILED: ${failed[*]}"
  exit 1
fi
echo "sanitize.sh: unit tests and lit passed under ASan and UBSan"
