# hasseflow-case: n=16 category=refused
import torch


def future(b, h, q_idx, kv_idx):
    return kv_idx > q_idx


def mask_mod(b, h, q_idx, kv_idx):
    return not future(b, h, q_idx, kv_idx)
