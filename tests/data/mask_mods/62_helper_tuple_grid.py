# hasseflow-case: n=64 category=numeric
import torch

GRID_W, GRID_H = 8, 8
K = 3


def to_xy(idx):
    return idx % GRID_W, idx // GRID_W


def mask_mod(b, h, q_idx, kv_idx):
    qx, qy = to_xy(q_idx)
    kx, ky = to_xy(kv_idx)
    # the neighbourhood's centre is kept inside the canvas, as in NATTEN
    cx = qx.clamp(K // 2, GRID_W - 1 - K // 2)
    cy = qy.clamp(K // 2, GRID_H - 1 - K // 2)
    return ((kx - cx).abs() <= K // 2) & ((ky - cy).abs() <= K // 2)
