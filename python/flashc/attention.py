"""flashc.attention: flash_attn_func's interface over the kernels of
kernels/ (docs/kernels.md), choosing the kernel and its constants from the
arguments.

Forward only: flashc has no backward kernels yet, so there is no
torch.autograd.Function; tensors that require grad are refused rather than
given a wrong gradient.
"""
import functools
import math
import os
import sys

import numpy as np

from . import _device
from .kernel import compile as _compile

_PACKAGE_KERNELS = os.path.join(os.path.dirname(__file__), "kernels")


def kernels_dir():
    """The attention kernels: installed with the package (a link to the
    repository's kernels/ in the build tree)."""
    return _PACKAGE_KERNELS


@functools.lru_cache(maxsize=64)
def _kernel(name, arch, constants):
    return _compile(os.path.join(kernels_dir(), name + ".tile"), arch=arch,
                    **dict(constants))


def _kernel_name(dtype_name, alibi, lse):
    if alibi and lse:
        raise NotImplementedError(
            "no kernel computes ALiBi and the log-sum-exp together "
            "(docs/kernels.md)")
    base = "flash_attn_alibi" if alibi else "flash_attn_lse" if lse else "flash_attn"
    if dtype_name == "bfloat16":
        return base + "_bf16"
    if dtype_name == "float16":
        return base
    raise TypeError(f"attention takes float16 or bfloat16 tensors, not {dtype_name}")


class _Numpy:
    """Layout changes and allocation for NumPy arrays."""

    @staticmethod
    def heads_first(x):  # [B, N, H, D] -> [B, H, N, D]
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3))

    @staticmethod
    def seq_first(x):
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3))

    @staticmethod
    def empty(like, shape, float32=False):
        return np.zeros(shape, np.float32 if float32 else like.dtype)

    @staticmethod
    def array(values, like):
        return np.ascontiguousarray(values, dtype=np.float32)

    @staticmethod
    def dtype_name(x):
        return x.dtype.name


class _Torch:
    """The same for torch tensors (on the CPU or the GPU)."""

    def __init__(self, torch):
        self.torch = torch

    def heads_first(self, x):
        return x.transpose(1, 2).contiguous()

    seq_first = heads_first

    def empty(self, like, shape, float32=False):
        dtype = self.torch.float32 if float32 else like.dtype
        return self.torch.zeros(shape, dtype=dtype, device=like.device)

    def array(self, values, like):
        return self.torch.as_tensor(values, dtype=self.torch.float32,
                                    device=like.device).contiguous()

    def dtype_name(self, x):
        return str(x.dtype).replace("torch.", "")


def _backend(q):
    if isinstance(q, np.ndarray):
        return _Numpy()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(q, torch.Tensor):
        if q.requires_grad:
            raise NotImplementedError(
                "flashc has no backward kernels yet: attention() is forward "
                "only (call it under torch.no_grad())")
        return _Torch(torch)
    raise TypeError(f"attention takes NumPy arrays or torch tensors, not {type(q).__name__}")


def _host_view(backend, x):
    """torch CPU tensors run as NumPy arrays sharing their memory (bf16 via
    ml_dtypes); device tensors go to the GPU as they are."""
    if isinstance(backend, _Torch) and x.device.type == "cpu":
        if backend.dtype_name(x) == "bfloat16":
            import ml_dtypes

            return x.view(backend.torch.int16).numpy().view(ml_dtypes.bfloat16)
        return x.numpy()
    return x


def attention(q, k, v, softmax_scale=None, causal=False, window_size=(-1, -1),
              softcap=0.0, alibi_slopes=None, return_lse=False, target=None,
              arch="sm_80"):
    """flash_attn_func(q, k, v, ...): q [B, Nq, H, D], k and v [B, Nk, H_KV,
    D] (H_KV divides H: GQA/MQA), f16 or bf16; alibi_slopes f32 [H]. Returns
    out [B, Nq, H, D], and with return_lse also softmax_lse f32 [B, H, Nq].

    `target`: interp, emulate or cuda (default: cuda for arrays on the GPU,
    else interp).
    """
    backend = _backend(q)
    if alibi_slopes is not None and len(alibi_slopes.shape) != 1:
        raise NotImplementedError("alibi_slopes must be [H] (per-batch slopes "
                                  "have no kernel yet)")
    head_dim = q.shape[-1]
    name = _kernel_name(backend.dtype_name(q), alibi_slopes is not None, return_lse)
    left, right = window_size
    constants = (("HEAD_DIM", head_dim), ("CAUSAL", bool(causal)),
                 ("WINDOW_LEFT", int(left)), ("WINDOW_RIGHT", int(right)),
                 ("SOFTCAP", float(softcap)))
    if target is None:
        target = "cuda" if _device._is_device_array(q) else "interp"
    kernel = _kernel(name, arch, constants)

    Q, K, V = (backend.heads_first(x) for x in (q, k, v))
    O = backend.empty(Q, Q.shape)
    args = {"Q": Q, "K": K, "V": V, "O": O}
    if softmax_scale is None:
        softmax_scale = 1.0 / math.sqrt(head_dim)
    if alibi_slopes is not None:
        args["Slopes"] = backend.array(alibi_slopes, Q)
    if return_lse:
        args["LSE"] = backend.empty(Q, Q.shape[:3], float32=True)
    host = {n: _host_view(backend, a) for n, a in args.items()}
    kernel(target=target, sm_scale=float(softmax_scale), **host)
    out = backend.seq_first(O)
    return (out, args["LSE"]) if return_lse else out
