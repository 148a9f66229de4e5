"""Runs digest verification for one open file and feeds the results to its tree and problems models."""
from __future__ import annotations

from PySide6.QtCore import QObject, QThreadPool

from ztviewer.codec import Problem, Tensor
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.model import Component
from ztviewer.session.file_session import FileSession
from ztviewer.session.formatting import human_bytes, plural
from ztviewer.workers.tasks import ComponentCheck, VerifyDigestsTask, VerifySummary

from .models.problems_model import ProblemsModel
from .task_controller import TaskController, TaskSlot
from .views.verify_progress import VerifyProgress


class VerifyController(TaskController):
    """Start, follow and cancel one :class:`VerifyDigestsTask` at a time."""

    noun = "verification"
    already_running = "A verification is already running"

    def __init__(self, session: FileSession, problems: ProblemsModel, progress: VerifyProgress, slot: TaskSlot,
                 pool: QThreadPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(progress, slot, pool, parent)
        self.session, self.problems = session, problems
        self.tensor_file = session.tensor_file
        self._added: set[Problem] = set()

    def start(self, targets: list[tuple[Tensor, Component]]) -> VerifyDigestsTask | None:
        if not self._may_start():
            return None
        if self.tensor_file.source is None or not targets:
            self.message.emit("Nothing to verify: no recorded digests in the selection")
            return None
        keys = {(t.name, c.role) for t, c in targets}
        stale = {p for p in self._added if (p.tensor, p.component) in keys}
        self.problems.remove_where(stale.__contains__)
        self._added -= stale
        self.session.set_digest_states([(t, c.role, DigestState.initial(c)) for t, c in targets])
        task = VerifyDigestsTask(self.tensor_file, targets)
        self._follow(task, "Verification")
        task.signals.partial.connect(self._on_checks)
        task.signals.finished.connect(self._on_finished)
        self.progress.start(len(targets), task.total_bytes)
        task.start(self.pool)
        return task

    def _on_checks(self, checks: list[ComponentCheck]) -> None:
        self.session.set_digest_states([(c.tensor, c.role, c.state) for c in checks])
        problems = [c.problem for c in checks if c.problem is not None]
        self._added.update(problems)
        self.problems.add_problems(problems)

    def _on_finished(self, summary: VerifySummary) -> None:
        text = (f"Verified {plural(summary.checked, 'digest')} "
                f"({human_bytes(summary.bytes_done)} in {summary.seconds:.2f} s): {summary.ok:,} ok")
        if summary.mismatched:
            text += f", {summary.mismatched:,} mismatched"
        if summary.invalid:
            text += f", {summary.invalid:,} not checkable"
        self._end("finished", text)
