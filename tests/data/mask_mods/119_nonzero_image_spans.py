# hasseflow-case: n=20 category=tail
import torch
is_image = torch.tensor([0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0]).bool()
where_img = is_image.nonzero().squeeze(1)
first_img = int(where_img[0])
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx <= q_idx) | (is_image[q_idx] & is_image[kv_idx] & (kv_idx >= first_img))
