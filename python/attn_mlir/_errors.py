"""The exceptions attn_mlir raises besides ValueError (bad arguments)."""


class CompilerError(RuntimeError):
    """attn-mlir rejected the input or failed; the message holds the diagnostics."""


class GpuError(RuntimeError):
    """libattnrt could not run a kernel: no driver or device, a JIT or launch
    failure; the message names the runtime's status and says why."""
