"""The on-disk cache of compiled kernels (PTX and launch sidecar).

Entries are keyed by the text of the kernel's source and of every file it
imports, the constants, the arch, the compile options and the compiler's
build (a hash of the extension module), as Triton keys its cache. The directory is
$FLASHC_CACHE_DIR, else $XDG_CACHE_HOME/flashc, else ~/.cache/flashc.
"""
import hashlib
import json
import os
import shutil
import tempfile

from . import _flashc

_PTX = "kernel.ptx"
_SIDECAR = "kernel.json"
_compiler_build = None


def directory():
    """Where entries are stored (created on first store)."""
    if os.environ.get("FLASHC_CACHE_DIR"):
        return os.environ["FLASHC_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(base, "flashc")


def compiler_build():
    """A hash of the extension module: any rebuild of the compiler changes it."""
    global _compiler_build
    if _compiler_build is None:
        digest = hashlib.sha256()
        with open(_flashc.__file__, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        _compiler_build = digest.hexdigest()
    return _compiler_build


def key(sources, constants, arch, options=None):
    """The entry's name: sources are (name, text) of every file read; options
    the compile options beside arch (Kernel.options)."""
    text = json.dumps(
        {
            "sources": [list(s) for s in sources],
            "constants": sorted(constants),
            "arch": arch,
            "options": sorted((options or {}).items()),
            "compiler": compiler_build(),
        }
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _entry(entry_key):
    return os.path.join(directory(), entry_key[:2], entry_key)


def load(entry_key):
    """(ptx, sidecar JSON) or None."""
    path = _entry(entry_key)
    try:
        with open(os.path.join(path, _PTX)) as ptx, open(
            os.path.join(path, _SIDECAR)
        ) as sidecar:
            return ptx.read(), sidecar.read()
    except OSError:
        return None


def store(entry_key, ptx, sidecar):
    """Writes the entry whole or not at all (a rename of a complete folder)."""
    path = _entry(entry_key)
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    try:
        with open(os.path.join(staging, _PTX), "w") as f:
            f.write(ptx)
        with open(os.path.join(staging, _SIDECAR), "w") as f:
            f.write(sidecar)
        os.rename(staging, path)
    except OSError:
        # Another process stored it first, or the disk refused: no entry.
        shutil.rmtree(staging, ignore_errors=True)


def clear():
    """Removes every entry."""
    shutil.rmtree(directory(), ignore_errors=True)
