/*===- attnrt.h - libattnrt: load and launch attn-mlir kernel bundles ------===*
 *
 * Part of the attn-mlir project, under the Apache License v2.0 with LLVM
 * Exceptions. See LICENSE for license information.
 *
 *===----------------------------------------------------------------------===*
 *
 * The C API of libattnrt, the runtime of the kernel bundles that attn-compile
 * writes (docs/runtime.md). It needs the C/C++ runtime and the CUDA driver
 * API, which it opens at run time (libcuda.so.1, or the file named by the
 * environment variable ATTNRT_LIBCUDA), so programs built against it run on
 * machines without a driver: every call then fails with
 * ATTNRT_ERROR_NO_DRIVER.
 *
 * Every function that can fail returns a status; on failure the calling
 * thread's attnrtLastErrorMessage() says what went wrong. Nothing aborts.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTN_RUNTIME_ATTNRT_H
#define ATTN_RUNTIME_ATTNRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum attnrtStatus {
  ATTNRT_SUCCESS = 0,
  /* A null handle or pointer, or a tensor whose dtype, rank, shape, strides
     or alignment do not match the kernel's manifest. */
  ATTNRT_ERROR_INVALID_ARGUMENT = 1,
  /* A bundle that cannot be read, a manifest that is not valid, or PTX that
     is truncated or disagrees with its manifest (attnrtBundleValidate). */
  ATTNRT_ERROR_INVALID_BUNDLE = 2,
  /* The driver library cannot be opened, lacks an entry point, or cuInit
     fails. */
  ATTNRT_ERROR_NO_DRIVER = 3,
  /* No CUDA device, or no device of that index. */
  ATTNRT_ERROR_NO_DEVICE = 4,
  /* The driver cannot compile the bundle's PTX for this device (older
     driver, other target): the message carries the JIT log. */
  ATTNRT_ERROR_JIT = 5,
  ATTNRT_ERROR_OUT_OF_MEMORY = 6,
  /* No kernel of that name or index in the bundle. */
  ATTNRT_ERROR_NOT_FOUND = 7,
  /* Any other driver error; the message names it. */
  ATTNRT_ERROR_DRIVER = 8,
  /* The kernel needs more than the device offers (shared memory). */
  ATTNRT_ERROR_UNSUPPORTED = 9
} attnrtStatus;

/* "ATTNRT_SUCCESS", "ATTNRT_ERROR_JIT", ... */
const char *attnrtStatusName(attnrtStatus status);
/* The message of the last call that failed on this thread ("" if none). */
const char *attnrtLastErrorMessage(void);

typedef enum attnrtDType {
  ATTNRT_F16 = 0,
  ATTNRT_BF16 = 1,
  ATTNRT_F32 = 2,
  /* Per-sequence key lengths (a kernel's key_lengths parameter). */
  ATTNRT_I32 = 3,
  /* A boolean mask (a kernel's mask parameter of MLIR type i1): one byte
     per element, 0 hides the score, 1 keeps it (torch.bool, numpy's bool). */
  ATTNRT_I1 = 4,
  /* A block mask (a kernel's block_mask parameter): one byte per block,
     0 empty, 2 full, any other value partial (torch.int8, numpy's int8). */
  ATTNRT_I8 = 5
} attnrtDType;

/* "f16", "bf16", "f32", "i32", "i1", "i8". */
const char *attnrtDTypeName(attnrtDType dtype);
size_t attnrtDTypeSize(attnrtDType dtype);

typedef struct attnrtContext_ *attnrtContext;
typedef struct attnrtBundle_ *attnrtBundle;
/* Owned by its bundle. */
typedef struct attnrtKernel_ *attnrtKernel;
typedef struct attnrtTimer_ *attnrtTimer;
/* A CUstream of the context's device; NULL is the legacy default stream. */
typedef void *attnrtStream;
/* A CUdeviceptr. */
typedef uint64_t attnrtDevicePtr;

#define ATTNRT_MAX_RANK 4

