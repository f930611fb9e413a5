"""pad_input and unpad_input as FlashAttention-2's tests use them: tokens of
a padded [B, S, ...] batch kept where the mask is true, packed as varlen
sequences, and scattered back."""
import torch
import torch.nn.functional as F


def unpad_input(hidden_states, attention_mask, unused_mask=None):
    """(tokens [Total, ...], indices, cu_seqlens int32 [B + 1], max_seqlen,
    seqused int32 [B]); unused_mask marks tokens that are packed but not
    attended to (counted in cu_seqlens, not in seqused)."""
    kept = attention_mask if unused_mask is None else attention_mask | unused_mask
    seqlens = kept.sum(dim=-1, dtype=torch.int32)
    used = attention_mask.sum(dim=-1, dtype=torch.int32)
    indices = torch.nonzero(kept.flatten(), as_tuple=False).flatten()
    cu_seqlens = F.pad(torch.cumsum(seqlens, dim=0, dtype=torch.int32), (1, 0))
    tokens = hidden_states.reshape(-1, *hidden_states.shape[2:])[indices]
    return tokens, indices, cu_seqlens, int(seqlens.max().item()), used


def pad_input(hidden_states, indices, batch, seqlen):
    """The inverse: [Total, ...] back to [batch, seqlen, ...], zeros elsewhere."""
    out = hidden_states.new_zeros((batch * seqlen, *hidden_states.shape[1:]))
    out = out.index_put((indices,), hidden_states)
    return out.reshape(batch, seqlen, *hidden_states.shape[1:])
