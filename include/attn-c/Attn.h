/*===- Attn.h - The C API of attn-mlir -----------------------------------===*\
|*                                                                            *|
|* Part of the attn-mlir project, under the Apache License v2.0 with LLVM     *|
|* Exceptions. See LICENSE for license information.                           *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* What a binding (the Python package) needs of the compiler, in C, as MLIR's *|
|* own C API is: run pass pipelines on module text, compile and run one       *|
|* attention on the CPU, and compile one to a kernel bundle for a GPU (which  *|
|* libattnrt, include/attn/Runtime/attnrt.h, loads and launches). Errors are  *|
|* returned as messages the caller frees with attnStringFree; nothing here    *|
|* aborts on bad input.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ATTN_C_ATTN_H
#define ATTN_C_ATTN_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One attention, as attn.attention states it: Q [B, Hq, Sq, D], K
   [B, Hkv, Sk, D], V [B, Hkv, Sk, Dv], O [B, Hq, Sq, Dv], LSE [B, Hq, Sq]. */
typedef struct {
  int64_t batch, query_heads, kv_heads, query_len, key_len, head_dim, value_dim;
  /* "f32", "f16" or "bf16": Q, K and V; O. */
  const char *dtype;
  const char *out_dtype;
  bool causal;
  /* A sliding window (left, right) when has_window. */
  bool has_window;
  int64_t window_left, window_right;
  /* The score scale when has_scale, else 1/sqrt(D). */
  bool has_scale;
  float scale;
  /* softcap * tanh(s / softcap) when has_softcap. */
  bool has_softcap;
  float softcap;
  /* Also write the log-sum-exp. */
  bool with_lse;
  /* Per-sequence key lengths ([B] int32, FlashAttention's cache_seqlens):
     sequence b attends to its first key_lengths[b] keys (clamped to
     [0, Sk]), its causal and window masks aligned to that length. */
  bool key_lengths;
  /* The mask operand, when mask_dtype is not null: "i1" a boolean mask (one
     byte per element, 1 keeps the score and 0 hides it), "f16", "bf16" or "f32"
     added to the score; shape [mask_batch, mask_heads, Sq, Sk], mask_batch B or
     1 and mask_heads Hq or 1 (1 broadcasts). */
  const char *mask_dtype;
  int64_t mask_batch, mask_heads;
  /* A block mask, when block_rows > 0: queries cut into blocks of block_rows
     and keys into blocks of block_keys; int8 [block_mask_batch (B or 1),
     block_mask_heads (Hq or 1), ceil(Sq / block_rows), ceil(Sk /
     block_keys)], 0 an empty block (skipped), 2 a full one (the mask
     operand not applied), any other value a partial one. */
  int64_t block_rows, block_keys, block_mask_batch, block_mask_heads;
  /* Batch, Sq and Sk given at each run (attnCpuAttentionRun's lengths): one
     compiled attention serves every length. batch, query_len and key_len above
     are then one example (mask_batch and block_mask_batch still say
     whether a mask has a slice per sequence: B > 1, or broadcasts: 1).
     CPU only. */
  bool run_time_lengths;
} AttnAttentionSpec;

/* The lengths of one run of an attention compiled with run_time_lengths. */
typedef struct {
  int64_t batch, query_len, key_len;
} AttnAttentionLengths;

typedef struct AttnCpuAttention *AttnCpuAttentionRef;

/* Checks `spec` alone, without compiling: every size positive (at most
   2^62), dtype names known, heads a multiple of kv_heads, a mask's and a
   block mask's leading sizes B or 1 and Hq or 1, positive blocks, and a
   positive finite scale and softcap. Returns false and sets *error, which
   names the field and its value, when it is not; the compile functions
   check the same first. */
bool attnAttentionSpecCheck(const AttnAttentionSpec *spec, char **error);

/* Compiles `spec` for this CPU (attn-to-cpu, MLIR's JIT). Returns null and
   sets *error on failure. */
AttnCpuAttentionRef attnCpuAttentionCompile(const AttnAttentionSpec *spec,
                                            char **error);

/* Runs it on contiguous row-major buffers of the spec's shapes and element
   types (f16 and bf16 as their 16-bit patterns), with B, Sq and Sk from
   `lengths` (each at least 1) when it was compiled with run_time_lengths,
   else from the spec (`lengths` null or equal to them); mask, block_mask
   and key_lengths ([B]) are given exactly when the spec has them; lse is
   f32 and may be null when the spec has no LSE. The buffers are trusted to
   hold those shapes. Returns false and sets *error on failure. */
