//===- BundleFuzzer.cpp - Fuzz libattnrt's bundle check -------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target attn-fuzz-bundle. The input is a kernel bundle held in
// memory: its manifest.json, a NUL byte, then its PTX (without a NUL, all of
// it is the manifest and the PTX is empty). Both go to
// attnrtBundleValidateFromMemory, the check every bundle load runs
// (lib/Runtime/BundleCheck.h: the PTX's structure, the manifest against each
// kernel's entry, its block, shared memory, grid and workspaces). A bundle
// it refuses must come with ATTNRT_ERROR_INVALID_BUNDLE and a message; one
// it accepts must have a kernel; the same input must get the same answer
// twice (the check keeps no state).
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/attnrt.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "attn-fuzz-bundle: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = reinterpret_cast<const char *>(data);
  const void *nul = std::memchr(data, 0, size);
  size_t manifestBytes =
      nul ? static_cast<size_t>(static_cast<const uint8_t *>(nul) - data)
          : size;
  std::string manifest(text, manifestBytes);
  // The PTX up to a second NUL, if any: the API takes C strings.
  std::string ptx;
  if (nul)
    ptx = std::string(text + manifestBytes + 1, size - manifestBytes - 1)
              .c_str();

  int32_t count = -1;
  attnrtStatus status = attnrtBundleValidateFromMemory(manifest.c_str(),
                                                       ptx.c_str(), &count);
  std::string message = attnrtLastErrorMessage();
  if (status == ATTNRT_SUCCESS) {
    if (count < 1)
      fail("a bundle was accepted with no kernel");
  } else {
    if (status != ATTNRT_ERROR_INVALID_BUNDLE)
      fail("a bundle was refused with another status than "
           "ATTNRT_ERROR_INVALID_BUNDLE");
    if (message.empty())
      fail("a bundle was refused without an error message");
    if (count != -1)
      fail("a refused bundle set the kernel count");
  }
  int32_t again = -1;
  if (attnrtBundleValidateFromMemory(manifest.c_str(), ptx.c_str(), &again) !=
          status ||
      again != count ||
      (status != ATTNRT_SUCCESS && message != attnrtLastErrorMessage()))
    fail("the same bundle was checked differently twice");
  return 0;
}
