# hasseflow-case: n=18 category=tail
import torch
flat = torch.arange(18)
jagged = torch.nested.nested_tensor_from_jagged(flat, lengths=torch.tensor([3, 9, 6]))
bounds = jagged.offsets()
pieces = [p.numel() for p in jagged.unbind()]
owner = torch.repeat_interleave(torch.arange(len(pieces)), torch.tensor(pieces))
def mask_mod(b, h, q_idx, kv_idx):
    same = owner[q_idx] == owner[kv_idx]
    return same & ((kv_idx <= q_idx) | (kv_idx < bounds[owner[q_idx]] + 2))
