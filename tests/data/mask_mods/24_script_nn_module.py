# hasseflow-case: n=48 category=script
import torch
import torch.nn as nn
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

SEQ_LEN = 48
BLOCK = 8


def block_causal(b, h, q_idx, kv_idx):
    return (q_idx // BLOCK) >= (kv_idx // BLOCK)


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x, block_mask):
        bsz, seqlen, dim = x.shape
        q, k, v = self.qkv(x).view(bsz, seqlen, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        y = flex_attention(q, k, v, block_mask=block_mask)
        return self.proj(y.transpose(1, 2).reshape(bsz, seqlen, dim))


mask_mod = block_causal

if __name__ == "__main__":
    layer = Attention(64, 4).cuda()
    bm = create_block_mask(mask_mod, None, None, SEQ_LEN, SEQ_LEN, device="cuda")
    print(layer(torch.randn(2, SEQ_LEN, 64, device="cuda"), bm).shape)
