# hasseflow-case: n=32 category=factory
"""Attention layouts chosen by an enum, the way model configs name them."""
from enum import Enum, IntEnum, auto, unique

import torch


@unique
class Layout(Enum):
    CAUSAL = auto()
    SLIDING = auto()
    PREFIX = auto()
    BIDIRECTIONAL = auto()

    @property
    def is_causal(self) -> bool:
        return self in (Layout.CAUSAL, Layout.SLIDING)


class Reach(IntEnum):
    SHORT = 3
    LONG = 7


def build(layout: Layout, reach: Reach = Reach.SHORT, prefix: int = 6):
    if not isinstance(layout, Layout):
        layout = Layout[layout.upper()]

    def pattern(b, h, q_idx, kv_idx):
        causal = q_idx >= kv_idx
        if layout is Layout.CAUSAL:
            return causal
        if layout == Layout.SLIDING:
            return causal & (q_idx - kv_idx <= reach)
        if layout is Layout.PREFIX:
            return causal | (kv_idx < prefix)
        return q_idx >= 0

    return pattern


SELECTED = [m for m in Layout if m.is_causal][-1]
mask_mod = build(SELECTED, Reach.LONG - 2)
