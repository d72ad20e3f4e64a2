# hasseflow-case: n=20 category=script
import torch


class Masks:
    WINDOW = 3

    @staticmethod
    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    @staticmethod
    def local(b, h, q_idx, kv_idx):
        return (q_idx - kv_idx).abs() <= Masks.WINDOW


mask_mod = Masks.local
