//===- ReferenceCase.h - Kernel inputs and reference outputs ----*- C++ -*-===//
//
// Part of the attn-mlir project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
//
//===----------------------------------------------------------------------===//
//
// A reference case carries the check of one attention kernel from where the
// compiler is to where the GPU is. The GPU reference of attn-launch cannot
// evaluate a score region or know a constant block mask, and attn-run, whose
// float64 reference can, needs LLVM and MLIR, which a GPU machine may lack.
// So `attn-run MODULE --write-reference=DIR` writes the attention's inputs and
// the float64 reference's outputs on them, and attn-launch runs the kernel on
// those inputs and compares (docs/runtime.md, "Reference cases"). A case is a
// directory:
//
//   reference.json   {"format": 1, "kernel": "<the kernel's name>",
//                     "outputs": {"O": {"tolerance": 0.045,
//                                       "tolerance_origin": "2x naive bf16"},
//                                 "LSE": {...}}}
//   q.npy k.npy v.npy  the inputs, in the kernel's element type (bf16 as
//                      '<V2'), [B, H, S, D]
//   mask.npy, block_mask.npy, key_lengths.npy
//                    the attention's other inputs, where it has them, as
//                    the kernel reads them (i1 as bool, the block mask int8,
//                    the key lengths int32)
//   o.npy [lse.npy]  the reference's O and LSE, rounded to f32
//
// Plain C++ without LLVM: attn-launch reads cases where LLVM is not
// installed. attn-launch checks a bundle's kernel against the case in the
// bundle's directory `reference` when there is one.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPUCHECK_REFERENCECASE_H
#define ATTN_GPUCHECK_REFERENCECASE_H

#include "attn/Runtime/attnrt.h"
#include "attn/Support/Npy.h"

#include <optional>
#include <string>

namespace attn::gpucheck {

/// An output a kernel must reproduce within a tolerance.
struct ReferenceOutput {
  /// f32, the output's shape.
  mlir::attn::NpyArray values;
  /// Relative L2 error allowed, and where it comes from ("2x naive bf16:
  /// 2.25e-02", "f32", "--tolerance").
  double tolerance = 0;
  std::string toleranceOrigin;
};

struct ReferenceCase {
  /// The kernel the case checks (attnrtKernelName).
  std::string kernel;
  mlir::attn::NpyArray query, key, value;
  std::optional<mlir::attn::NpyArray> mask, blockMask, keyLengths;
  ReferenceOutput out;
  std::optional<ReferenceOutput> lse;
};

/// Writes `reference` into the directory `dir`, created if missing (its
/// parent must exist). An error message naming the path, or empty.
/// The case of a backward kernel (attn-run --backward --write-reference):
/// the inputs it reads (Q, K, V, the forward's O and LSE, and dO) and the
/// float64 reference's gradients with their tolerances. Its directory
/// holds q.npy, k.npy, v.npy, o.npy, lse.npy, do.npy, dq.npy, dk.npy,
/// dv.npy, mask.npy for an attention with a mask operand, block_mask.npy
/// for one with a block mask parameter, key_lengths.npy for one with key
/// lengths, and reference.json ("gradient": true).
struct GradientCase {
  std::string kernel;
  mlir::attn::NpyArray query, key, value, out, lse, gradOut;
  /// The mask operand ([B or 1, Hq or 1, Sq, Sk], i1 or a float type), the
  /// block mask ([B or 1, Hq or 1, Nq, Nk] int8) and the key lengths ([B]
  /// int32), the kernel's parameters after dV, when it has them.
  std::optional<mlir::attn::NpyArray> mask, blockMask, keyLengths;
  ReferenceOutput gradQuery, gradKey, gradValue;
};

std::string writeReferenceCase(const std::string &dir,
                               const ReferenceCase &reference);

/// Reads the case in `dir` and checks that it is whole: Q, K and V of rank 4
/// and one element type, O [B, Hq, Sq, Dv] and LSE [B, Hq, Sq] of f32, a
/// positive finite tolerance for each. An error message naming the file, or
/// empty.
std::string readReferenceCase(const std::string &dir, ReferenceCase &reference);

/// Whether `dir` holds a reference case (a reference.json).
bool isReferenceCase(const std::string &dir);

std::string writeGradientCase(const std::string &dir,
                              const GradientCase &reference);

std::string readGradientCase(const std::string &dir, GradientCase &reference);

/// Whether the case in `dir` (isReferenceCase) is a GradientCase.
bool isGradientCase(const std::string &dir);

/// Where attn-launch looks for the reference case of the bundle in
/// `bundleDir`: its subdirectory `reference`.
std::string bundleReferenceCaseDir(const std::string &bundleDir);

/// "[2, 4, 100, 64]": a shape as the messages about cases write it.
std::string shapeText(const std::vector<int64_t> &shape);

/// The libattnrt type of a .npy element type; nothing for f64, which no
/// kernel parameter has.
std::optional<attnrtDType> attnrtTypeOf(mlir::attn::NpyElementType type);

} // namespace attn::gpucheck

#endif // ATTN_GPUCHECK_REFERENCECASE_H
