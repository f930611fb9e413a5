"""Finding and running the CUDA binary tools: nvdisasm, cuobjdump.

Neither is in the CUDA toolkit here; `bash scripts/setup-perf.sh` installs
them from PyPI (nvidia-cuda-nvdisasm, nvidia-cuda-cuobjdump) into the perf
venv in the cache directory. Looked for, in order: the FLASHC_NVDISASM /
FLASHC_CUOBJDUMP variables, PATH, that venv (the NVIDIA wheels, then the
copies Triton ships), /usr/local/cuda/bin.
"""

import glob
import os
import re
import shutil
import subprocess

from sassprof import cache

HINT = "install them with: bash scripts/setup-perf.sh"


def venv_dir():
    return os.path.join(cache.cache_dir(), "venv")


def find_tool(name):
    env = os.environ.get("FLASHC_" + name.upper())
    if env:
        return env
    found = shutil.which(name)
    if found:
        return found
    patterns = [os.path.join(venv_dir(), "lib", "python3*", "site-packages", "nvidia", "cu13",
                             "bin", name),
                os.path.join(venv_dir(), "lib", "python3*", "site-packages", "triton", "backends",
                             "nvidia", "bin", name),
                os.path.join("/usr/local/cuda/bin", name)]
    for pattern in patterns:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    return None


def require_tool(name):
    path = find_tool(name)
    if path is None:
        raise RuntimeError("%s not found; %s" % (name, HINT))
    return path


def tool_version(path):
    out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"release ([\d.]+), V([\d.]+)", out)
    return "%s %s" % (os.path.basename(path), match.group(2)) if match else os.path.basename(path)


def disassemble(cubin):
    """nvdisasm's listing of a cubin (control-flow friendly: labels, not
    addresses, as branch targets)."""
    return subprocess.run([require_tool("nvdisasm"), "-c", cubin], check=True,
                          capture_output=True, text=True).stdout


RES_RE = re.compile(r"Function ([^:\s]+):\s*\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)")


def resource_usage(cubin):
    """{function: {registers, stack, shared (static bytes), local}} from
    `cuobjdump -res-usage`."""
    out = subprocess.run([require_tool("cuobjdump"), "-res-usage", cubin], check=True,
                         capture_output=True, text=True).stdout
    return {m.group(1): {"registers": int(m.group(2)), "stack": int(m.group(3)),
                         "static_shared": int(m.group(4)), "local": int(m.group(5))}
            for m in RES_RE.finditer(out)}
