# hasseflow-case: n=30 category=script
import torch

MASK_REGISTRY = {}


def register_mask(name):
    def deco(fn):
        MASK_REGISTRY[name] = fn
        return fn

    return deco


@register_mask("causal")
def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


@register_mask("causal_window")
def causal_window(b, h, q_idx, kv_idx):
    return causal(b, h, q_idx, kv_idx) & (q_idx - kv_idx <= 5)


mask_mod = MASK_REGISTRY["causal_window"]
