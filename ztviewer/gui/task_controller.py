"""What Check File and Verify Digests share: one worker task at a time, followed on the verify progress bar."""
from __future__ import annotations

from PySide6.QtCore import QObject, QThreadPool, Signal

from ztviewer.workers.base import Worker

from .views.verify_progress import VerifyProgress


class TaskController(QObject):
    """Start, follow and cancel one :class:`Worker` at a time; its progress shows on ``progress``."""

    message = Signal(str)
    ended = Signal(str)       # "finished" | "cancelled" | "failed"

    def __init__(self, progress: VerifyProgress, pool: QThreadPool | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.progress = progress
        self.pool = pool or QThreadPool.globalInstance()
        self.task: Worker | None = None
        progress.cancel_requested.connect(self.cancel)

    @property
    def running(self) -> bool:
        return self.task is not None

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.progress.cancelling()

    def shutdown(self, timeout: float = 2.0) -> None:
        """Cancel and wait for the worker (before the file's map is closed)."""
        if self.task is not None:
            self.task.cancel()
            self.task.wait(timeout)

    def _follow(self, task: Worker, what: str) -> None:
        """Make ``task`` the running one: its progress goes to the bar, its end (``<what> cancelled|failed``) to
        :attr:`message` and :attr:`ended`. The caller connects ``finished`` and starts it."""
        task.signals.progress.connect(self.progress.update_progress)
        task.signals.cancelled.connect(lambda: self._end("cancelled", f"{what} cancelled"))
        task.signals.failed.connect(lambda text: self._end("failed", f"{what} failed: {text}"))
        self.task = task

    def _end(self, outcome: str, text: str) -> None:
        self.task = None
        self.progress.hide()
        self.message.emit(text)
        self.ended.emit(outcome)
