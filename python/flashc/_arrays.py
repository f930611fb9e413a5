"""Host arrays to and from the extension: (name, dtype, shape, bytes)."""
import numpy as np

# The NumPy dtype names the runner binds (npy::dtypeName, lib/Runtime/Npy.h).
_DTYPES = {"float16", "bfloat16", "float32", "int32", "uint16", "bool", "float8_e4m3fn"}


def is_host_array(value):
    return isinstance(value, np.ndarray)


def dtype_name(array):
    """The runner's name for `array`'s dtype; bf16 and fp8 come from ml_dtypes."""
    name = array.dtype.name
    if name not in _DTYPES:
        from ._flashc import RunError

        raise RunError(
            f"error: arrays of dtype {name} cannot be passed (supported: "
            "float16, bfloat16 (ml_dtypes), float32, int32, bool, float8_e4m3fn "
            "(ml_dtypes))\n"
        )
    return name


def _little_endian(dtype):
    """`dtype` with the byte order the runner reads and writes."""
    return dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype


def to_argument(name, array):
    """(name, dtype, shape, bytes): its elements in C order, little-endian."""
    dtype = dtype_name(array)
    data = np.asarray(array, dtype=_little_endian(array.dtype))
    return (name, dtype, list(data.shape), data.tobytes(order="C"))


def _overlap(a, b):
    """Whether two arrays share an element in memory."""
    try:
        return np.shares_memory(a, b, max_work=1 << 20)
    except RuntimeError:  # numpy's TooHardError: assume they do
        return np.may_share_memory(a, b)


def write_back(arrays, sent, outputs):
    """Copies the kernel's results into the caller's arrays: only into those
    whose contents the run changed (what the kernel wrote), so that an array
    the kernel only reads keeps its values even when it is passed as an
    output too. `sent` are the to_argument tuples, `outputs` the run's
    {name: (dtype, shape, bytes)}. Raises RunError, before writing any, when
    a written array is read-only or shares memory with another written one.
    """
    from ._flashc import RunError

    written = [(name, outputs[name][1], outputs[name][2])
               for name, _dtype, _shape, data in sent if outputs[name][2] != data]
    for name, _shape, _data in written:
        if not arrays[name].flags.writeable:
            raise RunError(f"error: the kernel writes argument '{name}', whose array is "
                           "read-only (flags.writeable is False); nothing was written\n")
    for i, (first, _, _) in enumerate(written):
        for second, _, _ in written[i + 1:]:
            if _overlap(arrays[first], arrays[second]):
                raise RunError(f"error: the kernel writes arguments '{first}' and "
                               f"'{second}', whose arrays share memory; nothing was "
                               "written\n")
    for name, shape, data in written:
        array = arrays[name]
        result = np.frombuffer(data, dtype=_little_endian(array.dtype)).reshape(shape)
        np.copyto(array, result)


def scalar_text(name, value):
    """A scalar argument as `flashc run --arg NAME=NUMBER` spells it."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    raise TypeError(
        f"argument '{name}' must be an array or a number, not "
        f"{type(value).__name__}"
    )
