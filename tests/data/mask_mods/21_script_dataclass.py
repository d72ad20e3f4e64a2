# hasseflow-case: n=40 category=script
from dataclasses import dataclass, field

import torch
from torch.nn.attention.flex_attention import create_block_mask


@dataclass
class ModelArgs:
    dim: int = 768
    n_layers: int = 12
    n_heads: int = 12
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    layer_types: list = field(default_factory=lambda: ["full", "sliding"] * 6)


args = ModelArgs()
HEAD_DIM = args.dim // args.n_heads


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


mask_mod = causal_mask

if __name__ == "__main__":
    bm = create_block_mask(mask_mod, 1, 1, 2048, 2048, device="cuda")
    print(args, bm.sparsity())