bool attnCpuAttentionRun(AttnCpuAttentionRef attention,
                         const AttnAttentionLengths *lengths, const void *q,
                         const void *k, const void *v, const void *mask,
                         const int8_t *block_mask, const int32_t *key_lengths,
                         void *o, float *lse, char **error);

void attnCpuAttentionDestroy(AttnCpuAttentionRef attention);

/* The gradient of an attention (attn.attention_grad) compiled for this CPU:
   dQ, dK and dV from Q, K, V, the forward's O and LSE, and dO. */
typedef struct AttnCpuAttentionGrad *AttnCpuAttentionGradRef;

/* Compiles the gradient of `spec`'s attention for this CPU (with_lse is
   ignored: the gradient reads the forward's LSE). With `mask_grad` (an
   additive mask only) it also computes the mask's gradient. `deterministic`
   asks for results that are the same bytes run to run (the CPU's always
   are). Returns null and sets *error on failure, as
   attnCpuAttentionCompile. */
AttnCpuAttentionGradRef attnCpuAttentionGradCompile(
    const AttnAttentionSpec *spec, bool mask_grad, bool deterministic,
    char **error);

/* Runs it: q, k, v, mask, block_mask, key_lengths and `lengths` as for
   attnCpuAttentionRun; o and grad_out of O's shape and out_dtype, lse f32
   [B, Hq, Sq] (the forward's results and the gradient of a loss with
   respect to O); writes dq, dk and dv, of Q's, K's and V's shapes in the
   spec's dtype, and, when compiled with mask_grad, dmask (else null), of
   the mask's shape and dtype (its f32 scores [B, Hq, Sq, Sk], which the
   gradient keeps, at most 2^48 bytes). Returns false and sets *error on
   failure. */
bool attnCpuAttentionGradRun(AttnCpuAttentionGradRef grad,
                             const AttnAttentionLengths *lengths,
                             const void *q, const void *k, const void *v,
                             const void *o, const float *lse,
                             const void *grad_out, const void *mask,
                             const int8_t *block_mask,
                             const int32_t *key_lengths, void *dq, void *dk,
                             void *dv, void *dmask, char **error);

void attnCpuAttentionGradDestroy(AttnCpuAttentionGradRef grad);

/* The GPU a kernel bundle is compiled for: the module's #attn.target, so
   that attn-select-schedule chooses tiles and split-KV for it. The shared
   memory of an SM and the registers (65536 per SM, 255 per thread) are those
   of every sm_80 and newer GPU. */
typedef struct {
  /* An NVPTX architecture, sm_80 or newer ("sm_80", "sm_90a"). */
  const char *chip;
  /* Streaming multiprocessors, at most 2^31 - 1. */
  int64_t sms;
  /* The shared memory one block may opt into, in bytes; the SM's is that
     and the 1024 bytes reserved per block, at most 2^31 - 1. */
  int64_t smem_per_block;
} AttnGpuTarget;

/* Compiles `spec` (static lengths) for `target` (attn-to-ptx) into a kernel bundle of the
   one attention (a kernel, or split-KV's split and combine kernels): its
   manifest (JSON) and PTX text, which attnrtBundleLoadFromMemory takes. The
   tensor parameters are Q, K, V, O, with with_lse LSE, with a mask mask,
   with a block mask block_mask and with key_lengths key_lengths, contiguous.
   Returns false and sets *error on failure; on success the caller frees
   *manifest and *ptx with attnStringFree. */
bool attnGpuAttentionCompile(const AttnAttentionSpec *spec,
                             const AttnGpuTarget *target, char **manifest,
                             char **ptx, char **error);

/* Compiles the gradient of `spec`'s attention (static lengths; with_lse is
   ignored: the gradient reads the forward's LSE) for `target` into a bundle
   of one backward kernel, as attnGpuAttentionCompile: its tensor parameters
   are Q, K, V, O, LSE (the forward's results), dO, dQ, dK and dV,
   contiguous. Its results are the same bytes run to run. The kernel takes
   f16 and bf16 attentions without a mask, block mask or key lengths (the
   error says what it refuses). */
bool attnGpuAttentionGradCompile(const AttnAttentionSpec *spec,
                                 const AttnGpuTarget *target, char **manifest,
                                 char **ptx, char **error);

/* Parses `module` (MLIR text with the attn dialect and every upstream one;
   refused, as by the tools, when nested more than 1000 levels deep or
   holding a number of more than 4096 digits), runs `pipeline` (a textual pass pipeline, e.g.
   "builtin.module(attn-select-schedule,attn-to-cpu)") and returns the
   result as text, or null with *error set. */
char *attnRunPipeline(const char *module, const char *pipeline, char **error);

void attnStringFree(char *string);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_C_ATTN_H */
