//===- CpuTiming.h - Timing attn-run's CPU runs -----------------*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What attn-run's forward and backward CPU runs share: a compile timed, the
// compiled code run a number of times, and one report line with the median.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUN_CPUTIMING_H
#define ATTN_RUN_CPUTIMING_H

#include "attn/Execution/CpuExecutable.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <string>

namespace mlir::attn {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A compiled attention and how long compiling it took.
struct TimedCompile {
  std::unique_ptr<CpuExecutable> executable;
  double seconds = 0;
};

/// Times `compile`.
llvm::Expected<TimedCompile> timeCompile(
    llvm::function_ref<llvm::Expected<std::unique_ptr<CpuExecutable>>()>
        compile);

/// Runs `run` `repeat` times (at least once) and returns "compile .. s; run
/// .. ms (one run of 1 | median of N), .. GFLOP/s on one CPU thread" for
/// `flops`, or the first error.
llvm::Expected<std::string> timeRuns(double compileSeconds, unsigned repeat,
                                     double flops,
                                     llvm::function_ref<llvm::Error()> run);

} // namespace mlir::attn

#endif // ATTN_RUN_CPUTIMING_H
