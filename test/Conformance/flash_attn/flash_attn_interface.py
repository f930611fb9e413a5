"""The one helper FlashAttention-2's tests import from its interface module."""


def _get_block_size_n(device, head_dim, is_dropout, is_causal):
    """The key block of the kernel whose S_dmask the tests read: flashc's
    flash_attn_dropout_probs (kernels/flash_attn_dropout_probs.tile), whose
    row maxima are per block of this many keys: 32 at every head dim
    (flashc.attention.dropout_block_size_n). The device, the dropout and the
    causal flags do not change it."""
    from flashc.attention import dropout_block_size_n

    return dropout_block_size_n(head_dim)
