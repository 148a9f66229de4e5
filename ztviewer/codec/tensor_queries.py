"""Questions about a file's tensors (``TensorFile.tensors``: a list, or a :class:`~.tensor_table.TensorTable`)
answered without building a table's tensors where its columns know the answer."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .model import Tensor
from .tensor_table import PlainColumns, TensorTable, count_digests


def tensor_names(tensors: Sequence[Tensor]) -> list[str]:
    """Names of a file's tensors in order; a :class:`TensorTable` answers without building tensors."""
    if isinstance(tensors, TensorTable):
        return tensors.tensor_names()
    return [t.name for t in tensors]


def transient_slice(tensors: Sequence[Tensor], start: int, stop: int) -> Sequence[Tensor]:
    """``tensors[start:stop]`` for a look that keeps none of them: a :class:`TensorTable` builds the ones it
    has not built yet without keeping them (a million-tensor listing written out stays small)."""
    if isinstance(tensors, TensorTable):
        return tensors.transient(start, stop)
    return tensors[start:stop]


def transient_at(tensors: Sequence[Tensor], positions: Sequence[int]) -> list[Tensor]:
    """The tensors at ``positions`` for a look that keeps none of them (see :func:`transient_slice`)."""
    if isinstance(tensors, TensorTable):
        return tensors.transient_at(positions)
    return [tensors[p] for p in positions]


def tensor_positions(tensors: Sequence[Tensor]) -> Mapping[int, int]:
    """``id(tensor)`` → position in ``tensors``; a :class:`TensorTable` answers for the tensors it built (the
    only ones anybody can hold) without building the others."""
    if isinstance(tensors, TensorTable):
        return tensors.positions()
    return {id(t): i for i, t in enumerate(tensors)}


def plain_columns(tensors: Sequence[Tensor]) -> PlainColumns | None:
    """The columns of a :class:`TensorTable` (see :meth:`TensorTable.plain_columns`); ``None`` for a list."""
    return tensors.plain_columns() if isinstance(tensors, TensorTable) else None


def component_counts(tensors: Sequence[Tensor]) -> list[int]:
    """Each tensor's number of components, without building a table's tensors."""
    if isinstance(tensors, TensorTable):
        return tensors.component_counts()
    return [t.component_count for t in tensors]


def digest_counts(tensors: Iterable[Tensor]) -> tuple[int, int]:
    """``(components, components recording a digest)``, without building a table's tensors or deferred
    components."""
    if isinstance(tensors, TensorTable):
        return tensors.digest_counts()
    return count_digests(tensors)


def stored_nbytes(tensors: Sequence[Tensor], positions: Iterable[int]) -> int:
    """Stored bytes of the tensors at ``positions``, without building a table's tensors."""
    if isinstance(tensors, TensorTable):
        return tensors.stored_nbytes(positions)
    return sum(tensors[p].stored_nbytes for p in positions)


def untouched_table(tensors: Sequence[Tensor]) -> TensorTable | None:
    """``tensors`` when it is a :class:`TensorTable` whose entries are all as the reader listed them (raw
    ``data`` components at the offsets of its columns, unchanged where built), else ``None``: what is true of
    its columns is then true of every tensor, without building one."""
    return tensors if isinstance(tensors, TensorTable) and tensors.plain_spans() is not None else None

