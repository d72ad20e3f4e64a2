# hasseflow-case: n=20 category=vector
"""Each image is a (start, end) row; a key looks its image's row up and reads both ends."""
import torch
spans = torch.tensor([[0, 5], [5, 12], [12, 20]])
image_of_key = torch.repeat_interleave(torch.arange(3), torch.tensor([5, 7, 8]))
def mask_mod(b, h, q_idx, kv_idx):
    span = spans[image_of_key[kv_idx]]
    return ((q_idx >= span[0]) & (q_idx < span[1])) | (kv_idx <= q_idx)
