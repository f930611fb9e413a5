"""The cache directory for peer sources, builds and the perf tool venv.

FLASHC_PERF_CACHE overrides the default ~/.cache/flashc-perf; it must lie
outside the repository so that no peer code is ever committed.
"""

import hashlib
import os
import re
import tarfile
import urllib.request

PYPI_SIMPLE = "https://pypi.org/simple/"


def cache_dir():
    path = os.environ.get("FLASHC_PERF_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "flashc-perf"))
    os.makedirs(path, exist_ok=True)
    return path


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_sdist(project, filename, sha256):
    """Downloads one source distribution (or wheel) from PyPI into the cache,
    checked by hash.

    `pip download --no-binary :all:` would run the sdist's setup.py, which for
    flash-attn imports torch; the file is therefore taken from PyPI's simple
    index (the page pip reads) and verified against the pinned sha256.
    """
    dest = os.path.join(cache_dir(), "src", filename)
    if os.path.exists(dest) and sha256_file(dest) == sha256:
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    page = urllib.request.urlopen(PYPI_SIMPLE + project + "/", timeout=120).read().decode()
    match = re.search(r'href="([^"#]*/%s)#sha256=([0-9a-f]{64})"' % re.escape(filename), page)
    if not match:
        raise RuntimeError("%s not listed on PyPI's simple index for %s" % (filename, project))
    if match.group(2) != sha256:
        raise RuntimeError("PyPI lists sha256 %s for %s, expected %s"
                           % (match.group(2), filename, sha256))
    data = urllib.request.urlopen(match.group(1), timeout=600).read()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError("downloaded %s does not match sha256 %s" % (filename, sha256))
    with open(dest + ".part", "wb") as f:
        f.write(data)
    os.replace(dest + ".part", dest)
    return dest


def unpack(archive, marker):
    """Extracts a .tar.gz next to itself once; returns the top directory."""
    top = archive[:-len(".tar.gz")]
    if not os.path.exists(os.path.join(top, marker)):
        with tarfile.open(archive) as tar:
            tar.extractall(os.path.dirname(archive), filter="data")
    return top


def write_if_changed(path, text):
    """Writes text unless the file already holds it (keeps its mtime for reuse checks)."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
