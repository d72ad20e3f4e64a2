# hasseflow-case: n=64 category=numeric
import torch

N = 64
WINDOW_FRAC = 0.25
window = int(N * WINDOW_FRAC)
dropout_p = 0.1
softmax_scale = 64 ** -0.5


def mask_mod(b, h, q_idx, kv_idx):
    # half the window back, measured as a float so odd windows round the way torch does
    return (kv_idx <= q_idx) & ((q_idx - kv_idx) < 0.5 * window)
