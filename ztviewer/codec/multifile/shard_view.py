"""One shard's tensors as a part of the whole set's :class:`~.set_table.SetTable`.

The plain shards of a set are listed in one table (:func:`.fast_headers.read_set`); each :class:`Shard` sees its
own entries through a :class:`ShardView`, which builds a tensor through the set's table, so the shard and the set
hand out the same object for it. Should the table turn into a plain list (the set's tensors edited), every view
keeps the tensors it stood for.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from ..model import Tensor
from .set_table import SetTable


class ShardView(Sequence[Tensor]):
    """The entries ``start:stop`` of ``table``, read as a list of tensors."""

    __slots__ = ("_frozen", "start", "stop", "table")

    def __init__(self, table: SetTable, start: int, stop: int) -> None:
        self.table, self.start, self.stop = table, start, stop
        self._frozen: list[Tensor] | None = None
        table.add_view(self)

    def freeze(self, tensors: list[Tensor]) -> None:
        """Keep this view's tensors from ``tensors`` (the table's entries, as they were, in order)."""
        self._frozen = tensors[self.start:self.stop]

    def _tensors(self) -> list[Tensor]:
        return self._frozen if self._frozen is not None else self.table.span(self.start, self.stop)

    def __len__(self) -> int:
        return self.stop - self.start

    @overload
    def __getitem__(self, index: int) -> Tensor: ...

    @overload
    def __getitem__(self, index: slice) -> list[Tensor]: ...

    def __getitem__(self, index: int | slice) -> Tensor | list[Tensor]:
        if isinstance(index, slice) or self._frozen is not None:
            return self._tensors()[index]
        position = range(self.start, self.stop)[index]  # IndexError as a list raises it
        return self.table[position]

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._tensors())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ShardView):
            other = other._tensors()
        return self._tensors() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ShardView({len(self)} tensors)"

    def tensor_names(self) -> list[str]:
        """The names in order, without building tensors."""
        if self._frozen is not None:
            return [t.name for t in self._frozen]
        return list(self.table.names[self.start:self.stop])

    def layout(self) -> Layout:
        """The names, dtypes and shapes of the tensors (:func:`layout_of`), from the table's columns while none of
        them was built (a built one may have been changed since)."""
        table, start, stop = self.table, self.start, self.stop
        if self._frozen is None and table.untouched(start, stop):
            return (tuple(table.names[start:stop]), tuple(table.dtypes[start:stop]),
                    tuple(map(tuple, table.shapes[start:stop])))
        return layout_of(self._tensors())


#: ``(names, dtypes, shapes)`` of some tensors, in order.
Layout = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[int, ...], ...]]


def layout_of(tensors: Sequence[Tensor]) -> Layout:
    """The names, dtypes and shapes of ``tensors``, without building the tensors of a :class:`ShardView`."""
    if isinstance(tensors, ShardView):
        return tensors.layout()
    return tuple(t.name for t in tensors), tuple(t.dtype for t in tensors), tuple(t.shape for t in tensors)
