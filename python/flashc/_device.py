"""Arrays already on the GPU, passed to --target=cuda without a copy.

An array with __cuda_array_interface__ (cupy, numba, torch) or with
__dlpack__ on a CUDA device (torch, jax, cupy) is passed as its device
pointer; the kernel runs on the caller's stream: the one the interface
names, else the current torch stream when torch is loaded, else the legacy
default stream. C-contiguous arrays only.
"""
import ctypes
import sys

from . import _arrays, _flashc

_KDL_CUDA = 2  # DLDeviceType kDLCUDA
# DLDataType (code, bits) -> the runner's dtype name.
_DLPACK_DTYPES = {(2, 16): "float16", (2, 32): "float32", (0, 32): "int32",
                  (1, 16): "uint16", (4, 16): "bfloat16", (6, 8): "bool"}
# __cuda_array_interface__ typestr -> dtype name.
_TYPESTRS = {"<f2": "float16", "<f4": "float32", "<i4": "int32",
             "<u2": "uint16", "|b1": "bool"}


def _is_device_array(value):
    if hasattr(value, "__cuda_array_interface__"):
        return True
    device = getattr(value, "__dlpack_device__", None)
    return device is not None and device()[0] == _KDL_CUDA


def has_device_arrays(args):
    return any(_is_device_array(v) for v in args.values())


def _contiguous_strides(shape, itemsize):
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return strides


def _from_cuda_array_interface(name, value):
    cai = value.__cuda_array_interface__
    shape = [int(s) for s in cai["shape"]]
    dtype = _TYPESTRS.get(cai["typestr"])
    if dtype is None:
        raise _flashc.RunError(
            f"error: argument '{name}' has typestr {cai['typestr']}, which "
            "flashc cannot pass (float16, bfloat16, float32, int32, bool)\n")
    strides = cai.get("strides")
    itemsize = int(cai["typestr"][2:])
    if strides is not None and list(strides) != _contiguous_strides(shape, itemsize):
        raise _flashc.RunError(f"error: argument '{name}' is not C-contiguous\n")
    return (name, dtype, shape, int(cai["data"][0])), cai.get("stream")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


def _from_dlpack(name, value, stream, keep):
    """Reads the DLTensor of the capsule (which `keep` holds until the launch
    is over; its destructor then gives the tensor back to its producer)."""
    capsule = value.__dlpack__(stream=stream)
    keep.append(capsule)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    tensor = _DLTensor.from_address(get(capsule, b"dltensor"))
    shape = [tensor.shape[i] for i in range(tensor.ndim)]
    key = (tensor.dtype.code, tensor.dtype.bits)
    if key not in _DLPACK_DTYPES or tensor.dtype.lanes != 1:
        raise _flashc.RunError(f"error: argument '{name}' has a DLPack dtype "
                               "flashc cannot pass\n")
    if tensor.strides:
        strides = [tensor.strides[i] for i in range(tensor.ndim)]
        if strides != _contiguous_strides(shape, 1):
            raise _flashc.RunError(f"error: argument '{name}' is not C-contiguous\n")
    return (name, _DLPACK_DTYPES[key], shape, tensor.data + tensor.byte_offset)


def _torch_stream():
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_available():
        return None
    return torch.cuda.current_stream().cuda_stream


def launch(kernel, args, stream=None):
    """Runs `kernel` on device arrays (and numbers) in `args`."""
    tensors, scalars, keep, caller_stream = [], [], [], stream
    if caller_stream is None:
        caller_stream = _torch_stream()
    for name, value in args.items():
        if hasattr(value, "__cuda_array_interface__"):
            tensor, cai_stream = _from_cuda_array_interface(name, value)
            if caller_stream is None and cai_stream is not None:
                caller_stream = cai_stream
            tensors.append(tensor)
        elif _is_device_array(value):
            tensors.append(_from_dlpack(name, value, caller_stream, keep))
        elif _arrays.is_host_array(value):
            raise _flashc.RunError(
                f"error: argument '{name}' is a host array; with device arrays "
                "every tensor must be on the device\n")
        else:
            _arrays.scalar_text(name, value)  # the same checks as the host path
            scalars.append((name, float(value)))
    ptx, sidecar = kernel._lower()
    return _flashc.launch_on_device(ptx, sidecar, tensors, scalars, caller_stream or 0)
