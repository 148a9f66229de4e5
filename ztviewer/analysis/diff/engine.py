"""Comparing two open files or sets: pair the tensors, give each pair a verdict, numbers and attribute changes.

Headless and Qt-free: :func:`iter_pair_diffs` yields one :class:`PairDiff` at a time (a worker can show
them as they come), :func:`compare_files` collects them. Both take ``progress(done, total)`` in bytes
(stored bytes of both sides of every pair) and a ``cancelled`` check polled between chunks, which raises
:class:`~ztviewer.codec.errors.Cancelled`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from ztviewer.codec.errors import CodecError
from ztviewer.codec.gc_pause import building_many
from ztviewer.codec.model import Tensor, TensorFile
from ztviewer.codec.tensor_queries import stored_nbytes, transient_at

from .accumulate import DiffAccumulator
from .attributes import attribute_changes
from .model import DiffOptions, DiffStats, FileDiff, PairDiff, Verdict
from .pairing import NONE, PairPositions, TensorPair, pair_positions
from .plain_bytes import PlainBytes
from .storage import same_description, same_stored_bytes, side, storage_changes
from .values import DECODABLE, paired_pieces

CancelCheck = Callable[[], bool]
Progress = Callable[[int, int], None]
#: pairs whose tensors are built at a time
BATCH = 2000


class _Meter:
    """Turns per-pair byte counts into ``progress(done, total)`` calls."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total, self.done, self.progress = total, 0, progress

    def add(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)


def _weight(pair: TensorPair) -> int:
    return sum(t.stored_nbytes for t in (pair.a, pair.b) if t is not None)


def _first_error(tensor: Tensor) -> str:
    problem = next(p for p in tensor.problems if p.is_error)
    return problem.describe()


def _incomparable_reason(a: Tensor, b: Tensor, damaged: tuple[bool, bool]) -> str:
    """Why the pair cannot be compared element by element, or ``""`` (``damaged``: whether A, B has errors)."""
    for label, t, bad in (("A", a, damaged[0]), ("B", b, damaged[1])):
        if bad:
            return f"{label} is damaged: {_first_error(t)}"
    if tuple(a.shape) != tuple(b.shape):
        return f"shapes differ: {list(a.shape)} vs {list(b.shape)}"
    for label, t in (("A", a), ("B", b)):
        if t.layout not in DECODABLE:
            return f"{label}'s layout {t.layout!r} can be shown structurally but not decoded"
        if t.itemsize is None:
            return f"{label}'s dtype {t.dtype!r} is not one ztviewer decodes"
    return ""


def numeric_stats(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, options: DiffOptions,
                  progress: Callable[[int], None] | None = None,
                  cancelled: CancelCheck | None = None) -> DiffStats:
    """Streaming difference statistics of two tensors of the same shape (A is the reference)."""
    acc = DiffAccumulator(tuple(a.shape), a.dtype, b.dtype, options.tolerance, options.worst)
    total, weight = a.numel, a.stored_nbytes + b.stored_nbytes
    covered = reported = 0
    for positions, piece_a, piece_b in paired_pieces(tf_a, a, tf_b, b, max(1, options.chunk_elements), cancelled):
        acc.update(piece_a, piece_b, positions)
        covered += piece_a.size
        if progress is not None and total and isinstance(positions, int):   # a whole stream: progress by position
            now = weight * (positions + piece_a.size) // total
            progress(now - reported)
            reported = now
    acc.add_equal(total - covered)   # sparse pairs: the elements neither stores, zero on both sides
    if progress is not None and weight > reported:
        progress(weight - reported)
    return acc.result()


def _verdict(stats: DiffStats) -> Verdict:
    if stats.differing == 0:
        return Verdict.SAME_CONTENT
    if stats.within_tolerance:
        return Verdict.CLOSE
    return Verdict.DIFFERENT


def compare_pair(tf_a: TensorFile, a: Tensor, tf_b: TensorFile, b: Tensor, options: DiffOptions | None = None, *,
                 renamed: bool = False, progress: Callable[[int], None] | None = None,
                 cancelled: CancelCheck | None = None) -> PairDiff:
    """The verdict, changes, numbers and attribute changes of one pair.

    Stored bytes are compared first when both tensors are described alike: equal bytes are
    :attr:`Verdict.IDENTICAL` without decoding. Otherwise the contents are decoded and compared in chunks.
    """
    options = options or DiffOptions()
    alike, damaged = same_description(a, b), (a.has_errors, b.has_errors)   # each asked once per pair
    result = PairDiff(side(a), side(b), Verdict.INCOMPARABLE, renamed=renamed, changes=storage_changes(a, b, alike),
                      attributes=attribute_changes(a.attributes, b.attributes))
    both_sides = None if progress is None else (lambda n: progress(2 * n))
    try:
        if (alike and not any(damaged)
                and same_stored_bytes(tf_a, a, tf_b, b, cancelled=cancelled, progress=both_sides)):
            result.verdict = Verdict.IDENTICAL
            return result
        result.reason = _incomparable_reason(a, b, damaged)
        if result.reason:
            return result
        result.stats = numeric_stats(tf_a, a, tf_b, b, options, progress, cancelled)
    except CodecError as exc:
        result.reason = str(exc)
        return result
    result.verdict = _verdict(result.stats)
    if result.verdict is Verdict.SAME_CONTENT and not result.changes:
        result.changes.append("stored bytes differ" if result.stats.bit_identical
                              else "bit patterns differ (signed zeros or NaN payloads)")
    return result


