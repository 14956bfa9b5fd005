# The attn-mlir lit suite.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "consumer", "Fuzz", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()  # FileCheck, not, count, split-file
# `not` and `count` at the start of a RUN line are looked up on PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%attn_plugin", config.attn_plugin))
config.substitutions.append(("%attn_src_root", config.attn_src_root))

tools = [
    ToolSubst("attn-opt", unresolved="fatal"),
    ToolSubst("attn-run", unresolved="fatal"),
    ToolSubst("attn-compile", unresolved="fatal"),
    ToolSubst("attn-launch", unresolved="fatal"),
    # Debian's own mlir-opt, for the plugin tests: never attn-opt.
    ToolSubst("%mlir_opt", command=config.mlir_opt, unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])

if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
# Distributed runs: every mpirun is bounded, so a rank that hangs fails the
# test instead of the suite.
if config.mpiexec and os.path.exists(config.mpiexec):
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", "timeout 300 " + config.mpiexec))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
# Debian's interpreter, which sees Debian's NumPy (and the one the Python
# package is built for).
config.substitutions.append(("%python", config.python))
# MLIR's JIT runner and its C runtime (vector.print), for execution tests of
# IR that attn-run does not run.
config.substitutions.append(
    ("%mlir_runner", os.path.join(config.llvm_tools_dir, "mlir-runner")))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(os.path.dirname(config.llvm_tools_dir), "lib",
                  "libmlir_c_runner_utils.so")))
config.substitutions.append(("%attn_tools_dir", config.attn_tools_dir))
