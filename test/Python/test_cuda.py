"""target="cuda" against the stub libcuda of the launcher's tests (no GPU):
host arrays are copied in and out; arrays with __cuda_array_interface__ or
__dlpack__ are passed by pointer, on the caller's stream."""
import ctypes

import numpy as np
import pytest

import flashc
from conftest import ROOT, attention_inputs


@pytest.fixture
def driver(stub_libcuda, monkeypatch):
    monkeypatch.setenv("FLASHC_LIBCUDA", stub_libcuda)
    monkeypatch.setenv("FLASH_STUB_CUDA", "ok")


@pytest.fixture(scope="module")
def fa2():
    return flashc.compile(f"{ROOT}/kernels/fa2.tile")


class DeviceArray:
    """What cupy or numba would hand over: a pointer, no host data."""

    def __init__(self, pointer, shape, typestr="<f2", stream=None, strides=None):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (pointer, False),
            "version": 3, "strides": strides, "stream": stream}


def launch_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("stub-cuda:")]


def test_host_arrays(driver, fa2, capfd):
    q, k, v, o = attention_inputs(b=2, h=3, nq=200, nk=136)
    o[:] = 1.5
    fa2(Q=q, K=k, V=v, O=o, sm_scale=0.125, target="cuda")
    lines = launch_lines(capfd.readouterr().err)
    assert "stub-cuda: launch fa2 grid=(2,6,1) block=(128,1,1) shared=81920 params=21" in lines
    assert "stub-cuda: param 0 .u64 = buf0+0" in lines
    assert lines[-1] == "stub-cuda: release live-allocations=0 live-modules=0"
    assert (o == 1.5).all()  # the stub runs nothing: O comes back as it went


def test_device_arrays_by_pointer_on_the_callers_stream(driver, fa2, capfd):
    shape = [2, 3, 200, 64]
    kv = [2, 3, 136, 64]
    args = {"Q": DeviceArray(0x10000, shape, stream=7), "K": DeviceArray(0x20000, kv),
            "V": DeviceArray(0x30000, kv), "O": DeviceArray(0x40000, shape)}
    launch = fa2(sm_scale=0.125, target="cuda", **args)
    assert launch["grid"] == (2, 6, 1) and launch["threads_per_cta"] == 128
    lines = launch_lines(capfd.readouterr().err)
    assert "stub-cuda: launch fa2 grid=(2,6,1) block=(128,1,1) shared=81920 params=21" in lines
    assert "stub-cuda: stream 7" in lines
    for param, pointer in ((0, 0x10000), (5, 0x20000), (10, 0x30000), (15, 0x40000)):
        assert f"stub-cuda: param {param} .u64 = {pointer}" in lines
    assert "stub-cuda: param 3 .u32 = 200" in lines and "stub-cuda: param 20 .f32 = 0.125" in lines
    assert lines[-1] == "stub-cuda: release live-allocations=0 live-modules=0"


def test_stream_argument_wins(driver, fa2, capfd):
    shape = [1, 1, 16, 64]
    args = {n: DeviceArray(0x1000 * (i + 1), shape, stream=7) for i, n in enumerate("QKVO")}
    fa2(sm_scale=0.125, target="cuda", stream=99, **args)
    assert "stub-cuda: stream 99" in launch_lines(capfd.readouterr().err)


class _DLManagedTensor(ctypes.Structure):
    from flashc._device import _DLTensor

    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackArray:
    """A CUDA tensor as DLPack producers (torch, jax) export it."""

    def __init__(self, pointer, shape, code=2, bits=16):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data, t.ndim, t.shape, t.byte_offset = pointer, len(shape), self.shape, 0
        t.device.device_type, t.device.device_id = 2, 0
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        self.streams = []

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


def test_dlpack_arrays(driver, fa2, capfd):
    shape = [1, 2, 50, 64]
    args = {n: DLPackArray(0x1000 * (i + 1), shape) for i, n in enumerate("QKVO")}
    fa2(sm_scale=0.25, target="cuda", stream=5, **args)
    lines = launch_lines(capfd.readouterr().err)
    assert "stub-cuda: launch fa2 grid=(1,2,1) block=(128,1,1) shared=81920 params=21" in lines
    assert "stub-cuda: param 15 .u64 = 16384" in lines  # O at 0x4000
    assert "stub-cuda: stream 5" in lines
    assert args["Q"].streams == [5]  # the producer is told the consumer's stream


def test_device_array_errors(driver, fa2):
    shape = [1, 1, 16, 64]
    args = {n: DeviceArray(0x1000, shape) for n in "QKV"}
    with pytest.raises(flashc.RunError, match="argument 'O' is a host array"):
        fa2(O=np.zeros(shape, np.float16), sm_scale=0.125, target="cuda", **args)
    with pytest.raises(flashc.RunError, match="argument 'O' is f32 but the kernel declares f16"):
        fa2(O=DeviceArray(0x1000, shape, "<f4"), sm_scale=0.125, target="cuda", **args)
    with pytest.raises(flashc.RunError, match="typestr <f8"):
        fa2(O=DeviceArray(0x1000, shape, "<f8"), sm_scale=0.125, target="cuda", **args)
    with pytest.raises(flashc.RunError, match="'O' is not C-contiguous"):
        fa2(O=DeviceArray(0x1000, shape, strides=[2, 2, 2, 2]), sm_scale=0.125, target="cuda", **args)
    with pytest.raises(flashc.RunError, match="dim 'Nq'"):
        fa2(O=DeviceArray(0x1000, [1, 1, 8, 64]), sm_scale=0.125, target="cuda", **args)


def test_no_driver(fa2, monkeypatch, tmp_path):
    monkeypatch.setenv("FLASHC_LIBCUDA", str(tmp_path / "no-libcuda.so"))
    shape = [1, 1, 16, 64]
    with pytest.raises(flashc.RunError, match="no-libcuda.so"):
        fa2(sm_scale=0.125, target="cuda", **{n: DeviceArray(0x1000, shape) for n in "QKVO"})
