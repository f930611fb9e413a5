"""The `flash_attn` package as FlashAttention-2's tests import it, backed by
flashc.flash_attn: the conformance run (scripts/fa-conformance.sh) puts this
directory first on the path. FA_CONFORMANCE_TARGET picks interp (default) or
emulate."""
import functools
import os

from flashc import flash_attn as _flashc_flash_attn

_TARGET = os.environ.get("FA_CONFORMANCE_TARGET", "interp")


def _on_target(function):
    return functools.wraps(function)(functools.partial(function, target=_TARGET))


flash_attn_func = _on_target(_flashc_flash_attn.flash_attn_func)
flash_attn_kvpacked_func = _on_target(_flashc_flash_attn.flash_attn_kvpacked_func)
flash_attn_qkvpacked_func = _on_target(_flashc_flash_attn.flash_attn_qkvpacked_func)
flash_attn_varlen_func = _on_target(_flashc_flash_attn.flash_attn_varlen_func)
flash_attn_varlen_kvpacked_func = _on_target(_flashc_flash_attn.flash_attn_varlen_kvpacked_func)
flash_attn_varlen_qkvpacked_func = _on_target(
    _flashc_flash_attn.flash_attn_varlen_qkvpacked_func)
flash_attn_with_kvcache = _on_target(_flashc_flash_attn.flash_attn_with_kvcache)
