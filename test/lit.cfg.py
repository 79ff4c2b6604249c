# -*- Python -*-
# lit configuration of Lethe's regression tests.

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
tools = ["lethe-mem", "lethe-opt", "lethe-run", "lethe-translate", "lethec"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
