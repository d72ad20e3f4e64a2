# hasseflow-case: n=28 category=numeric
import torch

P = 9


def mask_mod(b, h, q_idx, kv_idx):
    in_prompt = q_idx < P
    # prompt rows read only the prompt, answer rows read causally
    allowed = torch.where(in_prompt, kv_idx < P, kv_idx <= q_idx)
    diagonal = q_idx.eq(kv_idx)
    return allowed | diagonal | kv_idx.eq(P)
