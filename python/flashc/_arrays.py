"""Host arrays to and from the extension: (name, dtype, shape, bytes)."""
import numpy as np

# The NumPy dtype names the runner binds (npy::dtypeName, lib/Runtime/Npy.h).
_DTYPES = {"float16", "bfloat16", "float32", "int32", "uint16", "bool"}


def is_host_array(value):
    return isinstance(value, np.ndarray)


def dtype_name(array):
    """The runner's name for `array`'s dtype; bf16 comes from ml_dtypes."""
    name = array.dtype.name
    if name not in _DTYPES:
        from ._flashc import RunError

        raise RunError(
            f"error: arrays of dtype {name} cannot be passed (supported: "
            "float16, bfloat16 (ml_dtypes), float32, int32, bool)\n"
        )
    return name


def to_argument(name, array):
    data = np.ascontiguousarray(array)
    if data.dtype.byteorder == ">":
        data = data.astype(data.dtype.newbyteorder("<"))
    return (name, dtype_name(array), list(data.shape), data.tobytes())


def write_back(array, output):
    """Copies the run's final contents of a tensor into the caller's array."""
    _dtype, shape, data = output
    result = np.frombuffer(data, dtype=array.dtype).reshape(shape)
    if array.flags.writeable:
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
