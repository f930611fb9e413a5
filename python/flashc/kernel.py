"""flashc.compile and the Kernel it returns."""
import errno
import json
import os

import numpy as np

from . import _arrays, _device, _flashc, cache

#: The --emit levels, in pipeline order.
LEVELS = ("tile", "layout", "simt", "llvm", "ptx", "cubin")
TARGETS = ("interp", "emulate", "cuda")
#: The arch flashc compiles for unless told otherwise (flashc's --arch default).
DEFAULT_ARCH = _flashc.DEFAULT_ARCH
#: The compile switches, {name: default}: flashc's --FLAG with "_" for "-"
#: (flashc/Support/CompileOptions.def); compile() takes them as keywords.
OPTIONS = {name: default for name, default, _ in _flashc.option_table()}


#: The element type a type constant takes for a NumPy or torch dtype name.
_TYPE_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "int32": "i32",
               "bool": "bool", "float8_e4m3fn": "f8e4m3"}


def _dtype_name(value):
    """The dtype name of a NumPy dtype, a scalar type (np.float16,
    ml_dtypes.bfloat16) or a torch dtype; None for anything else."""
    if isinstance(value, (bool, int, float, str)):
        return None
    text = str(value)
    if text.startswith("torch."):
        return text[len("torch."):]
    try:
        return np.dtype(value).name
    except TypeError:
        return None


def _constant_text(value):
    """A constant as -D spells it; a dtype becomes the element type of a type
    constant (T=np.float16 is -D T=f16, T=ml_dtypes.bfloat16 -D T=bf16)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    name = _dtype_name(value)
    if name is not None:
        return _TYPE_NAMES.get(name, name)
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


def compile(path_or_source, arch=DEFAULT_ARCH, import_dirs=(), **kwargs):
    """Compiles a tile program (a file's path or its source text).

    Keyword arguments named in OPTIONS are flashc's switches
    (`lean_masks=True` is `--lean-masks`), with flashc's defaults; they reach
    every level, the PTX and every run of the kernel. The others override the
    kernel's compile-time constants (`flashc -D NAME=VALUE`); a type constant
    takes a type name or a dtype (`T="bf16"`, `T=ml_dtypes.bfloat16`,
    `T=torch.bfloat16`). `import_dirs`
    are searched for imports after the importing file's directory
    (`flashc -I DIR`). The kernel reads `arch` as its predefined constant ARCH
    (90 for "sm_90"); the emulator runs it with that arch's limits. Raises
    CompileError, whose message has file:line:col, the source line and a
    caret.
    """
    text, name = _read_source(path_or_source)
    options = dict(OPTIONS)
    constants = {}
    for key, value in kwargs.items():
        if key in OPTIONS:
            options[key] = bool(value)
        else:
            constants[key] = value
    defines = [(k, _constant_text(v)) for k, v in constants.items()]
    handle = _flashc.compile(text, name, defines, [os.fspath(d) for d in import_dirs], arch,
                             options)
    return Kernel(handle, name, defines, arch, options)


class Kernel:
    """A compiled tile program: its IR at every level, its PTX and launch
    metadata (for `arch`), and a callable that runs it on arrays."""

    def __init__(self, handle, name, defines, arch, options):
        self._handle = handle
        self.name = name
        self.constants = dict(defines)
        self.arch = arch
        #: The compile switches beside arch, {name: value} for every name of OPTIONS.
        self.options = dict(options)
        self._lowered = None

    def _lower(self):
        """(PTX, sidecar JSON), from the disk cache when it has them."""
        if self._lowered is None:
            key = cache.key(self._handle.sources(), self.constants.items(), self.arch,
                            self.options)
            self._lowered = cache.load(key)
            if self._lowered is None:
                self._lowered = self._handle.lower()
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
        return self._handle.emit(level)

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
        )
        _arrays.write_back(arrays, sent, result["outputs"])
        return result["stats"]

    def __repr__(self):
        constants = "".join(f", {k}={v}" for k, v in self.constants.items())
        options = "".join(f", {k}={v}" for k, v in self.options.items())
        return f"flashc.Kernel('{self.name}', arch='{self.arch}'{options}{constants})"
