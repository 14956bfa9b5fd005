# Sanitizer and fuzzing builds (docs/reliability.md, "Sanitizers and fuzzing").
#
#   ATTN_SANITIZE=ON  AddressSanitizer and UndefinedBehaviorSanitizer on all
#                     project code (libraries, tools, tests); any UB report
#                     aborts (-fno-sanitize-recover) so that a test fails.
#   ATTN_FUZZ=ON      Clang only; implies ATTN_SANITIZE. Project code also
#                     gets libFuzzer's coverage instrumentation
#                     (-fsanitize=fuzzer-no-link) and test/Fuzz builds the
#                     fuzz targets (linked with -fsanitize=fuzzer).
#
# Only the project's code is instrumented: it still links Debian's shared,
# uninstrumented libMLIR.so and libLLVM.so. ASan then sees neither the
# allocations nor the accesses made inside them, but it sees every access
# the project's code makes, and the two are ABI-compatible. scripts/
# build-sanitize.sh configures such a build in build-sanitize/.
#
# Included from the top-level CMakeLists.txt after HandleLLVMOptions, whose
# flags this adjusts.

option(ATTN_SANITIZE
  "Build project code with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(ATTN_FUZZ
  "Build project code with libFuzzer coverage and the fuzz targets in test/Fuzz (Clang; implies ATTN_SANITIZE)"
  OFF)

if(ATTN_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ATTN_FUZZ needs Clang (libFuzzer), not "
    "${CMAKE_CXX_COMPILER_ID}: configure with -DCMAKE_CXX_COMPILER=clang++-22 "
    "-DCMAKE_C_COMPILER=clang-22 (scripts/build-sanitize.sh does)")
endif()

if(ATTN_SANITIZE OR ATTN_FUZZ)
  set(ATTN_SANITIZER_FLAGS
    -fsanitize=address,undefined
    # A UB report aborts instead of printing and going on: a test (or a fuzz
    # run) that meets one fails.
    -fno-sanitize-recover=undefined
    # Whole stacks in the reports, also through optimised frames.
    -fno-omit-frame-pointer)
  add_compile_options(${ATTN_SANITIZER_FLAGS})
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # The ASan runtime as a shared library (GCC's default), found through
    # the rpath. Linked statically into a PIE, its interceptors (malloc,
    # memcpy, ...) lie more than 2 GiB from the code that attn-run's JIT
    # maps, and the JIT's calls to them jump to truncated addresses.
    execute_process(
      COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-x86_64.so
      OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    get_filename_component(asan_runtime_dir "${asan_runtime}" DIRECTORY)
    # Executables only: a shared library leaves __asan_* to the executable
    # that loads it, which keeps it loadable into a fuzz target (static
    # runtime, test/Fuzz/CMakeLists.txt) too.
    string(APPEND CMAKE_EXE_LINKER_FLAGS
      " -shared-libasan -Wl,-rpath,${asan_runtime_dir}")
  endif()

  # HandleLLVMOptions links shared libraries with -z defs. With Clang, the
  # sanitizer runtimes are linked into executables only, and a shared library
  # (libattnrt, AttnPlugin.so, the Python module) resolves __asan_* and
  # __ubsan_* from the executable that loads it: they are undefined at link
  # time by design.
  foreach(flags CMAKE_SHARED_LINKER_FLAGS CMAKE_MODULE_LINKER_FLAGS)
    string(REPLACE "-Wl,-z,defs" "" ${flags} "${${flags}}")
  endforeach()
endif()

if(ATTN_FUZZ)
  # Coverage counters in every project library, so that libFuzzer is guided
  # by the code under test and not only by the fuzz target's own file. The
  # runtime comes with -fsanitize=fuzzer on the fuzz targets; the other
  # executables get the sanitizer runtimes' no-op coverage callbacks.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
