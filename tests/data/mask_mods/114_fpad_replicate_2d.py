# hasseflow-case: n=12 category=tail
import torch
import torch.nn.functional as F
heights = torch.tensor([[1, 3, 2, 5, 4, 6, 2, 1, 3, 2]])
edge = F.pad(heights, (1, 1), mode="replicate")[0]
def mask_mod(b, h, q_idx, kv_idx):
    return edge[kv_idx] <= edge[q_idx]
