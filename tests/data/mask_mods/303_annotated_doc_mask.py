# hasseflow-case: n=20 category=lookup
"""Packed documents with type annotations everywhere, as typed training code writes them."""
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

import torch
from torch import Tensor

MaskFn = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]
LENGTHS: list[int] = [5, 8, 7]
Span = tuple[int, int | None]


@dataclass
class Packing:
    lengths: list[int]
    pad_id: ClassVar[int] = -1
    name: Optional[str] = None

    def doc_ids(self) -> Tensor:
        ids = [torch.full((n,), i) for i, n in enumerate(self.lengths)]
        return torch.cat(ids)


def document_mask(packing: Packing, causal: bool = True) -> MaskFn:
    docs: Tensor = packing.doc_ids()

    def inner(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        same: Tensor = docs[q_idx] == docs[kv_idx]
        return same & (q_idx >= kv_idx) if causal else same

    return inner


mask_mod: MaskFn = document_mask(Packing(LENGTHS))
