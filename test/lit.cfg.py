# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "flashc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tile", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "fuzz-corpus", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.flash_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
# %expect_exit CODE -- CMD: CMD must exit with exactly CODE (1: the user's fault).
config.substitutions.append(("%expect_exit", config.python_executable + " " + os.path.join(config.test_source_root, "Bench", "expect_exit.py")))
config.substitutions.append(("%kernels", os.path.join(os.path.dirname(config.test_source_root), "kernels")))

llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["flash-opt", "flashc", "flash-emulate"],
                                  [config.flash_tools_dir])

# FLASHC_FULL=1 (scripts/test-full.sh): the complete numeric sweeps. Without
# it a sweep runs its CI sample and skips the lines marked
# `%if flashc-full %{ ... %}`.
if os.environ.get("FLASHC_FULL", "0") not in ("", "0"):
    config.available_features.add("flashc-full")

# ml_dtypes (numpy's bfloat16 and float8 types) is optional: tests that
# compare against it say `REQUIRES: ml_dtypes`.
import subprocess
if subprocess.run([config.python_executable, "-c", "import ml_dtypes"],
                  capture_output=True).returncode == 0:
    config.available_features.add("ml_dtypes")

# ptxas is optional: tests that need it say `REQUIRES: ptxas`, and lit lists
# them as UNSUPPORTED (visible in the summary) when it is missing.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
else:
    lit_config.note("ptxas not found: tests that need it are UNSUPPORTED")

# The libFuzzer front-end target lives in its own clang build (scripts/fuzz.sh,
# build-fuzz/ beside build/): its short run is UNSUPPORTED without it.
fuzz_frontend = os.path.join(os.path.dirname(config.test_source_root), "build-fuzz", "bin", "flash-fuzz-frontend")
if os.path.exists(fuzz_frontend):
    config.available_features.add("fuzz-frontend")
    config.substitutions.append(("%fuzz_frontend", fuzz_frontend))
config.substitutions.append(("%flashc_bin", os.path.join(config.flash_tools_dir, "flashc")))
config.substitutions.append(("%scripts", os.path.join(os.path.dirname(config.test_source_root), "scripts")))
