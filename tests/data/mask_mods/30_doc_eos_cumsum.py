# hasseflow-case: n=40 category=lookup
import torch

EOT = 50256
input_seq = torch.tensor([
    50256, 464, 2068, 7586, 21831, 13, 50256, 40, 588, 257,
    3797, 286, 8887, 13, 198, 50256, 1858, 373, 1752, 257,
    640, 11, 257, 1402, 1110, 13, 50256, 50256, 17250, 0,
    1867, 318, 534, 1438, 30, 50256, 3666, 318, 3873, 13,
], device="cuda")
# a document starts at each end-of-text token
doc_index = (input_seq == EOT).cumsum(0)
window_blocks = torch.tensor(1, dtype=torch.int32, device="cuda")
BLOCK = 8


def same_doc_recent(b, h, q_idx, kv_idx):
    behind = kv_idx <= q_idx
    same_document = doc_index[kv_idx] == doc_index[q_idx]
    recent = (q_idx - kv_idx) < window_blocks * BLOCK
    return same_document & behind & recent


mask_mod = same_doc_recent
