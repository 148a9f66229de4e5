"""One live background job per purpose: a new request cancels the stale one, whose results are dropped."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal
from shiboken6 import Shiboken

from ztviewer.workers.tasks import AnalysisTask

Job = Callable[[AnalysisTask], Any]


class JobSlot(QObject):
    """Runs :class:`AnalysisTask` jobs one at a time (the latest request wins).

    Starting a job cancels the previous one; a cancelled or superseded job's ``partial`` / ``finished`` /
    ``failed`` never reach the callbacks. Tasks are kept referenced until they end, so a superseded job still
    running on the pool is never collected under it.
    """

    busy_changed = Signal(bool)
    progress = Signal(object, object)
    problem = Signal(object)      # a codec Problem that made the current job fail (decode errors, bad data)

    def __init__(self, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = pool or QThreadPool.globalInstance()
        self.current: AnalysisTask | None = None
        self._alive: set[AnalysisTask] = set()
        self.started_count = 0
        self.cancelled_count = 0

    @property
    def busy(self) -> bool:
        return self.current is not None

    def start(self, job: Job, done: Callable[[Any], None], *, partial: Callable[[Any], None] | None = None,
              failed: Callable[[str], None] | None = None, tag: Any = None) -> AnalysisTask:
        self.cancel()
        task = AnalysisTask(job, tag)
        self.current = task
        self._alive.add(task)
        self.started_count += 1
        signals = task.signals
        signals.finished.connect(lambda result: self._end(task, done, result))
        signals.failed.connect(lambda message: self._end(task, failed, message))
        signals.cancelled.connect(lambda: self._end(task, None, None))
        signals.progress.connect(lambda done_, total: self._progress(task, done_, total))
        signals.problem.connect(lambda problem: self.problem.emit(problem) if self._current(task) else None)
        if partial is not None:
            signals.partial.connect(lambda value: partial(value) if self._current(task) else None)
        self.busy_changed.emit(True)
        task.start(self.pool)
        return task

    def cancel(self) -> None:
        task, self.current = self.current, None
        if task is not None:
            task.cancel()
            self.cancelled_count += 1
            self.busy_changed.emit(False)

    def _current(self, task: AnalysisTask) -> bool:
        """Whether ``task`` is the live job of a slot that still exists (its view may be gone, the job not yet)."""
        return task is self.current and Shiboken.isValid(self)

    def _progress(self, task: AnalysisTask, done: Any, total: Any) -> None:
        if self._current(task):
            self.progress.emit(done, total)

    def _end(self, task: AnalysisTask, callback: Callable[[Any], None] | None, value: Any) -> None:
        self._alive.discard(task)
        if task is not self.current or not Shiboken.isValid(self):   # superseded, or the view is gone already
            return
        self.current = None
        self.busy_changed.emit(False)
        if callback is not None:
            callback(value)

    def running(self) -> int:
        """Jobs started and not yet ended (the current one plus superseded ones still winding down)."""
        return sum(1 for t in self._alive if not t.is_done)

    def shutdown(self, wait_ms: int = 2000) -> None:
        """Cancel everything and wait (bounded) for the pool threads to let go of the jobs."""
        self.cancel()
        for task in list(self._alive):
            task.cancel()
            task.wait(wait_ms / 1000)
