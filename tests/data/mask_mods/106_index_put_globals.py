# hasseflow-case: n=16 category=tail
import torch
is_global = torch.zeros(16, dtype=torch.bool)
is_global.index_put_((torch.tensor([0, 7]),), torch.tensor(True))
def mask_mod(b, h, q_idx, kv_idx):
    return is_global[q_idx] | is_global[kv_idx] | ((q_idx - kv_idx).abs() <= 1)
