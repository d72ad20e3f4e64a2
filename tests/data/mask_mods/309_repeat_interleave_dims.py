# hasseflow-case: n=16 b=1 h=0 category=tail
"""A per-batch query-to-group table widened along its last dimension with repeat_interleave
(each group column repeated for its k keys), the way byte-patch cross attention builds its
mask; also a tensor of repeats along dim=-2 and a flattened call."""
import torch

group_of_query = torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 3, 3, 3, 3, 3, 3],
                               [0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3]])
groups = torch.arange(4).view(1, 1, 4).expand(2, 16, 4)
same = (group_of_query.unsqueeze(-1) == groups).repeat_interleave(4, dim=-1)
rows = torch.tensor([[1, 0], [0, 1]]).repeat_interleave(torch.tensor([10, 6]), dim=-2)
flat = torch.tensor([[2, 1], [0, 3]]).repeat_interleave(4)


def mask_mod(b, h, q_idx, kv_idx):
    local = (kv_idx <= q_idx) & (rows[q_idx, b] == 1)
    return same[b, q_idx, kv_idx] | local | (flat[kv_idx] == 3)
