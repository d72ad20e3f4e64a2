# Prelude for `torch.nested` with layout=torch.jagged, as mask code builds an example batch from
# fixed lengths: nested_tensor / as_nested_tensor of a list of tensors, and
# nested_tensor_from_jagged(values, offsets=... or lengths=...). The object keeps its parts; read
# back are offsets() (int64, starting at 0), values() (the parts concatenated), unbind(),
# size(0) / len(), is_nested, and lengths() (None, as torch gives it for these). Strided nested
# tensors and arithmetic on nested tensors are not modelled (their names are not here).
# tests/python/test_library_masks.py checks the readings against torch.

import torch


class _Jagged:
    def __init__(self, parts):
        self._parts = parts
        self.is_nested = True

    def offsets(self):
        sizes = torch.tensor([p.shape[0] for p in self._parts], dtype=torch.int64)
        return torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])

    def values(self):
        return torch.cat(self._parts)

    def unbind(self, dim=0):
        return tuple(self._parts)

    def lengths(self):
        return None

    def size(self, dim):
        return len(self._parts)

    def __len__(self):
        return len(self._parts)

    def to(self, device):
        return self


def nested_tensor(tensor_list, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    parts = []
    for t in tensor_list:
        part = torch.as_tensor(t)
        if dtype is not None:
            part = part.to(dtype)
        parts.append(part)
    return _Jagged(parts)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    return nested_tensor(ts, dtype=dtype, layout=layout, device=device)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None, max_seqlen=None):
    if offsets is None:
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)])
    parts = []
    for i in range(offsets.shape[0] - 1):
        parts.append(values[int(offsets[i]):int(offsets[i + 1])])
    return _Jagged(parts)
