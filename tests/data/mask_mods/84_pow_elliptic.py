# hasseflow-case: n=64 category=numeric
import torch

GRID = 8
RX, RY = 3, 1


def mask_mod(b, h, q_idx, kv_idx):
    dx = (q_idx % GRID - kv_idx % GRID).float()
    dy = (q_idx // GRID - kv_idx // GRID).float()
    return (dx / RX).pow(2) + (dy / RY).pow(2) <= 1.0
