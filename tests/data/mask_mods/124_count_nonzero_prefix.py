# hasseflow-case: n=16 b=1 h=0 category=tail
import torch
attention_mask = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [1] * 16])
pad_len = attention_mask.shape[1] - torch.count_nonzero(attention_mask, dim=1)
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx >= pad_len[b]) & (kv_idx <= q_idx)
