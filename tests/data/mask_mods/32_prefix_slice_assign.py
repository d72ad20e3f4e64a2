# hasseflow-case: n=24 category=lookup
import torch

SEQ = 24
PROMPT = 10
is_prompt = torch.zeros(SEQ, dtype=torch.bool)
is_prompt[:PROMPT] = True


def prefix_lm(b, h, q_idx, kv_idx):
    # the prompt is read bidirectionally by every position; the rest causally
    return is_prompt[kv_idx] | (q_idx >= kv_idx)


mask_mod = prefix_lm
