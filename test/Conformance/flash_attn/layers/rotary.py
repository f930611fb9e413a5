"""apply_rotary_emb as FlashAttention-2's tests use it for their reference:
rotary embeddings on the first rotary_dim = 2 * cos.shape[1] channels,
computed in float32."""
import torch


def apply_rotary_emb(x, cos, sin, interleaved=False, inplace=False, seqlen_offsets=0,
                     cu_seqlens=None, max_seqlen=None):
    """x [B, S, H, D]; cos, sin [S_ro, rotary_dim / 2]; position s of batch b
    uses row s + seqlen_offsets[b] (an int or an int tensor [B]). interleaved
    rotates channel pairs (0, 1), (2, 3), ...; otherwise (i, i + rotary_dim / 2)."""
    if cu_seqlens is not None:
        raise NotImplementedError("apply_rotary_emb with cu_seqlens")
    batch, seqlen = x.shape[:2]
    half = cos.shape[1]
    offsets = torch.as_tensor(seqlen_offsets, device=x.device).reshape(-1, 1)
    positions = (torch.arange(seqlen, device=x.device).reshape(1, -1) + offsets).long()
    positions = positions.expand(batch, seqlen)
    c = cos[positions].float().unsqueeze(2)  # [B, S, 1, half]
    s = sin[positions].float().unsqueeze(2)
    rotated = x[..., : 2 * half].float()
    if interleaved:
        first, second = rotated[..., 0::2], rotated[..., 1::2]
        out = torch.stack((first * c - second * s, first * s + second * c), dim=-1)
        out = out.flatten(-2)
    else:
        first, second = rotated[..., :half], rotated[..., half:]
        out = torch.cat((first * c - second * s, first * s + second * c), dim=-1)
    result = torch.cat((out.to(x.dtype), x[..., 2 * half:]), dim=-1)
    if inplace:
        x.copy_(result)
        return x
    return result
