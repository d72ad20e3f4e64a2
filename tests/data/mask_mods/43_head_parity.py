# hasseflow-case: n=20 b=0 h=3 category=batchhead
import torch

LOCAL = 3


def mask_mod(b, h, q_idx, kv_idx):
    causal = q_idx >= kv_idx
    band = (q_idx - kv_idx).abs() <= LOCAL
    # even heads are causal over everything, odd heads see a symmetric band
    return torch.where(h % 2 == 0, causal, band)
