"""The one helper FlashAttention-2's tests import from its interface module."""
import torch


def _get_block_size_n(device, head_dim, is_dropout, is_causal):
    """FlashAttention-2's key block size (its tests use it to read the
    dropout mask's layout): 128 up to d64 (64 with dropout), then 64, except
    32 at d128 with dropout and on sm86/89 without a causal mask."""
    major, minor = torch.cuda.get_device_capability(device)
    if head_dim <= 32:
        return 128
    if head_dim <= 64:
        return 64 if is_dropout else 128
    if head_dim <= 96 or head_dim > 128:
        return 64
    if major == 8 and minor > 0:
        return 64 if (is_causal and not is_dropout) else 32
    return 32 if is_dropout else 64
