"""Which view shows a tensor, decided by asking every registered view how well it fits (silx ``DataViews``
priorities) instead of an if/elif chain: a new view (a quantised-group viewer, a v2 layout) registers itself with
a priority function and is picked wherever it fits better than the built-in ones. No Qt: an entry's ``view`` is
whatever the caller shows with (a widget factory in the GUI, a plain function in a notebook).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ztviewer.codec.model import Tensor

UNSUPPORTED = -1        # the view cannot show this tensor
FALLBACK = 0            # the view shows anything, but says little (a message)
FITS = 100              # the view is made for this kind of tensor

DENSE, SPARSE, TT, QUANTIZED, STRUCTURAL = "dense", "sparse", "tt", "quantized", "structural"
SPARSE_LAYOUTS = ("sparse_csr", "sparse_coo")

V = TypeVar("V")


def dense_priority(tensor: Tensor) -> int:
    """Dense values stored plainly in one ``data`` component (not bit-packed): heatmap / line plot."""
    plain = tensor.layout == "dense" and "data" in tensor.components and tensor.extra_value("packed") is None
    return FITS if plain else UNSUPPORTED


def sparse_priority(tensor: Tensor) -> int:
    return FITS if tensor.layout in SPARSE_LAYOUTS else UNSUPPORTED


def tt_priority(tensor: Tensor) -> int:
    return FITS if tensor.layout == "tensor_train" else UNSUPPORTED


def quantized_priority(tensor: Tensor) -> int:
    """ztensor 1.2.x ``quantized_group``: codes, scales and zeros dequantized into a heatmap."""
    return FITS if tensor.layout == "quantized_group" and "packed_weight" in tensor.components else UNSUPPORTED


def structural_priority(tensor: Tensor) -> int:
    """Any tensor can be described by its components (what is shown when nothing decodes it)."""
    return FALLBACK


BUILTIN_PRIORITIES: dict[str, Callable[[Tensor], int]] = {
    DENSE: dense_priority, SPARSE: sparse_priority, TT: tt_priority, QUANTIZED: quantized_priority,
    STRUCTURAL: structural_priority}


@dataclass(frozen=True, slots=True)
class ViewEntry(Generic[V]):
    key: str
    priority: Callable[[Tensor], int]
    view: V


class ViewRegistry(Generic[V]):
    """Views by key, each with a priority function; :meth:`best` picks the highest priority that fits (ties go
    to the view registered first)."""

    def __init__(self) -> None:
        self._entries: dict[str, ViewEntry[V]] = {}

    def register(self, key: str, priority: Callable[[Tensor], int], view: V) -> None:
        """Add a view (or replace the one registered under ``key``)."""
        self._entries[key] = ViewEntry(key, priority, view)

    def unregister(self, key: str) -> None:
        self._entries.pop(key, None)

    def ranked(self, tensor: Tensor) -> list[tuple[int, ViewEntry[V]]]:
        """Every view that can show ``tensor``, best first."""
        scored = [(entry.priority(tensor), entry) for entry in self._entries.values()]
        fitting = [(score, entry) for score, entry in scored if score > UNSUPPORTED]
        return sorted(fitting, key=lambda pair: -pair[0])    # stable: registration order breaks ties

    def best(self, tensor: Tensor) -> ViewEntry[V] | None:
        ranked = self.ranked(tensor)
        return ranked[0][1] if ranked else None

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def keys(self) -> list[str]:
        return list(self._entries)


def builtin_views() -> ViewRegistry[None]:
    """The built-in kinds of view, without widgets (what :func:`view_kind` decides with)."""
    registry: ViewRegistry[None] = ViewRegistry()
    for key, priority in BUILTIN_PRIORITIES.items():
        registry.register(key, priority, None)
    return registry


_BUILTIN = builtin_views()


def view_kind(tensor: Tensor) -> str:
    """Which built-in view suits a tensor: ``dense``, ``sparse``, ``tt``, ``quantized`` or ``structural`` (shown by
    message)."""
    entry = _BUILTIN.best(tensor)
    return entry.key if entry is not None else STRUCTURAL
