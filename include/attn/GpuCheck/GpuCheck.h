//===- GpuCheck.h - Run, check and time a bundle kernel on a GPU -*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// What `attn-launch` and `attn-run --device=gpu` do with one kernel of a
// bundle (docs/runtime.md): run it through libattnrt on seeded random or
// given inputs, check O and LSE against an independent f32 attention computed
// on the same GPU (lib/GpuCheck/ReferenceKernels.cu) with the error metrics
// and tolerances of the CPU backend, and time it: the median of many
// CUDA-event timed launches over input sets rotated so that the L2 cache
// does not hold them. Links neither LLVM nor MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPUCHECK_GPUCHECK_H
#define ATTN_GPUCHECK_GPUCHECK_H

#include "attn/GpuCheck/ReferenceCase.h"
#include "attn/Runtime/attnrt.hpp"
#include "attn/Support/AttentionSizes.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace attn::gpucheck {

/// Where the check's own work runs: the seeded inputs and the reference
/// attention (lib/GpuCheck/ReferenceRow.h, one code for both sides).
enum class ReferenceSide {
  /// The host where the driver is the PTX emulator (there the reference
  /// kernels cost ten to a hundred times the checked kernel's
  /// instructions), the device otherwise.
  Automatic,
  /// The GPU reference kernels (ReferenceKernels.cu).
  Device,
  /// The same computation compiled for the host, on the inputs copied back.
  Host,
};

struct CheckOptions {
  /// Seed of the random inputs (Q, K and V get seed, seed+1, seed+2).
  uint64_t seed = 1;
  ReferenceSide reference = ReferenceSide::Automatic;
  bool check = true;
  /// Relative L2 tolerance; default as on the CPU backend: 1e-5 for f32,
  /// twice the error of a naive attention in the same 16-bit format.
  std::optional<double> tolerance;
  bool bench = false;
  int warmup = 10;
  int iterations = 100;
  /// The device's measured dense matmul peak in TFLOP/s, or 0 if unknown.
  double peakTflops = 0;
  /// The batch, Sq and Sk to run a kernel compiled for run-time lengths
  /// with (its dynamic sizes); a static size is the manifest's.
  struct Lengths {
    int64_t batch = 1, queryLen = 1, keyLen = 1;
  };
  std::optional<Lengths> lengths;
};

/// Host copies of the inputs, in the kernel's element type and row-major
/// layout; a null pointer means seeded random values.
struct HostInputs {
  const void *query = nullptr;
  const void *key = nullptr;
  const void *value = nullptr;
  /// The mask operand, for a kernel with one: its elements in the kernel's
  /// mask type (i1 one byte each), row-major [B or 1, Hq or 1, Sq, Sk];
  /// null: seeded sampleMask.
  const void *mask = nullptr;
  /// The block mask, for a kernel with a block_mask parameter: one byte per
  /// block, row-major [B or 1, Hq or 1, Nq, Nk]; null: seeded
  /// sampleBlockMask.
  const uint8_t *blockMask = nullptr;
  /// One per sequence, for a kernel with key lengths; null: seeded
  /// sampleKeyLengths.
  const int32_t *keyLengths = nullptr;
};

/// Key lengths of every kind for `batch` sequences of at most `keys` keys:
/// the first sequence full, the second empty when there are three or more,
/// the others uniform in [1, keys]. The default of the GPU check and of
/// attn-run.
std::vector<int32_t> sampleKeyLengths(int64_t batch, int64_t keys,
                                      std::mt19937_64 &rng);

/// A mask operand of `dtype` (ATTNRT_I1, or a float type for an additive
/// mask) and `sizes` [B or 1, Hq or 1, Sq, Sk], as the bytes a kernel reads:
/// of each (batch, head) plane, query row 1 (when Sq > 1) hides every key;
/// elsewhere a boolean mask keeps 3 of 4 scores, an additive one adds a
/// standard-normal value or, to one score in 8, -inf. The default of the GPU
/// check.
std::vector<uint8_t> sampleMask(attnrtDType dtype, const int64_t sizes[4],
                                std::mt19937_64 &rng);

