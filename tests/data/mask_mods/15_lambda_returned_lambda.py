# hasseflow-case: n=25 category=closure
import torch

make_window = lambda w: lambda b, h, q_idx, kv_idx: (kv_idx <= q_idx) & (q_idx < kv_idx + w)

mask_mod = make_window(6)
