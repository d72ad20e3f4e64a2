# hasseflow-case: n=100 category=numeric
import torch

H_PATCHES, W_PATCHES = 10, 10
RADIUS = 2.5


def patch_coords(idx):
    return idx // W_PATCHES, idx % W_PATCHES


def mask_mod(b, h, q_idx, kv_idx):
    qr, qc = patch_coords(q_idx)
    kr, kc = patch_coords(kv_idx)
    # Euclidean distance between patches on the image grid
    return (qr - kr) ** 2 + (qc - kc) ** 2 <= RADIUS ** 2
