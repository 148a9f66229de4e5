"""A bounded LRU of decoded tensor data, keyed by (opened file, tensor index, kind): :func:`data_key`.

The opened file is :attr:`~ztviewer.codec.model.TensorFile.opening`, never the path: an earlier generation of a
zTensor v2 file shown beside the current one, or a file reopened after a rewrite, has the same path and other data.

Only data that had to be decoded (zstd components, sparse structures read from zstd) costs memory; raw data
is a zero-copy view of the file's map and is cached with a cost of 0 bytes (the entry count is bounded too).
Workers insert from pool threads, so every method takes a lock. No Qt here.
"""
from __future__ import annotations

import mmap
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from ztviewer.codec.decode_rules import env_bytes

if TYPE_CHECKING:
    from ztviewer.codec.model import Tensor, TensorFile

DEFAULT_BUDGET = 1 << 30
MAX_ENTRIES = 256


def default_budget() -> int:
    """Bytes the cache may hold: ``ZTVIEWER_INSPECT_CACHE`` (bytes) or 1 GiB."""
    return env_bytes("ZTVIEWER_INSPECT_CACHE", DEFAULT_BUDGET)


def data_key(tf: TensorFile, tensor: Tensor, kind: str) -> tuple[int, int, str]:
    """The cache key of one tensor's decoded data (``kind``: ``dense``, ``sparse``) in one opened file."""
    return tf.opening, tensor.index, kind


def owned_bytes(value: Any) -> int:
    """Bytes an object holds in its own memory: arrays not backed by a memory map, recursively."""
    if isinstance(value, np.ndarray):
        root = value
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        if isinstance(root, memoryview):
            root = root.obj
        return 0 if isinstance(root, mmap.mmap) else int(value.nbytes)
    if isinstance(value, (list, tuple)):
        return sum(owned_bytes(v) for v in value)
    slots = getattr(type(value), "__slots__", None)
    if slots:
        return sum(owned_bytes(getattr(value, s, None)) for s in slots)
    if hasattr(value, "__dict__"):
        return sum(owned_bytes(v) for v in vars(value).values())
    return 0


class DecodedCache:
    """LRU of decoded data with a byte budget.

    Parameters
    ----------
    budget:
        Largest total of :func:`owned_bytes` kept; the least recently used entries are dropped to fit.
        An entry larger than the budget is not kept at all (:meth:`put` returns False).
    """

    def __init__(self, budget: int | None = None, max_entries: int = MAX_ENTRIES) -> None:
        self.budget = default_budget() if budget is None else int(budget)
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.nbytes = 0

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def fits(self, nbytes: int) -> bool:
        return nbytes <= self.budget

    def put(self, key: Hashable, value: Any, nbytes: int | None = None) -> bool:
        cost = owned_bytes(value) if nbytes is None else int(nbytes)
        if cost > self.budget:
            return False
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            self._items[key] = (value, cost)
            self.nbytes += cost
            while self._items and (self.nbytes > self.budget or len(self._items) > self.max_entries):
                _, (_, dropped) = self._items.popitem(last=False)
                self.nbytes -= dropped
        return True

    def drop(self, predicate: Callable[[Hashable], bool]) -> None:
        """Remove every entry whose key satisfies ``predicate(key)``."""
        with self._lock:
            for key in [k for k in self._items if predicate(k)]:
                self.nbytes -= self._items.pop(key)[1]

    def drop_file(self, tf: TensorFile) -> None:
        """Forget the decoded data of one opened file (:func:`data_key`); other openings of its path keep theirs."""
        self.drop(lambda key: isinstance(key, tuple) and bool(key) and key[0] == tf.opening)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.nbytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items


_shared: DecodedCache | None = None


def shared_cache() -> DecodedCache:
    """The process-wide cache used by the views unless they are given their own."""
    global _shared
    if _shared is None:
        _shared = DecodedCache()
    return _shared
