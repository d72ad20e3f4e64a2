# hasseflow-case: n=24 b=0 h=1 category=vector
"""Each query tile keeps a short list of key tiles; the key's tile is compared with the whole
list after unsqueeze(-1), then reduced with any(dim=-1); ragged last tile cut by its size."""
import torch

TILE = 4
chosen = torch.tensor([[[[0, 1], [1, 0], [2, 0], [3, 1], [4, 2], [5, 3]],
                        [[0, 2], [1, 3], [2, 5], [3, 0], [4, 4], [5, 1]]]])
real = torch.tensor([4, 4, 4, 4, 4, 3])


def mask_mod(b, h, q_idx, kv_idx):
    kv_tile = kv_idx // TILE
    listed = (chosen[b, h, q_idx // TILE] == kv_tile.unsqueeze(-1)).any(dim=-1)
    return listed & (kv_idx % TILE < real[kv_tile])
