"""The comparison job of a Compare tab: open both sides, then compare pair by pair (rows fill in as pairs
complete), with progress in bytes and cancel between chunks."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ztviewer.analysis.diff import (
    AttrChange,
    DiffOptions,
    PairDiff,
    attribute_changes,
    iter_pair_diffs,
)
from ztviewer.codec import TensorFile

from .base import Worker
from .tasks import read_tensor_file

#: how many of the largest differences each pair keeps (the positions a viewer jumps to).
WORST_KEPT = 20
BATCH_SECONDS = 0.1


@dataclass(slots=True)
class ComparisonOpened:
    """First ``partial`` of a :class:`CompareTask`: both files and their file attribute changes."""

    tf_a: TensorFile
    tf_b: TensorFile
    attributes: list[AttrChange] = field(default_factory=list)


class CompareTask(Worker):
    """Open ``path_a`` and ``path_b`` and compare them (:func:`~ztviewer.analysis.diff.iter_pair_diffs`).

    ``partial`` carries a :class:`ComparisonOpened`, then lists of :class:`PairDiff` (batched over
    :data:`BATCH_SECONDS`); ``finished`` the number of pairs. A side that cannot be read fails the job with
    its first problem. The files belong to whoever received :class:`ComparisonOpened` (closing them is theirs).
    """

    def __init__(self, path_a: str, path_b: str, options: DiffOptions | None = None) -> None:
        super().__init__()
        self.paths = (path_a, path_b)
        self.options = options or DiffOptions(worst=WORST_KEPT)

    def execute(self) -> int:
        opened: list[TensorFile] = []
        for path in self.paths:
            tf = read_tensor_file(path)
            if not tf.readable:
                first = next(iter(tf.problems), None)
                for done in (*opened, tf):
                    done.close()
                raise ValueError(f"{path} cannot be read" + (f": {first.describe()}" if first else ""))
            opened.append(tf)
            if self.is_cancelled():         # nobody has the files yet: close them here
                for done in opened:
                    done.close()
                self.check_cancelled()
        tf_a, tf_b = opened
        self.signals.partial.emit(ComparisonOpened(tf_a, tf_b, attribute_changes(tf_a.attributes, tf_b.attributes)))
        batch: list[PairDiff] = []
        last = time.monotonic()
        count = 0
        for pair in iter_pair_diffs(tf_a, tf_b, self.options, progress=self.report_progress,
                                    cancelled=self.is_cancelled):
            batch.append(pair)
            count += 1
            if time.monotonic() - last >= BATCH_SECONDS:
                self.signals.partial.emit(batch)
                batch, last = [], time.monotonic()
        if batch:
            self.signals.partial.emit(batch)
        self.check_cancelled()
        self.report_progress(1, 1, force=True)
        return count
