# hasseflow-case: n=40 category=factory
import functools

import torch
from torch import Tensor


def band_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor, lower: int = 0, upper: int = 0) -> Tensor:
    """Keys between `lower` and `upper` positions behind the query (both inclusive)."""
    distance = q_idx - kv_idx
    return (distance >= lower) & (distance <= upper)


mask_mod = functools.partial(band_mask, lower=2, upper=11)
