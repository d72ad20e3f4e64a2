# hasseflow-case: n=128 category=script
import argparse

import torch

CONFIG = {
    "seq_len": 128,
    "window": 16,
    "num_sinks": 1,
    "lr": 3e-4,
    "warmup_ratio": 0.05,
    "dtype": "bfloat16",
}
WINDOW = CONFIG["window"]
SINKS = CONFIG["num_sinks"]


def mask_mod(b, h, q_idx, kv_idx):
    window = (q_idx - kv_idx) < WINDOW
    sink = kv_idx < SINKS
    return (window | sink) & (kv_idx <= q_idx)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq-len", type=int, default=CONFIG["seq_len"])
    parser.add_argument("--lr", type=float, default=CONFIG["lr"])
    args = parser.parse_args()
    print(vars(args))
