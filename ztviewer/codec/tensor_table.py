"""The tensors of a file listed as columns, each :class:`Tensor` built the first time it is asked for.

Readers check the plain dense entries of a large manifest column by column (C-level ``map``/``set`` passes and list
comparisons instead of Python code per entry) and keep what they found as columns: names, canonical dtypes, shapes,
offsets and lengths (plain lists of ints shared with the decoded manifest, or compact ``uint64`` arrays). A
:class:`TensorTable` holds them and reads like the list of tensors it stands for (indexing, iteration, ``len``,
equality with a list); an entry becomes a :func:`dense_tensor` only when it is accessed, and is then kept, so the
same object comes back every time. Listing names (:attr:`TensorTable.names`), checking the layout
(:meth:`TensorTable.plain_spans`) and looking for problems (:meth:`TensorTable.built`) touch no tensor; a listing
written out walks the table with :func:`~.tensor_queries.transient_slice`, which builds what it shows without
keeping it. The first
change to the sequence itself (``append``, ``del``, assignment) turns the table into a plain list inside; it then
behaves exactly as one.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any, overload

import numpy as np

from .dtypes import dtype_info
from .model import Tensor, as_made, dense_tensor

#: ``(shard name, source)`` of a multi-file set's shard; its tensors carry them as ``shard`` and ``source``.
Shard = tuple[Any, Any]
#: ``(component dtype, component extra)`` of a part stored in another dtype than the tensor's (zTensor v2: the
#: storage dtype of a logical type); the extra dict may be shared, :func:`dense_tensor` copies it.
Stored = tuple[str, dict[str, Any]]
_first, _second = itemgetter(0), itemgetter(1)


def _ints(column: Sequence[int] | np.ndarray) -> list[int]:
    """A column of byte positions as Python ints (numpy columns hold them as ``uint64``)."""
    return column.tolist() if isinstance(column, np.ndarray) else column  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class PlainColumns:
    """Every entry of a :class:`TensorTable` as its columns describe it: a dense tensor of ``dtypes[i]`` and
    ``shapes[i]`` in one raw ``data`` part at absolute ``offsets[i]`` of ``lengths[i]`` bytes, recording
    ``digests[i]`` (no digest column: none); ``built`` maps the positions of tensors built so far to them."""

    names: Sequence[str]
    dtypes: Sequence[str]
    shapes: Sequence[Sequence[int]]
    offsets: list[int]
    lengths: list[int]
    digests: Sequence[str | None] | None
    built: dict[int, Tensor]


class TensorTable(MutableSequence[Tensor]):
    """Plain dense tensors as columns: ``names``, canonical ``dtypes``, ``shapes`` (sequences of ints),
    ``offsets`` (relative to ``base``) and ``lengths``. Tensor ``i`` gets index ``first_index + i``;
    with a ``shard``, each tensor's ``shard``, ``source`` and ``index_in_shard`` (= ``i``) are set; ``spelling`` is
    every tensor's ``layout_spelling`` (what the file wrote for "dense", if anything); a table over several shards
    is a :class:`~.multifile.set_table.SetTable`. Optional part columns: ``digests`` (each ``data`` component's
    digest), ``stored`` (each component's :data:`Stored` dtype and extra) and ``decoded`` (the component records
    its length as its decoded length)."""

    __slots__ = (
        "_built",
        "_list",
        "_made",
        "_positions",
        "_spans",
        "base",
        "decoded",
        "digests",
        "dtypes",
        "first_index",
        "lengths",
        "names",
        "offsets",
        "shapes",
        "shard",
        "spelling",
        "stored",
    )

    def __init__(self, names: list[str], dtypes: list[str], shapes: Sequence[Sequence[int]],
                 offsets: list[int] | np.ndarray, lengths: list[int] | np.ndarray, base: int = 0,
                 first_index: int = 0, shard: Shard | None = None, spelling: str | None = None, *,
                 digests: Sequence[str | None] | None = None,
                 stored: Sequence[Stored] | None = None, decoded: bool = False) -> None:
        self.names = names
        self.dtypes = dtypes
        self.shapes = shapes
        self.offsets = offsets
        self.lengths = lengths
        self.base = base
        self.first_index = first_index
        self.shard = shard
        self.spelling = spelling
        self.digests = digests
        self.stored = stored
        self.decoded = decoded
        self._made: list[Tensor | None] = [None] * len(names)
        self._built = 0  # how many entries of _made are tensors (counting None would compare every Tensor)
        self._positions: dict[int, int] = {}  # id(tensor) → position, for the tensors built so far
        self._list: list[Tensor] | None = None
        self._spans: tuple[np.ndarray, np.ndarray] | None = None

    def _build(self, i: int) -> Tensor:
        tensor = self._tensors(i, i + 1)[0]
        self._made[i] = tensor
        self._built += 1
        self._positions[id(tensor)] = i
        return tensor

    def _all(self) -> list[Tensor]:
        """Every tensor, built where not yet built (one pass for the unbuilt ones)."""
        if self._list is not None:
            return self._list
        made = self._made
        missing = len(made) - self._built
        if missing == len(made):
            made[:] = self._tensors(0, len(made))
            self._built = len(made)
            self._positions.update(zip(map(id, made), range(len(made))))   # in place: positions() is live
        elif missing:
            for i, tensor in enumerate(made):
                if tensor is None:
                    self._build(i)
        return made  # type: ignore[return-value]  # no None left

    def _tensors(self, start: int, stop: int) -> list[Tensor]:
        """New tensors for the entries ``start:stop`` from the columns (nothing is kept)."""
        count = stop - start
        offsets = _ints(self.offsets[start:stop])
        if self.base:
            offsets = [self.base + offset for offset in offsets]
        lengths = _ints(self.lengths[start:stop])
        stored = self.stored[start:stop] if self.stored is not None else None
        shard_names, sources, in_shard = self._shard_columns(start, stop)
        return list(map(dense_tensor, self.names[start:stop], self.dtypes[start:stop],
                        map(tuple, self.shapes[start:stop]), range(self.first_index + start, self.first_index + stop),
                        offsets, lengths, repeat("raw", count),
                        repeat(None, count) if self.digests is None else self.digests[start:stop],
                        lengths if self.decoded else repeat(None, count), repeat(self.spelling, count),
                        repeat(None, count), repeat(None, count) if stored is None else map(_first, stored),
                        repeat(None, count) if stored is None else map(_second, stored), shard_names, sources,
                        in_shard))

    def _shard_columns(self, start: int, stop: int
                       ) -> tuple[Iterable[Any], Iterable[Any], Iterable[int | None]]:
        """``(shard names, sources, positions in the shard)`` of the entries ``start:stop``."""
        count = stop - start
        if self.shard is not None:
            return repeat(self.shard[0], count), repeat(self.shard[1], count), range(start, stop)
        return repeat(None, count), repeat(None, count), repeat(None, count)

    def stored_in(self, source: Any) -> bool:
        """Whether every entry is stored in ``source`` (an entry without a shard: in the file the table was read
        from, whatever ``source`` is)."""
        return self.shard is None or self.shard[1] is source

    def transient(self, start: int, stop: int) -> list[Tensor]:
        """The tensors at ``start:stop`` for a look that keeps none of them (a listing written out): the ones
        built so far as they are, the others new and not kept, so the table does not grow."""
        if self._list is not None:
            return self._list[start:stop]
        start, stop, _ = slice(start, stop).indices(len(self._made))
        fresh = self._tensors(start, stop)
        if self._built:
            made = self._made
            fresh = [fresh[i] if made[p] is None else made[p]  # type: ignore[misc]
                     for i, p in enumerate(range(start, stop))]
        return fresh

    def transient_at(self, positions: Sequence[int]) -> list[Tensor]:
        """The tensors at ``positions`` (in that order) for a look that keeps none of them, as :meth:`transient`;
        consecutive positions are built in one pass."""
        if positions and positions == list(range(positions[0], positions[0] + len(positions))):
            return self.transient(positions[0], positions[0] + len(positions))
        if self._list is not None:
            return [self._list[p] for p in positions]
        made = self._made
        return [self._tensors(p, p + 1)[0] if made[p] is None else made[p] for p in positions]  # type: ignore[misc]

    def _as_list(self) -> list[Tensor]:
        """The plain list this table becomes when the sequence itself changes."""
        if self._list is None:
            self._list = list(self._all())
            self._made = []
        return self._list

    # ---------------------------------------------------------------------------------- reading

    def __len__(self) -> int:
        return len(self._made) if self._list is None else len(self._list)

    @overload
    def __getitem__(self, index: int) -> Tensor: ...

    @overload
    def __getitem__(self, index: slice) -> list[Tensor]: ...

    def __getitem__(self, index: int | slice) -> Tensor | list[Tensor]:
        if self._list is not None:
            return self._list[index]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._made)))]
        tensor = self._made[index]  # IndexError as a list raises it
        if tensor is None:
            tensor = self._build(index if index >= 0 else index + len(self._made))
        return tensor

    def __iter__(self) -> Iterator[Tensor]:
        return iter(self._all())

    def __reversed__(self) -> Iterator[Tensor]:
        return reversed(self._all())

    def __contains__(self, value: object) -> bool:
        return value in self._all()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TensorTable):
            other = other._all()
        return self._all() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Iterable[Tensor]) -> list[Tensor]:
        return [*self._all(), *other]

    def __radd__(self, other: Iterable[Tensor]) -> list[Tensor]:
        return [*other, *self._all()]

    def __repr__(self) -> str:
        return f"TensorTable({len(self)} tensors)"

    def copy(self) -> list[Tensor]:
        return list(self._all())

    def index(self, value: Any, start: int = 0, stop: int = 2 ** 63 - 1) -> int:
        return self._all().index(value, start, stop)

    def count(self, value: Any) -> int:
        return self._all().count(value)

    def index_at(self, position: int) -> int:
        """:attr:`Tensor.index` of the tensor at ``position``, without building it."""
        if self._list is not None:
            return self._list[position].index
        built = self._made[position]
        return self.first_index + position if built is None else built.index

    def tensor_names(self) -> list[str]:
        """Every tensor's name in order, without building tensors."""
        return list(self.names) if self._list is None else [t.name for t in self._list]

    def built(self) -> Iterator[Tensor]:
        """The tensors built so far: only they can have changed or gained problems."""
        if self._list is not None:
            return iter(self._list)
        return (t for t in self._made if t is not None)

    def positions(self) -> Mapping[int, int]:
        """``id(tensor)`` → position of every tensor built so far (a tensor not built has no identity yet);
        live: tensors built later are added. Once the table became a list, a snapshot of that list."""
        if self._list is not None:
            return dict(zip(map(id, self._list), range(len(self._list))))
        return self._positions

    def plain_columns(self) -> PlainColumns | None:
        """What the columns say of every entry, with the tensors built so far (their own values count: they may
        have changed since); ``None`` once the table became a list (the columns no longer describe it)."""
        if self._list is not None:
            return None
        base = self.base
        offsets = _ints(self.offsets)
        return PlainColumns(self.names, self.dtypes, self.shapes, [base + o for o in offsets] if base else offsets,
                            _ints(self.lengths), self.digests,
                            {i: t for i, t in enumerate(self._made) if t is not None} if self._built else {})

    def component_counts(self) -> list[int]:
        """Each tensor's number of components; an entry not built has its one ``data`` component."""
        if self._list is not None:
            return [t.component_count for t in self._list]
        counts = [1] * len(self._made)
        if self._built:
            for i, tensor in enumerate(self._made):
                if tensor is not None:
                    counts[i] = tensor.component_count
        return counts

    def digest_counts(self) -> tuple[int, int]:
        """``(components, components recording a digest)`` over every tensor, from the columns where not built."""
        if self._list is not None:
            return count_digests(self._list)
        digests = self.digests
        components = len(self._made)
        recorded = 0 if digests is None else components - sum(d is None for d in digests)
        if self._built:
            for i, tensor in enumerate(self._made):
                if tensor is not None:
                    built = tensor.component_digests()
                    components += len(built) - 1
                    recorded += len(built) - built.count(None) - (digests is not None and digests[i] is not None)
        return components, recorded

    def split_built(self, positions: Iterable[int]) -> tuple[list[int], list[Tensor]]:
        """``(positions of tensors not built yet, tensors built)`` among ``positions``."""
        if self._list is not None:
            return [], [self._list[p] for p in positions]
        made = self._made
        if not self._built:
            return list(positions), []
        unbuilt: list[int] = []
        built: list[Tensor] = []
        for p in positions:
            tensor = made[p]
            if tensor is None:
                unbuilt.append(p)
            else:
                built.append(tensor)
        return unbuilt, built

    def stored_nbytes(self, positions: Iterable[int]) -> int:
        """Stored bytes of the tensors at ``positions``, from the ``lengths`` column where not built."""
        if self._list is not None:
            return sum(self._list[p].stored_nbytes for p in positions)
        made, lengths = self._made, self.lengths
        if not self._built:
            if isinstance(lengths, np.ndarray):
                return int(lengths[np.fromiter(positions, dtype=np.intp)].sum(dtype=np.uint64))
            return sum(map(lengths.__getitem__, positions))
        total = 0
        for p in positions:
            built = made[p]
            total += int(lengths[p]) if built is None else built.stored_nbytes
        return total

    def dense_nbytes(self, positions: Iterable[int]) -> int:
        """Dense bytes of the tensors at ``positions`` whose dtype is known (each as :attr:`Tensor.dense_nbytes`),
        from the ``dtypes`` and ``shapes`` columns where not built."""
        if self._list is not None:
            return sum(self._list[p].dense_nbytes or 0 for p in positions)
        made, dtypes, shapes = self._made, self.dtypes, self.shapes
        itemsizes: dict[str, int] = {}     # 0 for an unknown dtype
        total = 0
        for p in positions:
            built = made[p]
            if built is not None:
                total += built.dense_nbytes or 0
                continue
            dtype = dtypes[p]
            itemsize = itemsizes.get(dtype)
            if itemsize is None:
                info = dtype_info(dtype)
                itemsize = itemsizes[dtype] = info.itemsize if info else 0
            if itemsize:
                total += math.prod(shapes[p]) * itemsize
        return total

    def plain_spans(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Absolute ``(offsets, lengths)`` of the ``data`` components as ``uint64`` arrays while every tensor is as
        the columns list it (:func:`~.model.as_made`), else ``None``."""
        if self._list is not None:
            return None
        built = map(self._made.__getitem__, self._positions.values())
        if self._built and not all(map(as_made, built)):  # type: ignore[arg-type]  # each position holds a tensor
            return None
        if self._spans is None:
            self._spans = (np.asarray(self.offsets, dtype=np.uint64) + np.uint64(self.base),
                           np.asarray(self.lengths, dtype=np.uint64))
        return self._spans

    # ---------------------------------------------------------------------------------- changing

    def __setitem__(self, index: Any, value: Any) -> None:
        self._as_list()[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self._as_list()[index]

    def insert(self, index: int, value: Tensor) -> None:
        self._as_list().insert(index, value)

    def append(self, value: Tensor) -> None:
        self._as_list().append(value)

    def extend(self, values: Iterable[Tensor]) -> None:
        self._as_list().extend(values)

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._as_list().sort(*args, **kwargs)


def count_digests(tensors: Iterable[Tensor]) -> tuple[int, int]:
    """``(components, components recording a digest)``, tensor by tensor."""
    components = recorded = 0
    for tensor in tensors:
        digests = tensor.component_digests()
        components += len(digests)
        recorded += len(digests) - digests.count(None)
    return components, recorded
