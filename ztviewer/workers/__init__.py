"""Background jobs (QtCore only): a QRunnable per job, its signals on a separate QObject, cancel by flag."""
from . import qt_compat  # noqa: F401  (first: guards every later signal emit)
from .base import Worker, WorkerSignals
from .tasks import ComponentCheck, OpenedFile, OpenFileTask, VerifyDigestsTask

__all__ = ["ComponentCheck", "OpenFileTask", "OpenedFile", "VerifyDigestsTask", "Worker",
           "WorkerSignals"]
