"""The state of one comparison of two files or sets (one Compare tab), without Qt.

Holds both opened files, the pairs compared so far (they arrive one by one from a worker), the file attribute
changes, the selected pair, the plane its heatmaps show (displayed axes and slice indices, the same for A, B
and Δ), the element being looked at, and the filter / sort of the pair list. Widgets render it and send the
user's intent back through its methods; every change is announced on an :class:`~.events.Event`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ztviewer.analysis.diff import AttrChange, DiffStats, PairDiff, TensorSide, Verdict
from ztviewer.codec.model import Tensor, TensorFile

from .events import Event

#: sortable numbers of a pair: label → value (``None``: the pair has no such number; such pairs sort last).
METRICS: dict[str, Callable[[DiffStats], float | None]] = {
    "max |Δ|": lambda s: s.max_abs,
    "mean |Δ|": lambda s: s.mean_abs,
    "rel L2": lambda s: s.rel_l2,
    "cosine": lambda s: s.cosine,
    "SNR dB": lambda s: s.snr_db,
    "differing": lambda s: float(s.differing),
    "max ULP": lambda s: None if s.max_ulp is None else float(s.max_ulp),
    "NaN/Inf mismatches": lambda s: float(s.nan_mismatch + s.inf_mismatch),
}
#: other sort keys: the tensor name and how severe the verdict is.
NAME, VERDICT = "name", "verdict"
SEVERITY = {Verdict.INCOMPARABLE: 0, Verdict.DIFFERENT: 1, Verdict.ONLY_A: 2, Verdict.ONLY_B: 3, Verdict.CLOSE: 4,
            Verdict.SAME_CONTENT: 5, Verdict.IDENTICAL: 6}


def metric(pair: PairDiff, key: str) -> float | None:
    """The number ``key`` (one of :data:`METRICS`) of a pair, or ``None``."""
    if pair.stats is None or pair.verdict in (Verdict.IDENTICAL, Verdict.SAME_CONTENT):
        return None
    value = METRICS[key](pair.stats)
    return None if value is None or math.isnan(value) else value


@dataclass(frozen=True, slots=True)
class Plane:
    """The plane of the selected pair shown in all three heatmaps."""

    axes: tuple[int, int] = (0, 1)
    fixed: tuple[tuple[int, int], ...] = ()

    def fixed_dict(self) -> dict[int, int]:
        return dict(self.fixed)


def default_plane(shape: Sequence[int]) -> Plane:
    """The last two axes displayed, every other axis at 0 (what the inspect heatmap starts with)."""
    n = len(shape)
    return Plane((max(0, n - 2), max(1, n - 1)), tuple((axis, 0) for axis in range(max(0, n - 2))))


def plane_position(plane: Plane, index: Sequence[int]) -> tuple[Plane, tuple[int, int]]:
    """The plane through element ``index`` (displayed axes kept) and the element's (row, column) in it."""
    if len(index) == 0:
        return plane, (0, 0)
    if len(index) == 1:
        return plane, (0, int(index[0]))
    rows, cols = plane.axes
    fixed = tuple((axis, int(i)) for axis, i in enumerate(index) if axis not in (rows, cols))
    return Plane(plane.axes, fixed), (int(index[rows]), int(index[cols]))


def _find(tf: TensorFile, side: TensorSide | None) -> Tensor | None:
    if side is None:
        return None
    tensors = tf.tensors
    if 0 <= side.index < len(tensors) and tensors[side.index].index == side.index:
        return tensors[side.index]
    return next((t for t in tensors if t.index == side.index and t.name == side.name), None)


