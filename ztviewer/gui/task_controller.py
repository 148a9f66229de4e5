"""What Check File and Verify Digests share: one worker task at a time for the file, on its verify progress bar."""
from __future__ import annotations

from PySide6.QtCore import QObject, QThreadPool, Signal

from ztviewer.workers.base import Worker

from .views.verify_progress import VerifyProgress


class TaskSlot:
    """The one task of a file that may run: a Check File or a digest verification, never both (they share the
    file's progress bar). The only owner of that state: controllers ask it, the window greys actions by it."""

    def __init__(self) -> None:
        self.owner: TaskController | None = None

    @property
    def busy(self) -> bool:
        return self.owner is not None


class TaskController(QObject):
    """Start, follow and cancel one :class:`Worker` at a time in ``slot``; its progress shows on ``progress``."""

    message = Signal(str)
    ended = Signal(str)       # "finished" | "cancelled" | "failed"
    noun = "task"             # what it runs, as the message that refuses a second one names it
    already_running = "This task is already running"

    def __init__(self, progress: VerifyProgress, slot: TaskSlot, pool: QThreadPool | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.progress, self.slot = progress, slot
        self.pool = pool or QThreadPool.globalInstance()
        self.task: Worker | None = None
        self.summary = ""         # how the last run ended, as said when it ended (kept: the status bar forgets)
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

    def _may_start(self) -> bool:
        """Whether the slot is free; else says what runs there."""
        owner = self.slot.owner
        if owner is not None:
            self.message.emit(self.already_running if owner is self
                              else f"Wait for the running {owner.noun} to end (or cancel it)")
        return owner is None

    def _follow(self, task: Worker, what: str) -> None:
        """Make ``task`` the running one: its progress goes to the bar, its end (``<what> cancelled|failed``) to
        :attr:`message` and :attr:`ended`. The caller connects ``finished`` and starts it."""
        task.signals.progress.connect(self.progress.update_progress)
        task.signals.cancelled.connect(lambda: self._end("cancelled", f"{what} cancelled"))
        task.signals.failed.connect(lambda text: self._end("failed", f"{what} failed: {text}"))
        self.task = task
        self.slot.owner = self

    def _end(self, outcome: str, text: str) -> None:
        self.task = None
        if self.slot.owner is self:
            self.slot.owner = None
        self.progress.hide()
        self.summary = text
        self.message.emit(text)
        self.ended.emit(outcome)
