# hasseflow-case: n=48 category=factory
import torch

PREFIX_LEN = 12


def make_prefix_lm(prefix_len):
    """Bidirectional over the prompt, causal afterwards."""

    def prefix_lm(b, h, q_idx, kv_idx):
        in_prefix = kv_idx < prefix_len
        return in_prefix | (q_idx >= kv_idx)

    return prefix_lm


mask_mod = make_prefix_lm(PREFIX_LEN)
