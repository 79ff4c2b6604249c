# -*- Python -*-
# lit configuration of Lethe's regression tests.

import ctypes
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LETHE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "torch"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lethe_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%lethe_src_root", config.lethe_src_root))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.lethe_tools_dir, config.llvm_tools_dir]
tools = [
    "lethe-bench-auto-gap",
    "lethe-bench-chain",
    "lethe-bench-chain-model",
    "lethe-bench-greedy",
    "lethe-bench-memory-profile",
    "lethe-bench-planning",
    "lethe-mem",
    "lethe-opt",
    "lethe-run",
    "lethe-translate",
    "lethec",
]
llvm_config.add_tool_substitutions(tools, tool_dirs)


def count_cuda_devices():
    """The GPUs the CUDA driver sees (0 without a driver or a device): what a
    CUDA executable would find when the tests run."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


# cuda-backend: lethec links --target cuda executables (LETHE_ENABLE_CUDA);
# cuda-device: there is also a GPU to run them on.
if config.lethe_enable_cuda:
    config.available_features.add("cuda-backend")
    if count_cuda_devices() > 0:
        config.available_features.add("cuda-device")
