# hasseflow-case: n=60 category=closure
import torch


class AttnConfig:
    def __init__(self, window, sinks, causal=True):
        self.window = window
        self.sinks = sinks
        self.causal = causal


def mask_from_config(cfg: AttnConfig):
    window, sinks = cfg.window, cfg.sinks

    def streaming(b, h, q_idx, kv_idx):
        recent = q_idx - kv_idx < window
        sink = kv_idx < sinks
        ok = recent | sink
        if cfg.causal:
            ok = ok & (kv_idx <= q_idx)
        return ok

    return streaming


config = AttnConfig(window=10, sinks=4)
mask_mod = mask_from_config(config)
