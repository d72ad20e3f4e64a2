"""Type stubs of the hasseflow package (python/hasseflow)."""

import os
from typing import Any, Callable, Iterable, Sequence, Union

import numpy as np

MAX_N: int
FAMILIES: tuple[str, ...]
__version__: str

class HasseflowError(ValueError):
    """Input hasseflow cannot use: the message (one line) names what is wrong."""

MaskLike = Union[
    Callable[[Any, Any, Any, Any], Any],  # a mask_mod(b, h, q_idx, kv_idx)
    Any,  # a FlexAttention BlockMask, a torch tensor
    np.ndarray,
    Sequence[Any],  # a per-layer stack
    dict[str, Any],  # hasseflow JSON
    str,  # a path, or JSON / grid / mask_mod text
    bytes,
    os.PathLike[str],
]
ConfigLike = Union[Any, dict[str, Any], str, os.PathLike[str]]  # PretrainedConfig, model, path, gallery name

class Limit:
    n: int
    cells: int
    classes: int | None
    @property
    def dense(self) -> bool: ...
    def array(self) -> np.ndarray: ...
    def __array__(self, dtype: Any = ..., copy: Any = ...) -> np.ndarray: ...

class Report:
    json: dict[str, Any]
    @property
    def n(self) -> int: ...
    @property
    def L_star(self) -> int | None: ...
    @property
    def full_at(self) -> int | None: ...
    @property
    def growth(self) -> list[int]: ...
    @property
    def per_layer(self) -> Any: ...
    @property
    def table(self) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...
    def to_json(self) -> str: ...
    def show(self) -> None: ...
    def _repr_html_(self) -> str: ...
    def _repr_svg_(self) -> str | None: ...

class Analysis(Report):
    mask: np.ndarray | None
    notes: list[str]
    @property
    def engine(self) -> str: ...
    @property
    def shortfall(self) -> dict[str, int] | None: ...
    @property
    def limit_cells(self) -> int: ...
    @property
    def limit(self) -> Limit: ...
    @property
    def classes(self) -> int: ...
    def class_members(self) -> list[list[int]]: ...
    @property
    def hasse_edges(self) -> list[list[int]] | None: ...
    def app_link(self, base: str = ...) -> str: ...

class ModelReport(Report):
    @property
    def classes(self) -> int: ...
    @property
    def limit(self) -> Limit: ...
    def row_mask(self, layer: int) -> dict[int, np.ndarray]: ...

class Derived(Report):
    mask: np.ndarray
    mask_file: dict[str, Any]
    labels: list[str] | None
    @property
    def tokens(self) -> int: ...
    @property
    def positions_explained(self) -> str: ...
    classes: int
    limit: Limit
    @property
    def mask_mod(self) -> Callable[[Any, Any, Any, Any], Any]: ...
    def block_mask(self, device: str = ..., block_size: int = ...) -> Any: ...
    def analyze(self) -> Analysis: ...
    def app_link(self, base: str = ...) -> str: ...

class Measurement(Report):
    reach: np.ndarray
    predicted: np.ndarray | None
    documents: list[int]
    def differing_cells(self, layer: int | None = ...) -> np.ndarray: ...
    def picture(self, layer: int | None = ..., dark: bool = ...) -> str: ...

def analyze(
    mask: MaskLike,
    n: int | None = ...,
    layers: int | None = ...,
    b: int = ...,
    h: int = ...,
    labels: Sequence[str] | None = ...,
) -> Analysis: ...
def model(
    source: ConfigLike,
    n: int | None = ...,
    documents: Sequence[int] | None = ...,
    *,
    images: Iterable[tuple[int, int]] | None = ...,
    encoder_context: int | None = ...,
    rows: Iterable[int] = ...,
    direction: str | None = ...,
    max_memory_gib: float | None = ...,
    context: int | None = ...,
) -> ModelReport: ...
def redraw(model: Any) -> list[str]: ...
def gallery() -> list[dict[str, Any]]: ...
def derive(family: Union[str, dict[str, Any], os.PathLike[str]], *, sparse: bool = ..., **params: Any) -> Derived: ...
def measure(
    model: Any,
    n: int,
    documents: Sequence[int] | None = ...,
    *,
    expected: MaskLike | None = ...,
    b: int = ...,
    h: int = ...,
    seed: int = ...,
    copy: bool = ...,
) -> Measurement: ...
