# hasseflow-case: n=20 category=script
import logging

import torch

logger = logging.getLogger(__name__)
logging.basicConfig(level=logging.WARNING)

WINDOW = 4
assert WINDOW > 0, "window must be positive"
logger.info("using a window of %d", WINDOW)
print(f"[mask] window={WINDOW}")


def mask_mod(b, h, q_idx, kv_idx):
    """Keys at most WINDOW back, and the query itself."""
    lag = q_idx - kv_idx
    return (lag >= 0) & (lag <= WINDOW)
