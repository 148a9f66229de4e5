"""The worker pattern every long job uses: a ``QRunnable`` whose signals live on a separate ``QObject``.

A job subclasses :class:`Worker` and implements :meth:`Worker.execute`, calling :meth:`Worker.report_progress`
and :meth:`Worker.check_cancelled` (or passing :meth:`Worker.is_cancelled` to the codec) as it goes. Exactly
one of ``finished``, ``failed`` or ``cancelled`` is emitted at the end. Signals are emitted from the pool
thread and delivered queued to receivers in the GUI thread.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from ztviewer.codec.errors import Cancelled, CodecError


class WorkerSignals(QObject):
    """Signals of one job. ``progress`` carries (done, total) in the job's own unit (bytes for I/O jobs)."""

    started = Signal()
    progress = Signal(object, object)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    problem = Signal(object)      # the codec Problem of a CodecError that ended the job (sent before ``failed``)
    cancelled = Signal()


class Worker(QRunnable):
    """Base of every background job: run :meth:`execute` on a pool thread and report through :attr:`signals`.

    Parameters
    ----------
    progress_interval:
        Minimum seconds between two ``progress`` emissions (the final one is always sent).
    """

    def __init__(self, progress_interval: float = 0.1) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.signals = WorkerSignals()
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._progress_interval = progress_interval
        self._last_progress = 0.0

    # -- to implement ------------------------------------------------------------------------------------
    def execute(self) -> Any:
        raise NotImplementedError

    # -- for the job -------------------------------------------------------------------------------------
    def is_cancelled(self) -> bool:
        return self._cancel.is_set()

    def check_cancelled(self) -> None:
        if self._cancel.is_set():
            raise Cancelled()

    def report_progress(self, done: int, total: int, force: bool = False) -> None:
        now = time.monotonic()
        if force or done >= total or now - self._last_progress >= self._progress_interval:
            self._last_progress = now
            self.signals.progress.emit(done, total)

    # -- for the caller ----------------------------------------------------------------------------------
    def cancel(self) -> None:
        self._cancel.set()

    @property
    def is_done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has ended (tests and shutdown only; never from the GUI in normal use)."""
        return self._done.wait(timeout)

    def start(self, pool: QThreadPool | None = None) -> Worker:
        (pool or QThreadPool.globalInstance()).start(self)
        return self

    def run(self) -> None:
        signals = self.signals
        try:
            signals.started.emit()
            if self.is_cancelled():
                raise Cancelled()
            result = self.execute()
        except Cancelled:
            signals.cancelled.emit()
        except CodecError as exc:
            signals.problem.emit(exc.to_problem())
            signals.failed.emit(str(exc))
        except OSError as exc:
            signals.failed.emit(describe_os_error(exc))
        except Exception as exc:  # a bug must become a message, never a dead thread
            signals.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            signals.finished.emit(result)
        finally:
            self._done.set()


def describe_os_error(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"{exc.filename}: {reason}" if exc.filename else reason
