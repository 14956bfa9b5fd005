//===- NpyFuzzer.cpp - Fuzz the .npy reader -------------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// libFuzzer target attn-fuzz-npy. The input is a .npy file (attn-run's
// --inputs). readNpy only reads from a path, so the input is written to a
// file in a private temporary directory and read as any element type, as
// the caller's expectation (bf16, f32) and without one. An array that reads
// must keep NpyArray's promise (data holds numElements() elements), convert,
// and come back the same through writeNpy and readNpy. Read errors are
// expected and silent.
//
//===----------------------------------------------------------------------===//

#include "attn/Support/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

using namespace mlir::attn;

namespace {

llvm::SmallString<128> &tempDir() {
  static llvm::SmallString<128> dir;
  return dir;
}

std::string pathIn(llvm::StringRef name) {
  llvm::SmallString<128> path(tempDir());
  llvm::sys::path::append(path, name);
  return std::string(path);
}

[[noreturn]] void fail(const char *what) {
  llvm::errs() << "attn-fuzz-npy: " << what << "\n";
  std::abort();
}

/// What every array read from a file must satisfy.
void checkArray(const NpyArray &array) {
  for (int64_t dim : array.shape)
    if (dim < 0)
      fail("readNpy accepted a negative dimension");
  if (static_cast<uint64_t>(array.numElements()) *
          npyElementBytes(array.elementType) !=
      array.data.size())
    fail("readNpy returned data whose size does not match the shape");
  if (npyToFloats(array).size() != static_cast<size_t>(array.numElements()) ||
      npyToDoubles(array).size() != static_cast<size_t>(array.numElements()))
    fail("npyToFloats/npyToDoubles returned the wrong number of elements");

  // Written and read again, the array is the same.
  std::string copy = pathIn("copy.npy");
  if (NpyError err = writeNpy(copy, array); !err.empty()) {
    llvm::errs() << err << "\n";
    fail("writeNpy refused an array that readNpy returned");
  }
  NpyArray again;
  if (NpyError err = readNpy(copy, again, array.elementType); !err.empty()) {
    llvm::errs() << err << "\n";
    fail("readNpy refused what writeNpy wrote");
  }
  if (again.elementType != array.elementType || again.shape != array.shape ||
      again.data != array.data)
    fail("an array changed through writeNpy and readNpy");
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // On tmpfs where there is one: writeNpy fsyncs what it writes, which on
  // a disk would cost more than the rest of a run.
  std::string prefix = llvm::sys::fs::is_directory("/dev/shm")
                           ? "/dev/shm/attn-fuzz-npy"
                           : "attn-fuzz-npy";
  if (llvm::sys::fs::createUniqueDirectory(prefix, tempDir()))
    fail("cannot create a temporary directory");
  // libFuzzer ends a bounded run with exit(); a crash leaves the directory.
  std::atexit([] { llvm::sys::fs::remove_directories(tempDir()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input = pathIn("input.npy");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input, ec);
    if (ec)
      fail("cannot write the input file");
    os.write(reinterpret_cast<const char *>(data), size);
  }
  const std::optional<NpyElementType> expectations[] = {
      std::nullopt, NpyElementType::BF16, NpyElementType::F32};
  for (std::optional<NpyElementType> expected : expectations) {
    NpyArray array;
    if (readNpy(input, array, expected).empty())
      checkArray(array);
  }
  return 0;
}
