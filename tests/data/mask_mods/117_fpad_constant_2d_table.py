# hasseflow-case: n=12 category=tail
import torch
import torch.nn.functional as F
core = torch.ones(2, 2, dtype=torch.long)
allowed = F.pad(core, (0, 1, 1, 0), value=0)
def mask_mod(b, h, q_idx, kv_idx):
    return (allowed[q_idx % 3, kv_idx % 3] == 1) | (q_idx == kv_idx)
