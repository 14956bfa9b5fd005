//===- attn-launch.cpp - Run, check and time kernel bundles ---------------===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// attn-launch runs the kernels of bundles written by attn-compile through
// libattnrt on seeded random inputs, checks them against the GPU reference
// and, with --bench, times them (docs/runtime.md). It links neither LLVM nor
// MLIR: it is what runs on a GPU machine that has only the CUDA driver.
//
//===----------------------------------------------------------------------===//

#include "attn/GpuCheck/GpuCheck.h"
#include "attn/Support/Files.h"
#include "attn/Support/SizeLimits.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

using namespace attn::gpucheck;

namespace {

const char *kUsage =
    "usage: attn-launch BUNDLE... [options]\n"
    "Runs each kernel of each bundle (a directory written by attn-compile)\n"
    "on seeded random inputs and checks O and LSE against an f32 attention\n"
    "computed on the same GPU. A bundle with a reference case in its\n"
    "directory reference/ (attn-run --write-reference) runs that case's\n"
    "kernel on the case's inputs instead and checks it against the case's\n"
    "outputs: the float64 reference, which evaluates score regions and\n"
    "constant block masks too. A backward kernel is checked against its\n"
    "gradient case, or only timed (--bench --no-check) without one.\n"
    "  --kernel=NAME       only this kernel (repeatable)\n"
    "  --device=N          CUDA device (default 0)\n"
    "  --seed=N            seed of the inputs (default 1)\n"
    "  --no-check          do not compute the reference\n"
    "  --reference=SIDE    where the seeded inputs and the f32 reference\n"
    "                      are computed: device (the GPU reference\n"
    "                      kernels) or host (the same code, compiled for\n"
    "                      the host); default: host on the PTX emulator,\n"
    "                      device otherwise\n"
    "  --tolerance=X       relative L2 tolerance (default: 1e-5 for f32,\n"
    "                      twice a naive 16-bit attention's error; a\n"
    "                      reference case's own)\n"
    "  --bench             time the kernel: median of CUDA-event timings\n"
    "  --warmup=N          launches before timing (default 10)\n"
    "  --iterations=N      timed launches (default 100)\n"
    "  --peak-tflops=X     the device's measured matmul peak, for the\n"
    "                      fraction printed with --bench\n"
    "  --csv=FILE          append one row per kernel to FILE\n"
    "  --lengths=B,SQ,SK   the batch, Sq and Sk of kernels compiled for\n"
    "                      run-time lengths (repeatable: each kernel runs\n"
    "                      once per triple; a reference case's kernel runs\n"
    "                      once, at the case's)\n"
    "  --validate          only read and check the bundles and read their\n"
    "                      reference cases (no GPU needed)\n"
    "  --probe             only open the device and describe it (exit 1 if\n"
    "                      there is none)\n"
    "  --emulator          run on the PTX emulator (as "
    "ATTNRT_LIBCUDA=emulator)\n"
    "  --profile           on the PTX emulator (ATTNRT_LIBCUDA=emulator):\n"
    "                      print each kernel's dynamic instruction counts\n"
    "                      by class, shared-memory wavefronts against the\n"
    "                      conflict-free count, global sectors per request\n";

/// Whether `kernel` is an attn.attention_grad's (Q, K, V, O, LSE, dO, dQ,
/// dK, dV[, key_lengths]).
bool isBackwardKernel(attnrtKernel kernel) {
  attnrtParamInfo param;
  return attnrtKernelParamCount(kernel) >= 9 &&
         attnrtKernelGetParam(kernel, 5, &param) == ATTNRT_SUCCESS &&
         std::string(param.name) == "dO";
}

int fail(const std::string &message) {
  std::fprintf(stderr, "attn-launch: error: %s\n", message.c_str());
  return 1;
}

bool parseNumber(const std::string &text, double &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && errno == 0;
}

bool parseInteger(const std::string &text, long long min, long long max,
                  long long &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtoll(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && errno == 0 && value >= min &&
         value <= max;
}

/// Parses comma-separated integers, each from `min` to `max`.
bool parseIntegers(const std::string &text, long long min, long long max,
                   std::vector<long long> &values) {
  values.clear();
  for (size_t start = 0;;) {
    size_t comma = std::min(text.find(',', start), text.size());
    if (!parseInteger(text.substr(start, comma - start), min, max,
                      values.emplace_back()))
      return false;
    if (comma == text.size())
      return true;
    start = comma + 1;
  }
}

/// The first launch of KERNEL in the emulator's profile file (JSON lines,
/// ATTN_EMULATOR_PROFILE), as a report line; the file is emptied for the
/// next kernel.
std::string takeProfile(const std::string &path, const std::string &kernel) {
  std::string text;
  if (!mlir::attn::files::readFile(path, 1 << 26, text).empty())
    return "none (the profile file cannot be read)";
  if (FILE *truncate = std::fopen(path.c_str(), "w"))
    std::fclose(truncate);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    nlohmann::json line =
        nlohmann::json::parse(text.substr(start, end - start), nullptr, false);
    start = end + 1;
    if (line.is_discarded() || line.value("kernel", "") != kernel)
      continue;
    auto number = [&](const char *key) {
      return line.value(key, uint64_t(0));
    };
    std::string report =
        std::to_string(number("thread_instructions")) +
        " thread instructions; warp instructions:";
    for (auto &[name, count] : line["warp_instructions"].items())
      report += " " + name + " " + std::to_string(count.get<uint64_t>());
    char shared[160], global[120];
    uint64_t requests = number("shared_requests"),
             globalRequests = number("global_requests");
    std::snprintf(shared, sizeof shared,
                  "; shared: %llu requests, %llu wavefronts (%.2fx the "
                  "conflict-free %llu)",
                  (unsigned long long)requests,
                  (unsigned long long)number("shared_wavefronts"),
                  number("shared_ideal_wavefronts")
                      ? double(number("shared_wavefronts")) /
                            number("shared_ideal_wavefronts")
                      : 0.0,
                  (unsigned long long)number("shared_ideal_wavefronts"));
    std::snprintf(global, sizeof global,
                  "; global: %llu requests, %.2f sectors each",
                  (unsigned long long)globalRequests,
                  globalRequests ? double(number("global_sectors")) /
                                       globalRequests
                                 : 0.0);
    char bulk[200] = "";
    if (number("tensor_loads") || number("tensor_stores") ||
        number("wgmma_shared_bytes"))
      std::snprintf(bulk, sizeof bulk,
                    "; tensor copies: %llu in (%.1f KiB), %llu out (%.1f "
                    "KiB); wgmma: %.1f KiB of shared operands",
                    (unsigned long long)number("tensor_loads"),
                    number("tensor_load_bytes") / 1024.0,
                    (unsigned long long)number("tensor_stores"),
                    number("tensor_store_bytes") / 1024.0,
                    number("wgmma_shared_bytes") / 1024.0);
    return report + shared + global + bulk;
  }
  return "none (only the PTX emulator, ATTNRT_LIBCUDA=emulator, profiles "
         "kernels)";
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> bundles, kernels;
  CheckOptions options;
  std::vector<std::optional<CheckOptions::Lengths>> lengthRuns;
  long long device = 0;
  std::string csvPath;
  bool validateOnly = false, probe = false, profile = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *option, std::string &out) {
      size_t length = std::strlen(option);
      if (arg.compare(0, length, option) != 0 || arg[length] != '=')
        return false;
      out = arg.substr(length + 1);
      return true;
    };
    std::string text;
    long long integer = 0;
    double number = 0;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--no-check") {
      options.check = false;
    } else if (arg == "--bench") {
      options.bench = true;
    } else if (arg == "--validate") {
      validateOnly = true;
    } else if (arg == "--probe") {
      probe = true;
    } else if (arg == "--profile") {
      profile = true;
    } else if (arg == "--emulator") {
      // libattnrt opens the driver ATTNRT_LIBCUDA names on first use.
      setenv("ATTNRT_LIBCUDA", "emulator", 1);
    } else if (value("--reference", text)) {
      if (text == "device")
        options.reference = ReferenceSide::Device;
      else if (text == "host")
        options.reference = ReferenceSide::Host;
      else
        return fail("--reference wants device or host, not '" + text + "'");
    } else if (value("--kernel", text)) {
      kernels.push_back(text);
    } else if (value("--csv", text)) {
      csvPath = text;
    } else if (value("--device", text)) {
      // The driver's device ordinals are ints.
      if (!parseInteger(text, 0, mlir::attn::kMaxCount, device))
        return fail("--device wants a device index from 0 to " +
                    std::to_string(mlir::attn::kMaxCount) + ", not '" + text +
                    "'");
    } else if (value("--seed", text)) {
      if (!parseInteger(text, 0, LLONG_MAX, integer))
        return fail("--seed wants a non-negative integer, not '" + text + "'");
      options.seed = static_cast<uint64_t>(integer);
    } else if (value("--tolerance", text)) {
      if (!parseNumber(text, number) || !(number > 0))
        return fail("--tolerance wants a positive number, not '" + text + "'");
      options.tolerance = number;
    } else if (value("--warmup", text)) {
      if (!parseInteger(text, 0, 100000, integer))
        return fail("--warmup wants an integer in [0, 100000], not '" + text +
                    "'");
      options.warmup = static_cast<int>(integer);
    } else if (value("--iterations", text)) {
      if (!parseInteger(text, 1, 100000, integer))
        return fail("--iterations wants an integer in [1, 100000], not '" +
                    text + "'");
      options.iterations = static_cast<int>(integer);
    } else if (value("--lengths", text)) {
      // The GPU reference and the key lengths take them as int32s.
      std::vector<long long> sizes;
      if (!parseIntegers(text, 1, mlir::attn::kMaxCount, sizes) ||
          sizes.size() != 3)
        return fail("--lengths wants three integers B,SQ,SK from 1 to " +
                    std::to_string(mlir::attn::kMaxCount) + ", not '" + text +
                    "'");
      CheckOptions::Lengths lengths;
      lengths.batch = sizes[0];
      lengths.queryLen = sizes[1];
      lengths.keyLen = sizes[2];
      lengthRuns.push_back(lengths);
    } else if (value("--peak-tflops", text)) {
      if (!parseNumber(text, number) || !(number > 0))
        return fail("--peak-tflops wants a positive number, not '" + text +
                    "'");
      options.peakTflops = number;
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "' (see --help)");
    } else {
      bundles.push_back(arg);
    }
  }
  if (bundles.empty() && !probe)
    return fail("no bundle given (see --help)");
  if (lengthRuns.empty())
    lengthRuns.push_back(std::nullopt);

  // The reference case of each bundle that has one, read before any GPU
  // time is spent.
  // A backward kernel's case is a gradient case.
  std::vector<std::optional<ReferenceCase>> references(bundles.size());
  std::vector<std::optional<GradientCase>> gradientCases(bundles.size());
  for (size_t i = 0; i < bundles.size(); ++i) {
    std::string dir = bundleReferenceCaseDir(bundles[i]);
    if (!isReferenceCase(dir))
      continue;
    std::string error = isGradientCase(dir)
                            ? readGradientCase(dir, gradientCases[i].emplace())
                            : readReferenceCase(dir, references[i].emplace());
    if (!error.empty())
      return fail(error);
  }

  if (validateOnly) {
    for (size_t i = 0; i < bundles.size(); ++i) {
      int32_t count = 0;
      if (attnrtBundleValidate(bundles[i].c_str(), &count) != ATTNRT_SUCCESS)
        return fail(attnrtLastErrorMessage());
      std::printf("%s: %d kernel(s), manifest valid", bundles[i].c_str(),
                  count);
      if (references[i] || gradientCases[i])
        std::printf(
            "; %s case of %s read (matched to the kernel when it "
            "runs)",
            references[i] ? "reference" : "gradient",
            (references[i] ? references[i]->kernel : gradientCases[i]->kernel)
                .c_str());
      std::printf("\n");
    }
    return 0;
  }

  // The rows are gathered in memory and the file is replaced as a whole at
  // the end (mlir::attn::files::writeFile), so a failed write leaves the old
  // file. The old rows are read first, before any GPU time is spent: a CSV
  // path that cannot be read (a device, a FIFO) fails here.
  std::string csvBefore;
  char *csvRows = nullptr;
  size_t csvRowBytes = 0;
  std::FILE *csv = nullptr;
  if (!csvPath.empty() && !probe) {
    bool fresh = access(csvPath.c_str(), F_OK) != 0;
    if (!fresh)
      if (std::string error = mlir::attn::files::readFile(
              csvPath, mlir::attn::files::kMaxSourceBytes, csvBefore);
          !error.empty())
        return fail(error);
    csv = open_memstream(&csvRows, &csvRowBytes);
    if (!csv)
      return fail("cannot buffer the CSV rows: " +
                  std::string(std::strerror(errno)));
    if (fresh)
      printCsvHeader(csv);
  }

  attnrt::Context context;
  if (attnrtContextCreate(static_cast<int32_t>(device), context.out()) !=
      ATTNRT_SUCCESS)
    return fail(attnrtLastErrorMessage());
  attnrtDeviceInfo info;
  attnrtContextGetDeviceInfo(context.get(), &info);
  std::printf("device %lld: %s (sm_%d%d, %d SMs, %lld KiB shared memory per "
              "block, %lld MiB L2)\n",
              device, info.name, info.computeMajor, info.computeMinor,
              info.multiprocessors,
              (long long)info.sharedMemoryPerBlockOptin / 1024,
              (long long)info.l2CacheBytes >> 20);
  if (probe)
    return 0;

  int failures = 0;
  std::vector<std::string> unmatched = kernels;
  // The emulated driver appends each launch's profile to the file named by
  // ATTN_EMULATOR_PROFILE, read at every launch.
  std::string profilePath;
  if (profile) {
    char temporary[] = "/tmp/attn-launch-profile-XXXXXX";
    int descriptor = mkstemp(temporary);
    if (descriptor < 0)
      return fail("--profile: cannot create a temporary file");
    close(descriptor);
    profilePath = temporary;
    setenv("ATTN_EMULATOR_PROFILE", temporary, 1);
  }
  struct RemoveProfile {
    const std::string &path;
    ~RemoveProfile() {
      if (!path.empty())
        std::remove(path.c_str());
    }
  } removeProfile{profilePath};
  for (size_t b = 0; b < bundles.size(); ++b) {
    const std::string &path = bundles[b];
    const std::optional<ReferenceCase> &reference = references[b];
    const std::optional<GradientCase> &gradientCase = gradientCases[b];
    attnrt::Bundle bundle;
    if (attnrtBundleLoad(context.get(), path.c_str(), bundle.out()) !=
        ATTNRT_SUCCESS)
      return fail(attnrtLastErrorMessage());
    attnrtKernel caseKernel = nullptr;
    if ((reference || gradientCase) &&
        attnrtBundleFindKernel(
            bundle.get(),
            (reference ? reference->kernel : gradientCase->kernel).c_str(),
            &caseKernel) != ATTNRT_SUCCESS)
      return fail(path + ": reference/: " + attnrtLastErrorMessage());
    for (int32_t k = 0; k < attnrtBundleKernelCount(bundle.get()); ++k) {
      attnrtKernel kernel;
      attnrtBundleGetKernel(bundle.get(), k, &kernel);
      std::string name = attnrtKernelName(kernel);
      if (!kernels.empty()) {
        bool wanted = false;
        for (const std::string &candidate : kernels)
          wanted |= candidate == name;
        if (!wanted)
          continue;
        for (auto it = unmatched.begin(); it != unmatched.end();)
          it = *it == name ? unmatched.erase(it) : it + 1;
      }
      bool checksCase = kernel == caseKernel;
      // A backward kernel has no GPU reference: its case checks it. Timed
      // only, it needs none.
      bool timesGradient = isBackwardKernel(kernel) && !checksCase &&
                           options.bench && !options.check;
      if (isBackwardKernel(kernel) && !(checksCase && gradientCase) &&
          !timesGradient)
        return fail(path + ": " + name +
                    " is a backward kernel: check it against its gradient "
                    "case (attn-run --backward --write-reference=" +
                    path +
                    "/reference), or time it alone (--bench "
                    "--no-check)");
      // A reference case fixes its lengths: its kernel runs once.
      std::vector<std::optional<CheckOptions::Lengths>> runs = lengthRuns;
      if (checksCase)
        runs = {std::nullopt};
      for (const std::optional<CheckOptions::Lengths> &lengths : runs) {
        options.lengths = lengths;
        KernelReport report;
        attnrt::Status status =
            timesGradient
                ? benchGradientKernel(context.get(), kernel, options, report)
            : !checksCase  ? runKernel(context.get(), kernel, options,
                                       HostInputs(), report)
            : gradientCase ? runGradientCase(context.get(), kernel, options,
                                             *gradientCase, report)
                           : runReferenceCase(context.get(), kernel, options,
                                              *reference, report);
        // A case that does not fit its kernel fails that kernel's check;
        // the other bundles are still checked.
        if (!status.ok() && checksCase &&
            status.code == ATTNRT_ERROR_INVALID_ARGUMENT) {
          std::fprintf(stderr, "attn-launch: error: %s: %s: %s\n", path.c_str(),
                       name.c_str(), status.message.c_str());
          ++failures;
          continue;
        }
        if (!status.ok())
          return fail(path + ": " + name + ": " + status.message);
        std::printf("%s: ", path.c_str());
        printReport(report, stdout);
        if (profile)
          std::printf("  profile  %s\n",
                      takeProfile(profilePath, name).c_str());
        std::fflush(stdout);
        if (csv)
          printCsvRow(report, info, csv);
        failures += !report.passed();
      }
    }
  }
  if (csv) {
    std::fclose(csv);
    std::string error = mlir::attn::files::writeFile(
        csvPath, {csvBefore, std::string_view(csvRows, csvRowBytes)});
    std::free(csvRows);
    if (!error.empty())
      return fail(error);
  }
  if (!unmatched.empty())
    return fail("no kernel " + unmatched.front() + " in the bundles");
  if (failures)
    return fail(std::to_string(failures) + " kernel(s) FAILED the check");
  return 0;
}
