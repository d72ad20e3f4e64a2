# hasseflow-case: n=10 category=tail
import torch
import torch.nn.functional as F
w = torch.tensor([[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])
mirrored = F.pad(w, (1, 1), mode="reflect").squeeze(0)
def mask_mod(b, h, q_idx, kv_idx):
    return (mirrored[q_idx] - mirrored[kv_idx]).abs() <= 1.5
