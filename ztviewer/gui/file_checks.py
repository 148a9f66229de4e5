"""Check File and Verify Digests for one tab, and the problems found after opening: listed in Problems, marked in
the tree, the first new one said in the status bar."""
from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QObject, QThreadPool

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.session.file_session import FileSession
from ztviewer.session.tree_nodes import TensorGroup
from ztviewer.session.tree_state import TreeItem
from ztviewer.workers.tasks import CheckFileTask, VerifyDigestsTask

from .check_controller import CheckController
from .models.problems_model import ProblemsModel
from .models.tensor_tree import TensorTreeModel
from .task_controller import TaskSlot
from .verify_controller import VerifyController
from .views.verify_progress import VerifyProgress

#: a tree row as verification reads it: its item, and the tensor it belongs to (a component row's tensor)
Row = tuple[TreeItem | None, Tensor | None]


class FileChecks:
    """The tab's Check File and Verify (one at a time: :attr:`tasks`), sharing its progress bar ``progress``;
    their messages go to ``say``. The controllers are children of ``parent`` (the tab)."""

    def __init__(self, session: FileSession, problems: ProblemsModel, tree_model: TensorTreeModel,
                 progress: VerifyProgress, say: Callable[[str], None], pool: QThreadPool | None,
                 parent: QObject) -> None:
        self.tensor_file: TensorFile = session.tensor_file
        self.problems_model, self.tree_model, self._say = problems, tree_model, say
        self.tasks = TaskSlot()
        self.verifier = VerifyController(session, problems, progress, self.tasks, pool, parent)
        self.verifier.message.connect(say)
        self.checker = CheckController(session, self.report_problems, progress, self.tasks, pool, parent)
        self.checker.message.connect(say)
        for controller in (self.verifier, self.checker):    # the last summary stays in the Problems panel
            controller.ended.connect(lambda _outcome, c=controller: problems.set_note(c.summary))

    def report_problems(self, problems: list[Problem]) -> None:
        """Problems found after opening (a view's decode, Check File): listed in Problems, marked in the tree; the
        first new one is said (a running Check File says its own summary instead)."""
        new = self.problems_model.add_problems(problems)
        self.tree_model.add_found_problems(new)
        if new and not self.checker.running:
            self._say(f"Problem found: {new[0].describe()}")

    def check_file(self) -> CheckFileTask | None:
        """Check File: structure, decode every tensor, verify every digest (on a worker); returns the task."""
        return self.checker.start()

    def verify(self, rows: Iterable[Row] | None = None) -> VerifyDigestsTask | None:
        """Verify every recorded digest, or those of the components ``rows`` stand for (the file row: all; a group:
        those of the tensors shown under it, as its row totals them; a tensor: its components'); returns the task
        (or None)."""
        from ztviewer.codec.digest import components_with_digests

        if rows is None:
            return self.verifier.start(components_with_digests(self.tensor_file))
        pairs: dict[tuple[int, str], tuple[Tensor, Component]] = {}
        for item, tensor in rows:
            if isinstance(item, TensorFile):
                return self.verifier.start(components_with_digests(self.tensor_file))
            if isinstance(item, Component):
                if tensor is not None:
                    pairs[(id(tensor), item.role)] = (tensor, item)
                continue
            if isinstance(item, TensorGroup):     # the tensors it shows (under a filter: its matches)
                tensors = [self.tensor_file.tensors[p] for p in self.tree_model.state.group_totals.shown(item)]
            else:
                tensors = [item] if item is not None else []
            pairs.update(((id(t), c.role), (t, c)) for t in tensors for c in t.components.values())
        return self.verifier.start([(t, c) for t, c in pairs.values() if c.digest is not None])

    def shutdown(self) -> None:
        self.verifier.shutdown()
        self.checker.shutdown()
