"""flashc.compile and the Kernel it returns."""
import errno
import json
import os

from . import _arrays, _device, _flashc, cache

#: The --emit levels, in pipeline order.
LEVELS = ("tile", "layout", "simt", "llvm", "ptx", "cubin")
TARGETS = ("interp", "emulate", "cuda")


def _constant_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _read_source(path_or_source):
    """(text, name): (None, path) for a file, which the compiler reads as
    flashc does (its bytes as they are, only if it is a regular file), or
    source text and '<string>'."""
    path = os.fspath(path_or_source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if "\n" not in path and os.path.exists(path):
        if os.path.isdir(path):
            raise IsADirectoryError(errno.EISDIR, "a kernel file is expected, not a directory",
                                    path)
        return None, path
    if path.endswith(".tile") and "\n" not in path:
        raise FileNotFoundError(errno.ENOENT, "no such kernel file", path)
    return path, "<string>"


def compile(path_or_source, arch="sm_80", import_dirs=(), *, merge_mask_bounds=True,
            lean_masks=False, **constants):
    """Compiles a tile program (a file's path or its source text).

    `constants` override the kernel's compile-time constants
    (`flashc -D NAME=VALUE`); `import_dirs` are searched for imports after the
    importing file's directory (`flashc -I DIR`). The kernel reads `arch` as
    its predefined constant ARCH (90 for "sm_90"); the emulator runs it with
    that arch's limits. `merge_mask_bounds` and `lean_masks` are flashc's
    `--merge-mask-bounds` and `--lean-masks`: the masked loops' rewrites, used
    by every level, the PTX and every run of the kernel. Raises CompileError,
    whose message has file:line:col, the source line and a caret.
    """
    text, name = _read_source(path_or_source)
    defines = [(k, _constant_text(v)) for k, v in constants.items()]
    # lean_masks includes the merge (flashc --lean-masks runs it too).
    options = {"merge_mask_bounds": bool(merge_mask_bounds or lean_masks),
               "lean_masks": bool(lean_masks)}
    handle = _flashc.compile(text, name, defines, [os.fspath(d) for d in import_dirs], arch,
                             **options)
    return Kernel(handle, name, defines, arch, options)


class Kernel:
    """A compiled tile program: its IR at every level, its PTX and launch
    metadata (for `arch`), and a callable that runs it on arrays."""

    def __init__(self, handle, name, defines, arch, options):
        self._handle = handle
        self.name = name
        self.constants = dict(defines)
        self.arch = arch
        #: The compile options beside arch: {"merge_mask_bounds": ..., "lean_masks": ...}.
        self.options = dict(options)
        self._lowered = None

    def _lower(self):
        """(PTX, sidecar JSON), from the disk cache when it has them."""
        if self._lowered is None:
            key = cache.key(self._handle.sources(), self.constants.items(), self.arch,
                            self.options)
            self._lowered = cache.load(key)
            if self._lowered is None:
                self._lowered = self._handle.lower(self.arch)
                cache.store(key, *self._lowered)
        return self._lowered

    @property
    def ptx(self):
        """The PTX, as `flashc --emit=ptx --arch=ARCH` prints it."""
        return self._lower()[0]

    @property
    def metadata(self):
        """The launch sidecar (lib/Target/Sidecar.h) as a dict: entry, arch,
        params, grid (expressions over shape symbols and integer scalars),
        threads_per_cta, num_warps, shared_memory, constants."""
        return json.loads(self._lower()[1])

    @property
    def grid(self):
        """The grid as three expressions, e.g. ['cdiv(Nq, 128)', 'B * H', '1']."""
        return self.metadata["grid"]

    @property
    def threads(self):
        return self.metadata["threads_per_cta"]

    @property
    def shared_bytes(self):
        shared = self.metadata["shared_memory"]
        return shared["static_bytes"] + shared["dynamic_bytes"]

    @property
    def params(self):
        return self.metadata["params"]

    def ir(self, level="tile"):
        """The program at an --emit level: tile, layout, simt, llvm, ptx
        (text), or cubin (bytes, through ptxas)."""
        if level == "ptx":
            return self.ptx
        if level == "cubin":
            return _flashc.assemble_cubin(self.ptx, self.arch)
        if level not in LEVELS:
            raise ValueError(f"unknown level '{level}' (one of {', '.join(LEVELS)})")
        return self._handle.emit(level, self.arch)

    def __call__(self, target="interp", check_races=True, stream=None, **args):
        """Runs the kernel on `target` (interp, emulate or cuda), binding
        arrays and numbers to parameters by name and shape symbols as
        `flashc run` does. The arrays the kernel writes get its results (in
        their own dtype and byte order); the arrays it only reads are left
        as they are, also when the same array is passed as an output. Returns
        the emulator's counters (a dict) for emulate, else None. Raises
        RunError (also, writing nothing, when a written array is read-only
        or shares memory with another written one), or SanitizerError for
        the emulator's findings.
        """
        if target not in TARGETS:
            raise ValueError(f"unknown target '{target}' (one of {', '.join(TARGETS)})")
        if target == "cuda" and _device.has_device_arrays(args):
            return _device.launch(self, args, stream)
        arrays, scalars = {}, []
        for name, value in args.items():
            if _arrays.is_host_array(value):
                arrays[name] = value
            else:
                scalars.append((name, _arrays.scalar_text(name, value)))
        sent = [_arrays.to_argument(n, a) for n, a in arrays.items()]
        result = _flashc.run(
            self._handle,
            target,
            scalars,
            sent,
            list(arrays),
            check_races,
            self.arch,
        )
        _arrays.write_back(arrays, sent, result["outputs"])
        return result["stats"]

    def __repr__(self):
        constants = "".join(f", {k}={v}" for k, v in self.constants.items())
        options = "".join(f", {k}={v}" for k, v in self.options.items())
        return f"flashc.Kernel('{self.name}', arch='{self.arch}'{options}{constants})"