/* A strided view of device memory. Strides count elements. */
typedef struct attnrtTensor {
  attnrtDevicePtr data;
  attnrtDType dtype;
  int32_t rank;
  int64_t sizes[ATTNRT_MAX_RANK];
  int64_t strides[ATTNRT_MAX_RANK];
} attnrtTensor;

typedef struct attnrtDeviceInfo {
  char name[256];
  int32_t computeMajor;
  int32_t computeMinor;
  int32_t multiprocessors;
  int64_t sharedMemoryPerBlockOptin;
  int64_t l2CacheBytes;
  int64_t totalMemoryBytes;
} attnrtDeviceInfo;

/* ---- Contexts: a device and its primary context ------------------------ */

attnrtStatus attnrtContextCreate(int32_t device, attnrtContext *context);
void attnrtContextDestroy(attnrtContext context);
attnrtStatus attnrtContextGetDeviceInfo(attnrtContext context,
                                        attnrtDeviceInfo *info);

attnrtStatus attnrtMalloc(attnrtContext context, size_t bytes,
                          attnrtDevicePtr *pointer);
attnrtStatus attnrtFree(attnrtContext context, attnrtDevicePtr pointer);
attnrtStatus attnrtCopyToDevice(attnrtContext context, attnrtDevicePtr dst,
                                const void *src, size_t bytes);
attnrtStatus attnrtCopyToHost(attnrtContext context, void *dst,
                              attnrtDevicePtr src, size_t bytes);
attnrtStatus attnrtSynchronize(attnrtContext context, attnrtStream stream);

/* ---- Bundles: kernels.ptx + manifest.json ------------------------------ */

/* Reads DIRECTORY/manifest.json and the PTX it names, checks them as
   attnrtBundleValidate does, JIT-compiles the PTX for the context's device
   (the log goes into the error message) and raises each kernel's dynamic
   shared memory limit to what its manifest entry says. */
attnrtStatus attnrtBundleLoad(attnrtContext context, const char *directory,
                              attnrtBundle *bundle);
/* The same from a manifest and PTX text in memory (checked as
   attnrtBundleValidateFromMemory does). */
attnrtStatus attnrtBundleLoadFromMemory(attnrtContext context,
                                        const char *manifestJson,
                                        const char *ptx,
                                        attnrtBundle *bundle);
/* Reads and checks DIRECTORY's manifest and the PTX it names, without a
   driver or device, as every load does: the manifest is valid; the PTX is
   whole (.version and .target, every body closed: not truncated) and
   defines every kernel of the manifest, with exactly the parameters the
   manifest implies (a 64-bit pointer per tensor and per workspace, then a
   64-bit integer per scalar); each kernel's block is the one its entry was
   compiled for (.maxntid, .reqntid) and its tiles' warps; its dynamic shared
   memory is at most 227 KiB and at least what its tiles stage; an attention
   kernel's grid and workspaces are those of its schedule (FlashAttention-2's
   grid, split-KV's splits and partials, Lean's persistent CTAs). A bundle
   that fails is ATTNRT_ERROR_INVALID_BUNDLE, the message naming the kernel
   and what differs (docs/runtime.md). On success *kernelCount (if not NULL)
   is the number of kernels. */
attnrtStatus attnrtBundleValidate(const char *directory,
                                  int32_t *kernelCount);
/* The same checks of a manifest (JSON text) and PTX text in memory, both
   NUL-terminated, without a driver or device; messages name them
   "manifest" and "the bundle's PTX". For bindings that hold bundles in
   memory (the Python package calls it through ctypes). */
attnrtStatus attnrtBundleValidateFromMemory(const char *manifestJson,
                                            const char *ptx,
                                            int32_t *kernelCount);
void attnrtBundleDestroy(attnrtBundle bundle);
int32_t attnrtBundleKernelCount(attnrtBundle bundle);
attnrtStatus attnrtBundleGetKernel(attnrtBundle bundle, int32_t index,
                                   attnrtKernel *kernel);
attnrtStatus attnrtBundleFindKernel(attnrtBundle bundle, const char *name,
                                    attnrtKernel *kernel);

/* ---- Kernels ----------------------------------------------------------- */

