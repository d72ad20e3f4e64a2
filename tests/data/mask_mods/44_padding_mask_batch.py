# hasseflow-case: n=32 b=1 h=2 category=batchhead
import torch

batch_size, seq_len = 3, 32
attention_mask = torch.ones(batch_size, seq_len, dtype=torch.bool)
attention_mask[1, 20:] = False  # right padding of the second sample
attention_mask[2, 28:] = False


def padded_causal(batch_idx, head_idx, q_idx, kv_idx):
    return attention_mask[batch_idx, kv_idx] & (kv_idx <= q_idx)


mask_mod = padded_causal
