# hasseflow-case: n=30 category=script
import torch

lengths = [0] * 4
lengths[0] = 7
lengths[1], lengths[2] = 11, 4
lengths[-1] = 30 - sum(lengths[:3])
(first, second), rest = lengths[:2], lengths[2:]
starts = [0]
for length in lengths[:-1]:
    starts.append(starts[-1] + length)
doc_of = torch.tensor([i for i, length in enumerate(lengths) for _ in range(length)])


def mask_mod(b, h, q_idx, kv_idx):
    return (doc_of[q_idx] == doc_of[kv_idx]) & (kv_idx <= q_idx)
