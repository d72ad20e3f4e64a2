# hasseflow-case: n=35 category=numeric
import math

import torch

CAUSAL = True
USE_GLOBAL = False
EPS = 1e-5
LR = 3e-4
SCALE = 1 / math.sqrt(64)
WINDOW = 8 if CAUSAL else 16
if USE_GLOBAL:
    NUM_GLOBAL = 4
else:
    NUM_GLOBAL = 0
BETA = 0.9 if LR > EPS else 0.99


def mask_mod(b, h, q_idx, kv_idx):
    lo = 0 if CAUSAL else -WINDOW
    d = q_idx - kv_idx
    ok = (d >= lo) & (d < WINDOW)
    if NUM_GLOBAL > 0:
        ok = ok | (kv_idx < NUM_GLOBAL)
    return ok
