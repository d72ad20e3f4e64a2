# hasseflow-case: n=30 entry=sliding_window_causal category=factory
import torch

WINDOW_SIZE = 6


def causal_mask(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window_causal(b, h, q_idx, kv_idx):
    in_window = q_idx - kv_idx < WINDOW_SIZE
    return causal_mask(b, h, q_idx, kv_idx) & in_window
