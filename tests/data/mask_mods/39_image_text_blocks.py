# hasseflow-case: n=32 category=lookup
import torch

TEXT, IMAGE = 0, 1
# text, an image of 9 patches, text, an image of 6 patches, text
token_type = torch.tensor([TEXT] * 4 + [IMAGE] * 9 + [TEXT] * 5 + [IMAGE] * 6 + [TEXT] * 8)
# a new group starts wherever the type changes
changes = torch.ones_like(token_type)
changes[1:] = (token_type[1:] != token_type[:-1]).long()
group = torch.cumsum(changes, 0)


def mask_mod(b, h, q_idx, kv_idx):
    causal = kv_idx <= q_idx
    both_image = (token_type[q_idx] == IMAGE) & (token_type[kv_idx] == IMAGE)
    same_image = both_image & (group[q_idx] == group[kv_idx])
    return causal | same_image
