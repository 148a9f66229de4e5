"""Check File for one open file: runs :class:`~ztviewer.workers.tasks.CheckFileTask` and reports what it found."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool

from ztviewer.codec import Problem
from ztviewer.session.file_session import FileSession
from ztviewer.session.formatting import plural
from ztviewer.workers.tasks import CheckFileTask, CheckOutcome

from .task_controller import TaskController, TaskSlot
from .views.verify_progress import VerifyProgress


def check_summary(outcome: CheckOutcome) -> str:
    """One status-bar line for a finished check, e.g. ``Checked 9 tensors: 8 decoded, 1 digest verified: 1 error``."""
    report = outcome.report
    errors = sum(p.is_error for p in report.problems)
    warnings = len(report.problems) - errors
    verdict = "no problems" if not report.problems else ", ".join(
        text for text in (plural(errors, "error") if errors else "", plural(warnings, "warning") if warnings else "")
        if text)
    return (f"Checked {plural(outcome.tensors, 'tensor')} in {outcome.seconds:.2f} s: "
            f"{report.tensors_decoded:,} decoded, {plural(report.digests_verified, 'digest')} verified: {verdict}")


class CheckController(TaskController):
    """Start, follow and cancel one Check File of ``tensor_file``; found problems go to ``report``."""

    noun = "check"
    already_running = "A check of this file is already running"

    def __init__(self, session: FileSession, report: Callable[[list[Problem]], None], progress: VerifyProgress,
                 slot: TaskSlot, pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(progress, slot, pool, parent)
        self.session, self.tensor_file, self.report = session, session.tensor_file, report
        self.last: CheckOutcome | None = None

    def start(self) -> CheckFileTask | None:
        if not self._may_start():
            return None
        task = CheckFileTask(self.tensor_file)
        self._follow(task, "Check")
        task.signals.finished.connect(self._on_finished)
        self.progress.start_check(task.total)
        task.start(self.pool)
        return task

    def _on_finished(self, outcome: CheckOutcome) -> None:
        self.last = outcome
        self.session.set_digest_states(outcome.report.digest_states)    # the Digest column shows what was verified
        self.report(list(outcome.report.problems))
        self._end("finished", check_summary(outcome))