/// A block mask of every kind with `sizes` [B or 1, Hq or 1, Nq, Nk]: about
/// a quarter of the blocks empty, a quarter full, the rest partial, and the
/// first query block of every batch and head empty throughout when there is
/// more than one, so that rows seeing nothing run too. The default of the
/// GPU check and of attn-run.
std::vector<uint8_t> sampleBlockMask(const int64_t sizes[4],
                                     std::mt19937_64 &rng);

struct OutputCheck {
  std::string name;
  double maxAbs = 0;
  double relL2 = 0;
  int64_t nanCount = 0;
  /// Elements whose bits differ (the repeat check).
  int64_t differing = 0;
  double tolerance = 0;
  std::string toleranceOrigin;
  bool passed = false;
};

struct Timing {
  double medianMs = 0;
  double minMs = 0;
  double tflops = 0;
  /// tflops / CheckOptions::peakTflops, or 0.
  double fractionOfPeak = 0;
  int inputSets = 0;
  int iterations = 0;
};

struct KernelReport {
  std::string kernel;
  std::string target;
  attnrtDType dtype = ATTNRT_BF16;
  mlir::attn::AttentionSizes sizes;
  attnrtAttentionInfo attention = {};
  attnrtKernelResources resources = {};
  uint32_t grid[3] = {0, 0, 0};
  std::vector<OutputCheck> checks;
  /// Why the outputs were not compared with the reference although asked.
  std::string unchecked;
  std::optional<Timing> timing;
  /// The kernel's outputs, decoded to float (O, then LSE if it has one).
  std::vector<float> out, lse;
  /// The per-sequence key lengths the kernel ran with; empty without.
  std::vector<int32_t> keyLengths;
  /// A backward kernel's report.
  bool gradient = false;

  bool passed() const;
  /// 4 * B * Hq * Sq * Sk * D (with key lengths, their sum for B Sk),
  /// halved with a causal mask; for a backward kernel 2.5 times that (its
  /// five products to the forward's two, FlashAttention's count, whatever
  /// the kernel recomputes).
  double flops() const;
};

/// Runs KERNEL of a bundle loaded in CONTEXT as OPTIONS say. A kernel that
/// inlines a score region or a constant block mask is run, repeated and
/// timed but not compared with the GPU reference (KernelReport::unchecked
/// says so): runReferenceCase checks it.
attnrt::Status runKernel(attnrtContext context, attnrtKernel kernel,
                         const CheckOptions &options, const HostInputs &inputs,
                         KernelReport &report);

/// Runs KERNEL as runKernel does, on the inputs of REFERENCE, and checks O
/// and LSE against the case's outputs (the CPU's float64 reference) with
/// the case's tolerances, or OPTIONS.tolerance: the check of any kernel,
/// score region and constant block mask included. The case must name KERNEL
/// and hold its parameters in type and shape; a kernel compiled for
/// run-time lengths runs at the case's (OPTIONS.lengths must be unset).
attnrt::Status runReferenceCase(attnrtContext context, attnrtKernel kernel,
                                const CheckOptions &options,
                                const ReferenceCase &reference,
                                KernelReport &report);

/// Runs a backward kernel (attn.attention_grad's) on the inputs of
/// `reference` twice, checks that both launches write the same bits, and
/// (with options.check) compares dQ, dK and dV with the case's within its
/// tolerances or options.tolerance.
attnrt::Status runGradientCase(attnrtContext context, attnrtKernel kernel,
                               const CheckOptions &options,
                               const GradientCase &reference,
                               KernelReport &report);

/// Times a backward kernel as runKernel's --bench does (options.warmup,
/// iterations, inputs rotated among sets that do not fit in L2 together)
/// on seeded random Q, K, V, O, LSE and dO: its speed does not depend on
/// the values, so no case is needed. Nothing is checked.
attnrt::Status benchGradientKernel(attnrtContext context, attnrtKernel kernel,
                                   const CheckOptions &options,
                                   KernelReport &report);

/// Human-readable lines: problem, resources, checks, timing.
void printReport(const KernelReport &report, std::FILE *stream);

/// One CSV row per report (with printCsvHeader first).
void printCsvHeader(std::FILE *stream);
void printCsvRow(const KernelReport &report, const attnrtDeviceInfo &device,
                 std::FILE *stream);

} // namespace attn::gpucheck

#endif // ATTN_GPUCHECK_GPUCHECK_H
