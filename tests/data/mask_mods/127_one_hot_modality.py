# hasseflow-case: n=12 category=tail
import torch
import torch.nn.functional as F
modality = torch.tensor([0, 0, 1, 1, 1, 0, 2, 2, 0, 0, 1, 1])
onehot = F.one_hot(modality, num_classes=3)
def mask_mod(b, h, q_idx, kv_idx):
    return (onehot[q_idx, 1] * onehot[kv_idx, 1] == 1) | (kv_idx <= q_idx)
