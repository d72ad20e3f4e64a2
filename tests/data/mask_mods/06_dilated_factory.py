# hasseflow-case: n=50 category=factory
import torch


def generate_dilated_window(window_size: int, dilation: int):
    def dilated(b, h, q_idx, kv_idx):
        gap = torch.abs(q_idx - kv_idx)
        return (gap <= window_size) & (gap % dilation == 0)

    return dilated


mask_mod = generate_dilated_window(window_size=9, dilation=3)
