# hasseflow-case: n=48 category=lookup
import torch

B = 8
NUM_BLOCKS = 48 // B
blocks = torch.tril(torch.ones(NUM_BLOCKS, NUM_BLOCKS, dtype=torch.bool))


def mask_mod(b, h, q_idx, kv_idx):
    return blocks[q_idx // B, kv_idx // B]
