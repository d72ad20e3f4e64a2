# hasseflow-case: n=24 entry=mask_fn category=closure
"""Shape hints like `Int['b m 3']` from a small class with __getitem__ (the way code without
jaxtyping installed stubs it), used in a signature evaluated at def time; then create_mask
called on the mask afterwards (a tensor, so not the entry)."""
import torch
from torch.nn.attention.flex_attention import create_mask


class _Hint:
    def __getitem__(self, spec):
        return torch.Tensor


Int = _Hint()


def spans_mask(spans: Int['m 2']):
    spans = spans.long()

    def inner(b, h, q_idx, kv_idx):
        keep = q_idx >= kv_idx
        for start, size in spans:
            keep = keep | ((q_idx >= start) & (kv_idx >= start) & (kv_idx < start + size))
        return keep

    return inner


mask_fn = spans_mask(torch.tensor([[3, 5], [12, 6]]))
dense = create_mask(mask_fn, 1, 1, 24, 24, device="cpu")
