# hasseflow-case: n=45 category=lookup
import torch
import torch.nn.functional as F

seq_lens = torch.tensor([10, 20, 15], dtype=torch.int32)
cu_seqlens = F.pad(torch.cumsum(seq_lens, dim=0, dtype=torch.int32), (1, 0))
doc_ids = torch.repeat_interleave(torch.arange(seq_lens.numel(), dtype=torch.int32), seq_lens)


def mask_mod(b, h, q_idx, kv_idx):
    start = cu_seqlens[doc_ids[q_idx]]
    return (kv_idx >= start) & (kv_idx <= q_idx)
