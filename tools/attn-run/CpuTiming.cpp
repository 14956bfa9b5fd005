//===- CpuTiming.cpp - Timing attn-run's CPU runs -------------------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//

#include "CpuTiming.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <vector>

using namespace mlir;
using namespace mlir::attn;

llvm::Expected<TimedCompile> mlir::attn::timeCompile(
    llvm::function_ref<llvm::Expected<std::unique_ptr<CpuExecutable>>()>
        compile) {
  Clock::time_point start = Clock::now();
  llvm::Expected<std::unique_ptr<CpuExecutable>> executable = compile();
  if (!executable)
    return executable.takeError();
  return TimedCompile{std::move(*executable), secondsSince(start)};
}

llvm::Expected<std::string>
mlir::attn::timeRuns(double compileSeconds, unsigned repeat, double flops,
                     llvm::function_ref<llvm::Error()> run) {
  std::vector<double> runSeconds;
  for (unsigned i = 0; i < std::max(repeat, 1u); ++i) {
    Clock::time_point start = Clock::now();
    if (llvm::Error err = run())
      return std::move(err);
    runSeconds.push_back(secondsSince(start));
  }
  std::sort(runSeconds.begin(), runSeconds.end());
  double median = runSeconds[runSeconds.size() / 2];
  return llvm::formatv("compile {0:F3} s; run {1:F3} ms ({2} of {3}), {4:F2} "
                       "GFLOP/s on one CPU thread",
                       compileSeconds, median * 1e3,
                       runSeconds.size() == 1 ? "one run" : "median",
                       runSeconds.size(), flops / median * 1e-9)
      .str();
}
