"""The on-disk cache of compiled kernels (PTX and launch sidecar).

Entries are keyed by the text of the kernel's source and of every file it
imports, the constants, the arch, the compile options and the compiler's
build (a hash of the extension module), as Triton keys its cache. The directory is
$FLASHC_CACHE_DIR, else $XDG_CACHE_HOME/flashc, else ~/.cache/flashc.

An entry is a folder of the PTX, the sidecar and the SHA-256 of both,
written to disk (fsync) and renamed into place whole. An entry whose files do
not match their digest (truncated, emptied, edited) is removed and the kernel
compiled again; a cache that cannot be written (read-only, a path under a
file, a full disk) leaves kernels uncached, and compiling goes on.
"""
import hashlib
import json
import os
import shutil
import tempfile

from . import _flashc

_PTX = "kernel.ptx"
_SIDECAR = "kernel.json"
_DIGEST = "kernel.sha256"
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


def _as_bytes(text):
    return text if isinstance(text, bytes) else text.encode()


def key(sources, constants, arch, options=None):
    """The entry's name: sources are (name, bytes or text) of every file read;
    options the compile options beside arch (Kernel.options)."""
    digest = hashlib.sha256()
    settings = json.dumps(
        {
            "sources": [name for name, _text in sources],
            "constants": sorted(constants),
            "arch": arch,
            "options": sorted((options or {}).items()),
            "compiler": compiler_build(),
        }
    )
    # Each part with its length: no two lists of parts hash alike.
    for part in [settings.encode()] + [_as_bytes(text) for _name, text in sources]:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _entry(entry_key):
    return os.path.join(directory(), entry_key[:2], entry_key)


def _contents_digest(ptx, sidecar):
    digest = hashlib.sha256()
    for part in (ptx, sidecar):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def _read(folder, name):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def _discard(path):
    """Removes a damaged entry: renamed aside first, so that no reader sees
    it half removed."""
    aside = os.path.join(os.path.dirname(path), f".damaged-{os.getpid()}-{os.urandom(4).hex()}")
    try:
        os.rename(path, aside)
        if os.path.isdir(aside):
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.remove(aside)
    except OSError:
        pass


def load(entry_key):
    """(ptx, sidecar JSON), or None: no entry, or a damaged one (removed)."""
    path = _entry(entry_key)
    if not os.path.lexists(path):
        return None
    try:
        ptx, sidecar = _read(path, _PTX), _read(path, _SIDECAR)
        intact = _read(path, _DIGEST).decode("ascii", "replace") == _contents_digest(ptx, sidecar)
        if intact:
            return ptx.decode(), sidecar.decode()
    except (OSError, UnicodeDecodeError):
        pass
    _discard(path)
    return None


def _write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _sync_directory(folder):
    """Makes a rename in `folder` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def store(entry_key, ptx, sidecar):
    """Writes the entry whole or not at all (a rename of a complete folder,
    its files on disk first). Without a writable cache it stores nothing."""
    path = _entry(entry_key)
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    except OSError:
        return
    try:
        ptx, sidecar = _as_bytes(ptx), _as_bytes(sidecar)
        _write(staging, _PTX, ptx)
        _write(staging, _SIDECAR, sidecar)
        _write(staging, _DIGEST, _contents_digest(ptx, sidecar).encode())
        _sync_directory(staging)
        os.rename(staging, path)
        _sync_directory(parent)
    except OSError:
        # Another process stored it first, or the disk refused: no entry.
        shutil.rmtree(staging, ignore_errors=True)


def clear():
    """Removes every entry."""
    shutil.rmtree(directory(), ignore_errors=True)
