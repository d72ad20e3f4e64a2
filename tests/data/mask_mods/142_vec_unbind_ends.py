# hasseflow-case: n=16 category=vector
import torch
windows = torch.tensor([[0, 8], [8, 16]])
def mask_mod(b, h, q_idx, kv_idx):
    first, second = windows.unbind(0)
    in_first = (q_idx >= first[0]) & (q_idx < first[1]) & (kv_idx < first[1])
    in_second = (q_idx >= second[0]) & (kv_idx >= second[0])
    return (in_first | in_second) & (kv_idx <= q_idx)
