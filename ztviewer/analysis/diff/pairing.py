"""Which tensor of A goes with which of B: by name first, then leftovers by content hash (renames).

Content hashes (:func:`ztviewer.codec.content_hash.content_sha256`, the same in every format) are computed
only for unpaired tensors that have a leftover of the same dtype and shape on the other side.
"""
from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from typing import NamedTuple

from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.errors import CodecError
from ztviewer.codec.gc_pause import building_many
from ztviewer.codec.model import Tensor, TensorFile

CancelCheck = Callable[[], bool]
ByteProgress = Callable[[int], None]


class TensorPair(NamedTuple):
    """``a`` / ``b`` is ``None`` for a tensor found on one side only; ``renamed`` when paired by content."""

    a: Tensor | None
    b: Tensor | None
    renamed: bool = False


def pair_by_name(tf_a: TensorFile, tf_b: TensorFile) -> tuple[list[TensorPair], list[Tensor]]:
    """Pairs in A's order (the k-th tensor of a name in A with the k-th of that name in B) and the tensors of
    B left over, in B's order."""
    names_b = [t.name for t in tf_b.tensors]
    if len(set(names_b)) == len(names_b):  # the usual case: one plain dict
        lookup = dict(zip(names_b, tf_b.tensors))
        pairs = [TensorPair(t, lookup.pop(t.name, None)) for t in tf_a.tensors]
        return pairs, list(lookup.values())
    by_name: dict[str, deque[Tensor]] = defaultdict(deque)
    for t in tf_b.tensors:
        by_name[t.name].append(t)
    pairs = []
    for t in tf_a.tensors:
        queue = by_name.get(t.name)
        pairs.append(TensorPair(t, queue.popleft() if queue else None))
    paired = {id(p.b) for p in pairs if p.b is not None}
    return pairs, [t for t in tf_b.tensors if id(t) not in paired]


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


def pair_tensors(tf_a: TensorFile, tf_b: TensorFile, *, find_renames: bool = True,
                 progress: ByteProgress | None = None, cancelled: CancelCheck | None = None) -> list[TensorPair]:
    """Every tensor of both sides exactly once: pairs and A-only tensors in A's order, then B-only ones.

    ``progress`` gets the bytes hashed while looking for renames; ``cancelled`` is polled while hashing.
    """
    with building_many():  # thousands of small objects: no collector passes over the open files meanwhile
        pairs, left_b = pair_by_name(tf_a, tf_b)
    left_a = [p.a for p in pairs if p.b is None and p.a is not None]
    if not (find_renames and left_a and left_b):
        return pairs + [TensorPair(None, t) for t in left_b]
    keys_a = {_key(t) for t in left_a}
    hashed_b: dict[tuple[str, tuple[int, ...], str], deque[Tensor]] = defaultdict(deque)
    for t in left_b:
        if _key(t) in keys_a:
            digest = _hash(tf_b, t, progress, cancelled)
            if digest is not None:
                hashed_b[(*_key(t), digest)].append(t)
    matched: dict[int, Tensor] = {}
    keys_b = {key[:2] for key in hashed_b}
    for t in left_a:
        if _key(t) in keys_b:
            digest = _hash(tf_a, t, progress, cancelled)
            queue = hashed_b.get((*_key(t), digest)) if digest is not None else None
            if queue:
                matched[id(t)] = queue.popleft()
    renamed_b = {id(t) for t in matched.values()}
    result = [TensorPair(p.a, matched[id(p.a)], True) if p.b is None and id(p.a) in matched else p for p in pairs]
    return result + [TensorPair(None, t) for t in left_b if id(t) not in renamed_b]
