# hasseflow-case: n=40 category=script
import torch

USE_SLIDING = True
Q_BLOCK, KV_BLOCK = 128, 128
layer_windows = []
for layer in range(6):
    layer_windows.append(4 if layer % 2 == 0 else 10)

total = 0
for w in layer_windows:
    total += w
print("mean window", total / len(layer_windows))

if USE_SLIDING:
    WINDOW = layer_windows[1]

    def mask_mod(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx < WINDOW)
else:
    def mask_mod(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx
