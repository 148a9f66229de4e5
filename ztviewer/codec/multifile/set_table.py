"""The tensors of a multi-file set listed in one :class:`~ztviewer.codec.tensor_table.TensorTable`, each entry
naming its own shard: the table every :class:`~.shard_view.ShardView` of the set reads its shard's entries through
(:func:`.fast_headers.read_set`)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from ..model import Tensor
from ..tensor_table import TensorTable

#: Per entry: ``(shard names, sources, positions in the shard)``.
ShardColumns = tuple[Sequence[Any], Sequence[Any], Sequence[int]]


class Freezable(Protocol):
    def freeze(self, tensors: list[Tensor]) -> None: ...


class SetTable(TensorTable):
    """A :class:`TensorTable` over several shards: each tensor's ``shard``, ``source`` and ``index_in_shard`` come
    from the ``shards`` columns (:data:`ShardColumns`); the shards' views read spans of it."""

    __slots__ = ("_views", "shards")

    def __init__(self, names: list[str], dtypes: list[str], shapes: Sequence[Sequence[int]],
                 offsets: list[int] | np.ndarray, lengths: list[int] | np.ndarray, shards: ShardColumns,
                 first_index: int = 0) -> None:
        super().__init__(names, dtypes, shapes, offsets, lengths, 0, first_index)
        self.shards = shards
        self._views: list[Freezable] = []  # told (``freeze``) when the table turns into a list

    def _shard_columns(self, start: int, stop: int
                       ) -> tuple[Iterable[Any], Iterable[Any], Iterable[int | None]]:
        shard_names, sources, in_shard = (column[start:stop] for column in self.shards)
        return shard_names, sources, in_shard

    def stored_in(self, source: Any) -> bool:
        return False  # the entries are spread over the shards

    def span(self, start: int, stop: int) -> list[Tensor]:
        """The tensors at ``start:stop`` (``0 <= start <= stop <= len``), built and kept where not yet built (one
        pass when none of them was)."""
        if self._list is not None:
            return self._list[start:stop]
        made = self._made
        if any(made[start:stop]):
            return [made[i] or self._build(i) for i in range(start, stop)]
        fresh = self._tensors(start, stop)
        made[start:stop] = fresh
        self._built += len(fresh)
        self._positions.update(zip(map(id, fresh), range(start, stop)))
        return fresh

    def untouched(self, start: int, stop: int) -> bool:
        """Whether none of the tensors at ``start:stop`` was built yet (the columns then describe them all)."""
        return self._list is None and not any(self._made[start:stop])

    def add_view(self, view: Freezable) -> None:
        """Have ``view.freeze(tensors)`` called with every tensor, in order, once the table turns into a plain list
        (its positions then stop naming the entries the view was made for)."""
        self._views.append(view)

    def _as_list(self) -> list[Tensor]:
        if self._list is not None:
            return self._list
        tensors = super()._as_list()
        for view in self._views:
            view.freeze(tensors)
        self._views = []
        return tensors
