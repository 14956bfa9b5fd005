# Sourced by scripts/fuzz.sh and scripts/sanitize.sh: how the programs of
# build-sanitize/ (ASan + UBSan, cmake/AttnSanitizers.cmake) run. Options
# already set in the environment win.

# Symbolized stacks (file:line) in every report.
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}"
# abort_on_error: a report kills the process with SIGABRT instead of exiting
# with 1, which a lit RUN line under `not` would take for an expected error.
# detect_stack_use_after_return (off by default): a returned frame's locals
# read through a dangling reference.
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons and unpoisons its
# slabs only where it is compiled with ASan, here in the project's inline
# copies and not in libMLIR.so, so memory that libMLIR allocates from an
# allocator the project's code reset reads as poisoned (use-after-poison in
# FileLineColRange::get on every parse): no such report is real here.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:allow_user_poisoning=0:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}"
# Every UB report with its stack; -fno-sanitize-recover already makes it
# fatal.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Leaks in libraries we do not build (MPICH) are not ours to fix.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lsan-suppressions.txt:print_suppressions=0}"
