#!/usr/bin/env python3
"""Run the kernels of attn-mlir kernel bundles on a GPU, check and time them.

A development harness for the GPU code generation layer until libattnrt and
`attn-run --device=gpu` exist: it loads kernels.ptx through the CUDA driver
(ctypes, cuModuleLoadDataEx with the JIT log), launches each kernel of
manifest.json with the manifest's grid, block and dynamic shared memory on
random inputs (normal, never zeros; outputs poisoned with NaN), and compares
O and LSE with an float32 attention computed by PyTorch from the same inputs
(GQA, bottom-right causal and window masks; fully masked rows give O = 0 and
LSE = -inf). Relative L2 errors must stay under 1e-2 for 16-bit data; the
error of PyTorch's own bf16/f16 SDPA against the same reference is printed
beside it where it applies. With --bench, it also times each kernel (median
of CUDA-event timings over rotated inputs) and reports TFLOP/s
(4*B*Hq*Sq*Sk*D, halved for causal).

Usage: python3 run_bundle.py BUNDLE_DIR... [--bench]
"""
import ctypes
import json
import math
import os
import statistics
import sys

import torch

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
cuda = ctypes.CDLL("libcuda.so.1")


def check(result, what):
    if result != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(result, ctypes.byref(name))
        raise RuntimeError(f"{what}: {name.value.decode() if name.value else result}")


def load(ptx_path):
    ptx = open(ptx_path, "rb").read() + b"\0"
    log = ctypes.create_string_buffer(1 << 16)
    options = (ctypes.c_int * 2)(5, 6)  # CU_JIT_ERROR_LOG_BUFFER(_SIZE_BYTES)
    values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(len(log)))
    module = ctypes.c_void_p()
    result = cuda.cuModuleLoadDataEx(ctypes.byref(module), ptx, 2, options, values)
    if result != 0:
        print(log.value.decode(errors="replace"))
    check(result, "cuModuleLoadDataEx")
    return module


def reference(q, k, v, attention):
    """float32 attention, GQA, bottom-right causal/window masks."""
    b, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    k = k.float().repeat_interleave(hq // hkv, dim=1)
    v = v.float().repeat_interleave(hq // hkv, dim=1)
    s = torch.matmul(q.float(), k.transpose(-1, -2)) * attention["scale"]
    rows = torch.arange(sq, device=q.device)[:, None] + (sk - sq)
    keys = torch.arange(sk, device=q.device)[None, :]
    hidden = torch.zeros(sq, sk, dtype=torch.bool, device=q.device)
    if attention["causal"]:
        hidden |= keys > rows
    if "window" in attention:
        left, right = attention["window"]
        hidden |= (keys < rows - left) | (keys > rows + right)
    s = s.masked_fill(hidden, -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse[..., None]).nan_to_num(0.0)
    return torch.matmul(p, v), lse


def rel(out, ref):
    finite = torch.isfinite(ref)
    bad = (torch.isfinite(out) != finite) | torch.isnan(out)
    bad |= (~finite) & (out != ref)
    diff = (out - ref)[finite]
    return (diff.norm() / ref[finite].norm().clamp_min(1e-30)).item(), int(bad.sum())


class Kernel:
    def __init__(self, module, entry):
        self.entry = entry
        self.func = ctypes.c_void_p()
        check(cuda.cuModuleGetFunction(ctypes.byref(self.func), module, entry["name"].encode()),
              "cuModuleGetFunction")
        # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        check(cuda.cuFuncSetAttribute(self.func, 8, entry["dynamic_shared_memory"]),
              "cuFuncSetAttribute")

    def launch(self, tensors):
        pointers = [ctypes.c_uint64(t.data_ptr()) for t in tensors]
        params = (ctypes.c_void_p * len(pointers))(*[ctypes.addressof(p) for p in pointers])
        g, bl = self.entry["grid"], self.entry["block"]
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check(cuda.cuLaunchKernel(self.func, g[0], g[1], g[2], bl[0], bl[1], bl[2],
                                  self.entry["dynamic_shared_memory"], stream, params, None),
              "cuLaunchKernel")


def inputs(entry):
    tensors = []
    for param in entry["params"]:
        dtype = DTYPES[param["type"]]
        if param["name"] in ("Q", "K", "V"):
            tensors.append(torch.randn(param["shape"], device="cuda", dtype=dtype))
        else:
            tensors.append(torch.full(param["shape"], math.nan, device="cuda", dtype=dtype))
    return tensors


def run(bundle, bench):
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    module = load(os.path.join(bundle, manifest["ptx"]))
    ok = True
    for entry in manifest["kernels"]:
        kernel = Kernel(module, entry)
        t = inputs(entry)
        kernel.launch(t)
        torch.cuda.synchronize()
        q, k, v, o = t[:4]
        ref_o, ref_lse = reference(q, k, v, entry["attention"])
        err_o, bad_o = rel(o.float(), ref_o)
        line = f"{bundle}:{entry['name']} O rel {err_o:.2e}"
        passed = err_o < 1e-2 and bad_o == 0
        if len(t) > 4:
            err_l, bad_l = rel(t[4], ref_lse)
            line += f", LSE rel {err_l:.2e}"
            passed &= err_l < 1e-3 and bad_l == 0
        if bad_o:
            line += f", {bad_o} bad O elements"
        if q.shape[2] == k.shape[2] and "window" not in entry["attention"]:
            sdpa = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=entry["attention"]["causal"],
                scale=entry["attention"]["scale"], enable_gqa=q.shape[1] != k.shape[1])
            line += f" (PyTorch SDPA in {entry['params'][0]['type']}: {rel(sdpa.float(), ref_o)[0]:.2e})"
        print(line + (" PASS" if passed else " FAIL"), flush=True)
        ok &= passed
        if bench:
            sets = [inputs(entry) for _ in range(4)]
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for i in range(60):
                start.record()
                kernel.launch(sets[i % 4])
                end.record()
                end.synchronize()
                if i >= 10:
                    times.append(start.elapsed_time(end))
            ms = statistics.median(times)
            b, hq, sq, d = q.shape
            sk = k.shape[2]
            flops = 4 * b * hq * sq * sk * d / (2 if entry["attention"]["causal"] else 1)
            print(f"  {ms:.3f} ms, {flops / ms / 1e9:.1f} TFLOP/s", flush=True)
    return ok


if __name__ == "__main__":
    bench = "--bench" in sys.argv
    bundles = [a for a in sys.argv[1:] if a != "--bench"]
    torch.cuda.init()
    torch.zeros(1, device="cuda")
    results = [run(b, bench) for b in bundles]
    sys.exit(0 if all(results) else 1)
