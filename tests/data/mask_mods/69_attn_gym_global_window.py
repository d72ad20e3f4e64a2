# hasseflow-case: n=40 category=library
import torch
from attn_gym.masks import generate_global_sliding_window

SEQ_LEN = 40
is_global = torch.zeros(SEQ_LEN, dtype=torch.bool, device="cuda")
is_global[0] = True
is_global[20] = True
mask_mod = generate_global_sliding_window(3, is_global)