/* One tensor parameter as the manifest declares it. A size or stride of -1
   is dynamic: any value is accepted. */
typedef struct attnrtParamInfo {
  const char *name;
  attnrtDType dtype;
  int32_t rank;
  int64_t sizes[ATTNRT_MAX_RANK];
  int64_t strides[ATTNRT_MAX_RANK];
  /* Required alignment of the data pointer, in bytes. */
  int64_t alignment;
} attnrtParamInfo;

/* What the kernel computes (the attn.attention it was generated from). */
typedef struct attnrtAttentionInfo {
  double scale;
  int32_t causal;
  int32_t hasWindow;
  int64_t windowLeft;
  int64_t windowRight;
  /* softcap * tanh(score / softcap) on the scaled score; 0 without. */
  double softcap;
  /* Nonzero when the kernel inlines a score region (arbitrary IR, which
     only a checker that has the module can evaluate). */
  int32_t scoreRegion;
  /* Nonzero when the kernel skips the empty blocks of a constant block
     mask (whose values only a checker that has the module knows). */
  int32_t blockMask;
  /* The block mask's blocks, Bq query rows by Bk keys, when the kernel has
     one (constant, or its block_mask parameter [B or 1, Hq or 1,
     ceil(Sq / Bq), ceil(Sk / Bk)]); 0 without. */
  int64_t blockMaskRows;
  int64_t blockMaskKeys;
} attnrtAttentionInfo;

/* What the driver reports for the loaded kernel. */
typedef struct attnrtKernelResources {
  int32_t registersPerThread;
  int32_t threadsPerBlock;
  int64_t staticSharedBytes;
  int64_t dynamicSharedBytes;
  int64_t localBytesPerThread;
  int32_t ctasPerMultiprocessor;
} attnrtKernelResources;

const char *attnrtKernelName(attnrtKernel kernel);
/* The compute target the PTX was generated for ("sm_90"). */
const char *attnrtKernelTarget(attnrtKernel kernel);
int32_t attnrtKernelParamCount(attnrtKernel kernel);
attnrtStatus attnrtKernelGetParam(attnrtKernel kernel, int32_t index,
                                  attnrtParamInfo *info);
attnrtStatus attnrtKernelGetAttention(attnrtKernel kernel,
                                      attnrtAttentionInfo *info);
attnrtStatus attnrtKernelGetResources(attnrtKernel kernel,
                                      attnrtKernelResources *resources);
/* The kernel's CUfunction, for interoperation with code that launches it
   through the driver itself. */
void *attnrtKernelGetFunction(attnrtKernel kernel);
/* Checks ARGS against the manifest and evaluates its grid formula. */
attnrtStatus attnrtKernelGetGrid(attnrtKernel kernel, const attnrtTensor *args,
                                 int32_t numArgs, uint32_t grid[3]);

/* Checks ARGS (one per manifest parameter, in order) and launches the kernel
   on STREAM with the grid the manifest's formula gives for their shapes, the
   manifest's block and dynamic shared memory, and the kernel's workspaces.
   Workspaces are allocated on first use, zero-filled on STREAM before each
   launch where the manifest asks, and reused; a launch on another stream than
   the previous one first waits for the previous launch. */
attnrtStatus attnrtLaunch(attnrtKernel kernel, const attnrtTensor *args,
                          int32_t numArgs, attnrtStream stream);

/* ---- Timers: a pair of CUDA events ------------------------------------- */

attnrtStatus attnrtTimerCreate(attnrtContext context, attnrtTimer *timer);
void attnrtTimerDestroy(attnrtTimer timer);
attnrtStatus attnrtTimerStart(attnrtTimer timer, attnrtStream stream);
attnrtStatus attnrtTimerStop(attnrtTimer timer, attnrtStream stream);
/* Waits for the stop event; milliseconds between start and stop. */
attnrtStatus attnrtTimerElapsedMs(attnrtTimer timer, float *milliseconds);

#ifdef __cplusplus
}
#endif

#endif /* ATTN_RUNTIME_ATTNRT_H */
