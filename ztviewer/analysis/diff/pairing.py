"""Which tensor of A goes with which of B: by name first, then leftovers by content hash (renames).

Pairs are worked out on positions in the files' ``tensors`` (:class:`PairPositions`), from the names alone, so a
:class:`~ztviewer.codec.tensor_table.TensorTable` builds no tensor for it; only leftovers that may be renames are
built. Content hashes (:func:`ztviewer.codec.content_hash.content_sha256`, the same in every format) are computed
only for unpaired tensors that have a leftover of the same dtype and shape on the other side.
"""
from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.errors import CodecError
from ztviewer.codec.gc_pause import building_many
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.tensor_queries import tensor_names

CancelCheck = Callable[[], bool]
ByteProgress = Callable[[int], None]
NONE = -1


class TensorPair(NamedTuple):
    """``a`` / ``b`` is ``None`` for a tensor found on one side only; ``renamed`` when paired by content."""

    a: Tensor | None
    b: Tensor | None
    renamed: bool = False


class PairPositions(NamedTuple):
    """Every pair as positions in A's and B's ``tensors`` (``int64``, :data:`NONE` for a side without a tensor) and
    whether it was paired by content hash (``bool``), in pair order: A's order, then tensors only in B."""

    a: np.ndarray
    b: np.ndarray
    renamed: np.ndarray


def pair_by_name(names_a: list[str], names_b: list[str]) -> tuple[np.ndarray, list[int]]:
    """B's position for each name of A (the k-th tensor of a name in A with the k-th of that name in B, else
    :data:`NONE`) and the positions of B's tensors left over, in B's order."""
    if names_a == names_b:  # a file against a copy or a re-save: nothing to look up
        return np.arange(len(names_a), dtype=np.int64), []
    if len(set(names_b)) == len(names_b):  # the usual case: one plain dict
        lookup = dict(zip(names_b, range(len(names_b))))
        found = np.fromiter((lookup.pop(name, NONE) for name in names_a), dtype=np.int64, count=len(names_a))
        return found, list(lookup.values())
    by_name: dict[str, deque[int]] = defaultdict(deque)
    for position, name in enumerate(names_b):
        by_name[name].append(position)
    found = np.full(len(names_a), NONE, dtype=np.int64)
    for position, name in enumerate(names_a):
        queue = by_name.get(name)
        if queue:
            found[position] = queue.popleft()
    paired = np.zeros(len(names_b), dtype=bool)
    paired[found[found != NONE]] = True
    return found, np.flatnonzero(~paired).tolist()


def _key(tensor: Tensor) -> tuple[str, tuple[int, ...]]:
    return tensor.dtype, tuple(tensor.shape)


def _hash(tf: TensorFile, tensor: Tensor, progress: ByteProgress | None,
          cancelled: CancelCheck | None) -> str | None:
    if tensor.has_errors:
        return None
    try:
        return content_sha256(tf, tensor, progress, cancelled)
    except CodecError:
        return None


def _renames(tf_a: TensorFile, left_a: list[int], tf_b: TensorFile, left_b: list[int],
             progress: ByteProgress | None, cancelled: CancelCheck | None) -> dict[int, int]:
    """Position in A → position in B of the leftovers paired by dtype, shape and content hash."""
    tensors_a, tensors_b = tf_a.tensors, tf_b.tensors
    keys_a = {_key(tensors_a[p]) for p in left_a}
    hashed_b: dict[tuple[str, tuple[int, ...], str], deque[int]] = defaultdict(deque)
    for p in left_b:
        t = tensors_b[p]
        if _key(t) in keys_a:
            digest = _hash(tf_b, t, progress, cancelled)
            if digest is not None:
                hashed_b[(*_key(t), digest)].append(p)
    matched: dict[int, int] = {}
    keys_b = {key[:2] for key in hashed_b}
    for p in left_a:
        t = tensors_a[p]
        if _key(t) in keys_b:
            digest = _hash(tf_a, t, progress, cancelled)
            queue = hashed_b.get((*_key(t), digest)) if digest is not None else None
            if queue:
                matched[p] = queue.popleft()
    return matched


def pair_positions(tf_a: TensorFile, tf_b: TensorFile, *, find_renames: bool = True,
                   progress: ByteProgress | None = None, cancelled: CancelCheck | None = None) -> PairPositions:
    """Every tensor of both sides exactly once, as positions (see :func:`pair_tensors`)."""
    found, left_b = pair_by_name(tensor_names(tf_a.tensors), tensor_names(tf_b.tensors))
    renamed = np.zeros(len(found), dtype=bool)
    left_a = np.flatnonzero(found == NONE).tolist()
    if find_renames and left_a and left_b:
        matched = _renames(tf_a, left_a, tf_b, left_b, progress, cancelled)
        if matched:
            at = np.fromiter(matched, dtype=np.int64, count=len(matched))
            found[at] = np.fromiter(matched.values(), dtype=np.int64, count=len(matched))
            renamed[at] = True
            taken = set(matched.values())
            left_b = [p for p in left_b if p not in taken]
    only_b = np.array(left_b, dtype=np.int64)
    return PairPositions(np.concatenate((np.arange(len(found), dtype=np.int64), np.full(len(only_b), NONE))),
                         np.concatenate((found, only_b)), np.concatenate((renamed, np.zeros(len(only_b), bool))))


def pair_tensors(tf_a: TensorFile, tf_b: TensorFile, *, find_renames: bool = True,
                 progress: ByteProgress | None = None, cancelled: CancelCheck | None = None) -> list[TensorPair]:
    """Every tensor of both sides exactly once: pairs and A-only tensors in A's order, then B-only ones.

    ``progress`` gets the bytes hashed while looking for renames; ``cancelled`` is polled while hashing.
    """
    positions = pair_positions(tf_a, tf_b, find_renames=find_renames, progress=progress, cancelled=cancelled)
    tensors_a, tensors_b = tf_a.tensors, tf_b.tensors
    with building_many():  # every tensor of both sides, kept by the tables: no collector passes over them
        return [TensorPair(None if a == NONE else tensors_a[a], None if b == NONE else tensors_b[b], renamed)
                for a, b, renamed in zip(positions.a.tolist(), positions.b.tolist(), positions.renamed.tolist())]