class ComparisonSession:
    """One comparison: A (the reference) against B.

    Events: ``pairs_added(list[int])`` (new pair numbers), ``order_changed(None)`` (filter or sort changed the
    shown rows), ``selection_changed(int | None)``, ``plane_changed(Plane)``, ``focus_changed(tuple | None)``
    (the element looked at: jump to it), ``state_changed(str)`` (running / done / cancelled / failed; see
    :attr:`state` and :attr:`message`), ``progress(tuple[int, int])``.
    """

    def __init__(self, path_a: str, path_b: str) -> None:
        self.path_a, self.path_b = path_a, path_b
        self.tf_a: TensorFile | None = None
        self.tf_b: TensorFile | None = None
        self.pairs: list[PairDiff] = []
        self.file_attributes: list[AttrChange] = []
        self.state = "opening"
        self.message = ""
        self.done, self.total = 0, 0
        self.only_differences = False
        self.sort_key: str | None = None
        self.descending = False
        self.selected: int | None = None
        self.plane = Plane()
        self.focus: tuple[int, ...] | None = None
        self._order: list[int] = []
        self.pairs_added: Event[list[int]] = Event("pairs_added")
        self.order_changed: Event[None] = Event("order_changed")
        self.selection_changed: Event[int | None] = Event("selection_changed")
        self.plane_changed: Event[Plane] = Event("plane_changed")
        self.focus_changed: Event[tuple[int, ...] | None] = Event("focus_changed")
        self.state_changed: Event[str] = Event("state_changed")
        self.progress: Event[tuple[int, int]] = Event("progress")

    # -- what the worker delivers ------------------------------------------------------------------------
    def set_files(self, tf_a: TensorFile, tf_b: TensorFile, attributes: list[AttrChange]) -> None:
        self.tf_a, self.tf_b, self.file_attributes = tf_a, tf_b, list(attributes)
        self._set_state("running")

    def add_pairs(self, pairs: Sequence[PairDiff]) -> None:
        """Pairs just compared: appended; shown at once when the filter lets them through."""
        first = len(self.pairs)
        self.pairs.extend(pairs)
        numbers = list(range(first, len(self.pairs)))
        if self.sort_key is None:
            self._order.extend(n for n in numbers if self._shown(self.pairs[n]))
        else:
            self._order = self._sorted()
        self.pairs_added.emit(numbers)

    def set_progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        self.progress.emit((done, total))

    def finish(self, state: str, message: str = "") -> None:
        """``state``: done, cancelled or failed (``message`` says why)."""
        self.message = message
        self._set_state(state)

    def _set_state(self, state: str) -> None:
        self.state = state
        self.state_changed.emit(state)

    # -- the pair list ------------------------------------------------------------------------------------
    @property
    def order(self) -> list[int]:
        """Pair numbers of the shown rows, in the shown order."""
        return self._order

    def _shown(self, pair: PairDiff) -> bool:
        return not (self.only_differences and pair.unchanged)

    def _sorted(self) -> list[int]:
        shown = [n for n in range(len(self.pairs)) if self._shown(self.pairs[n])]
        key = self.sort_key
        if key is None:
            return shown
        if key == NAME:
            return sorted(shown, key=lambda n: self.pairs[n].name, reverse=self.descending)
        if key == VERDICT:
            return sorted(shown, key=lambda n: SEVERITY[self.pairs[n].verdict], reverse=self.descending)
        valued = [n for n in shown if metric(self.pairs[n], key) is not None]
        rest = [n for n in shown if metric(self.pairs[n], key) is None]
        valued.sort(key=lambda n: metric(self.pairs[n], key) or 0.0, reverse=self.descending)
        return valued + rest

    def set_only_differences(self, only: bool) -> None:
        if only != self.only_differences:
            self.only_differences = only
            self._order = self._sorted()
            self.order_changed.emit(None)

    def set_sort(self, key: str | None, descending: bool = False) -> None:
        """Sort by :data:`NAME`, :data:`VERDICT`, a :data:`METRICS` label, or ``None`` (A's order)."""
        if key is not None and key not in METRICS and key not in (NAME, VERDICT):
            raise ValueError(f"unknown sort key {key!r}")
        if (key, descending) != (self.sort_key, self.descending):
            self.sort_key, self.descending = key, descending
            self._order = self._sorted()
            self.order_changed.emit(None)

    def counts(self) -> dict[Verdict, int]:
        tally = dict.fromkeys(Verdict, 0)
        for pair in self.pairs:
            tally[pair.verdict] += 1
        return tally

    # -- the selected pair ----------------------------------------------------------------------------------
    @property
    def selected_pair(self) -> PairDiff | None:
        return None if self.selected is None else self.pairs[self.selected]

    def select(self, number: int | None) -> None:
        if number == self.selected:
            return
        self.selected = number
        self.focus = None
        pair = self.selected_pair
        side = None if pair is None else (pair.a or pair.b)
        self.plane = default_plane(side.shape) if side is not None else Plane()
        self.selection_changed.emit(number)

    def tensors(self) -> tuple[Tensor | None, Tensor | None]:
        """The selected pair's tensors in the open files."""
        pair = self.selected_pair
        if pair is None or self.tf_a is None or self.tf_b is None:
            return None, None
        return _find(self.tf_a, pair.a), _find(self.tf_b, pair.b)

    def set_plane(self, axes: tuple[int, int], fixed: dict[int, int]) -> None:
        """Another plane chosen: the element looked at is left (unless it lies in the new plane)."""
        plane = Plane((int(axes[0]), int(axes[1])), tuple(sorted(fixed.items())))
        if plane != self.plane:
            self.plane = plane
            self.plane_changed.emit(plane)
            if self.focus is not None and plane_position(plane, self.focus)[0] != plane:
                self.focus = None
                self.focus_changed.emit(None)

    def jump_to(self, index: Sequence[int]) -> None:
        """Look at element ``index`` of the selected pair: its plane is shown, then the views centre on it."""
        plane, _ = plane_position(self.plane, index)
        if plane != self.plane:
            self.plane = plane
            self.plane_changed.emit(plane)
        self.focus = tuple(int(i) for i in index)
        self.focus_changed.emit(self.focus)

    def close(self) -> None:
        for tf in (self.tf_a, self.tf_b):
            if tf is not None:
                tf.close()
        self.tf_a = self.tf_b = None