def _batch(tf_a: TensorFile, tf_b: TensorFile, positions: PairPositions, start: int, stop: int) -> list[TensorPair]:
    """The pairs ``start:stop`` with their tensors, built for this look only (a table keeps none of them)."""
    sides = []
    for tensors, column in ((tf_a.tensors, positions.a), (tf_b.tensors, positions.b)):
        at = column[start:stop].tolist()
        built = iter(transient_at(tensors, [p for p in at if p != NONE]))
        sides.append([None if p == NONE else next(built) for p in at])
    return list(map(TensorPair, sides[0], sides[1], positions.renamed[start:stop].tolist()))


def _total_weight(tf_a: TensorFile, tf_b: TensorFile, positions: PairPositions) -> int:
    """Stored bytes of both sides of every pair (from a table's columns: no tensor is built)."""
    both = (positions.a != NONE) & (positions.b != NONE)
    return (stored_nbytes(tf_a.tensors, positions.a[both].tolist())
            + stored_nbytes(tf_b.tensors, positions.b[both].tolist()))


def iter_pair_diffs(tf_a: TensorFile, tf_b: TensorFile, options: DiffOptions | None = None, *,
                    progress: Progress | None = None, cancelled: CancelCheck | None = None) -> Iterator[PairDiff]:
    """One :class:`PairDiff` per pair or unpaired tensor: A's order, then tensors only in B. Pairs are taken
    :data:`BATCH` at a time, their tensors built for that batch only, so a million pairs hold no million tensors."""
    options = options or DiffOptions()
    positions = pair_positions(tf_a, tf_b, find_renames=options.find_renames, cancelled=cancelled)
    meter = _Meter(_total_weight(tf_a, tf_b, positions), progress)
    for start in range(0, len(positions.a), BATCH):
        yield from _batch_diffs(tf_a, tf_b, _batch(tf_a, tf_b, positions, start, start + BATCH), options, meter,
                                cancelled)


def _batch_diffs(tf_a: TensorFile, tf_b: TensorFile, pairs: list[TensorPair], options: DiffOptions, meter: _Meter,
                 cancelled: CancelCheck | None) -> Iterator[PairDiff]:
    plain = PlainBytes(tf_a, tf_b, pairs, cancelled)
    for position, pair in enumerate(pairs):
        weight = _weight(pair) if pair.a is not None and pair.b is not None else 0
        if plain.identical(position):   # what compare_pair finds for such a pair, without reading it again
            meter.add(weight)
            yield PairDiff(side(pair.a), side(pair.b), Verdict.IDENTICAL, renamed=pair.renamed)  # type: ignore[arg-type]
            continue
        if pair.a is None or pair.b is None:
            only = pair.a or pair.b
            assert only is not None
            verdict = Verdict.ONLY_A if pair.a is not None else Verdict.ONLY_B
            yield PairDiff(side(pair.a) if pair.a else None, side(pair.b) if pair.b else None, verdict)
            continue
        before = meter.done
        diff = compare_pair(tf_a, pair.a, tf_b, pair.b, options, renamed=pair.renamed, progress=meter.add,
                            cancelled=cancelled)
        meter.add(max(0, before + weight - meter.done))  # the rest of this pair's share (skipped or rounded)
        yield diff


def compare_files(tf_a: TensorFile, tf_b: TensorFile, options: DiffOptions | None = None, *,
                  progress: Progress | None = None, cancelled: CancelCheck | None = None) -> FileDiff:
    """Compare two open files or sets (see :func:`iter_pair_diffs`), file attributes included."""
    result = FileDiff(tf_a.path, tf_b.path, tf_a.kind, tf_b.kind,
                      attributes=attribute_changes(tf_a.attributes, tf_b.attributes))
    with building_many():  # the pairs, the tensors they build and their diffs live as long as the result
        result.pairs.extend(iter_pair_diffs(tf_a, tf_b, options, progress=progress, cancelled=cancelled))
    return result

